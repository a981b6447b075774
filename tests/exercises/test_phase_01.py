"""Grading tests of phase 01 (the matrix): strides, contiguity, the fill kernel, the round trip.

Run by ``minitorch-course check 01`` against a workspace, and by pytest against the repository.
The memory layer is graded on any machine through a fake GPU whose memory is host RAM.
"""
import ctypes
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import fake_gpu  # noqa: E402

from minitorch.utils.exercises import exercise  # noqa: E402

SHAPES = [(), (1,), (7,), (2, 3), (3, 1, 4), (5, 0, 3), (2, 3, 4, 5)]


@exercise("01.1")
def test_contiguous_strides_are_numpys():
    with fake_gpu():
        from minitorch.cuda.array import contiguous_strides
        for shape in SHAPES:
            for itemsize in (1, 4, 8):
                # NumPy's strides of an empty array vary; ours step max(n, 1) as if it were not empty
                want = np.empty(tuple(max(n, 1) for n in shape), dtype=f"V{itemsize}").strides
                got = contiguous_strides(shape, itemsize)
                assert tuple(got[0]) == want, f"contiguous_strides({shape}, {itemsize}) gives strides {got[0]}, NumPy {want}"
                assert got[1] == int(np.prod(shape)), f"contiguous_strides({shape}, {itemsize}) counts {got[1]} elements"
        try:
            contiguous_strides((2, -1), 4)
        except ValueError:
            pass
        else:
            raise AssertionError("contiguous_strides((2, -1), 4) should raise ValueError for a negative size")


@exercise("01.2")
def test_is_c_contiguous_agrees_with_numpy():
    with fake_gpu():
        from minitorch.cuda.array import is_c_contiguous
        base = np.zeros((4, 6, 5), np.float32)
        views = [base, base[1:3], base[:, 2:3], base[:, ::2], base.transpose(1, 0, 2), base[:, :, 1:],
                 base[1:2, :, :], base[:, 0:1, :], base[2], base[:, 3], base[0:0], base[..., None],
                 np.zeros((3, 1)).T, np.zeros(()), np.zeros((1, 1))[::1, ::2]]
        for v in views:
            got = is_c_contiguous(v.shape, v.strides, v.itemsize)
            assert bool(got) == v.flags.c_contiguous, \
                f"is_c_contiguous(shape {v.shape}, strides {v.strides}) is {got}, NumPy says {v.flags.c_contiguous}"


@exercise("01.3", cuda=True)
def test_fill_kernel_writes_n_elements_and_no_more():
    import cupy as cp
    from minitorch.cuda.compiler import kernel
    for n in (1, 255, 256, 257, 10_000):
        out = cp.full(n + 300, -1.0, dtype=cp.float32)
        fn = kernel("fill.cu", "fill_f32")
        fn(((n + 255) // 256,), (256,), (out, np.float32(3.5), np.int64(n)))
        host = out.get()
        assert (host[:n] == 3.5).all(), f"fill_f32 with n={n} left {int((host[:n] != 3.5).sum())} elements unset"
        assert (host[n:] == -1).all(), f"fill_f32 with n={n} wrote past the end (the guard i < n is missing)"
    out = cp.zeros(1000, dtype=cp.int64)
    kernel("fill.cu", "fill_i64")((4,), (256,), (out, np.int64(-7), np.int64(1000)))
    assert (out.get() == -7).all(), "fill_i64 did not fill int64 memory"


def _device_bytes(d):
    return ctypes.string_at(d.ptr, d.nbytes) if d.nbytes else b""


@exercise("01.4", needs=("01.1",))
def test_host_to_device_copies_every_byte():
    rng = np.random.default_rng(1)
    with fake_gpu():
        from minitorch.cuda import array
        for host in (rng.standard_normal((33, 7)).astype(np.float32), rng.integers(-9, 9, (4, 5, 6)),
                     rng.random(10) > 0.5, np.float64(2.5), np.zeros((0, 3)), rng.standard_normal((6, 8))[:, ::2]):
            d = array.from_numpy(host, 0)
            want = np.asarray(host, order="C")
            assert d.shape == want.shape and d.dtype == want.dtype, \
                f"from_numpy of a {want.dtype} {want.shape} array made a {d.dtype} {d.shape} one"
            assert d.c_contiguous, "from_numpy must return a contiguous DeviceArray"
            assert _device_bytes(d) == want.tobytes(), f"from_numpy({want.dtype} {want.shape}): the device bytes differ"


@exercise("01.5")
def test_device_to_host_copies_every_byte():
    rng = np.random.default_rng(2)
    with fake_gpu():
        from minitorch.cuda import array
        for src in (rng.standard_normal((33, 7)).astype(np.float32), rng.integers(-9, 9, (4, 5)), np.zeros((0, 2))):
            dev = src.copy()                # "device memory": a buffer the DeviceArray points at
            d = array.DeviceArray(dev, dev.ctypes.data, dev.shape, dev.strides, dev.dtype, dev.size, True, 0)
            back = array.to_numpy(d)
            assert isinstance(back, np.ndarray) and back.shape == src.shape and back.dtype == src.dtype, \
                f"to_numpy gave {type(back).__name__} {getattr(back, 'shape', '')}, expected {src.dtype} {src.shape}"
            assert back.tobytes() == src.tobytes(), f"to_numpy({src.dtype} {src.shape}): the bytes differ"
            assert back.ctypes.data != dev.ctypes.data or not src.size, "to_numpy must copy into a new host array"
        dev = np.zeros((3, 4))
        view = array.DeviceArray(dev, dev.ctypes.data, (4, 3), (8, 32), dev.dtype, 12, False, 0)
        try:
            array.to_numpy(view)
        except ValueError:
            pass
        else:
            raise AssertionError("to_numpy of a non-contiguous view should raise ValueError")
