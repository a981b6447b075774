"""Issue 13 §1, shape and indexing (phase 04): split, chunk, unbind, narrow, movedim/moveaxis, .mT,
diagonal (views), flip, roll, repeat, tile, tril, triu (copies), gather, take_along_dim, scatter,
scatter_add, index_put (and their in-place forms), where(cond). Values and gradients against
PyTorch through tests/oracle.py's check_op on both devices (contiguous and transposed inputs,
0-d, size-1 and empty dims, negative dims), dtypes int64/bool/halves, duplicate indices for the
atomic ops, PyTorch's errors, and on cuda the guard that skips indices out of range."""
import numpy as np
import pytest
import torch

import minitorch as mt

from oracle import assert_close, check_op

LAYOUTS = ["contiguous", "transposed"]


def _ix(lib, array, device):
    """An int64 index tensor of ``array`` in ``lib`` (minitorch on ``device``, or torch)."""
    array = np.asarray(array, dtype=np.int64)
    return mt.tensor(array, device=device) if lib is mt else torch.tensor(array)


def _raises_like_torch(fn, device, match):
    """``fn(lib, device)`` raises in torch and in minitorch the same exception type, with ``match``."""
    with pytest.raises(Exception) as theirs:
        fn(torch, "cpu")
    with pytest.raises(type(theirs.value), match=match):
        fn(mt, device)


