"""Run every phase-02/03/04 kernel once on small, awkward inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_kernels.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_kernels.py   # shared-memory races
    compute-sanitizer --tool synccheck python benchmarks/sanitize_kernels.py   # barrier misuse

Each should end with "0 errors" (racecheck: "0 hazards"). Covers the contiguous and strided
paths, both transposes, batched/broadcast matmul, both sum strategies (with split rows), the
backward kernels and SGD with and without momentum; phase 04's max/min, var/std and vectorised
sum on every axis (views, misaligned rows, split rows), gathers/scatters/strided copies and nonzero.
"""
import sys
from pathlib import Path

import numpy as np
import cupy as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minitorch import dtypes  # noqa: E402
from minitorch.native import cuda as B  # noqa: E402
from minitorch.cuda.array import from_cuda_array as D  # noqa: E402

# The cuda backend takes DeviceArrays: inputs and their views are built with CuPy and wrapped with
# D() (zero-copy, any strides); backend results are DeviceArrays already and are passed on as they are.
rng = np.random.default_rng(1)


def f(*shape):
    return cp.asarray(rng.standard_normal(shape).astype(np.float32))


a, b = f(33, 7), f(7)
B.binary("add", D(a), D(a))
B.binary("mul", D(a), D(b))
B.binary("lt", D(a.T), D(a.T[:, :1]))
B.binary("add", D(a[1:]), D(a[:-1]))
B.binary_scalar("sub", D(a), 1.5, True)
B.binary_scalar("pow", D(a.T), 2.0)
B.unary("sigmoid", D(a))
B.unary("exp", D(a[::2]))
B.where(B.binary_scalar("gt", D(a), 0.0), D(a), D(b))
B.cast(D(a.T), dtypes.float64)
B.contiguous(D(a[::3, 1:]))
B.cast(D(a), dtypes.bool)
B.transpose2d(D(f(65, 33)))
B.transpose2d_naive(D(f(65, 33)))
B.transpose2d(D(f(3, 1000)[:, ::2]))
B.matmul(D(f(2, 1, 17, 9)), D(f(3, 9, 5)))
B.matmul(D(f(9)), D(f(9, 4)))
x = D(f(300, 70, 3))
for dims in ((0,), (1,), (2,), (0, 2), (0, 1, 2)):
    B.sum(x, dims)
    B.sum(x, dims, True, 0.5)
B.sum(D(f(200_003)), (0,))
B.sum(D(f(5000, 64)), (0,))
B.sum(D(f(64, 5000)), (1,))
g = D(f(1001))
B.unary_backward("tanh", g, B.unary("tanh", g))
B.unary_backward("relu", g, g)
p, buf = D(f(1001)), D(f(1001))
B.sgd_step(p, g, buf, 0.1, 0.9, 0.0, 0.01, True, False, True)
B.sgd_step(p, g, None, 0.1, 0.0, 0.0, 0.0, False, True, False)
cp.cuda.Device().synchronize()
print("sanitize script done")

# ---- phase 04: max/min, var/std, the vectorised sum, gather/scatter/copy, nonzero ----------------
xs = (f(300, 70, 3), f(1001, 33)[:, 1:], f(100_003)[3:], f(1), f(37, 4099))
for x4 in map(D, xs):
    for dims in [(d,) for d in range(x4.ndim)] + [tuple(range(x4.ndim))]:
        B.extreme(x4, dims, False, True)
        B.extreme(x4, dims, True, False)
        B.var_mean(x4, dims, 1, False, True)
        B.sum(x4, dims)
B.extreme(D(cp.asarray(rng.integers(-5, 5, (513, 77)))), (1,), False, True)
B.var_mean(D(cp.asarray(rng.standard_normal((129, 2049)))), (1,), 0, True, False)
B.sum(D(cp.asarray(rng.standard_normal((2, 100_003)))), (1,))
B.sum(D(cp.asarray(rng.integers(-5, 5, 70_001))), (0,))
src4 = f(6, 7, 5)
idx4 = cp.asarray(rng.integers(-7, 7, (4, 3)))
for dim in range(3):
    got4 = B.take(D(src4.transpose(2, 0, 1)), dim, D(idx4.T))
    B.index_add_(D(cp.zeros((5, 6, 7), dtype=cp.float32)), dim, D(idx4.T), got4)
B.take(D(src4), 0, D(cp.asarray(np.array([0, 9, -9], dtype=np.int64))))     # out of range: never read
B.scatter_add_(D(cp.zeros((6, 7), dtype=cp.float32)), 1, D(cp.asarray(rng.integers(0, 7, (6, 3)))), D(f(6, 3)))
B.copy_(D(cp.zeros((9, 8), dtype=cp.float32)[1::2, ::3]), D(src4[0, :4, :3]))
B.copy_(D(cp.zeros((9, 8), dtype=cp.float32)[2:]), D(f(8)))               # broadcast source
for shape4 in ((1,), (4097,), (3, 10_007), (2, 1, 3, 5)):
    B.nonzero(D(cp.asarray(rng.random(shape4) < 0.5)))
B.nonzero(D(cp.asarray(np.zeros(5000, dtype=bool))))
cp.cuda.Device().synchronize()
print("sanitize script (phase 04) done")
