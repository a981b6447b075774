"""Pooling, batch normalization and dropout (phase 06) against PyTorch, on cpu and cuda.

Odd shapes throughout (13 x 17 planes, stride 2 with padding 1, dilation 2, non-square kernels,
overlapping windows, sizes that are not multiples of a block); cuda runs with the poisoned
allocator, so an output element a kernel forgets to write shows up as NaN.
"""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch import nn
from minitorch.autograd import gradcheck
from oracle import check_op

TF = torch.nn.functional


@pytest.fixture(autouse=True)
def _poison_cuda(request):
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("device") == "cuda":
        request.getfixturevalue("poisoned_allocator")


def _fn(lib):
    return lib.nn.functional


# ---- max pooling ------------------------------------------------------------------------------------
MAX_CASES = [
    ((2, 3, 13, 17), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 13, 17), dict(kernel_size=(3, 2), stride=1)),                     # overlapping windows
    ((2, 3, 13, 17), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
    ((1, 2, 13, 17), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    ((2, 3, 13, 17), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ((2, 3, 13, 17), dict(kernel_size=2)),                                    # stride defaults to the kernel
    ((3, 7, 9), dict(kernel_size=3, stride=1, padding=1)),                    # unbatched [C, H, W]
    ((1, 1, 1, 1), dict(kernel_size=1)),
    ((2, 5, 40, 33), dict(kernel_size=5, stride=3, padding=2, ceil_mode=True)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,kw", MAX_CASES)
def test_max_pool2d_values_indices_grads(device, rng, shape, kw, dtype):
    check_op(lambda lib, x: _fn(lib).max_pool2d(x, return_indices=True, **kw), [shape], device, rng, dtype=dtype)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=(3, 2), stride=(1, 2)),
                                dict(kernel_size=3, stride=2, padding=1, dilation=2)])
def test_max_pool2d_ties_take_the_first_maximum(device, rng, kw):
    """Values from {0, 1, 2}: most windows hold several maxima; PyTorch keeps the first (window order),
    and the gradient of overlapping windows that chose the same element adds up."""
    x = rng.integers(0, 3, size=(2, 3, 13, 17)).astype(np.float64)
    check_op(lambda lib, t: _fn(lib).max_pool2d(t, return_indices=True, **kw), None, device, rng, arrays=[x])


def test_max_pool2d_all_minus_inf_and_nan(device):
    x = np.full((1, 1, 4, 5), -np.inf)
    x[0, 0, 2, 3] = np.nan
    ours, theirs = mt.tensor(x, device=device), torch.tensor(x)
    y, i = mt.nn.functional.max_pool2d(ours, 2, 1, return_indices=True)
    ty, ti = TF.max_pool2d(theirs, 2, 1, return_indices=True)
    np.testing.assert_array_equal(y.cpu().numpy(), ty.numpy(), err_msg="max over -inf/NaN windows")
    np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy(), err_msg="argmax over -inf/NaN windows")


def test_max_pool2d_window_missing_the_plane_gives_minus_inf(device, rng):
    """Dilation 2 with padding 1 on a 1-wide plane: some windows hold only padding (PyTorch: -inf)."""
    x = rng.standard_normal((2, 1, 7, 1))
    y = mt.nn.functional.max_pool2d(mt.tensor(x, device=device), (4, 2), (2, 1), (0, 1), (2, 2), True)
    want = TF.max_pool2d(torch.tensor(x), (4, 2), (2, 1), (0, 1), (2, 2), True)
    np.testing.assert_array_equal(y.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("kind", ["max", "avg", "adaptive"])
def test_pools_on_a_large_input(device, rng, kind):
    """More outputs than the GPU has threads at once: each thread loops (grid-stride) in both passes."""
    f = {"max": lambda lib, x: _fn(lib).max_pool2d(x, 3, 2, 1), "avg": lambda lib, x: _fn(lib).avg_pool2d(x, 3, 1, 1),
         "adaptive": lambda lib, x: _fn(lib).adaptive_avg_pool2d(x, (9, 7))}[kind]
    check_op(f, [(8, 32, 65, 67)], device, rng, dtype="float32")


@pytest.mark.parametrize("shape,kw", MAX_CASES[:3])
def test_pools_on_non_contiguous_input(device, rng, shape, kw):
    check_op(lambda lib, x: _fn(lib).max_pool2d(x, **kw), [shape], device, rng, layout="transposed")
    check_op(lambda lib, x: _fn(lib).avg_pool2d(x, 3, 2, 1), [shape], device, rng, layout="transposed")
    check_op(lambda lib, x: _fn(lib).adaptive_avg_pool2d(x, (5, 7)), [shape], device, rng, layout="transposed")


# ---- average pooling ----------------------------------------------------------------------------------
AVG_CASES = [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2), stride=1),
    dict(kernel_size=(3, 4), stride=(2, 1), padding=(1, 2)),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=4, stride=3, ceil_mode=True),
    dict(kernel_size=3, divisor_override=5),
    dict(kernel_size=2),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", AVG_CASES)
