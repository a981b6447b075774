"""Phase 04 indexing: ``x[key]`` (basic views and advanced gathers), ``x[key] = value``,
index_select, index_add, nonzero, cat and stack - values against PyTorch/NumPy, gradients against
PyTorch (repeated indices included), views sharing memory, and PyTorch's error messages. Every test
runs on cpu and, marked cuda, on the GPU (the ``device`` fixture); backend twins are compared
directly at the end."""
import numpy as np
import pytest
import torch

import minitorch as mt

from helpers import backward_both, tensor, to_np

SHAPE = (4, 5, 6)


def _keys(key, make):
    """``key`` with its lists / arrays turned into index tensors by ``make``."""
    items = key if isinstance(key, tuple) else (key,)
    return tuple(make(np.asarray(k)) if isinstance(k, (list, np.ndarray)) else k for k in items)


def _check_against_torch(device, rng, x, key, grad=True):
    ours = tensor(x, device, requires_grad=grad)
    theirs = torch.tensor(x, requires_grad=grad)
    y = ours[_keys(key, lambda a: tensor(a, device))]
    ty = theirs[_keys(key, torch.tensor)]
    assert tuple(y.shape) == tuple(ty.shape), (key, y.shape, ty.shape)
    np.testing.assert_array_equal(to_np(y), ty.detach().numpy())
    if grad and ty.numel():
        w = rng.standard_normal(tuple(ty.shape))
        backward_both(y, ty, w, device)
        np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
    return y


# ---- basic indexing: views ----------------------------------------------------------------------------
BASIC = [0, -1, 3, (1, 2), (1, 2, 3), (-4, -5, -6), slice(None), slice(1, 3), slice(None, None, 2),
         (slice(1, None, 3), slice(None, None, 2)), (Ellipsis, 1), (Ellipsis, slice(2, 5, 2)), (None,),
         (None, 0, None, Ellipsis, None), (2, Ellipsis), (slice(10, 20),), (slice(-100, 2),), (slice(3, 1),),
         (1, slice(None), None, slice(1, -1, 4)), Ellipsis, ()]


@pytest.mark.parametrize("key", BASIC, ids=repr)
def test_basic_indexing_matches_pytorch_and_is_a_view(device, rng, key):
    x = rng.standard_normal(SHAPE)
    y = _check_against_torch(device, rng, x, key)
    base = tensor(x, device)
    view = base[key]
    if view.numel():                              # a view: it lies inside base's memory, no copy
        itemsize = base.element_size()
        assert base.data_ptr() <= view.data_ptr() < base.data_ptr() + base.numel() * itemsize
    assert y.dtype == mt.float64


def test_writes_through_a_view_reach_the_base(device):
    x = mt.zeros(3, 4, device=device)
    x[1][2:] = 7.0
    x[:, 0] = mt.tensor([1.0, 2.0, 3.0], device=device)
    x[0, 1] = 5
    assert x.tolist() == [[1, 5, 0, 0], [2, 0, 7, 7], [3, 0, 0, 0]]


def test_iterating_a_tensor_gives_its_rows(device):
    x = tensor(np.arange(6).reshape(3, 2), device)
    assert [r.tolist() for r in x] == [[0, 1], [2, 3], [4, 5]]


# ---- advanced indexing: gathers ----------------------------------------------------------------------
ADVANCED = [
    [2, 0, 0, -1],                                            # one index tensor, repeats and negatives
    (slice(None), [4, 4, 1]),                                 # in the middle
    (Ellipsis, [5, 0]),                                       # last
    np.array([[0, 1], [3, 3]]),                               # a 2-D index
    ([0, 2], slice(None), [5, 1]),                            # separated: broadcast dims go first
    ([[0], [3]], [1, 2, 4]),                                  # broadcasting (2,1) with (3,)
    (slice(1, 3), [0, 4], [5, 5]),                            # adjacent pair after a slice
    (0, slice(None), [1, 2]),                                 # ints are basic in PyTorch
    (slice(None), 1, [0, 3]),
    (None, [1, 2], None, slice(None), [0, 1]),
    ([-4, 3], [-5, 4], [-6, 5]),                              # every dimension
    (np.zeros(0, np.int64),),                                 # empty
    (slice(None, None, 2), [[1, 0]], slice(1, None, 3)),
]


