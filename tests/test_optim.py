"""Optimizers (Adam, AdamW, RMSprop, Adagrad, SGD) and gradient clipping against torch.optim and
torch.nn.utils: 100 steps of the same small MLP from the same start, on cpu in float64 (relative
error <= 1e-5) and on cuda in float32 (<= 1e-4); param groups, state_dict round trips, errors.
The cuda tests also count kernel launches: one per optimizer step."""
import numpy as np
import pytest
import torch

import minitorch as mt

OPTIMIZERS = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.002, momentum=0.5, dampening=0.3, maximize=True)),    # small lr: ascent diverges
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=1e-2, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict(lr=1e-3)),
    # centered: sqrt(v - a^2) cancels when v ~ a^2; with alpha=0.9 and eps=1e-8 float32 rounding alone
    # (NumPy vs torch, both on cpu) drifts 3e-4 in 100 steps, so this case takes eps=1e-4
    ("RMSprop", dict(lr=1e-3, alpha=0.9, weight_decay=0.1, momentum=0.5, centered=True, eps=1e-4)),
    ("RMSprop", dict(lr=1e-3, centered=True, maximize=True)),
    ("RMSprop", dict(lr=1e-3, momentum=0.9, eps=1e-5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
]


def _mlp_weights(rng, sizes=(7, 33, 5)):
    """Weights and biases of a two-layer MLP: odd sizes, so no kernel sees a multiple of its block."""
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [rng.standard_normal((b, a)) / np.sqrt(a), rng.standard_normal(b) * 0.1]
    return out


def _loss(lib, ws, x, y, transposed=False):
    """MSE of a tanh MLP. F.linear gives contiguous weight gradients (as nn.Linear does); with
    ``transposed`` the layers are ``x @ w.T`` and the weight gradients are transposed views."""
    if transposed:
        h = lib.tanh(x @ ws[0].T + ws[1])
        return ((h @ ws[2].T + ws[3] - y) ** 2).mean()
    linear = lib.nn.functional.linear
    return ((linear(lib.tanh(linear(x, ws[0], ws[1])), ws[2], ws[3]) - y) ** 2).mean()


def _train(name, kw, device, dtype, steps=100, groups=False, seed=0, transposed=False):
    """Train the same MLP with minitorch and torch; returns the lists of final weights (NumPy)."""
    rng = np.random.default_rng(seed)
    start = _mlp_weights(rng)
    x, y = rng.standard_normal((16, 7)), rng.standard_normal((16, 5))
    np_dtype = np.float64 if dtype == "float64" else np.float32
    ms = [mt.tensor(w.astype(np_dtype), device=device, requires_grad=True) for w in start]
    ts = [torch.tensor(w.astype(np_dtype), requires_grad=True) for w in start]
    if groups:       # the second layer learns 3x slower, with its own weight decay
        mopt = getattr(mt.optim, name)([{"params": ms[:2]}, {"params": ms[2:], "lr": kw["lr"] / 3, "weight_decay": 0.05}], **kw)
        topt = getattr(torch.optim, name)([{"params": ts[:2]}, {"params": ts[2:], "lr": kw["lr"] / 3, "weight_decay": 0.05}], **kw)
    else:
        mopt, topt = getattr(mt.optim, name)(ms, **kw), getattr(torch.optim, name)(ts, **kw)
    mx, my = mt.tensor(x.astype(np_dtype), device=device), mt.tensor(y.astype(np_dtype), device=device)
    tx, ty = torch.tensor(x.astype(np_dtype)), torch.tensor(y.astype(np_dtype))
    for _ in range(steps):
        mopt.zero_grad()
        _loss(mt, ms, mx, my, transposed).backward()
        mopt.step()
        topt.zero_grad()
        _loss(torch, ts, tx, ty, transposed).backward()
        topt.step()
    return [m.detach().cpu().numpy() for m in ms], [t.detach().numpy() for t in ts], mopt, topt


def _rel_err(got, want):
    return max(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30) for g, w in zip(got, want))


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in OPTIMIZERS])
def test_optimizer_matches_torch_cpu_float64(name, kw):
    got, want, _, _ = _train(name, kw, "cpu", "float64")
    err = _rel_err(got, want)
    assert err <= 1e-5, f"{name}({kw}) after 100 cpu float64 steps: relative error {err:.3g}"
    start = _mlp_weights(np.random.default_rng(0))
    assert _rel_err(got, start) > 1e-3, f"{name}({kw}): the parameters should have moved"