# ---- views --------------------------------------------------------------------------------------------
VIEW_CASES = [
    ("split int", lambda lib, x: x.split(2, 1), (3, 5)),
    ("split int dim -1", lambda lib, x: lib.split(x, 3, -1), (2, 3, 7)),
    ("split bigger than dim", lambda lib, x: x.split(10), (4, 3)),
    ("split sizes", lambda lib, x: x.split([1, 0, 3], 0), (4, 3)),
    ("split empty dim", lambda lib, x: x.split(2, 1), (3, 0)),
    ("chunk", lambda lib, x: x.chunk(3, 1), (2, 7)),
    ("chunk fewer pieces", lambda lib, x: lib.chunk(x, 4, 0), (6, 2)),
    ("chunk more than size", lambda lib, x: x.chunk(5, -1), (2, 3)),
    ("chunk empty", lambda lib, x: x.chunk(3, 0), (0, 2)),
    ("unbind", lambda lib, x: x.unbind(1), (3, 4)),
    ("unbind -1", lambda lib, x: lib.unbind(x, -1), (2, 3, 2)),
    ("unbind size 1", lambda lib, x: x.unbind(0), (1, 3)),
    ("narrow", lambda lib, x: x.narrow(1, 1, 3), (3, 5)),
    ("narrow negative start", lambda lib, x: lib.narrow(x, -1, -3, 2), (2, 3, 4)),
    ("narrow empty", lambda lib, x: x.narrow(0, 2, 0), (2, 3)),
    ("movedim", lambda lib, x: x.movedim(0, 2), (2, 3, 4)),
    ("movedim tuple", lambda lib, x: lib.movedim(x, (0, -1), (-1, 1)), (2, 3, 4, 5)),
    ("moveaxis", lambda lib, x: lib.moveaxis(x, 1, 0), (2, 3, 4)),
    ("movedim 0-d", lambda lib, x: x.movedim(0, 0), ()),
    ("mT", lambda lib, x: x.mT, (3, 4)),
    ("mT batched", lambda lib, x: x.mT, (2, 3, 4)),
    ("diagonal", lambda lib, x: x.diagonal(), (4, 4)),
    ("diagonal offset", lambda lib, x: lib.diagonal(x, 1), (3, 5)),
    ("diagonal negative offset", lambda lib, x: x.diagonal(-2), (5, 3)),
    ("diagonal offset past end", lambda lib, x: x.diagonal(7), (3, 4)),
    ("diagonal dims", lambda lib, x: lib.diagonal(x, 1, -1, 0), (4, 2, 5)),
    ("diagonal dims 2", lambda lib, x: x.diagonal(0, 2, 1), (2, 3, 4)),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,fn,shape", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_views_match_pytorch(device, rng, name, fn, shape, layout):
    check_op(fn, [shape], device, rng, layout=layout)


@pytest.mark.parametrize("fn", [
    lambda x: x.split(2, 1)[1], lambda x: x.chunk(2, 0)[1], lambda x: x.unbind(1)[2],
    lambda x: x.narrow(1, 1, 2), lambda x: x.movedim(0, 1), lambda x: x.mT, lambda x: x.diagonal(1),
    lambda x: x[:, 1:5].reshape(4, 2, 2), lambda x: x.mT.reshape(5, 2, 2),
])
def test_views_share_memory(device, fn):
    """Writing through the view changes the base: no copy was made. (reshape of a non-contiguous
    tensor: a view where strides allow one, as PyTorch's.)"""
    base = mt.zeros(4, 5, device=device)
    view = fn(base)
    view.fill_(1.0)
    ref = fn(torch.zeros(4, 5))
    ref.fill_(1.0)
    assert_close(base, ref._base if ref._base is not None else ref, "float32", "base after the write")


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_views_of_other_dtypes(device, rng, dtype):
    for fn in (lambda lib, x: x.split(2, 1), lambda lib, x: x.unbind(0), lambda lib, x: x.diagonal(-1),
               lambda lib, x: x.mT, lambda lib, x: x.movedim(1, 0)):
        check_op(fn, [(3, 4)], device, rng, dtype=dtype)


# ---- copies: flip, roll, repeat, tile, tril, triu ---------------------------------------------------------
COPY_CASES = [
    ("flip", lambda lib, x: x.flip(0), (3, 4)),
    ("flip two", lambda lib, x: lib.flip(x, (0, -1)), (3, 4, 5)),
    ("flip varargs", lambda lib, x: x.flip(2, 1), (2, 3, 4)),
    ("flip size 1", lambda lib, x: x.flip(0), (1, 4)),
    ("flip 0-d", lambda lib, x: x.flip(0), ()),
    ("flip empty", lambda lib, x: x.flip(1), (3, 0)),
    ("roll", lambda lib, x: x.roll(1, 0), (4, 3)),
    ("roll negative", lambda lib, x: lib.roll(x, -2, -1), (3, 5)),
    ("roll more than size", lambda lib, x: x.roll(7, 1), (2, 3)),
    ("roll zero", lambda lib, x: x.roll(0, 1), (2, 3)),
    ("roll two dims", lambda lib, x: x.roll((1, -3), (0, 2)), (3, 2, 5)),
    ("roll same dim twice", lambda lib, x: x.roll((1, 2), (1, 1)), (3, 4)),
    ("roll flattened", lambda lib, x: lib.roll(x, 5), (3, 4)),
    ("roll flattened 0-d", lambda lib, x: lib.roll(x, 1), ()),
    ("roll empty", lambda lib, x: x.roll(1, 1), (2, 0)),
    ("repeat", lambda lib, x: x.repeat(2, 3), (2, 3)),
    ("repeat new dims", lambda lib, x: x.repeat(2, 1, 3), (4,)),
    ("repeat ones", lambda lib, x: x.repeat(1, 1), (2, 3)),
    ("repeat zero", lambda lib, x: x.repeat(0, 2), (2, 3)),
    ("repeat 0-d", lambda lib, x: x.repeat(3, 2), ()),
    ("repeat tuple", lambda lib, x: x.repeat((2, 1, 2)), (1, 3, 2)),
    ("tile", lambda lib, x: lib.tile(x, (2,)), (2, 3)),
    ("tile longer", lambda lib, x: x.tile(2, 1, 2), (2, 3)),
    ("tile 0-d", lambda lib, x: lib.tile(x, (3,)), ()),
    ("tril", lambda lib, x: x.tril(), (4, 4)),
    ("tril k", lambda lib, x: lib.tril(x, 1), (3, 5)),
    ("tril -k batched", lambda lib, x: lib.tril(x, -1), (2, 5, 3)),
    ("tril far", lambda lib, x: x.tril(-9), (3, 4)),
    ("triu", lambda lib, x: x.triu(), (4, 4)),
    ("triu k", lambda lib, x: lib.triu(x, 2), (3, 5)),
    ("triu -k batched", lambda lib, x: lib.triu(x, -1), (2, 3, 5)),
    ("triu empty", lambda lib, x: x.triu(), (0, 3)),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,fn,shape", COPY_CASES, ids=[c[0] for c in COPY_CASES])
def test_copies_match_pytorch(device, rng, name, fn, shape, layout):
    ours, _ = check_op(fn, [shape], device, rng, layout=layout)
    assert ours.is_contiguous(), "a copying op returns a fresh contiguous tensor"


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float16"])
@pytest.mark.parametrize("name,fn,shape", [c for c in COPY_CASES if "empty" not in c[0]][::3],
                         ids=[c[0] for c in COPY_CASES if "empty" not in c[0]][::3])
def test_copies_of_other_dtypes(device, rng, name, fn, shape, dtype):
    check_op(fn, [shape], device, rng, dtype=dtype, grad=False, layout="transposed")


def test_copies_do_not_alias_the_input(device):
    x = mt.arange(6.0, device=device).reshape(2, 3)
    for y in (x.flip(0), x.roll(0, 1), x.repeat(1, 1), x.tile(1), x.tril(5), x.triu(-5)):
        y.fill_(-1.0)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "a copy shares the input's memory"


def test_bfloat16_copies_are_exact(device, rng):
    """bfloat16 has no NumPy/torch round trip here: compare with the same op on float32 values."""
    x = mt.tensor(rng.standard_normal((3, 5)), dtype=mt.float32, device=device).bfloat16()
    for fn in (lambda t: t.flip(1), lambda t: t.roll(2, 1), lambda t: t.repeat(2, 1), lambda t: t.tril(1),
               lambda t: t.gather(1, mt.tensor([[4, 0], [1, 1], [3, 2]], device=device))):
        np.testing.assert_array_equal(fn(x).float().cpu().numpy(), fn(x.float()).cpu().numpy())


# ---- gather / take_along_dim --------------------------------------------------------------------------
def _random_index(rng, shape, size):
    return rng.integers(0, size, size=shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim,shape,index_shape", [
    (0, (4, 3), (6, 3)), (1, (4, 3), (2, 5)), (-1, (2, 3, 4), (2, 2, 7)), (1, (3, 5, 2), (3, 4, 1)),
    (0, (5,), (9,)), (0, (3, 1), (4, 1)), (1, (3, 4), (3, 0)),
])
def test_gather_matches_pytorch(device, rng, dim, shape, index_shape, layout):
    idx = _random_index(rng, index_shape, shape[dim])          # repeats: gradients add up
    check_op(lambda lib, x: lib.gather(x, dim, _ix(lib, idx, device)), [shape], device, rng, layout=layout)


def test_gather_non_contiguous_index_and_0d(device, rng):
    idx = rng.integers(0, 4, size=(5, 3))                     # used transposed: strides (1, 3)
    check_op(lambda lib, x: x.gather(1, _ix(lib, idx, device).T), [(3, 4)], device, rng)
    check_op(lambda lib, x: x.gather(0, _ix(lib, 0, device)), [()], device, rng)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_gather_other_dtypes(device, rng, dtype):
    idx = _random_index(rng, (3, 6), 4)
    check_op(lambda lib, x: x.gather(1, _ix(lib, idx, device)), [(3, 4)], device, rng, dtype=dtype, grad=False)


@pytest.mark.parametrize("dim,shape,index_shape", [
    (1, (3, 4), (3, 2)), (1, (3, 4), (1, 6)), (0, (1, 4), (5, 1)), (-1, (2, 1, 3), (1, 4, 2)), (None, (3, 4), (5,)),
    (None, (3, 4), (2, 3)),
])
def test_take_along_dim_broadcasts(device, rng, dim, shape, index_shape):
    size = shape[dim] if dim is not None else int(np.prod(shape))
    idx = _random_index(rng, index_shape, size)
    check_op(lambda lib, x: lib.take_along_dim(x, _ix(lib, idx, device), dim), [shape], device, rng,
             layout="transposed" if dim is not None else "contiguous")   # torch's dim=None view()s its input
    check_op(lambda lib, x: x.take_along_dim(_ix(lib, idx, device), dim=dim), [shape], device, rng)


# ---- scatter / scatter_add ------------------------------------------------------------------------------
def _distinct_index(rng, shape, size, dim):
    """Random indices, distinct along ``dim`` (a store with repeats keeps an unspecified value)."""
    perm = np.argsort(rng.random(shape[:dim] + (size,) + shape[dim + 1:]), axis=dim)
    return np.take(perm, np.arange(shape[dim]), axis=dim)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim,shape,index_shape,src_shape", [
    (0, (5, 3), (4, 3), (4, 3)), (1, (3, 6), (2, 4), (2, 4)), (-1, (2, 3, 5), (2, 3, 2), (2, 3, 2)),
    (1, (3, 6), (2, 4), (3, 5)), (0, (4,), (4,), (6,)), (1, (3, 4), (3, 0), (3, 0)),
])
def test_scatter_matches_pytorch(device, rng, dim, shape, index_shape, src_shape, layout):
    idx = _distinct_index(rng, index_shape, shape[dim], dim % len(shape))
    grad = src_shape == index_shape                 # PyTorch's backward refuses a larger src
    check_op(lambda lib, x, s: lib.scatter(x, dim, _ix(lib, idx, device), s), [shape, src_shape], device, rng,
             layout=layout, grad=grad)
    check_op(lambda lib, x: x.scatter(dim, _ix(lib, idx, device), 1.5), [shape], device, rng, layout=layout)