@pytest.mark.parametrize("key", ADVANCED, ids=lambda k: repr(k).replace(" ", "")[:60])
def test_advanced_indexing_matches_pytorch(device, rng, key):
    _check_against_torch(device, rng, rng.standard_normal(SHAPE), key)


@pytest.mark.parametrize("mask_dims", [1, 2, 3])
def test_bool_masks_over_leading_dims(device, rng, mask_dims):
    x = rng.standard_normal(SHAPE)
    mask = rng.random(SHAPE[:mask_dims]) < 0.4
    _check_against_torch(device, rng, x, (mask,))
    _check_against_torch(device, rng, x, (x > 0.5,))
    if mask_dims < 3:
        _check_against_torch(device, rng, x, (slice(None), rng.random(SHAPE[1:1 + mask_dims]) < 0.5))
    _check_against_torch(device, rng, x, (np.zeros(SHAPE[:mask_dims], bool),))         # nothing selected
    _check_against_torch(device, rng, x, (np.ones(SHAPE[:mask_dims], bool),))          # everything


def test_masks_mixed_with_index_tensors_and_scalar_bools(device, rng):
    x = rng.standard_normal(SHAPE)
    _check_against_torch(device, rng, x, (np.array([True, False, True, True]), slice(None), [0, 5, 1]))
    _check_against_torch(device, rng, x, (True,))
    _check_against_torch(device, rng, x, (False,))
    _check_against_torch(device, rng, x, (Ellipsis, True))


def test_gather_of_every_dtype_and_of_views(device, rng):
    for x in (rng.integers(-9, 9, (5, 4)), rng.random((5, 4)) < 0.5, rng.standard_normal((5, 4)).astype(np.float32)):
        t = tensor(x, device)
        np.testing.assert_array_equal(to_np(t[[4, 0, 0]]), x[[4, 0, 0]])
        np.testing.assert_array_equal(to_np(t.T[[3, 1]]), x.T[[3, 1]])                       # strided source
        np.testing.assert_array_equal(to_np(t[1:, ::2][[0, 2], [1, 0]]), x[1:, ::2][[0, 2], [1, 0]])
    idx = tensor(np.arange(10), device)[::3]                  # a strided index tensor
    np.testing.assert_array_equal(to_np(tensor(np.arange(20.0), device)[idx]), np.arange(20.0)[::3][:4])


def test_a_large_mask_crosses_kernel_blocks(device, rng):
    x = rng.standard_normal((3, 10_007))
    keep = x > 0.3
    np.testing.assert_array_equal(to_np(tensor(x, device)[tensor(keep, device)]), x[keep])
    np.testing.assert_array_equal(to_np(tensor(x, device).nonzero()), np.argwhere(x))


# ---- errors ----------------------------------------------------------------------------------------------
def test_errors_match_pytorch(device):
    x = mt.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[:, ::0]
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        x[2]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        x[0, -4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match the shape of the "
                                         r"indexed tensor \[2, 3\] at index 0"):
        x[mt.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing tensors could not be broadcast together with "
                                         r"shapes \[2\], \[3\]"):
        x[mt.tensor([0, 1], device=device), mt.tensor([0, 1, 2], device=device)]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[mt.tensor([0.0], device=device)]
    with pytest.raises(IndexError, match=r"only integers, slices .* are valid indices \(got float\)"):
        x[1.5]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    if device == "cpu":                                   # index tensors are checked where it is cheap
        with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 1 with size 3"):
            x[:, mt.tensor([0, 7])]


@pytest.mark.cuda
def test_out_of_range_index_tensors_on_the_gpu_give_nan_not_a_crash():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    got = x[mt.tensor([1, 5, -1, -3], device="cuda")].tolist()
    assert got[0] == [3.0, 4.0] and got[2] == [3.0, 4.0] and all(np.isnan(got[1])) and all(np.isnan(got[3]))
    assert mt.tensor([7, 8], device="cuda")[mt.tensor([2], device="cuda")].tolist() == [0]
    assert np.isnan(x[mt.tensor([0, 1], device="cuda"), mt.tensor([1, 2], device="cuda")].tolist()[1])