def test_avg_pool2d(device, rng, kw, dtype):
    check_op(lambda lib, x: _fn(lib).avg_pool2d(x, **kw), [(2, 3, 13, 17)], device, rng, dtype=dtype)


# ---- adaptive average pooling ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("out", [(5, 7), (4, 4), 1, (None, 3), (13, 17), (20, 30), (6, None), (1, 16)])
def test_adaptive_avg_pool2d(device, rng, out, dtype):
    """Output sizes that do not divide 13 x 17: neighbouring windows overlap; larger outputs repeat."""
    check_op(lambda lib, x: _fn(lib).adaptive_avg_pool2d(x, out), [(2, 3, 13, 17)], device, rng, dtype=dtype)


def test_adaptive_avg_pool2d_unbatched_and_module(device, rng):
    check_op(lambda lib, x: lib.nn.AdaptiveAvgPool2d((3, 2))(x), [(4, 11, 9)], device, rng)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_pools_in_half_precision_match_float32(device, rng, half):
    """float16/bfloat16 are loaded as float, so the result is the float32 result rounded once."""
    x32 = mt.tensor(rng.standard_normal((2, 3, 13, 17)).astype(np.float32), device=device)
    xh = x32.to(dtype=getattr(mt, half))
    x32 = xh.float()                                                # the same values in float32
    for f in (lambda x: mt.nn.functional.max_pool2d(x, 3, 2, 1), lambda x: mt.nn.functional.avg_pool2d(x, 3, 2, 1),
              lambda x: mt.nn.functional.adaptive_avg_pool2d(x, (5, 7))):
        got, want = f(xh), f(x32).to(dtype=getattr(mt, half))
        assert got.dtype == xh.dtype
        np.testing.assert_array_equal(got.float().cpu().numpy(), want.float().cpu().numpy())


# ---- the modules and their errors -------------------------------------------------------------------
def test_pool_modules_match_torch(device, rng):
    for make in (lambda lib: lib.nn.MaxPool2d(3, stride=2, padding=1), lambda lib: lib.nn.AvgPool2d((3, 2), 1),
                 lambda lib: lib.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)):
        check_op(lambda lib, x: make(lib)(x), [(2, 3, 13, 17)], device, rng)
        assert repr(make(mt)) == repr(make(torch))
    assert repr(nn.AdaptiveAvgPool2d((5, 7))) == repr(torch.nn.AdaptiveAvgPool2d((5, 7)))
    y, i = nn.MaxPool2d(2, return_indices=True)(mt.zeros(1, 1, 4, 4, device=device))
    assert tuple(y.shape) == (1, 1, 2, 2) and i.dtype == mt.int64


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool2d(x, 0),
    lambda F, x: F.max_pool2d(x, 3, stride=0),
    lambda F, x: F.max_pool2d(x, 3, padding=2),                                # more than half the kernel
    lambda F, x: F.max_pool2d(x, 3, dilation=0),
    lambda F, x: F.max_pool2d(x, 20),                                          # output size 0
    lambda F, x: F.max_pool2d(x[0, 0], 2),                                     # 2-D input
    lambda F, x: F.avg_pool2d(x, 3, padding=2),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
    lambda F, x: F.adaptive_avg_pool2d(x[0, 0], 2),
])
def test_pool_errors_like_torch(call):
    x = np.zeros((1, 2, 5, 6))
    with pytest.raises(RuntimeError):
        call(TF, torch.tensor(x))
    with pytest.raises(RuntimeError):
        call(mt.nn.functional, mt.tensor(x))


# ---- batch normalization ----------------------------------------------------------------------------
BN_VARIANTS = [dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False), dict(momentum=0.3)]


