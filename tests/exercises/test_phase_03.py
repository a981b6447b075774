"""Grading tests of phase 03 (backward): op backwards, folding broadcast gradients, the
topological sort, the SGD step, gradient checking, and two kernels (block reduction, fused SGD).

Run by ``minitorch-course check 03`` against a workspace, and by pytest against the repository.
An op's backward is called directly on the node its forward recorded, so it is graded without the
backward pass (exercise 03.4); PyTorch (cpu) is the reference.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close  # noqa: E402

import minitorch as mt  # noqa: E402
from minitorch.utils.exercises import exercise  # noqa: E402


def _leaf(x):
    return mt.tensor(np.asarray(x), requires_grad=True)


def _np(t):
    return t.detach().cpu().numpy()


def _torch_grads(fn, *xs, grad):
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    fn(*ts).backward(torch.tensor(grad))
    return [t.grad.numpy() for t in ts]


@exercise("03.1")
def test_mul_backward():
    rng = np.random.default_rng(31)
    a, b, g = (rng.standard_normal((4, 5)) for _ in range(3))
    y = _leaf(a) * _leaf(b)
    ga, gb = y.grad_fn.fn.backward(y.grad_fn.ctx, mt.tensor(g))
    want_a, want_b = _torch_grads(lambda x, z: x * z, a, b, grad=g)
    close(_np(ga), want_a, "Mul.backward: the gradient for a")
    close(_np(gb), want_b, "Mul.backward: the gradient for b")


@exercise("03.2")
def test_matmul_backward_gives_linears_gradients():
    rng = np.random.default_rng(32)
    x, w, g = rng.standard_normal((6, 4)), rng.standard_normal((3, 4)), rng.standard_normal((6, 3))
    y = _leaf(x) @ _leaf(w).T                                     # Linear without bias: x W^T
    node = y.grad_fn
    gx, gwt = node.fn.backward(node.ctx, mt.tensor(g))
    want_x, want_w = _torch_grads(lambda a, b: a @ b.T, x, w, grad=g)
    close(_np(gx), want_x, "MatMul.backward: the gradient for the input x (grad @ W)")
    close(_np(gwt).T, want_w, "MatMul.backward: the gradient for the weight (grad^T @ x)")
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 2))
    y = mt.tensor(a) @ _leaf(b)                                   # only b needs a gradient
    ga, gb = y.grad_fn.fn.backward(y.grad_fn.ctx, mt.tensor(np.ones((5, 2))))
    assert ga is None, "MatMul.backward should return None for an input that needs no gradient"
    close(_np(gb), a.T @ np.ones((5, 2)), "MatMul.backward: the gradient for b = A^T @ grad")


@exercise("03.3")
def test_sum_to_folds_broadcast_gradients():
    from minitorch.ops.elementwise import _sum_to
    rng = np.random.default_rng(33)
    for grad_shape, shape in [((2, 4, 3, 5), (4, 1, 5)), ((6, 3), (3,)), ((6, 3), (6, 1)), ((2, 3), ()),
                              ((4, 1, 5), (1, 1, 5)), ((3, 4), (1, 4))]:
        g = rng.standard_normal(grad_shape)
        lead = len(grad_shape) - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad_shape[lead + i] != 1)
        want = g.sum(axis=dims, keepdims=True).reshape(shape) if dims else g.reshape(shape)
        got = _sum_to(mt.tensor(g), mt.Size(shape) if hasattr(mt, "Size") else shape)
        close(_np(got), want, f"_sum_to of a {grad_shape} gradient to {shape}")


@exercise("03.4")
def test_topological_order_and_backward():
    from minitorch.autograd.engine import _topological_order
    x0 = np.array([0.5, -1.0, 2.0])
    x = _leaf(x0)
    a = x + 1.0                 # AddScalar
    b = a.exp()                 # Exp
    c = a + b                   # Add: a feeds c twice (directly and through b)
    d = c.sum()
    order = _topological_order(d.grad_fn)
    nodes = [d.grad_fn, c.grad_fn, b.grad_fn, a.grad_fn]
    assert len(order) == 4 and set(map(id, order)) == set(map(id, nodes)), \
        f"_topological_order should list the 4 nodes once each, got {order}"
    pos = {id(n): k for k, n in enumerate(order)}
    for later, earlier in [(d, c), (c, b), (c, a), (b, a)]:
        assert pos[id(later.grad_fn)] < pos[id(earlier.grad_fn)], \
            f"{later.grad_fn} must come before {earlier.grad_fn} (it consumes its output), got {order}"
    d.backward()
    close(_np(x.grad), 1 + np.exp(x0 + 1), "x.grad after backward through a node used twice")
    deep = _leaf(np.ones(2))
    y = deep
    for _ in range(3000):       # deeper than Python's recursion limit
        y = y + 1.0
    y.sum().backward()
    close(_np(deep.grad), np.ones(2), "x.grad through 3000 nodes (no recursion)")


@exercise("03.7")
def test_sgd_step_matches_torch():
    rng = np.random.default_rng(35)
    for kw in [dict(lr=0.1), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
               dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)]:
        p0 = rng.standard_normal((3, 4)).astype(np.float32)
        grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
        p, tp = _leaf(p0.copy()), torch.tensor(p0.copy(), requires_grad=True)
        opt, topt = mt.optim.SGD([p], **kw), torch.optim.SGD([tp], **kw)
        for g in grads:
            p.grad, tp.grad = mt.tensor(g), torch.tensor(g)
            opt.step()
            topt.step()
        close(_np(p), tp.detach().numpy(), f"the parameter after 3 SGD steps with {kw}")


class _WrongExp(mt.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        out = a.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out * 1.01           # 1% off


@exercise("03.6", needs=("03.1", "03.4"))
def test_gradcheck_tells_right_from_wrong():
    from minitorch.autograd import gradcheck
    from minitorch.autograd.gradcheck import GradcheckError
    x = mt.tensor(np.random.default_rng(36).standard_normal((3, 2)), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda t: (t * 2.0 + 1.0).exp(), [x]) is True, "gradcheck should pass a correct gradient"
    try:
        gradcheck(lambda t: _WrongExp.apply(t), [x])
    except GradcheckError as e:
        assert "element" in str(e), f"gradcheck's error should name the element: {e}"
    else:
        raise AssertionError("gradcheck should raise GradcheckError for a gradient 1% off")


# ---- kernels -------------------------------------------------------------------------------------

def _dev(host):
    from minitorch.cuda import array
    return array.from_numpy(host, 0)


def _host(d):
    from minitorch.cuda import array
    return array.to_numpy(d)


@exercise("03.5", cuda=True)
def test_block_reduction_sums():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(37)
    for shape, dims in [((1_000_003,), (0,)), ((300, 5000), (1,)), ((64, 33, 100), (1, 2)), ((7, 4097), (1,))]:
        a = rng.standard_normal(shape)
        close(_host(backend.sum(_dev(a), dims)), a.sum(axis=dims), f"sum of a {shape} float64 array over {dims}",
              rtol=1e-9, atol=1e-9)
    i = rng.integers(-1000, 1000, (50, 3000))
    close(_host(backend.sum(_dev(i), (1,))), i.sum(axis=1), "int64 sum over rows of 3000", rtol=0, atol=0)


@exercise("03.8", cuda=True)
def test_fused_sgd_kernel_matches_torch():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(38)
    for kw in [dict(lr=0.1), dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
               dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)]:
        p0 = rng.standard_normal(10_001).astype(np.float32)
        tp = torch.tensor(p0.copy(), requires_grad=True)
        topt = torch.optim.SGD([tp], **kw)
        p = _dev(p0.copy())
        buf = _dev(np.zeros_like(p0)) if kw.get("momentum") else None
        for step in range(3):
            g = rng.standard_normal(10_001).astype(np.float32)
            backend.sgd_step(p, _dev(g), buf, kw["lr"], kw.get("momentum", 0.0), kw.get("dampening", 0.0),
                             kw.get("weight_decay", 0.0), kw.get("nesterov", False), kw.get("maximize", False), step == 0)
            tp.grad = torch.tensor(g)
            topt.step()
        close(_host(p), tp.detach().numpy(), f"the parameter after 3 fused SGD steps with {kw}")