# ---- index_select / index_add ---------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_matches_pytorch(device, rng, dim):
    x = rng.standard_normal(SHAPE)
    n = SHAPE[dim]
    idx = np.array([n - 1, 0, 0, 1, -1])
    ours = tensor(x, device, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y = mt.index_select(ours, dim, tensor(idx, device))
    ty = torch.index_select(theirs, dim, torch.tensor(idx % n))
    np.testing.assert_array_equal(to_np(y), ty.detach().numpy())
    w = rng.standard_normal(tuple(ty.shape))
    backward_both(y, ty, w, device)
    np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-12)         # repeats add up
    assert ours.index_select(dim, tensor(np.int64(1), device)).shape[ours._dim(dim)] == 1   # 0-d index


def test_index_select_errors(device):
    x = mt.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, mt.zeros(2, 2, dtype=mt.int64, device=device))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        x.index_select(0, mt.zeros(2, device=device))
    if device == "cpu":
        with pytest.raises(IndexError, match="index out of range in self"):
            x.index_select(1, mt.tensor([4]))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add_matches_pytorch(device, rng, dim):
    x = rng.standard_normal((4, 5, 3))
    idx = np.array([1, 1, 0, 3]) if dim == 0 else np.array([2, 2, 0]) if dim == -1 else np.array([4, 0, 4, 4])
    src_shape = list(x.shape)
    src_shape[dim] = len(idx)
    s = rng.standard_normal(src_shape)
    ours_x, ours_s = tensor(x, device, requires_grad=True), tensor(s, device, requires_grad=True)
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
    y = ours_x.index_add(dim, tensor(idx, device), ours_s, alpha=2.0)
    ty = tx.index_add(dim, torch.tensor(idx), ts, alpha=2.0)
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal(x.shape)
    backward_both(y, ty, w, device)
    np.testing.assert_allclose(to_np(ours_x.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(ours_s.grad), ts.grad.numpy(), rtol=1e-12)


# ---- nonzero --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1,), (0,), (7,), (3, 4), (2, 3, 4), (4097,), (5, 1, 3)], ids=str)
def test_nonzero_matches_numpy(device, rng, shape):
    x = rng.random(shape) < 0.5
    got = tensor(x, device).nonzero()
    assert got.dtype == mt.int64 and got.shape == (int(x.sum()), len(shape))
    np.testing.assert_array_equal(to_np(got), np.argwhere(x))
    np.testing.assert_array_equal(to_np(tensor(x.astype(np.float32), device).nonzero()), np.argwhere(x))
    cols = mt.nonzero(tensor(x, device), as_tuple=True)
    for c, want in zip(cols, np.nonzero(x)):
        np.testing.assert_array_equal(to_np(c), want)


# ---- x[key] = value ---------------------------------------------------------------------------------------
def test_setitem(device, rng):
    x = rng.standard_normal((4, 5))
    t = tensor(x, device)
    t[1:3, ::2] = 0.5
    x[1:3, ::2] = 0.5
    t[0] = tensor(np.arange(5.0), device)
    x[0] = np.arange(5.0)
    t[:, 1] = tensor([[9.0]], device)                         # leading 1s are dropped, then it broadcasts
    x[:, 1] = 9.0
    t[t < 0] = -1
    x[x < 0] = -1
    np.testing.assert_array_equal(to_np(t), x)
    t[1:] = t[:-1]                                        # overlapping source: copied first
    x[1:] = x[:-1].copy()
    np.testing.assert_array_equal(to_np(t), x)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t[0] = mt.zeros(3, device=device)
    t[:, mt.tensor([0, 1], device=device)] = 1.0          # index tensors mixed with slices (test_api_gaps.py)
    x[:, [0, 1]] = 1.0
    np.testing.assert_array_equal(to_np(t), x)
    w = mt.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        w[0] = 1.0
    with mt.no_grad():
        w[0] = 1.0
    assert w.tolist() == [1.0, 0.0, 0.0]


# ---- cat / stack -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack_match_pytorch(device, rng, dim):
    shapes = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]
    if dim == 0:
        shapes = [(2, 3, 4), (1, 3, 4), (0, 3, 4), (5, 3, 4)]
    xs = [rng.standard_normal(s) for s in shapes]
    ours = [tensor(x, device, requires_grad=True) for x in xs]
    theirs = [torch.tensor(x, requires_grad=True) for x in xs]
    for f in ("cat", "stack"):
        if f == "stack" and dim == 0:
            continue
        y, ty = getattr(mt, f)(ours, dim), getattr(torch, f)(theirs, dim)
        assert tuple(y.shape) == tuple(ty.shape)
        np.testing.assert_array_equal(to_np(y), ty.detach().numpy())
        w = rng.standard_normal(tuple(ty.shape))
        backward_both(y, ty, w, device)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(to_np(a.grad), b.grad.numpy(), rtol=1e-12)
            a.grad, b.grad = None, None


