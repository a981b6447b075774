"""Issue 13: in-place writes into tensors of an autograd graph, recorded as PyTorch records them
(CopySlices). ``y = a * 2`` (not a leaf) is written by ``y[key] = b``, ``index_put_``,
``masked_fill_``, ``fill_``, ``zero_``, ``copy_``, ``add_``/``sub_``/``mul_``/``div_``,
``clamp_``, ``scatter_``/``scatter_add_``; values and the gradients of ``a`` and ``b`` against
PyTorch (tests/oracle.py) on cpu and, through the ``device`` fixture, on cuda (every fresh cuda
allocation filled with 0xFF first, so an element a kernel forgot to write shows). Also: a leaf
that requires grad raises PyTorch's error, ops recorded before a write keep their gradient, and
ops that saved the written tensor raise at backward (the version counter)."""
import numpy as np
import pytest
import torch

import minitorch as mt
from oracle import check_op


pytestmark = pytest.mark.usefixtures("poisoned_allocator_on_cuda")


def _key(lib, spec, device):
    """``spec`` with its NumPy arrays as ``lib`` tensors (minitorch's on ``device``)."""
    def one(k):
        if isinstance(k, np.ndarray):
            return mt.tensor(k, device=device) if lib is mt else torch.tensor(k)
        return k
    return tuple(one(k) for k in spec) if isinstance(spec, tuple) else one(spec)


# key, shape of the value written (broadcasting to y[key]); y has shape (4, 5)
SETITEM = [
    (1, (5,)), (-1, (1,)), ((slice(1, 3),), (2, 5)), ((slice(None), slice(0, 5, 2)), (4, 1)),
    ((None, 2), (1, 5)), ((Ellipsis, 3), (4,)), ((1, Ellipsis), ()), (np.array([2, 0]), (5,)),
    ((np.array([3, 1]), slice(1, 4)), (2, 3)), ((slice(None), np.array([[4], [0]])), (4, 2, 1)),
    ((np.array([0, 3]), np.array([1, 4])), (1, 1, 2)), (np.array([True, False, True, True]), (3, 5)),
    (np.random.default_rng(1).random((4, 5)) < 0.5, ()),
]


@pytest.mark.parametrize("key,vshape", SETITEM, ids=[f"{i}" for i in range(len(SETITEM))])
def test_setitem_into_a_non_leaf_matches_pytorch(device, rng, key, vshape):
    """The brief's chain: y = a*2; y[key] = b; (y*y) -> a.grad zero where b went, b.grad summed."""
    def fn(lib, a, b):
        y = a * 2
        y[_key(lib, key, device)] = b
        return y * y
    check_op(fn, [(4, 5), vshape], device, rng)
    check_op(fn, [(4, 5), vshape], device, rng, dtype="float32", layout="transposed")


@pytest.mark.parametrize("key,vshape", SETITEM[:4] + SETITEM[7:9], ids=[f"{i}" for i in range(6)])
def test_setitem_of_a_value_that_requires_grad_into_a_plain_tensor(device, rng, key, vshape):
    """x made without grad becomes a non-leaf once a value that requires grad is written into it."""
    def fn(lib, a, b):
        x = a.detach().new_zeros(4, 5) + 1
        x[_key(lib, key, device)] = b * 3
        assert x.requires_grad and not x.is_leaf and x.grad_fn is not None
        return x * a
    check_op(fn, [(4, 5), vshape], device, rng)


def test_setitem_of_numbers_and_constant_tensors(device, rng):
    def fn(lib, a):
        y = a * 1.5
        y[0, 1:3] = 7.0
        y[2] = lib.ones(5, dtype=a.dtype, device=a.device) * 2
        return y.sin()
    check_op(fn, [(3, 5)], device, rng)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_into_a_non_leaf(device, rng, accumulate):
    rows = np.array([3, 0, 3, 1]) if accumulate else np.array([3, 0, 2])     # repeats only where they add up

    def fn(lib, a, v):
        y = a * a
        y.index_put_((_key(lib, rows, device),), v[: len(rows)], accumulate=accumulate)
        return y * 2
    check_op(fn, [(4, 3), (4, 3)], device, rng)


def test_masked_fill_fill_zero_and_clamp_on_a_non_leaf(device, rng):
    mask = rng.random((3, 4)) < 0.5

    def fn(lib, a, v):
        m = _key(lib, mask, device)
        y, z, w, u = a * 3, a + 1, a - 1, a * 1
        y.masked_fill_(m, 0.5)
        z.masked_fill_(m, v.sum())                   # a 0-d value that requires grad
        w.fill_(2.0)
        u.zero_().add_(a)
        return y * a + z * z + w * a + u.clamp_(-0.5, 0.7) * y
    check_op(fn, [(3, 4), (2,)], device, rng)