def test_scatter_larger_src_gradient_is_padded_with_zeros(device, rng):
    """PyTorch raises in this backward; ours gives src zeros outside index's shape."""
    idx = np.array([[0, 2], [1, 1]])
    src = mt.tensor(rng.standard_normal((3, 4)), device=device, requires_grad=True)
    x = mt.zeros(2, 3, dtype=mt.float64, device=device)
    x.scatter(1, mt.tensor(idx, device=device), src).sum().backward()
    want = np.zeros((3, 4))
    want[:2, :2] = 1
    np.testing.assert_array_equal(src.grad.cpu().numpy(), want)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_scatter_other_dtypes(device, rng, dtype):
    idx = _distinct_index(rng, (3, 3), 5, 1)
    check_op(lambda lib, x, s: x.scatter(1, _ix(lib, idx, device), s), [(3, 5), (3, 3)], device, rng,
             dtype=dtype, grad=False)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim,shape,index_shape", [
    (0, (3, 4), (8, 4)), (1, (3, 4), (3, 9)), (-2, (2, 3, 4), (2, 7, 3)), (0, (1,), (50,)), (0, (), ()),
])
def test_scatter_add_with_duplicates(device, rng, dim, shape, index_shape, layout):
    size = shape[dim] if shape else 1
    idx = rng.integers(0, size, size=index_shape)           # many repeats: atomicAdd on cuda
    check_op(lambda lib, x, s: lib.scatter_add(x, dim, _ix(lib, idx, device), s), [shape, index_shape], device,
             rng, layout=layout)
    check_op(lambda lib, x, s: x.scatter(dim, _ix(lib, idx, device), s, reduce="add"), [shape, index_shape],
             device, rng, grad=False)