@pytest.mark.cuda
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in OPTIMIZERS])
def test_optimizer_matches_torch_cuda_float32(name, kw):
    got, want, _, _ = _train(name, kw, "cuda", "float32")
    err = _rel_err(got, want)
    assert err <= 1e-4, f"{name}({kw}) after 100 cuda float32 steps: relative error {err:.3g}"


@pytest.mark.parametrize("name,kw", [OPTIMIZERS[0], OPTIMIZERS[4], OPTIMIZERS[9], OPTIMIZERS[13]])
def test_non_contiguous_gradients(device, name, kw):
    """x @ w.T makes w's gradient a transposed view: read through a contiguous copy on cuda."""
    dtype = "float64" if device == "cpu" else "float32"
    got, want, mopt, _ = _train(name, kw, device, dtype, steps=30, transposed=True)
    assert not mopt.param_groups[0]["params"][0].grad.is_contiguous(), "the test needs a transposed gradient"
    assert _rel_err(got, want) <= (1e-5 if device == "cpu" else 1e-4)


@pytest.mark.parametrize("name,kw", [OPTIMIZERS[4], OPTIMIZERS[7], OPTIMIZERS[9], OPTIMIZERS[13]])
def test_param_groups_with_their_own_lr(device, name, kw):
    dtype = "float64" if device == "cpu" else "float32"
    got, want, mopt, _ = _train(name, kw, device, dtype, steps=30, groups=True)
    assert mopt.param_groups[1]["lr"] == kw["lr"] / 3 and mopt.param_groups[0]["lr"] == kw["lr"]
    assert _rel_err(got, want) <= (1e-5 if device == "cpu" else 1e-4)


# ---- state_dict ----------------------------------------------------------------------------------
def _model_and_data(device, dtype=mt.float32, seed=1):
    rng = np.random.default_rng(seed)
    ws = [mt.tensor(w, dtype=dtype, device=device, requires_grad=True) for w in _mlp_weights(rng)]
    return ws, mt.tensor(rng.standard_normal((16, 7)), dtype=dtype, device=device), \
        mt.tensor(rng.standard_normal((16, 5)), dtype=dtype, device=device)


def _steps(opt, ws, x, y, n):
    for _ in range(n):
        opt.zero_grad()
        _loss(mt, ws, x, y).backward()
        opt.step()


@pytest.mark.parametrize("name,kw", [OPTIMIZERS[0], OPTIMIZERS[4], OPTIMIZERS[9], OPTIMIZERS[13]])
def test_state_dict_round_trip_continues_exactly(device, name, kw):
    ws, x, y = _model_and_data(device)
    opt = getattr(mt.optim, name)(ws, **kw)
    _steps(opt, ws, x, y, 10)
    saved = opt.state_dict()
    copies = [w.detach().clone().requires_grad_(True) for w in ws]
    assert sorted(saved["state"]) == [0, 1, 2, 3] and saved["param_groups"][0]["params"] == [0, 1, 2, 3]
    if name != "SGD":
        assert saved["state"][0]["step"].item() == 10 and saved["state"][0]["step"].dtype is mt.float32
    resumed = getattr(mt.optim, name)(copies, **{k: v * 7 if k == "lr" else v for k, v in kw.items()})
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == kw["lr"], "load_state_dict restores the hyper-parameters"
    _steps(opt, ws, x, y, 5)
    _steps(resumed, copies, x, y, 5)
    for a, b in zip(ws, copies):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())