def _train_both(ours, theirs, shape, device, rng, dtype, steps=3, scale=2.0, shift=1.0):
    """``steps`` forward/backward steps through both modules on the same batches; last (x, y) pairs."""
    for _ in range(steps):
        x = (rng.standard_normal(shape) * scale + shift).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        a, t = mt.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = ours(a), theirs(t)
        (y * mt.tensor(g, device=device)).sum().backward()
        (ty * torch.tensor(g)).sum().backward()
    return a, t, y, ty


def _close(ours, theirs, dtype, what):
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", BN_VARIANTS)
@pytest.mark.parametrize("cls,shape", [("BatchNorm2d", (4, 3, 5, 7)), ("BatchNorm1d", (6, 3)),
                                       ("BatchNorm1d", (4, 3, 9)), ("BatchNorm2d", (2, 5, 33, 40)),
                                       ("BatchNorm1d", (64, 300))])
def test_batch_norm_train_then_eval(device, rng, cls, shape, kw, dtype):
    C = shape[1]
    ours = getattr(nn, cls)(C, **kw).to(device=device, dtype=getattr(mt, dtype))
    theirs = getattr(torch.nn, cls)(C, **kw).to(getattr(torch, dtype))
    if ours.affine:                                 # not the trivial ones and zeros
        w, b = rng.standard_normal(C).astype(dtype), rng.standard_normal(C).astype(dtype)
        ours.weight.data.copy_(mt.tensor(w, device=device))
        ours.bias.data.copy_(mt.tensor(b, device=device))
        theirs.weight.data.copy_(torch.tensor(w))
        theirs.bias.data.copy_(torch.tensor(b))
    a, t, y, ty = _train_both(ours, theirs, shape, device, rng, dtype)
    _close(y, ty, dtype, "training output")
    _close(a.grad, t.grad, dtype, "training input gradient")
    if ours.affine:
        _close(ours.weight.grad, theirs.weight.grad, dtype, "weight gradient")
        _close(ours.bias.grad, theirs.bias.grad, dtype, "bias gradient")
    if ours.track_running_stats:
        _close(ours.running_mean, theirs.running_mean, dtype, "running_mean after 3 steps")
        _close(ours.running_var, theirs.running_var, dtype, "running_var after 3 steps")
        assert ours.num_batches_tracked.item() == 3 and ours.num_batches_tracked.dtype == mt.int64
    ours.eval()
    theirs.eval()
    a, t, y, ty = _train_both(ours, theirs, shape, device, rng, dtype, steps=1)
    _close(y, ty, dtype, "eval output")
    _close(a.grad, t.grad, dtype, "eval input gradient")
    if ours.affine:
        _close(ours.weight.grad, theirs.weight.grad, dtype, "weight gradient (train steps + eval step)")