def test_scatter_add_int64_duplicates_are_exact(device, rng):
    idx = rng.integers(0, 3, size=(2, 500))
    check_op(lambda lib, x, s: x.scatter_add(1, _ix(lib, idx, device), s), [(2, 3), (2, 500)], device, rng,
             dtype="int64", low=-1000, high=1000)


def test_scatter_add_float32_large(device, rng):
    """Big enough for many blocks and a grid-stride loop; the sums only up to float32 rounding."""
    idx = rng.integers(0, 7, size=(3, 100_000))
    x = rng.standard_normal((3, 7)).astype(np.float32)
    src = rng.standard_normal((3, 100_000)).astype(np.float32)
    ours = mt.tensor(x, device=device).scatter_add(1, mt.tensor(idx, device=device), mt.tensor(src, device=device))
    want = torch.tensor(x, dtype=torch.float64).scatter_add(1, torch.tensor(idx), torch.tensor(src).double())
    np.testing.assert_allclose(ours.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)


def test_gather_large(device, rng):
    idx = rng.integers(0, 1000, size=(70_001, 3))
    check_op(lambda lib, x: x.gather(0, _ix(lib, idx, device)), [(1000, 3)], device, rng, dtype="float32")


# ---- index_put ---------------------------------------------------------------------------------------------
INDEX_PUT_CASES = [
    ("one index", lambda d: ([[0, 3, 1]],), (4, 3), (3, 3)),
    ("negative indices", lambda d: ([[-1, 0]],), (4, 3), (3,)),
    ("two adjacent", lambda d: ([[0, 2], [1, 1]], [[1, 0], [2, 3]]), (3, 4, 2), (2, 2, 2)),
    ("two separated", lambda d: ([0, 2], slice(None), [1, 0]), (3, 4, 2), (2, 4)),
    ("broadcast indices", lambda d: ([[0], [2]], [1, 0, 3]), (3, 4), (2, 3)),
    ("0-d index", lambda d: (2,), (4, 3), (3,)),
    ("scalar value", lambda d: ([1, 3],), (4, 3), ()),
    ("mask", lambda d: (np.array([True, False, True, True]),), (4, 3), (1, 3)),
    ("2-d mask", lambda d: (np.array([[True, False, True], [False, False, True]]),), (2, 3), (3,)),
]