def test_load_state_dict_from_torch():
    """A torch optimizer's state_dict (tensors converted to minitorch) resumes the same trajectory."""
    rng = np.random.default_rng(3)
    start = _mlp_weights(rng)
    x, y = rng.standard_normal((16, 7)), rng.standard_normal((16, 5))
    ts = [torch.tensor(w, requires_grad=True) for w in start]
    topt = torch.optim.AdamW(ts, lr=1e-2, amsgrad=True)
    for _ in range(7):
        topt.zero_grad()
        _loss(torch, ts, torch.tensor(x), torch.tensor(y)).backward()
        topt.step()
    sd = topt.state_dict()
    converted = {"state": {i: {k: mt.tensor(v.numpy()) for k, v in s.items()} for i, s in sd["state"].items()},
                 "param_groups": sd["param_groups"]}
    ms = [mt.tensor(t.detach().numpy(), requires_grad=True) for t in ts]
    mopt = mt.optim.AdamW(ms, lr=1.0)
    mopt.load_state_dict(converted)
    assert mopt.state[ms[0]]["step"] == 7
    for _ in range(5):
        topt.zero_grad()
        _loss(torch, ts, torch.tensor(x), torch.tensor(y)).backward()
        topt.step()
        mopt.zero_grad()
        _loss(mt, ms, mt.tensor(x), mt.tensor(y)).backward()
        mopt.step()
    assert _rel_err([m.detach().numpy() for m in ms], [t.detach().numpy() for t in ts]) < 1e-10


def test_state_dict_keys_match_torch():
    ws, _, _ = _model_and_data("cpu")
    for name, kw in [("Adam", {}), ("AdamW", {}), ("RMSprop", {}), ("Adagrad", {}), ("Adam", dict(amsgrad=True))]:
        mine = getattr(mt.optim, name)(ws, **kw).state_dict()["param_groups"][0]
        theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kw).state_dict()["param_groups"][0]
        assert set(mine) == set(theirs), f"{name}: group keys {sorted(set(mine) ^ set(theirs))} differ from torch's"
        for k in theirs:
            if k != "params":
                assert mine[k] == theirs[k] or (k == "betas" and tuple(mine[k]) == tuple(theirs[k])), \
                    f"{name}: default {k} is {mine[k]!r}, torch's is {theirs[k]!r}"


def test_load_state_dict_errors_name_both_sizes():
    ws, _, _ = _model_and_data("cpu")
    opt = mt.optim.Adam(ws)
    with pytest.raises(ValueError, match="2 saved, the optimizer has 1"):
        opt.load_state_dict(mt.optim.Adam([{"params": ws[:2]}, {"params": ws[2:]}]).state_dict())
    with pytest.raises(ValueError, match="group 0 has 2 saved parameters, the optimizer has 4"):
        opt.load_state_dict(mt.optim.Adam(ws[:2]).state_dict())


def test_state_is_moved_to_the_parameter_dtype():
    ws, x, y = _model_and_data("cpu", mt.float64)
    opt = mt.optim.Adam(ws)
    _steps(opt, ws, x, y, 2)
    sd = opt.state_dict()
    ws32 = [w.detach().to(mt.float32).requires_grad_(True) for w in ws]
    opt32 = mt.optim.Adam(ws32)
    opt32.load_state_dict(sd)
    assert opt32.state[ws32[0]]["exp_avg"].dtype is mt.float32
    assert opt32.state[ws32[0]]["exp_avg"] is not sd["state"][0]["exp_avg"]


# ---- hyper-parameters and errors -----------------------------------------------------------------
@pytest.mark.parametrize("name,kw,match", [
    ("Adam", dict(lr=-1), "learning rate"), ("Adam", dict(eps=-1e-8), "epsilon"),
    ("Adam", dict(betas=(1.0, 0.999)), "beta parameter at index 0"), ("AdamW", dict(betas=(0.9, -0.1)), "index 1"),
    ("AdamW", dict(weight_decay=-0.1), "weight_decay"), ("RMSprop", dict(alpha=-0.5), "alpha"),
    ("RMSprop", dict(momentum=-0.5), "momentum"), ("Adagrad", dict(lr_decay=-1), "lr_decay"),
    ("Adagrad", dict(initial_accumulator_value=-1), "initial_accumulator_value")])