def test_batch_norm_float32_statistics_are_stable(device, rng):
    """A large mean and a small spread over many elements per channel (Welford: no cancellation),
    and channels longer than a block's threads, so each thread merges many elements."""
    x = (100 + 0.1 * rng.standard_normal((8, 2, 50, 61))).astype(np.float32)   # E[x^2] - E[x]^2 loses ~6%
    ours = nn.BatchNorm2d(2).to(device=device)
    y = ours(mt.tensor(x, device=device))
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=(0, 2, 3)), x64.var(axis=(0, 2, 3))
    want = (x64 - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    np.testing.assert_allclose(y.detach().cpu().numpy(), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(ours.running_mean.cpu().numpy(), 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(ours.running_var.cpu().numpy(), 0.9 + 0.1 * x64.var(axis=(0, 2, 3), ddof=1), rtol=1e-4)


def test_batch_norm_functional(device, rng):
    def f(lib, x, w, b):
        rm, rv = lib.zeros(3, dtype=lib.float64, device=x.device), lib.ones(3, dtype=lib.float64, device=x.device)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-3)
        return y, rm, rv
    check_op(f, [(5, 3, 4, 6), (3,), (3,)], device, rng)       # output, then the updated running statistics
    check_op(lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True), [(7, 3, 5)], device, rng)


def test_batch_norm_module_after_double_keeps_an_int64_count(device, rng):
    m = nn.BatchNorm2d(3, momentum=None).to(device=device, dtype=mt.float64)
    t = torch.nn.BatchNorm2d(3, momentum=None).double()
    _train_both(m, t, (2, 3, 4, 5), device, rng, "float64", steps=2)
    _close(m.running_var, t.running_var, "float64", "cumulative running_var")
    assert m.num_batches_tracked.dtype == mt.int64


def test_batch_norm_buffers_repr_and_state_dict():
    for kw in BN_VARIANTS + [dict(bias=False)]:
        ours, theirs = nn.BatchNorm2d(4, **kw), torch.nn.BatchNorm2d(4, **kw)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(nn.BatchNorm1d(7, eps=1e-3)) == repr(torch.nn.BatchNorm1d(7, eps=1e-3))


@pytest.mark.parametrize("call,error", [
    (lambda lib, x: lib.nn.BatchNorm2d(3)(x[:1, :, :1, :1]), ValueError),          # one value per channel
    (lambda lib, x: lib.nn.BatchNorm2d(3)(x[:, :, 0]), ValueError),                 # 3-D into BatchNorm2d
    (lambda lib, x: lib.nn.BatchNorm1d(3)(x), ValueError),                          # 4-D into BatchNorm1d
    (lambda lib, x: lib.nn.BatchNorm2d(4)(x), RuntimeError),                        # 3 channels, 4 expected
])
def test_batch_norm_errors_like_torch(call, error):
    x = np.zeros((2, 3, 4, 5), np.float32)
    with pytest.raises(error):
        call(torch, torch.tensor(x))
    with pytest.raises(error):
        call(mt, mt.tensor(x))


def test_batch_norm_half_input_is_refused_clearly():
    x = mt.ones(4, 3, dtype=mt.float16)
    with pytest.raises(TypeError, match="float32 or float64"):
        mt.nn.functional.batch_norm(x, None, None, training=True)


# ---- float64 gradient checks (finite differences) ----------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: mt.nn.functional.max_pool2d(x, 3, 2, 1),
    lambda x: mt.nn.functional.max_pool2d(x, (3, 2), 1, dilation=(1, 2)),
    lambda x: mt.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: mt.nn.functional.adaptive_avg_pool2d(x, (3, 4)),
    lambda x: mt.nn.functional.batch_norm(x, None, None, training=True),
])
def test_gradcheck(device, rng, fn):
    x = mt.tensor(rng.standard_normal((2, 2, 7, 9)), device=device, requires_grad=True)   # distinct values: no ties
    assert gradcheck(fn, [x])


def test_gradcheck_batch_norm_affine(device, rng):
    x = mt.tensor(rng.standard_normal((3, 2, 5)), device=device, requires_grad=True)
    w = mt.tensor(rng.standard_normal(2), device=device, requires_grad=True)
    b = mt.tensor(rng.standard_normal(2), device=device, requires_grad=True)
    assert gradcheck(lambda x, w, b: mt.nn.functional.batch_norm(x, None, None, w, b, training=True), [x, w, b])


# ---- dropout ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_dropout_statistics_and_backward(device, rng, p, dtype):
    n = 200_003                                       # odd: not a multiple of any block
    xs = (rng.random(n) + 0.5).astype(dtype)
    x = mt.tensor(xs, device=device, requires_grad=True)
    y = mt.nn.functional.dropout(x, p)
    ys = y.detach().float().cpu().numpy()
    kept = ys != 0
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(kept.mean() - (1 - p)) < 5 * sigma, f"kept {kept.mean():.4f}, expected {1 - p}"
    compute = np.float32 if dtype == "float16" else np.dtype(dtype).type      # halves: scaled in float32
    scaled = lambda v: (v.astype(compute) * compute(1 / (1 - p))).astype(dtype).astype(np.float32)  # noqa: E731
    np.testing.assert_allclose(ys[kept], scaled(xs)[kept], rtol=1e-6)
    g = rng.uniform(0.5, 1.5, n).astype(dtype)                    # never 0: a zero gradient means dropped
    y.backward(mt.tensor(g, device=device))
    gx = x.grad.float().cpu().numpy()
    np.testing.assert_array_equal(gx != 0, kept, err_msg="backward uses the forward's mask")
    np.testing.assert_allclose(gx[kept], scaled(g)[kept], rtol=1e-6)


def test_dropout2d_drops_whole_channels(device):
    x = mt.ones(64, 50, 7, 9, device=device)
    y = nn.Dropout2d(0.4)(x).cpu().numpy().reshape(64 * 50, 63)
    per_channel = y[:, 0]
    assert (y == per_channel[:, None]).all(), "every channel is all kept or all zero"
    assert set(np.unique(per_channel)) == {0.0, np.float32(1 / 0.6)}
    assert abs((per_channel != 0).mean() - 0.6) < 5 * np.sqrt(0.24 / 3200)
    y3 = mt.nn.functional.dropout2d(mt.ones(40, 30, 11, device=device), 0.5).cpu().numpy()
    assert (y3 == y3[:, :, :1]).all(), "a 3-D input [N, C, L] drops whole [n, c] rows, as PyTorch"


