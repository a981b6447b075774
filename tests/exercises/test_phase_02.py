"""Grading tests of phase 02 (ops): the broadcast shape and strides, the elementwise kernel, the
strided walk, the tiled transpose and the naive matmul.

Run by ``minitorch-course check 02`` against a workspace, and by pytest against the repository.
Kernels are called through the cuda backend (``minitorch.native.cuda``) on ``DeviceArray``s, so a
kernel's test does not depend on the Tensor layer's exercises.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close, function_from  # noqa: E402

from minitorch.utils.exercises import exercise  # noqa: E402


def _raises(fn, error, what):
    try:
        fn()
    except error:
        return
    except NotImplementedError:
        raise
    except Exception as e:       # noqa: BLE001
        raise AssertionError(f"{what} should raise {error.__name__}, raised {type(e).__name__}: {e}") from None
    raise AssertionError(f"{what} should raise {error.__name__}")


@exercise("02.2")
def test_broadcast_shape_follows_numpy():
    from minitorch.broadcast import broadcast_shape
    cases = [[(3, 4), (3, 4)], [(4, 1, 5), (3, 1)], [(1,), (7,)], [(), (2, 3)], [(5, 1, 3), (1, 4, 1), (4, 3)],
             [(0, 3), (1, 3)], [(2, 1), (1, 0)], [(6,)], [(1, 1), ()]]
    for shapes in cases:
        want = np.broadcast_shapes(*shapes)
        got = broadcast_shape(*shapes)
        assert tuple(got) == want, f"broadcast_shape{tuple(shapes)} is {got}, expected {want}"
    for shapes in [[(3,), (4,)], [(2, 3), (3, 2)], [(4, 3, 5), (2, 5)]]:
        _raises(lambda: broadcast_shape(*shapes), ValueError, f"broadcast_shape{tuple(shapes)}")


@exercise("02.3")
def test_broadcast_strides_read_stretched_dimensions_with_stride_0():
    broadcast_strides = function_from("native/cuda/launch.py", "broadcast_strides")
    rng = np.random.default_rng(4)
    for shape, out_shape in [((3, 1), (4, 3, 5)), ((5,), (2, 3, 5)), ((1, 1), (2, 2)), ((2, 3), (2, 3)),
                             ((4, 1, 6), (4, 7, 6)), ((), (3,)), ((1,), (3, 2, 1))]:
        for itemsize, dtype in ((4, np.float32), (8, np.float64)):
            a = rng.standard_normal(shape).astype(dtype)
            if a.ndim == 2:
                a = np.asfortranarray(a)          # any strides, not only fresh ones
            want = tuple(s // itemsize for s in np.broadcast_to(a, out_shape).strides)
            want = tuple(0 if n == 1 and (len(out_shape) - d > a.ndim or a.shape[d - len(out_shape) + a.ndim] == 1)
                         else w for d, (n, w) in enumerate(zip(out_shape, want)))
            got = broadcast_strides(a.shape, a.strides, itemsize, out_shape)
            assert tuple(got) == want, \
                f"broadcast_strides({a.shape}, {a.strides}, {itemsize}, {out_shape}) is {got}, expected {want}"


# ---- kernels -------------------------------------------------------------------------------------

def _dev(host):
    from minitorch.cuda import array
    return array.from_numpy(host, 0)


def _host(d):
    from minitorch.cuda import array
    return array.to_numpy(d)


@exercise("02.1", cuda=True)
def test_elementwise_kernel_on_contiguous_arrays():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(5)
    for n in (1, 3, 7, 1000, 100_003):
        for dtype in (np.float32, np.float64):
            a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
            for op, ref in (("add", a + b), ("mul", a * b), ("sub", a - b)):
                close(_host(backend.binary(op, _dev(a), _dev(b))), ref, f"{op} of two {np.dtype(dtype)} arrays of {n}")
    a, b = rng.standard_normal(1001).astype(np.float32), rng.standard_normal(1001).astype(np.float32)
    da, db = _dev(a), _dev(b)
    close(_host(backend.binary("add", da[1:], db[1:])), a[1:] + b[1:],
          "add of arrays starting 4 bytes past a 16-byte boundary (the scalar path)")
    i = rng.integers(-2**62, 2**62, 999)
    close(_host(backend.binary("add", _dev(i), _dev(i))), i + i, "int64 add (wrapping)", rtol=0, atol=0)


@exercise("02.4", cuda=True, needs=("02.2", "02.3"))
def test_strided_kernels_read_views_in_place():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(6)
    x = rng.standard_normal((37, 45)).astype(np.float32)
    close(_host(backend.unary("neg", _dev(x).T)), -x.T, "neg of a transposed [37, 45] view")
    y = rng.standard_normal((4, 5, 6, 7))
    close(_host(backend.unary("exp", _dev(y).transpose(2, 0, 3, 1))), np.exp(y.transpose(2, 0, 3, 1)),
          "exp of a permuted 4-d view")
    close(_host(backend.unary("abs", _dev(y)[:, ::2, 1:, ::3])), np.abs(y[:, ::2, 1:, ::3]), "abs of a sliced view")
    a, b = rng.standard_normal((4, 1, 5)).astype(np.float32), rng.standard_normal((3, 1)).astype(np.float32)
    close(_host(backend.binary("add", _dev(a), _dev(b))), a + b, "(4, 1, 5) + (3, 1) broadcast")
    c = rng.standard_normal((1, 6)).astype(np.float32)
    close(_host(backend.binary("mul", _dev(x)[:6, :6].T, _dev(c))), x[:6, :6].T * c, "a transposed view times a broadcast row")


@exercise("02.5", cuda=True)
def test_tiled_transpose():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(7)
    for shape in [(1, 1), (1, 100), (100, 1), (32, 32), (33, 70), (1025, 3), (64, 96), (257, 130)]:
        a = rng.standard_normal(shape).astype(np.float32)
        close(_host(backend.transpose2d(_dev(a))), a.T, f"transpose2d of a {shape} float32 matrix", rtol=0, atol=0)
    a = rng.integers(-100, 100, (70, 45))
    close(_host(backend.transpose2d(_dev(a))), a.T, "transpose2d of an int64 matrix", rtol=0, atol=0)
    b = rng.standard_normal((90, 80))
    close(_host(backend.transpose2d(_dev(b)[::2, 1:])), b[::2, 1:].T, "transpose2d of a strided view", rtol=0, atol=0)


@exercise("02.6", cuda=True, needs=("02.2", "02.3"))     # the batch Layout
def test_naive_matmul():
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(8)
    for m, k, n in [(1, 1, 1), (7, 5, 3), (33, 17, 65), (128, 64, 16), (1, 300, 1), (100, 1, 90)]:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        close(_host(backend.matmul(_dev(a), _dev(b))), a @ b, f"matmul [{m}, {k}] @ [{k}, {n}] in float64", rtol=1e-10)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        close(_host(backend.matmul(_dev(a32), _dev(b32))), a @ b, f"matmul [{m}, {k}] @ [{k}, {n}] in float32",
              rtol=1e-4, atol=1e-4)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((40, 30))
    close(_host(backend.matmul(_dev(a), _dev(b).T)), a @ b.T, "matmul with a transposed right operand (strides)", rtol=1e-10)