@pytest.mark.parametrize("alpha", [1, -2.5])
def test_arithmetic_in_place_with_operands_that_require_grad(device, rng, alpha):
    def fn(lib, a, b, c):
        y = a * 2
        y.add_(b, alpha=alpha).mul_(c).sub_(b * c, alpha=alpha).div_(c + 3)
        y.add_(y)                                    # the operand is the tensor written (add saves nothing)
        return y
    check_op(fn, [(3, 4), (4,), (3, 1)], device, rng, low=0.5, high=2.0)
    check_op(fn, [(3, 4), (4,), (3, 1)], device, rng, dtype="float32", layout="transposed", low=0.5, high=2.0)


def test_copy_broadcasts_casts_and_moves(device, rng):
    def fn(lib, a, v):
        y = a.sin()
        y.copy_(v)                                   # (3,) into (2, 3): its gradient summed over the rows
        return y * a
    a = rng.standard_normal((2, 3))
    check_op(fn, None, device, rng, arrays=[a, rng.standard_normal(3)])
    check_op(fn, None, device, rng, arrays=[a.astype(np.float32), rng.standard_normal((1, 3)).astype(np.float32)],
             dtype="float32")
    w = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float32, requires_grad=True)    # float32 on cpu into float64 on device
    y = mt.zeros(2, 3, dtype=mt.float64, device=device) * 1
    y.copy_(w * 1)
    (y * y).sum().backward()
    assert w.grad.dtype is mt.float32 and w.grad.device == mt.device("cpu"), "the gradient of copy_'s source " \
        "comes back in its dtype and on its device"
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 8.0, 12.0])


def test_scatter_and_scatter_add_in_place(device, rng):
    index = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])

    def fn(lib, a, src):
        i = _key(lib, index, device)
        y, z, w = a * 2, a * 3, a + 0.5
        y.scatter_(0, i, src)
        z.scatter_add_(0, i, src)
        w.scatter_(1, i[:, :2], 1.5)
        return y * z + w
    check_op(fn, [(3, 4), (2, 4)], device, rng)


def test_uses_recorded_before_a_write_keep_the_old_value(device, rng):
    """w = y + 1 before y is written: w's gradient goes to y's old node (2 per element of a)."""
    def fn(lib, a, b):
        y = a * 2
        w = y + 1
        y[0] = b
        y.mul_(b)
        return w * y
    check_op(fn, [(3, 4), (4,)], device, rng)


def test_several_writes_in_a_row(device, rng):
    def fn(lib, a, b):
        y = a * 2
        y[1:, 2] = b
        y[0] = y[2] + b[0]                           # the value reads y itself
        y[:, 0] = 0.0
        return y.exp()
    check_op(fn, [(3, 4), (2,)], device, rng)


def test_leaf_and_view_of_a_leaf_raise_pytorch_errors(device):
    w = mt.ones(4, device=device, requires_grad=True)
    tw = torch.ones(4, requires_grad=True)
    writes = [lambda t: t.__setitem__(1, 2.0), lambda t: t.index_put_((t.new_tensor([1]).long(),), t.new_tensor([1.0])),
              lambda t: t.masked_fill_(t > 0, 1.0), lambda t: t.fill_(1.0), lambda t: t.zero_(),
              lambda t: t.copy_(t * 2), lambda t: t.add_(1.0), lambda t: t.sub_(1.0), lambda t: t.mul_(2.0),
              lambda t: t.div_(2.0), lambda t: t.clamp_(0.0, 1.0),
              lambda t: t.scatter_(0, t.new_tensor([0]).long(), 1.0),
              lambda t: t.scatter_add_(0, t.new_tensor([0]).long(), t.new_tensor([1.0]))]
    for write in writes:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            write(tw)
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
            write(w)
    assert w.tolist() == [1.0] * 4 and w._version == 0, "a refused write leaves the leaf untouched"
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        tw[1:3].mul_(2.0)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        w[1:3].mul_(2.0)
    with mt.no_grad():
        w[1:3] = 5.0
        w.mul_(2.0)
    assert w.tolist() == [2.0, 10.0, 10.0, 2.0] and w.is_leaf and w.grad_fn is None


@pytest.mark.parametrize("key", [1, (slice(1, 3),), (Ellipsis, 2), (slice(None), slice(0, 4, 2)), (None, 0, 1)],
                         ids=str)
def test_writes_through_a_view_reach_its_base(device, rng, key):
    """y[key].mul_(b) and friends: the base y moves onto the new node (PyTorch's CopySlices), the
    view reads y[key] again; views of views too."""
    def fn(lib, a, b):
        y = a * 2
        v = y[key]
        v.mul_(b.sum()).add_(b.sum() * 0.5)
        v[...] = v * 3                               # setitem into the view
        inner = y[key]
        inner[..., :1].fill_(1.5)                    # a view of a view; v, taken before, sees it too
        return y * v.sum() + y.sin()
    check_op(fn, [(3, 4), (2,)], device, rng)


