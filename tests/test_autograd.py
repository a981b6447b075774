"""Phase 03: gradients of every differentiable op vs finite differences and vs PyTorch, graph
semantics (reuse, diamonds, accumulation, retain_graph, no_grad, detach)."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch.autograd import gradcheck
from minitorch.autograd.gradcheck import GradcheckError


def _leaf(x, device):
    return mt.tensor(x, dtype=mt.float64, device=device, requires_grad=True)


# (name, fn on two broadcastable inputs, input shapes, positive inputs?)
CASES = [
    ("add", lambda a, b: a + b, [(3, 4), (4,)], False),
    ("sub", lambda a, b: a - b, [(2, 1, 3), (5, 1)], False),
    ("mul", lambda a, b: a * b, [(7,), (1,)], False),
    ("div", lambda a, b: a / b, [(3, 4), (3, 1)], True),
    ("pow", lambda a, b: a ** b, [(3, 4), (4,)], True),
    ("maximum", lambda a, b: mt.maximum(a, b), [(5, 3), (3,)], False),
    ("scalars", lambda a, b: (2.0 - a) * 3 / 4 + 1.0 / (b + 5.0) + a ** 3 + 2 ** b, [(4, 3), (4, 3)], True),
    ("unary", lambda a, b: a.exp() + b.log() + b.sqrt() + a.tanh() + a.sigmoid() + a.relu() + (-a).abs(), [(6, 2), (6, 2)], True),
    ("matmul", lambda a, b: a @ b, [(5, 3), (3, 4)], False),
    ("batched matmul", lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)], False),
    ("matvec", lambda a, b: a @ b, [(3, 4), (4,)], False),
    ("where", lambda a, b: mt.where(a > 0, a * 2, b), [(4, 5), (5,)], False),
    ("shape ops", lambda a, b: a.T.reshape(2, 6).sum(0) + b.unsqueeze(0).expand(3, 6).mean(0), [(3, 4), (6,)], False),
    ("sum dims", lambda a, b: a.sum(dim=(0, 2), keepdim=True) * b.mean(dim=1), [(2, 3, 4), (3, 1)], False),
    ("cast", lambda a, b: a.float().double() * b, [(3,), (3,)], False),
]
# finite differences with eps = 1e-6 cannot see through a float32 round trip: cast is checked
# against PyTorch only
GRADCHECK_CASES = [c for c in CASES if c[0] != "cast"]


@pytest.mark.parametrize("name,fn,shapes,positive", GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck(device, rng, name, fn, shapes, positive):
    inputs = [_leaf(rng.random(s) + 0.5 if positive else rng.standard_normal(s), device) for s in shapes]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_pytorch(device, rng, name, fn, shapes, positive):
    data = [rng.random(s) + 0.5 if positive else rng.standard_normal(s) for s in shapes]
    ours = [_leaf(x, device) for x in data]
    fn(*ours).sum().backward()
    theirs = [torch.tensor(x, requires_grad=True) for x in data]
    torch_twins = {"maximum": lambda a, b: torch.maximum(a, b),      # these lambdas call mt.<fn>
                   "where": lambda a, b: torch.where(a > 0, a * 2, b)}
    torch_twins.get(name, fn)(*theirs).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_gradcheck_reports_worst_element():
    class Wrong(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 3.0
    with pytest.raises(GradcheckError, match=r"input 0 \(shape \(3,\)\), element \(\d,\): autograd .* vs finite difference"):
        gradcheck(Wrong.apply, [_leaf(np.ones(3), "cpu")])


def test_node_used_twice_and_diamond(device):
    a = _leaf([3.0], device)
    b = a + a
    c = b * b                                   # c = 4 a^2, dc/da = 8 a
    c.backward()
    assert a.grad.tolist() == [24.0]
    x = _leaf([2.0], device)
    top = x * 3.0
    left, right = top.exp(), top * top          # a diamond: two paths from top to out
    (left + right).backward()
    assert x.grad.item() == pytest.approx(3 * np.exp(6.0) + 2 * 6.0 * 3)


def test_accumulation_zero_grad_and_retain_graph(device):
    w = _leaf([1.0, 2.0], device)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert w.grad.tolist() == [4.0, 8.0]        # two calls add up
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    w.grad = None
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_non_scalar_backward_needs_gradient(device):
    x = _leaf([1.0, 2.0, 3.0], device)
    y = x * x
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(mt.tensor([1.0, 0.0, 2.0], dtype=mt.float64, device=device))
    assert x.grad.tolist() == [2.0, 0.0, 12.0]


def test_no_grad_detach_and_requires_grad_rules(device):
    x = _leaf([1.0], device)
    with mt.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).grad_fn is not None and not (x * 2).detach().requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        mt.ones(1, device=device).backward()
    with pytest.raises(RuntimeError, match="floating"):
        mt.ones(1, dtype=mt.int64).requires_grad_()

    @mt.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and mt.is_grad_enabled()


# ---- device moves and dtype casts are ops like any other (issue 13) ---------------------------------
@pytest.fixture
def numpy_cuda(monkeypatch):
    """A "cuda" device whose backend is NumPy, so the graph of device moves is tested on the CPU
    (the values are those of the cpu backend; the GPU variant below runs our kernels)."""
    from minitorch import native
    monkeypatch.setattr(native, "_cuda", native.cpu)


def _check_moves_are_recorded(target):
    data = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])
    leaf = mt.tensor(data, requires_grad=True)
    x = leaf.to(target)
    assert x.device == mt.device(target) and x.requires_grad and not x.is_leaf
    assert x.grad_fn.name() == "ToDeviceBackward"
    y = mt.tensor(data, dtype=mt.float64, requires_grad=True).to(target, mt.float32)   # cast, then move
    z = leaf.cuda().double().cpu()
    assert y.dtype is mt.float32 and z.device == mt.device("cpu") and z.grad_fn is not None
    ((x * x).sum() + (y.exp() * 2).sum()).backward()
    (z ** 3).sum().backward()
    tleaf = torch.tensor(data, dtype=torch.float32, requires_grad=True)
    ty = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    ((tleaf * tleaf).sum() + (ty.float().exp() * 2).sum()).backward()
    (tleaf.double() ** 3).sum().backward()
    assert leaf.is_leaf and leaf.device == mt.device("cpu") and leaf.grad.device == mt.device("cpu")
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.grad_fn.inputs[0].grad_fn.inputs[0].grad.numpy(), ty.grad.numpy(), rtol=1e-6)
    with mt.no_grad():
        assert leaf.to(target).grad_fn is None and not leaf.to(target).requires_grad
    assert mt.tensor(data).to(target).grad_fn is None                  # nothing requires grad
    back = leaf.to(target)
    back.backward(mt.ones(2, 3, device=target), retain_graph=True)     # gradient given on the target
    assert leaf.grad.device == mt.device("cpu")


def test_device_move_is_recorded_and_gradient_reaches_cpu_leaf(numpy_cuda):
    _check_moves_are_recorded("cuda")


@pytest.mark.cuda
def test_device_move_is_recorded_on_the_gpu():
    _check_moves_are_recorded("cuda")


@pytest.mark.parametrize("cast", ["float", "double", "half", "bfloat16"])
def test_dtype_casts_are_recorded_like_pytorch(cast, rng):
    data = rng.standard_normal((3, 4))
    dtype, tdtype = (mt.float32, torch.float32) if cast == "double" else (mt.float64, torch.float64)
    leaf = mt.tensor(data, dtype=dtype, requires_grad=True)
    out = getattr(leaf, cast)()
    assert out.requires_grad and not out.is_leaf and out.grad_fn.name() == "CastBackward"
    (out.double() * mt.tensor(data)).sum().backward()
    tleaf = torch.tensor(data, dtype=tdtype, requires_grad=True)
    (getattr(tleaf, cast)().double() * torch.tensor(data)).sum().backward()
    assert leaf.grad.dtype is dtype                     # the gradient is cast back
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy(), rtol=1e-6)


def test_module_to_and_load_state_dict_keep_parameters_leaves(numpy_cuda):
    model = mt.nn.Linear(3, 2)
    model.to("cuda")
    model.to(dtype=mt.float64)
    for p in model.parameters():
        assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.device == mt.device("cuda")
    model.load_state_dict(mt.nn.Linear(3, 2).state_dict())
    assert all(p.is_leaf and p.dtype is mt.float64 for p in model.parameters())
    model(mt.ones(4, 3, dtype=mt.float64, device="cuda")).sum().backward()
    assert all(p.grad is not None and p.grad.device == mt.device("cuda") for p in model.parameters())


# ---- in-place writes: the leaf error and the version counter (issue 13) ------------------------------
def test_inplace_on_a_leaf_that_requires_grad_raises_like_pytorch(device):
    w = mt.ones(3, device=device, requires_grad=True)
    tw = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        tw.zero_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w.zero_()
    assert str(theirs.value).startswith("a leaf Variable that requires grad")
    with mt.no_grad():                                   # what optimizers and init do: allowed
        w.fill_(2.0)
    assert w.tolist() == [2.0, 2.0, 2.0] and w.is_leaf and w._version == 1
    y = (w * 2).fill_(0.0)                               # not a leaf: recorded (tests/test_inplace_autograd.py)
    assert y.requires_grad and not y.is_leaf and y.tolist() == [0.0, 0.0, 0.0]


def test_inplace_write_to_a_saved_tensor_raises_at_backward(device):
    w = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = mt.tensor([3.0, 4.0], device=device)
    y = (w * x).sum()                                    # Mul saved x
    x.fill_(0.0)
    tw, tx = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0])
    ty = (tw * tx).sum()
    tx.fill_(0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.backward()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[float32 tensor of shape \[2\]\] "
                                           r"\(saved tensor 1 of MulBackward\) is at version 1; expected version 0"):
        y.backward()
    z = w.exp()                                          # Exp saves its output
    loss = z.sum()
    z2 = (w * 1.0).exp() * 1.0
    with mt.no_grad():
        z.zero_()
    with pytest.raises(RuntimeError, match="ExpBackward"):
        loss.backward()
    x2 = mt.tensor([3.0, 4.0], device=device)
    y2 = (w * x2).sum()
    x2[0] = 5.0                                          # setitem writes in place too (phase 04)
    with pytest.raises(RuntimeError, match="is at version 1"):
        y2.backward()
    z2.sum().backward()                                  # untouched graphs still work
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_optimizer_step_bumps_the_version_of_its_parameters():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    opt = mt.optim.SGD([w], lr=0.1)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()                                  # PyTorch raises here too


def test_clone_copies_and_passes_the_gradient(device, rng):
    data = rng.standard_normal((3, 4))
    a = mt.tensor(data, device=device, requires_grad=True)
    c = a.T.clone()
    assert c.is_contiguous() and c.shape == (4, 3) and c.data_ptr() != a.data_ptr() and not c.is_leaf
    b = mt.tensor(data, device=device)
    assert b.clone().data_ptr() != b.data_ptr()          # a copy even when already compact
    (c * c).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), 2 * data, rtol=1e-6)


def test_requires_grad_flag_rules_like_pytorch():
    y = mt.ones(2, requires_grad=True) * 2
    assert y.requires_grad_() is y                        # already true on a non-leaf: no-op
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError) as theirs:
        (torch.ones(2, requires_grad=True) * 2).requires_grad_(False)
    assert "only change requires_grad flags of leaf variables" in str(theirs.value)