def _indices(lib, spec, device):
    """``spec``'s index arrays as lib tensors (int64 or bool); a slice(None) is torch's None hole:
    not allowed by index_put, so it is only used where both libraries accept the tuple."""
    out = []
    for k in spec:
        if isinstance(k, slice):
            continue
        a = np.asarray(k)
        out.append((mt.tensor(a, device=device) if lib is mt else torch.tensor(a)) if a.dtype == np.bool_
                   else _ix(lib, a, device))
    return tuple(out)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,spec,shape,vshape", INDEX_PUT_CASES, ids=[c[0] for c in INDEX_PUT_CASES])
def test_index_put_matches_pytorch(device, rng, name, spec, shape, vshape, layout, accumulate):
    keys = spec(device)
    if any(isinstance(k, slice) for k in keys):      # separated dims: index the permuted tensor instead
        keys = tuple(k for k in keys if not isinstance(k, slice))
        fn = (lambda lib, x, v: lib.index_put(x.movedim(1, -1), _indices(lib, keys, device), v, accumulate))
    else:
        fn = (lambda lib, x, v: lib.index_put(x, _indices(lib, keys, device), v, accumulate))
    check_op(fn, [shape, vshape], device, rng, layout=layout)


def test_index_put_accumulate_duplicates(device, rng):
    idx = rng.integers(-5, 5, size=300)                        # negative and repeated
    check_op(lambda lib, x, v: x.index_put((_ix(lib, idx, device),), v, accumulate=True), [(5, 2), (300, 2)],
             device, rng)
    check_op(lambda lib, x, v: x.index_put((_ix(lib, idx, device),), v, accumulate=True), [(5, 2), (300, 2)],
             device, rng, dtype="int64", grad=False)


def test_index_put_store_with_duplicates_keeps_one_of_the_values(device):
    x = mt.zeros(3, device=device)
    y = x.index_put((mt.tensor([1, 1, 1], device=device),), mt.tensor([5.0, 6.0, 7.0], device=device))
    assert y.tolist()[0] == 0 and y.tolist()[2] == 0 and y.tolist()[1] in (5.0, 6.0, 7.0)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_index_put_other_dtypes(device, rng, dtype):
    check_op(lambda lib, x, v: x.index_put((_ix(lib, [2, 0], device), _ix(lib, [1, 3], device)), v),
             [(3, 4), (2,)], device, rng, dtype=dtype, grad=False)


# ---- in place: scatter_, scatter_add_, index_put_ --------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_in_place_forms_write_into_self(device, rng, layout):
    idx = np.array([[0, 2], [3, 3], [1, 0]])

    def fn(lib, x, s, v):
        x = x.detach().clone().mT.mT if layout == "transposed" else x.detach().clone()
        before = x.data_ptr()
        y = x.scatter_(1, _ix(lib, idx, device), s.detach())
        assert y is x and x.data_ptr() == before
        x.scatter_add_(0, _ix(lib, idx[:2] % 3, device), s.detach()[:2])
        x.index_put_((_ix(lib, [2, 1], device), _ix(lib, [0, 0], device)), v.detach(), accumulate=True)
        x.index_put_((_ix(lib, [0], device),), v.detach()[:1])
        x.scatter_(1, _ix(lib, idx, device), value=-3.0)
        return x
    check_op(fn, [(3, 4), (3, 2), (2,)], device, rng, layout=layout, grad=False)


def test_in_place_into_a_view_reaches_the_base(device):
    base = mt.zeros(3, 4, device=device)
    base.mT.index_put_((mt.tensor([1], device=device), mt.tensor([2], device=device)), mt.tensor(5.0, device=device))
    base[:, 1].scatter_add_(0, mt.tensor([0, 0], device=device), mt.tensor([1.0, 2.0], device=device))
    assert base.tolist() == [[0, 3, 0, 0], [0, 0, 0, 0], [0, 5, 0, 0]]