def test_invalid_hyper_parameters_raise_like_torch(name, kw, match):
    ws, _, _ = _model_and_data("cpu")
    with pytest.raises(ValueError, match=match):
        getattr(mt.optim, name)(ws, **kw)
    with pytest.raises(ValueError, match=match):
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kw)


def test_foreach_fused_flags_are_accepted_and_groups_are_checked():
    ws, x, y = _model_and_data("cpu")
    opt = mt.optim.Adam(ws, foreach=True, fused=False, capturable=False, differentiable=False)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": ws[0]})
    opt2 = mt.optim.Adam(ws[:2])
    opt2.add_param_group({"params": ws[2:], "lr": 0.5})
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[1]["betas"] == (0.9, 0.999)
    assert mt.optim.RMSprop(ws, foreach=True).step() is None
    assert mt.optim.Adagrad(ws, fused=True).step(lambda: 3.0) == 3.0


def test_parameters_without_grad_are_skipped_and_keep_their_own_step(device):
    """The bias that misses steps has its own step count: on cuda its update is a second launch."""
    ws, x, y = _model_and_data(device, mt.float64)
    ts = [torch.tensor(w.detach().cpu().numpy(), requires_grad=True) for w in ws]
    mopt, topt = mt.optim.Adam(ws, lr=0.01), torch.optim.Adam(ts, lr=0.01)
    for k in range(6):
        mopt.zero_grad()
        topt.zero_grad()
        _loss(mt, ws, x, y).backward()
        _loss(torch, ts, torch.tensor(x.cpu().numpy()), torch.tensor(y.cpu().numpy())).backward()
        if k % 2:                  # the last bias misses every other step: its step count lags
            ws[3].grad, ts[3].grad = None, None
        mopt.step()
        topt.step()
    assert mopt.state[ws[3]]["step"] == 3 and mopt.state[ws[0]]["step"] == 6
    assert _rel_err([w.detach().cpu().numpy() for w in ws], [t.detach().numpy() for t in ts]) < 1e-12


# ---- gradient clipping ---------------------------------------------------------------------------
SHAPES = [(1,), (7,), (33, 5), (4097,), (3, 1000), (), (0, 3), (8193, 2)]      # odd, 0-d, empty, several chunks


def _params_with_grads(device, dtype, scale=1.0, seed=5):
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) * scale for s in SHAPES]
    ms = [mt.zeros(s, dtype=dtype, device=device, requires_grad=True) for s in SHAPES]
    for m, g in zip(ms, grads):
        m.grad = mt.tensor(g, dtype=dtype, device=device)
    ts = [torch.zeros(s, dtype=getattr(torch, str(dtype).split(".")[-1]), requires_grad=True) for s in SHAPES]
    for t, g in zip(ts, grads):
        t.grad = torch.tensor(g, dtype=t.dtype)
    return ms, ts


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(device, norm_type, max_norm):
    dtype = mt.float64 if device == "cpu" else mt.float32
    ms, ts = _params_with_grads(device, dtype)
    got = mt.nn.utils.clip_grad_norm_(ms, max_norm, norm_type=norm_type)
    want = torch.nn.utils.clip_grad_norm_([t for t in ts if t.numel()], max_norm, norm_type=norm_type)  # (torch's
    # inf norm raises for an empty tensor; ours skips it: it adds nothing to any norm)
    assert got.shape == () and got.dtype is dtype and got.device == mt.device(device)
    rtol = 1e-10 if dtype is mt.float64 else 1e-5
    np.testing.assert_allclose(got.item(), want.item(), rtol=rtol)
    for m, t in zip(ms, ts):
        np.testing.assert_allclose(m.grad.cpu().numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)
    if max_norm < 1:
        clipped = torch.nn.utils.get_total_norm([t.grad for t in ts if t.numel()], norm_type)
        assert abs(clipped.item() - max_norm) < 1e-4, "after clipping the norm is max_norm"


