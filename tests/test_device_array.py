"""``DeviceArray`` (minitorch/cuda/array.py) without a GPU: views against NumPy's, byte for byte.

A view is only arithmetic on (address, shape, strides), so it is checked against NumPy doing the
same indexing on a host array of the same layout: same shape, same strides, same offset of the
first element, same contiguity. Memory comes from tests/fake_cuda.py (host RAM standing in for
device memory), so copies in and out round-trip real bytes.
"""
import gc

import numpy as np
import pytest

import fake_cuda

F32 = np.dtype(np.float32)


@pytest.fixture
def arr(monkeypatch):
    """The array module, bound to a fake GPU."""
    return fake_cuda.install(monkeypatch)[1]


def host_and_device(arr, shape, dtype=F32):
    host = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    return host, arr.from_numpy(host, 0)


def assert_same_view(got, want, base_got, base_want):
    """got (a DeviceArray view of base_got) is laid out as want (a NumPy view of base_want)."""
    assert got.shape == want.shape
    assert got.size == want.size
    assert got.ndim == want.ndim
    if want.size:                             # NumPy's strides/offset of empty views are arbitrary
        assert got.strides == want.strides
        offset = want.__array_interface__["data"][0] - base_want.__array_interface__["data"][0]
        assert got.ptr - base_got.ptr == offset
    assert got.c_contiguous == want.flags.c_contiguous
    assert got.owner is base_got.owner        # a view shares its base's memory


KEYS = [0, -1, 3, (1, 2), (-1, -2, -3), slice(None), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
        slice(-2, None), slice(5, 1, -2), slice(10, 20), slice(3, 3), (slice(None), 2), (Ellipsis, 1),
        (1, Ellipsis), (None, 1), (slice(None), None, slice(None, None, 3)), (Ellipsis, None),
        (2, slice(None, None, -2), Ellipsis), (None, Ellipsis, None), np.int64(2), (slice(1, None), 0, 0),
        ()]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_is_numpys_view(arr, key):
    host, dev = host_and_device(arr, (4, 5, 6))
    view = dev[key]
    as_tuple = key if isinstance(key, tuple) else (key,)
    want = host[as_tuple if Ellipsis in as_tuple else as_tuple + (Ellipsis,)]   # a view even when all ints
    assert_same_view(view, want, dev, host)
    if view.c_contiguous:
        np.testing.assert_array_equal(view.get(), want)


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (6, 5), (5, 0, 2)])
def test_a_lone_slice_takes_a_shortcut_to_the_same_view(arr, shape):
    """x[a:b:c] skips the general walk (host cost); x[(a:b:c,)] still takes it: same header,
    also on a view that runs backwards (negative strides)."""
    host, dev = host_and_device(arr, shape)
    ends = [None, 0, 1, 2, -1, -2, 9, -9]
    for base, base_host in ((dev, host), (dev[::-1], host[::-1])):
        for key in (slice(a, b, c) for a in ends for b in ends for c in (None, 1, 2, -1, -3)):
            fast, walked = base[key], base[(key,)]
            assert (fast.ptr, fast.shape, fast.strides, fast.size, fast.c_contiguous) == \
                (walked.ptr, walked.shape, walked.strides, walked.size, walked.c_contiguous), key
            assert_same_view(fast, base_host[key], dev, host)


def test_views_of_views_and_contiguity(arr):
    host, dev = host_and_device(arr, (6, 7))
    chains = [lambda x: x[1:5][:, ::2].T, lambda x: x.T[2:][::-1], lambda x: x[:, 3:4][None],
              lambda x: x[2][1:6:2], lambda x: x[::3, ::-3].transpose(1, 0)[0]]
    for chain in chains:
        assert_same_view(chain(dev), chain(host), dev, host)


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 2, 1), (2, 0, 1)])
def test_transpose_is_numpys(arr, axes):
    host, dev = host_and_device(arr, (2, 3, 4))
    assert_same_view(dev.transpose(axes), host.transpose(axes), dev, host)
    assert_same_view(dev.T, host.T, dev, host)


@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, 3, 4), (-1, 4), (3, -1, 2), (1, 24, 1), (24, -1)])
def test_reshape_of_contiguous_is_a_view(arr, shape):
    host, dev = host_and_device(arr, (2, 3, 4))
    got = dev.reshape(shape)
    assert_same_view(got, host.reshape(shape), dev, host)
    np.testing.assert_array_equal(got.get(), host.reshape(shape))
    assert_same_view(dev.reshape(*shape), host.reshape(shape), dev, host)


def test_reshape_errors(arr):
    _, dev = host_and_device(arr, (2, 3, 4))
    with pytest.raises(ValueError, match="cannot reshape"):
        dev.reshape(5, 5)
    with pytest.raises(ValueError, match="contiguous"):
        dev.T.reshape(24)


def test_as_strided_broadcasts_with_zero_strides(arr):
    host, dev = host_and_device(arr, (3, 1))
    want = np.lib.stride_tricks.as_strided(host, (2, 3, 5), (0, host.strides[0], 0))
    got = arr.as_strided(dev, (2, 3, 5), (0, dev.strides[0], 0))
    assert_same_view(got, want, dev, host)
    assert not got.c_contiguous


def test_index_errors(arr):
    _, dev = host_and_device(arr, (4, 5))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
        dev[0, 5]
    with pytest.raises(IndexError, match="out of bounds"):
        dev[-5]
    with pytest.raises(IndexError, match="too many indices"):
        dev[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        dev[..., ...]
    with pytest.raises(IndexError, match="got list"):
        dev[[0, 1]]
    with pytest.raises(ValueError, match="not a permutation"):
        dev.transpose((0, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 0, 2), (5, 33)])