def test_cat_views_dtypes_and_errors(device, rng):
    a = tensor(rng.standard_normal((3, 4)), device)
    b = tensor(np.arange(6).reshape(3, 2), device)
    got = mt.cat([a.T[1:], b.T], 0)                       # strided inputs, int64 promoted to float64
    want = np.concatenate([to_np(a).T[1:], np.arange(6).reshape(3, 2).T], 0)
    assert got.dtype == mt.float64
    np.testing.assert_array_equal(to_np(got), want)
    np.testing.assert_array_equal(to_np(mt.stack([b, b], 2)), np.stack([to_np(b)] * 2, 2))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0. Expected size 4 but "
                                           "got size 2 for tensor number 1 in the list."):
        mt.cat([a, b])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[3, 4\] at entry 0 "
                                           r"and \[3, 2\] at entry 1"):
        mt.stack([a, b])
    with pytest.raises(RuntimeError, match="non-empty"):
        mt.cat([])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        mt.cat([mt.tensor(1.0, device=device)])


# ---- the backends against each other ----------------------------------------------------------------------
@pytest.mark.cuda
def test_cuda_indexing_backend_matches_cpu(rng):
    import cupy as cp
    import cupy_backend as gpu          # the cuda backend, CuPy arrays in and out
    from minitorch.native import cpu
    a = rng.standard_normal((6, 7, 5))
    for dim in range(3):
        n = a.shape[dim]
        i = rng.integers(-n, n, (3, 2))
        want = cpu.take(a, dim, i)
        np.testing.assert_array_equal(cp.asnumpy(gpu.take(cp.asarray(a).transpose(2, 0, 1).transpose(1, 2, 0), dim,
                                                          cp.asarray(i.T).T)), want)
        src = rng.standard_normal(want.shape)
        d_cpu = cpu.index_add_(np.zeros_like(a), dim, i, src)
        np.testing.assert_allclose(cp.asnumpy(gpu.index_add_(cp.zeros(a.shape), dim, cp.asarray(i), cp.asarray(src))),
                                   d_cpu, rtol=1e-12)
        k = rng.integers(0, n, a.shape[:dim] + (2,) + a.shape[dim + 1:])
        s = rng.standard_normal(k.shape)
        np.testing.assert_allclose(cp.asnumpy(gpu.scatter_add_(cp.zeros(a.shape), dim, cp.asarray(k), cp.asarray(s))),
                                   cpu.scatter_add_(np.zeros(a.shape), dim, k, s), rtol=1e-12)
    dst_c, dst_g = np.zeros((4, 9)), cp.zeros((4, 9))
    cpu.copy_(dst_c[1:, ::3], a[0, :3, 1:4])
    gpu.copy_(dst_g[1:, ::3], cp.asarray(a)[0, :3, 1:4])
    np.testing.assert_array_equal(cp.asnumpy(dst_g), dst_c)


def test_setitem_with_index_tensors_matches_pytorch(device):
    """x[index tensors, lists, ints] = value writes in place as index_put_ does (value broadcast;
    a list or an int counts as an index tensor), on both devices."""
    base = np.arange(20.0).reshape(4, 5)
    ours, theirs = mt.tensor(base, device=device), torch.tensor(base)
    assignments = [
        (lambda lib: (lib.tensor([0, 2]),), 5.0),                     # whole rows
        (lambda lib: ([1, 3], [0, 4]), [7.0, 8.0]),                    # element pairs, a value each
        (lambda lib: (2, lib.tensor([1, 2, 3])), -1.0),                # an int beside an index tensor
        (lambda lib: (lib.tensor([-1]), lib.tensor([-2])), 0.5),      # negative indices
    ]
    for key, value in assignments:
        ours[key(mt)] = mt.tensor(value, dtype=mt.float64, device=device) if isinstance(value, list) else value
        theirs[key(torch)] = torch.tensor(value, dtype=torch.float64) if isinstance(value, list) else value
        np.testing.assert_array_equal(to_np(ours), theirs.numpy())