def test_a_view_taken_before_its_base_is_written_reads_the_new_base(device, rng):
    def fn(lib, a, b):
        y = a * 2
        col, row = y[:, 1], y[0]
        y[0, 1:] = b                                 # col and row were taken before
        y.mul_(a)
        return (col[1:] * row[1:]).sum() + y
    check_op(fn, [(3, 3), (2,)], device, rng)


def test_a_view_of_a_plain_tensor_passes_the_gradient_to_its_base(device, rng):
    def fn(lib, a):
        x = a.detach().new_zeros(2, 3)
        row = x[1]
        row.copy_(a[0] * 2)
        return x * x + row.sum()
    check_op(fn, [(2, 3)], device, rng)


def test_other_views_of_a_non_leaf_raise_clearly(device):
    """PyTorch records a write through any view; ours through y[key] only (the views that know their base)."""
    a = mt.ones(4, device=device, requires_grad=True)
    y = a * 2
    with pytest.raises(RuntimeError, match=r"copy_: this tensor is a view of another tensor that requires grad"):
        y.reshape(2, 2).copy_(mt.zeros(2, 2, device=device))
    with pytest.raises(RuntimeError, match="mul_: this tensor is a view of another tensor"):
        y.reshape(2, 2).t().mul_(2.0)
    assert y.tolist() == [2.0] * 4


def test_saved_tensors_written_later_raise_at_backward(device):
    a, ta = mt.tensor([0.5, 1.0], device=device, requires_grad=True), torch.tensor([0.5, 1.0], requires_grad=True)
    ours, theirs = a.exp(), ta.exp()                 # exp saves its output
    lo, lt = (ours * 3).sum(), (theirs * 3).sum()
    for t in (ours, theirs):
        t[0] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        lt.backward()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*ExpBackward.*is at version 1"):
        lo.backward()
    for lib, b in ((mt, mt.tensor([1.0, 2.0], device=device, requires_grad=True)),
                   (torch, torch.tensor([1.0, 2.0], requires_grad=True))):
        y = b * 1
        z = y * y                                    # saves y
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        y = b * 2
        y.mul_(y)                                    # mul saved its operand y, which the write changes
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = b * 2
        z = y * y
        y[0:1].mul_(2.0)                             # a write through a view of y changes y
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        y = b * 2
        v = y[1:]
        z = v * v                                    # saves the view v
        y[0] = 3.0                                   # the base and its views share one version counter
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        c = lib.zeros(3, device=b.device)
        v = c[1:]
        z = b * v                                    # saves v, a view of a tensor without grad
        with lib.no_grad():
            c.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_later_uses_see_the_new_value_and_node(device):
    a = mt.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = a * 2
    node = y.grad_fn
    assert y.add_(1.0) is y and y.grad_fn is not node and y.tolist() == [3.0, 5.0, 7.0]
    assert y._version == 1 and not y.is_leaf
    x = mt.zeros(3, device=device)
    x[1] = a[0]
    assert x.requires_grad and not x.is_leaf, "x holds a value that requires grad, so it is now part of the graph"
    (x * y).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), [5.0, 2.0, 0.0], rtol=1e-6)


def test_random_fills_of_a_non_leaf_are_recorded_with_zero_gradient(device):
    a = mt.ones(2, 3, device=device, requires_grad=True)
    y = a * 2
    y.uniform_(-1.0, 1.0)
    z = a * 3
    z.normal_(generator=mt.Generator(device=device).manual_seed(0))
    assert y.requires_grad and z.requires_grad and (y.abs() <= 1).all().item()
    (y * a + z).sum().backward()                     # only the direct use of a gives a gradient
    np.testing.assert_allclose(a.grad.cpu().numpy(), y.detach().cpu().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.uniform_()


def test_second_derivatives_through_recorded_writes(device):
    results = []
    for lib, dev in ((mt, device), (torch, "cpu")):
        a = lib.tensor([1.0, 2.0, 3.0, 4.0], device=dev, requires_grad=True)
        b = lib.tensor([0.5, 1.5], device=dev, requires_grad=True)
        y = a * a
        y[1:3] = b * b
        y.mul_(a)
        g, = lib.autograd.grad((y * y).sum(), a, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), b)
        results.append((g.detach().cpu().numpy(), h.cpu().numpy()))
    (g_ours, h_ours), (g_theirs, h_theirs) = results
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-6, err_msg="first derivative through x[key] = v and mul_")
    np.testing.assert_allclose(h_ours, h_theirs, rtol=1e-6, err_msg="second derivative through x[key] = v and mul_")
