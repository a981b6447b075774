"""Phase 03, autograd beyond backward(): ``.data``, tensor hooks, ``retain_grad``,
``autograd.grad`` (higher derivatives with create_graph), custom ``autograd.Function``s, and
anomaly detection, each compared with PyTorch."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch.autograd import Function


def _pair(array, device, requires_grad=True):
    return (mt.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _close(ours, theirs, what):
    assert ours is not None, f"{what}: got None"
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12,
                               err_msg=what)


# ---- .data ------------------------------------------------------------------------------------------

def test_data_shares_memory_outside_autograd_and_can_be_replaced(device):
    x = mt.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.grad_fn is None and d.data_ptr() == x.data_ptr()
    d.mul_(2)                                  # no error: .data is outside autograd
    assert x.tolist() == [2.0, 4.0, 6.0]
    y = (x * 3).sum()
    assert y.data.grad_fn is None
    x.data = mt.zeros(2, 2, dtype=mt.float64, device=device)      # PyTorch lets .data change shape and dtype
    assert x.shape == (2, 2) and x.dtype is mt.float64 and x.requires_grad and x.is_leaf
    with pytest.raises(TypeError, match="data must be a Tensor"):
        x.data = [1.0]


# ---- hooks and retain_grad --------------------------------------------------------------------------

def _hooked(lib, x):
    """y = 3x (hooked: x100, retained), z = sum(y * y) + sum(x); x's hook doubles its gradient."""
    log = []
    hx = x.register_hook(lambda g: (log.append("x"), g * 2)[1])
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: (log.append("y"), g * 100)[1])
    y.register_hook(lambda g: log.append("y seen"))          # returning None keeps the gradient
    z = (y * y).sum() + x.sum()
    return y, z, log, hx


def test_hooks_and_retain_grad_like_torch(device, rng):
    a = rng.standard_normal(4)
    x, tx = _pair(a, device)
    y, z, log, _ = _hooked(mt, x)
    ty, tz, tlog, _ = _hooked(torch, tx)
    z.backward()
    tz.backward()
    assert log == tlog == ["y", "y seen", "x"]
    _close(x.grad, tx.grad, "x.grad after hooks")
    _close(y.grad, ty.grad, "retained y.grad (after y's hooks)")
    assert y.retains_grad and not x.retains_grad


def test_hook_handle_remove_and_errors(device):
    x = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = x.register_hook(lambda g: g * 0)
    h.remove()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        mt.ones(2, device=device).register_hook(print)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        mt.ones(2, device=device).retain_grad()


def test_hooks_and_retained_grads_also_act_in_autograd_grad_like_torch(device, rng):
    a = rng.standard_normal(3)
    x, tx = _pair(a, device)
    y, z, _, _ = _hooked(mt, x)
    ty, tz, _, _ = _hooked(torch, tx)
    # (Not [x, y] at once: PyTorch 2.x then hands back y's gradient from before y's hooks, unlike
    # for [y] alone; we apply the hooks in both cases.)
    for inputs, tinputs in [([x], [tx]), ([y], [ty]), ([x], [tx])]:
        got = mt.autograd.grad(z, inputs, retain_graph=True)
        want = torch.autograd.grad(tz, tinputs, retain_graph=True)
        for k, (g, tg) in enumerate(zip(got, want)):
            _close(g, tg, f"grad wrt input {k}")
        _close(y.grad, ty.grad, "retained y.grad accumulates across passes")
    assert x.grad is None and tx.grad is None                 # autograd.grad never writes a leaf's .grad
    w, tw = _pair(rng.standard_normal(3), device)
    seen = []
    w.register_hook(lambda g: seen.append("w"))
    tw.register_hook(lambda g: seen.append("torch w"))
    v, tv = w * 2, tw * 2
    v.register_hook(lambda g: seen.append("v"))
    tv.register_hook(lambda g: seen.append("torch v"))
    mt.autograd.grad((x * w * v).sum(), x)
    torch.autograd.grad((tx * tw * tv).sum(), tx)
    assert seen == [], "hooks of tensors grad() was not asked about, nor leading to one, do not run"


# ---- autograd.grad ----------------------------------------------------------------------------------