def test_in_place_bumps_the_version_and_refuses_a_leaf_that_requires_grad(device):
    x = mt.zeros(3, device=device)
    v0 = x._version
    x.scatter_(0, mt.tensor([1], device=device), mt.tensor([2.0], device=device))
    assert x._version > v0, "an in-place op must bump the version counter"
    leaf = mt.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.index_put_((mt.tensor([0], device=device),), mt.tensor(1.0, device=device))
    with mt.no_grad():
        leaf.scatter_add_(0, mt.tensor([0, 0], device=device), mt.tensor([1.0, 1.0], device=device))
    assert leaf.tolist() == [2.0, 0.0, 0.0]


def test_saved_tensor_modified_in_place_raises_in_backward(device):
    x = mt.ones(3, device=device, requires_grad=True)
    y = x * 2
    z = y * y                                       # saves y
    with mt.no_grad():
        y.scatter_(0, mt.tensor([0], device=device), mt.tensor([5.0], device=device))
    with pytest.raises(RuntimeError):
        z.sum().backward()


# ---- where(cond) ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (), (0, 3)])
def test_where_one_argument_is_nonzero_as_tuple(device, rng, shape):
    check_op(lambda lib, c: lib.where(c), [shape], device, rng, dtype="bool")
    check_op(lambda lib, c: lib.where(c), [shape], device, rng, dtype="int64", low=-1, high=1)


def test_where_three_arguments_still_work(device, rng):
    check_op(lambda lib, c, x: lib.where(c > 0, x, 0.0), [(3, 4), (3, 4)], device, rng)
    with pytest.raises(TypeError):
        mt.where(mt.tensor([True], device=device), mt.tensor([1.0], device=device))