def test_round_trip_is_bit_exact(arr, dtype, shape):
    host = (np.random.default_rng(1).standard_normal(shape) * 100).astype(dtype)
    dev = arr.from_numpy(host, 0)
    assert (dev.shape, dev.dtype, dev.size, dev.c_contiguous) == (host.shape, host.dtype, host.size, True)
    back = dev.get()
    assert back.dtype == host.dtype and back.shape == host.shape
    assert back.tobytes() == host.tobytes()


def test_from_numpy_copies_views_compactly(arr):
    host = np.arange(20.0).reshape(4, 5).T[::2]
    np.testing.assert_array_equal(arr.from_numpy(host, 0).get(), host)


def test_to_numpy_refuses_views(arr):
    _, dev = host_and_device(arr, (4, 5))
    with pytest.raises(ValueError, match="contiguous"):
        dev.T.get()


def test_empty_shapes_and_errors(arr):
    a = arr.empty((2, 3), F32, 0)
    assert (a.shape, a.strides, a.size, a.nbytes, a.itemsize, a.c_contiguous) == ((2, 3), (12, 4), 6, 24, 4, True)
    assert len(a) == 2 and "shape=(2, 3)" in repr(a)
    assert a.flags.c_contiguous
    with pytest.raises(ValueError, match="negative dimensions"):
        arr.empty((2, -3), F32, 0)
    with pytest.raises(ValueError, match="negative dimensions"):
        arr.empty((-2, -3), F32, 0)
    with pytest.raises(TypeError, match="0-d"):
        len(arr.empty((), F32, 0))


def test_memory_lives_while_any_view_does(arr):
    from minitorch.cuda import memory
    a = arr.empty((1000,), F32, 0)
    pool = memory.pool(0, None)                   # made by the first empty()
    v = a[10:20]
    del a
    gc.collect()
    assert pool.allocated == 4096                 # the view keeps the block on loan
    del v
    gc.collect()
    assert pool.allocated == 0 and pool.cached >= 4096           # cached for reuse, not given back


def test_cuda_array_interface_both_ways(arr):
    host, dev = host_and_device(arr, (4, 6))
    cai = dev.__cuda_array_interface__
    assert cai["shape"] == (4, 6) and cai["typestr"] == "<f4" and cai["data"] == (dev.ptr, False)
    assert cai["strides"] is None and cai["version"] == 3 and cai["stream"] == 1
    t = dev.T
    assert t.__cuda_array_interface__["strides"] == (4, 24)

    class Foreign:                                # e.g. a CuPy array or a torch cuda tensor
        __cuda_array_interface__ = t.__cuda_array_interface__

    foreign = Foreign()
    wrapped = arr.from_cuda_array(foreign)
    assert (wrapped.ptr, wrapped.shape, wrapped.strides, wrapped.dtype) == (t.ptr, t.shape, t.strides, t.dtype)
    assert wrapped.owner is foreign and not wrapped.c_contiguous
    contiguous = arr.from_cuda_array(dev)
    assert contiguous.strides == dev.strides and contiguous.c_contiguous
    np.testing.assert_array_equal(contiguous.get(), host)


def test_from_cuda_array_errors(arr):
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        arr.from_cuda_array(np.zeros(3))

    class Int32:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<i4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match="int32 has no kernels"):
        arr.from_cuda_array(Int32())


# ---- joined_view: a cat that needs no copy (phase 04) -------------------------------------------------
@pytest.mark.parametrize("shape,dim,sizes", [((2, 5, 12), 2, (4, 4, 4)), ((6, 3), 0, (1, 2, 3)), ((4, 9), 1, (9,))])
def test_joined_view_of_adjacent_pieces_is_their_cat(arr, shape, dim, sizes):
    """Pieces cut along ``dim`` from one array (also viewed through a transpose) join back into a view
    with the values of np.concatenate, at the first piece's address."""
    host, dev = host_and_device(arr, shape)
    starts = np.cumsum((0,) + sizes[:-1])
    key = lambda b, n: (slice(None),) * dim + (slice(b, b + n),)  # noqa: E731
    pieces = [dev[key(b, n)] for b, n in zip(starts, sizes)]
    joined = arr.joined_view(pieces, dim)
    assert joined is not None and joined.ptr == pieces[0].ptr and joined.shape == shape
    np.testing.assert_array_equal(arr.to_numpy(joined), np.concatenate([host[key(b, n)] for b, n in zip(starts, sizes)], dim))
    flipped = [p.transpose() for p in pieces]                 # the same pieces, dimensions reversed
    back = arr.joined_view(flipped, len(shape) - 1 - dim)
    assert (back.ptr, back.shape, back.strides) == (joined.ptr, joined.T.shape, joined.T.strides)


def test_joined_view_refuses_what_a_cat_must_copy(arr):
    """Out of order, with a gap, from two allocations, overlapping (stride 0) or of different strides:
    None, so the caller copies."""
    host, dev = host_and_device(arr, (4, 12))
    a, b, c = dev[:, 0:4], dev[:, 4:8], dev[:, 8:12]
    assert arr.joined_view([b, a], 1) is None, "out of order"
    assert arr.joined_view([a, c], 1) is None, "a gap between the pieces"
    other = host_and_device(arr, (4, 4))[1]
    assert arr.joined_view([a, other], 1) is None, "two allocations"
    row = dev[0:1, 0:4]
    assert arr.joined_view([row.as_strided((2, 4), (0, 4)), row.as_strided((2, 4), (0, 4), 0)], 0) is None, "overlap"
    assert arr.joined_view([dev[0:2, 0:4], dev[2:4, 0:8:2]], 0) is None, "different strides"
    assert arr.non_overlapping_and_dense((3, 2, 4), (32, 16, 4), 4) and not arr.non_overlapping_and_dense((2, 4), (0, 4), 4)