def test_dropout_eval_p0_p1_and_empty(device):
    x = mt.tensor(np.array([[1.0, np.nan], [3.0, -2.0]], np.float32), device=device)
    d = nn.Dropout(0.5)
    d.eval()
    assert d(x) is x and mt.nn.functional.dropout(x, 0.5, training=False) is x
    assert mt.nn.functional.dropout(x, 0.0) is x
    y = mt.nn.functional.dropout(x, 1.0).cpu().numpy()
    ty = TF.dropout(torch.tensor(x.cpu().numpy()), 1.0).numpy()
    np.testing.assert_array_equal(y, ty)                            # zeros (NaN stays NaN)
    assert mt.nn.functional.dropout(mt.ones(0, 3, device=device), 0.5).shape == (0, 3)
    assert repr(nn.Dropout(0.2)) == repr(torch.nn.Dropout(0.2))
    assert repr(nn.Dropout2d(0.3, inplace=True)) == repr(torch.nn.Dropout2d(0.3, inplace=True))


def test_dropout_is_reproducible_with_manual_seed(device):
    x = mt.ones(1000, 37, device=device)
    mt.manual_seed(123)
    a = mt.nn.functional.dropout(x, 0.5).cpu().numpy()
    b = mt.nn.functional.dropout(x, 0.5).cpu().numpy()
    mt.manual_seed(123)
    c = mt.nn.functional.dropout(x, 0.5).cpu().numpy()
    np.testing.assert_array_equal(a, c, err_msg="same seed, same mask")
    assert (a != b).any(), "the next draw is a different mask"


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_errors(p):
    with pytest.raises(ValueError, match="between 0 and 1"):
        TF.dropout(torch.ones(3), p)
    with pytest.raises(ValueError, match="between 0 and 1"):
        mt.nn.functional.dropout(mt.ones(3), p)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(p)


def test_dropout_in_a_model_trains_and_evaluates(device, rng):
    model = nn.Sequential(nn.BatchNorm1d(6), nn.Dropout(0.3), nn.Linear(6, 2)).to(device=device)
    x = mt.tensor(rng.standard_normal((16, 6)).astype(np.float32), device=device)
    model(x).sum().backward()
    assert model[2].weight.grad is not None and model[0].weight.grad is not None
    model.eval()
    np.testing.assert_array_equal(model(x).detach().cpu().numpy(), model(x).detach().cpu().numpy())


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_fused_dropout_draws_the_two_step_mask(rng, dtype):
    """The cuda forward (cuRAND's draw, then one kernel: compare, mask, scale) gives the mask and
    output of the two-step path (dropout_mask, then masked_scale) from the same generator state:
    dropout and dropout2d's channel groups, sizes off any block; an input one element into its
    buffer takes the scalar path instead of 16-byte vectors, and both match a NumPy reference."""
    from minitorch import random
    from minitorch.native import cuda as B
    for mask_shape, shape, offset in (((1003,), (1003,), 0), ((1003,), (1003,), 1), ((6, 5), (6, 5, 7, 3), 0)):
        n = int(np.prod(shape))
        buffer = mt.tensor(rng.standard_normal(n + offset), device="cuda").to(getattr(mt, dtype))
        x = buffer[offset:].reshape(shape)
        device = x.device
        mt.manual_seed(7)
        out, mask = B.dropout(x._data, mask_shape, 0.3, 1 / 0.7, random.engine(None, device), index=0)
        mt.manual_seed(7)
        mask2 = B.dropout_mask(mask_shape, 0.3, random.engine(None, device), index=0)
        np.testing.assert_array_equal(B.to_numpy(mask), B.to_numpy(mask2))
        np.testing.assert_array_equal(B.to_numpy(out).astype(np.float64),
                                      B.to_numpy(B.masked_scale(x._data, mask2, 1 / 0.7)).astype(np.float64))
        keep = B.to_numpy(mask).reshape(mask_shape + (1,) * (len(shape) - len(mask_shape)))
        xs = B.to_numpy(x._data).astype(np.float64)
        np.testing.assert_allclose(B.to_numpy(out).astype(np.float64), np.where(keep, xs / 0.7, 0.0),
                                   rtol=1e-2 if dtype == "bfloat16" else 1e-6)
        assert 0.2 < B.to_numpy(mask).mean() < 0.95