def test_clip_grad_norm_half_and_mixed_dtypes(device):
    """Gradients of float32, float64, bfloat16 and float16 together: one norm over all of them."""
    rng = np.random.default_rng(6)
    dtypes = [mt.float32, mt.float64, mt.bfloat16, mt.float16, mt.float32, mt.bfloat16]
    grads = [rng.standard_normal(s) for s in [(33, 5), (7,), (4097,), (3, 1000), (1,), (0,)]]
    ms = []
    for g, dt in zip(grads, dtypes):
        m = mt.zeros(g.shape, dtype=dt, device=device, requires_grad=True)
        m.grad = mt.tensor(g, dtype=dt, device=device)
        ms.append(m)
    rounded = [m.grad.to(mt.float64).cpu().numpy().copy() for m in ms]
    total = np.sqrt(sum(np.sum(r ** 2) for r in rounded))
    got = mt.nn.utils.clip_grad_norm_(ms, 1.0)
    assert got.dtype is mt.float32 and got.device == mt.device(device), "the norm has the first gradient's dtype"
    np.testing.assert_allclose(got.item(), total, rtol=1e-6)
    for m, r, dt in zip(ms, rounded, dtypes):
        tol = {mt.bfloat16: 2 ** -8, mt.float16: 2 ** -11}.get(dt, 1e-6)
        np.testing.assert_allclose(m.grad.to(mt.float64).cpu().numpy(), r / (total + 1e-6), rtol=tol, atol=1e-7,
                                   err_msg=f"a {dt} gradient after clipping")


def test_clip_grad_norm_nonfinite(device):
    ms, ts = _params_with_grads(device, mt.float32)
    ms[2].grad = mt.tensor(np.full((33, 5), np.inf, np.float32), device=device)
    with pytest.raises(RuntimeError, match="non-finite"):
        mt.nn.utils.clip_grad_norm_(ms, 1.0, error_if_nonfinite=True)
    assert np.isinf(mt.nn.utils.clip_grad_norm_(ms, 1.0).item())
    with pytest.raises(ValueError, match="norm_type"):
        mt.nn.utils.clip_grad_norm_(ms, 1.0, norm_type=0)
    assert mt.nn.utils.clip_grad_norm_([mt.zeros(3, requires_grad=True)], 1.0).item() == 0.0


def test_clip_grad_norm_of_a_transposed_gradient(device):
    dtype = mt.float64 if device == "cpu" else mt.float32
    p = mt.zeros((5, 9), dtype=dtype, device=device, requires_grad=True)
    g = np.random.default_rng(8).standard_normal((9, 5))
    p.grad = mt.tensor(g, dtype=dtype, device=device).t()
    got = mt.nn.utils.clip_grad_norm_(p, 0.1)
    np.testing.assert_allclose(got.item(), np.linalg.norm(g), rtol=1e-6)
    np.testing.assert_allclose(p.grad.cpu().numpy(), g.T * 0.1 / (np.linalg.norm(g) + 1e-6), rtol=1e-5)


@pytest.mark.parametrize("clip", [0.3, 5.0])
def test_clip_grad_value_matches_torch(device, clip):
    dtype = mt.float64 if device == "cpu" else mt.float32
    ms, ts = _params_with_grads(device, dtype, scale=2.0)
    ms[0].grad = mt.tensor([float("nan")], dtype=dtype, device=device)
    ts[0].grad = torch.tensor([float("nan")], dtype=ts[0].dtype)
    assert mt.nn.utils.clip_grad_value_(ms, clip) is None
    torch.nn.utils.clip_grad_value_(ts, clip)
    for m, t in zip(ms, ts):
        np.testing.assert_array_equal(m.grad.cpu().numpy(), t.grad.numpy())


# ---- cuda: one launch per step -------------------------------------------------------------------
def _count_launches(monkeypatch):
    from minitorch.native.cuda import launch
    calls = []
    for name in ("_launch_fast", "_launch_cupy"):
        real = getattr(launch, name)
        monkeypatch.setattr(launch, name, lambda *a, _real=real, **k: (calls.append(a[0]), _real(*a, **k))[1])
    return calls