# ---- errors --------------------------------------------------------------------------------------------------
ERRORS = [
    (lambda lib, d: lib.ones(3, 4, device=d).split(0), "split_size can only be 0"),
    (lambda lib, d: lib.ones(3, 4, device=d).split([1, 1]), "sum exactly to 3"),
    (lambda lib, d: lib.ones((), device=d).split(1), "at least a 1-dimensional"),
    (lambda lib, d: lib.ones(3, device=d).chunk(0), "greater than 0"),
    (lambda lib, d: lib.ones((), device=d).unbind(), "no dimensions"),
    (lambda lib, d: lib.ones(3, 4, device=d).unbind(2), "Dimension out of range"),
    (lambda lib, d: lib.ones(3, 4, device=d).narrow(1, 3, 2), "exceeds dimension size"),
    (lambda lib, d: lib.ones(3, 4, device=d).narrow(1, -5, 2), "start out of range"),
    (lambda lib, d: lib.ones(3, 4, device=d).narrow(1, 0, -1), "non-negative"),
    (lambda lib, d: lib.ones(3, 4, device=d).movedim((0, 1), (0,)), "same number of dims"),
    (lambda lib, d: lib.ones(3, 4, device=d).movedim((0, 0), (0, 1)), "repeated dim"),
    (lambda lib, d: lib.ones(3, device=d).mT, "matrices"),
    (lambda lib, d: lib.ones(3, 4, device=d).diagonal(0, 1, -1), "cannot be identical"),
    (lambda lib, d: lib.ones(3, device=d).diagonal(), "Dimension out of range"),
    (lambda lib, d: lib.ones(3, 4, device=d).flip(0, -2), "multiple times"),
    (lambda lib, d: lib.ones(3, 4, device=d).roll((1, 2), 0), "must align"),
    (lambda lib, d: lib.ones(3, 4, device=d).roll(1, 2), "Dimension out of range"),
    (lambda lib, d: lib.ones(3, 4, device=d).repeat(2), "can not be smaller"),
    (lambda lib, d: lib.ones(3, device=d).tril(), "at least 2 dimensions"),
    (lambda lib, d: lib.ones(3, device=d).triu(1), "at least 2 dimensions"),
    (lambda lib, d: lib.ones(3, 4, device=d).gather(1, _ix(lib, [0], d)), "same number of dimensions"),
    (lambda lib, d: lib.ones(3, 4, device=d).gather(1, _ix(lib, np.zeros((5, 1)), d)), "no larger than"),
    (lambda lib, d: lib.ones(3, 4, device=d).gather(1, lib.ones(3, 1, device=d)), "int64"),
    (lambda lib, d: lib.ones(3, 4, device=d).gather(2, _ix(lib, np.zeros((3, 1)), d)), "Dimension out of range"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter(1, _ix(lib, np.zeros((4, 1)), d), lib.ones(4, 1, device=d)),
     "no larger than"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter(1, _ix(lib, np.zeros((3, 2)), d), lib.ones(3, 1, device=d)),
     "no larger"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter(1, _ix(lib, np.zeros((3, 1)), d),
                                                     lib.ones(3, 1, dtype=lib.float64, device=d)), "dtype"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter_add(1, _ix(lib, np.zeros((3,)), d), lib.ones(3, device=d)),
     "same number of dimensions"),
    (lambda lib, d: lib.take_along_dim(lib.ones(3, 4, device=d), lib.ones(3, 1, device=d), 1), "Long"),
    (lambda lib, d: lib.take_along_dim(lib.ones(3, 4, device=d), _ix(lib, [0], d), 1), "same number of dimensions"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_((_ix(lib, [1], d),), lib.ones(3, device=d)),
     "shape mismatch"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_((_ix(lib, [1], d),), lib.ones(4, dtype=lib.float64, device=d)),
     "dtypes match"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_(_ix(lib, [1], d), lib.ones(4, device=d)), "tuple of Tensors"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_((lib.ones(1, device=d),), lib.ones(4, device=d)),
     "tensors used as indices"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_((_ix(lib, [[0, 1]], d), _ix(lib, [0, 1, 2], d)),
                                                          lib.ones(1, device=d)), "shape mismatch"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_pytorch(device, k):
    fn, match = ERRORS[k]
    _raises_like_torch(fn, device, match)


@pytest.mark.parametrize("fn,match", [
    (lambda lib, d: lib.ones(3, 4, device=d).gather(1, _ix(lib, [[4]], d)), "out of bounds"),
    (lambda lib, d: lib.ones(3, 4, device=d).gather(1, _ix(lib, [[-1]], d)), "out of bounds"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter(1, _ix(lib, [[7]], d), 1.0), "out of bounds"),
    (lambda lib, d: lib.ones(3, 4, device=d).scatter_add(0, _ix(lib, [[3]], d), lib.ones(1, 1, device=d)),
     "out of bounds"),
    (lambda lib, d: lib.ones(3, 4, device=d).index_put_((_ix(lib, [3], d),), lib.ones(4, device=d)), "out of bounds"),
])
def test_index_out_of_range_raises_on_cpu(fn, match):
    _raises_like_torch(fn, "cpu", match)


@pytest.mark.cuda
def test_index_out_of_range_on_cuda_is_skipped_not_written():
    """No host synchronisation to check: the kernels never touch memory outside the tensor; a
    gather reads NaN there, a scatter skips the element (a neighbouring guard row stays 0)."""
    base = mt.zeros(3, 4, device="cuda")
    inner = base[1:2]                                # rows 0 and 2 are guards
    idx = mt.tensor([[4, 1, -9, 100]], device="cuda")
    inner.scatter_(1, idx, mt.ones(1, 4, device="cuda"))
    inner.scatter_add_(1, idx, mt.ones(1, 4, device="cuda"))
    inner.index_put_((mt.tensor([0], device="cuda"), mt.tensor([7], device="cuda")), mt.tensor(3.0, device="cuda"))
    assert base.tolist() == [[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]]
    got = mt.ones(1, 4, device="cuda").gather(1, idx).tolist()[0]
    assert np.isnan(got[0]) and got[1] == 1 and np.isnan(got[2]) and np.isnan(got[3])


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
def test_cuda_outputs_are_fully_written(rng):
    """Every new element is written (the allocator hands out NaN-filled memory here)."""
    x = mt.tensor(rng.standard_normal((33, 65)), device="cuda")
    idx = mt.tensor(rng.integers(0, 65, size=(33, 70)), device="cuda")
    rows = mt.tensor(rng.integers(-33, 33, size=70), device="cuda")
    for y in (x.flip(1), x.roll(5, 1), x.roll(0, 0), x.repeat(2, 3), x.tile(3), x.tril(2), x.triu(-3),
              x.gather(1, idx), x.scatter_add(1, idx, x.repeat(1, 2)[:, :70].contiguous()),
              x.scatter(1, idx, 2.0), x.index_put((rows,), x.repeat(3, 1)[:70], True), x.index_put((rows,), x[:1])):
        assert not np.isnan(y.cpu().numpy()).any()