def test_grad_returns_a_tuple_and_leaves_grad_alone(device, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, tx = _pair(a, device)
    w, tw = _pair(b, device)
    out, tout = (x @ w).tanh(), (tx @ tw).tanh()
    g = rng.standard_normal((3, 2))
    got = mt.autograd.grad(out, (x, w), grad_outputs=mt.tensor(g, device=device))
    want = torch.autograd.grad(tout, (tx, tw), grad_outputs=torch.tensor(g))
    assert isinstance(got, tuple) and len(got) == 2
    _close(got[0], want[0], "d/dx")
    _close(got[1], want[1], "d/dw")
    assert x.grad is None and w.grad is None and not got[0].requires_grad
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        mt.autograd.grad(out, x, grad_outputs=mt.tensor(g, device=device))     # retain_graph defaulted to False


def test_grad_of_several_outputs_and_of_a_non_leaf(device, rng):
    a = rng.standard_normal(5)
    x, tx = _pair(a, device)
    h, th = x.sigmoid(), tx.sigmoid()
    o1, o2 = (h * h).sum(), (h * x).sum()
    t1, t2 = (th * th).sum(), (th * tx).sum()
    got = mt.autograd.grad([o1, o2], [h, x])
    want = torch.autograd.grad([t1, t2], [th, tx])
    _close(got[0], want[0], "d/dh (a non-leaf input)")
    _close(got[1], want[1], "d/dx through both outputs")


def test_grad_errors_and_allow_unused_like_torch(device):
    x = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    unused = mt.tensor([1.0], device=device, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used"):
        mt.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = mt.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and gu is None
    g1, g2 = mt.autograd.grad(y, [x, x], retain_graph=True)          # an input named twice gets it twice
    assert g1.tolist() == g2.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        mt.autograd.grad(y, [mt.ones(2, device=device)], retain_graph=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        mt.autograd.grad(x * 2, x)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        mt.autograd.grad(mt.ones(1, device=device), x)


SECOND = {
    "tanh": lambda lib, x, w: lib.tanh(x).sum(),
    "sigmoid": lambda lib, x, w: lib.sigmoid(x * 1.5).sum(),
    "matmul": lambda lib, x, w: ((x @ w) * (x @ w)).sum(),
    "matmul_tanh": lambda lib, x, w: lib.tanh(x @ w).sum(),
    "relu": lambda lib, x, w: (lib.relu(x) * x).sum(),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_derivatives_with_create_graph_like_torch(device, rng, name):
    """dL/dx with create_graph, then the gradient of sum(dL/dx * v) (a Hessian-vector product)
    with respect to x and w, on both libraries."""
    fn = SECOND[name]
    a, b, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
    x, tx = _pair(a, device)
    w, tw = _pair(b, device)
    gx, = mt.autograd.grad(fn(mt, x, w), x, create_graph=True)
    tgx, = torch.autograd.grad(fn(torch, tx, tw), tx, create_graph=True)
    _close(gx, tgx, f"{name}: first derivative")
    assert gx.requires_grad, f"{name}: with create_graph the gradient is itself differentiable"
    inputs, tinputs = ([x, w], [tx, tw]) if "matmul" in name else ([x], [tx])
    hv = mt.autograd.grad((gx * mt.tensor(v, device=device)).sum(), inputs, allow_unused=True)
    thv = torch.autograd.grad((tgx * torch.tensor(v)).sum(), tinputs, allow_unused=True)
    for g, tg, what in zip(hv, thv, ("x", "w")):
        _close(g, tg, f"{name}: second derivative wrt {what}")


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_then_backward_again(device, rng):
    a = rng.standard_normal(4)
    x, tx = _pair(a, device)
    x.tanh().sum().backward(create_graph=True)
    tx.tanh().sum().backward(create_graph=True)
    g, tg = x.grad, tx.grad
    x.grad, tx.grad = None, None
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    _close(x.grad, tx.grad, "d/dx of |d tanh/dx|^2")


# ---- custom Functions -------------------------------------------------------------------------------

def _cube(lib):
    base = mt.autograd.Function if lib is mt else torch.autograd.Function

    class Cube(base):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * x * scale

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            assert ctx.needs_input_grad[:1] == (True,)
            return grad * 3 * x * x * ctx.scale, None
    return Cube


def test_custom_function_like_torch(device, rng):
    a = rng.standard_normal(5)
    x, tx = _pair(a, device)
    y, ty = _cube(mt).apply(x, 2.0), _cube(torch).apply(tx, 2.0)
    _close(y, ty, "Cube forward")
    assert y.grad_fn is not None and y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad, "Cube backward")
    with mt.no_grad():
        assert _cube(mt).apply(x, 2.0).grad_fn is None
    x.data.mul_(2)                              # .data writes bypass the version check ...
    z = _cube(mt).apply(x, 1.0)
    with mt.no_grad():
        x.add_(1)                               # ... an in-place op does not: saved x is stale
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def _two_outputs(lib):
    base = mt.autograd.Function if lib is mt else torch.autograd.Function

    class SquareAndCopy(base):
        """Returns (x^2, a copy of x marked non-differentiable): two outputs, one gradient path."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            keep = x * 1.0
            ctx.mark_non_differentiable(keep)
            return x * x, keep

        @staticmethod
        def backward(ctx, g_sq, g_keep):
            x, = ctx.saved_tensors
            assert g_keep is not None and g_keep.abs().sum().item() == 0.0, "unused outputs get zeros"
            return 2 * x * g_sq
    return SquareAndCopy


def test_custom_function_with_two_outputs_and_mark_non_differentiable(device, rng):
    a = rng.standard_normal(4)
    x, tx = _pair(a, device)
    sq, keep = _two_outputs(mt).apply(x)
    tsq, tkeep = _two_outputs(torch).apply(tx)
    assert not keep.requires_grad and not tkeep.requires_grad
    assert sq.requires_grad and sq.grad_fn is not None
    (sq * 3).sum().backward()
    (tsq * 3).sum().backward()
    _close(x.grad, tx.grad, "gradient through the differentiable output")


def test_custom_function_returning_its_input_does_not_change_the_input(device):
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# ---- anomaly detection ------------------------------------------------------------------------------

class _NanBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_detect_anomaly_names_the_op_whose_backward_made_a_nan(device):
    x = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    _NanBackward.apply(x).sum().backward()                   # off: the NaN passes silently
    assert np.isnan(x.grad.cpu().numpy()).all()
    assert not mt.autograd.is_anomaly_enabled()
    with mt.autograd.detect_anomaly():
        assert mt.autograd.is_anomaly_enabled()
        y = _NanBackward.apply(x).sum()
        with pytest.warns(UserWarning, match="Traceback of forward call"):
            with pytest.raises(RuntimeError, match=r"Function '_NanBackwardBackward' returned nan values in its 0th output\."):
                y.backward()
    assert not mt.autograd.is_anomaly_enabled()
    with mt.autograd.set_detect_anomaly(True):               # log's backward: 0 / 0 at z = 0
        z = mt.tensor([0.0, 1.0], device=device, requires_grad=True)
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match=r"Function 'LogBackward' returned nan values"):
            (z.log() * 0).sum().backward()
    assert not mt.autograd.is_anomaly_enabled()
    with mt.autograd.detect_anomaly():                       # no NaN: nothing raised
        (x * 2).sum().backward()
    with mt.autograd.detect_anomaly(check_nan=False):        # tracebacks kept, NaNs not checked
        _NanBackward.apply(x).sum().backward()
    assert not mt.autograd.is_anomaly_enabled()

    @mt.autograd.detect_anomaly()
    def decorated():
        assert mt.autograd.is_anomaly_enabled()
    decorated()


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_torch_agrees_on_the_anomaly_message():
    z = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match=r"Function 'LogBackward0' returned nan values in its 0th output\."):
            (z.log() * 0).sum().backward()


def _split(lib):
    base = mt.autograd.Function if lib is mt else torch.autograd.Function

    class Split(base):
        """(2x, x^2): two differentiable outputs of one node."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.set_materialize_grads(False)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g_double, g_square):
            x, = ctx.saved_tensors
            total = None if g_double is None else g_double * 2
            if g_square is not None:
                total = g_square * 2 * x if total is None else total + g_square * 2 * x
            return total
    return Split


def _run_split(lib, x):
    """Hook on output 1, retain_grad on output 0, a backward through both, then autograd.grad
    through output 1 alone (output 0's gradient arrives as None: materialize_grads is off)."""
    d, s = _split(lib).apply(x)
    d.retain_grad()
    s.register_hook(lambda g: g * 10)
    ((d * s).sum() + s.sum()).backward(retain_graph=True)
    only_square, = lib.autograd.grad(s.sum(), x)
    return x.grad, d.grad, only_square


def test_custom_function_with_two_outputs_hooks_retain_grad_and_grad_like_torch(device, rng):
    x, tx = _pair(rng.standard_normal(3), device)
    for ours, theirs, what in zip(_run_split(mt, x), _run_split(torch, tx),
                                  ("x.grad", "retained grad of output 0", "grad through output 1 alone")):
        _close(ours, theirs, what)