@pytest.mark.cuda
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in OPTIMIZERS])
def test_one_kernel_launch_per_step(monkeypatch, name, kw):
    ws, x, y = _model_and_data("cuda")
    opt = getattr(mt.optim, name)(ws, **kw)
    _steps(opt, ws, x, y, 2)                  # state made, tables built
    _loss(mt, ws, x, y).backward()
    calls = _count_launches(monkeypatch)
    opt.step()
    assert len(calls) == 1, f"{name}({kw}).step() on 4 cuda parameters made {len(calls)} launches, expected 1"


@pytest.mark.cuda
def test_clip_grad_norm_is_two_launches_and_no_sync(monkeypatch):
    from minitorch.cuda import array
    ms, _ = _params_with_grads("cuda", mt.float32)
    mt.nn.utils.clip_grad_norm_(ms, 1.0)
    calls = _count_launches(monkeypatch)
    monkeypatch.setattr(array, "to_numpy", lambda a: pytest.fail("clip_grad_norm_ read a device array on the host"))
    mt.nn.utils.clip_grad_norm_(ms, 1.0)
    assert len(calls) == 2, f"clip_grad_norm_ made {len(calls)} launches, expected 2 (norm, scale)"
    calls.clear()
    mt.nn.utils.clip_grad_value_(ms, 0.1)
    assert len(calls) == 1


@pytest.mark.cuda
def test_many_parameters_and_half_precision():
    """200 parameters of odd sizes in one launch; float16/bfloat16 parameters updated in float."""
    rng = np.random.default_rng(9)
    shapes = [(int(n),) for n in rng.integers(1, 5000, 200)] + [(3, 4099), (0,)]
    for dtype, tol in [(mt.float32, 1e-5), (mt.float64, 1e-12), (mt.float16, 1e-2), (mt.bfloat16, 2e-2)]:
        init = [rng.standard_normal(s) for s in shapes]
        grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]
        gpu = [mt.tensor(w, dtype=dtype, device="cuda", requires_grad=True) for w in init]
        cpu = [mt.tensor(w, dtype=dtype, requires_grad=True) for w in init]
        opts = [mt.optim.Adam(gpu, lr=0.01, amsgrad=True, weight_decay=0.1), mt.optim.Adam(cpu, lr=0.01, amsgrad=True, weight_decay=0.1)]
        if dtype is mt.float16:       # and SGD, whose list kernel rounds like sgd.cu and the cpu backend
            opts = [mt.optim.SGD(gpu, lr=0.1, momentum=0.9, nesterov=True), mt.optim.SGD(cpu, lr=0.1, momentum=0.9, nesterov=True)]
        for step in grads:
            for ps, opt in zip((gpu, cpu), opts):
                for p, g in zip(ps, step):
                    p.grad = mt.tensor(g, dtype=dtype, device=p.device)
                opt.step()
        for a, b in zip(gpu, cpu):
            np.testing.assert_allclose(a.detach().to(mt.float64).cpu().numpy(), b.detach().to(mt.float64).numpy(),
                                       rtol=tol, atol=tol, err_msg=f"{type(opts[0]).__name__} on {dtype}")


@pytest.mark.cuda
def test_sgd_list_kernel_is_bitwise_the_per_parameter_kernel():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(12)
    shapes = [(1,), (4097,), (33, 7), (0,), ()]
    for dtype in (np.float32, np.float64, np.float16):
        for first in (True, False):
            ps, gs, bs = ([rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3))
            dev = lambda xs: [array.from_numpy(x, 0) for x in xs]      # noqa: E731
            one, many = (dev(ps), dev(gs), dev(bs)), (dev(ps), dev(gs), dev(bs))
            for p, g, b in zip(*one):
                backend.sgd_step(p, g, b, 0.1, 0.9, 0.1, 0.01, False, True, first)
            backend.sgd_step_list(*many, 0.1, 0.9, 0.1, 0.01, False, True, first)
            for k in (0, 2):
                for a, b in zip(one[k], many[k]):
                    np.testing.assert_array_equal(array.to_numpy(a), array.to_numpy(b))
