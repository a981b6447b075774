"""Run every phase-02/03 kernel once on small, awkward inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_kernels.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_kernels.py   # shared-memory races
    compute-sanitizer --tool synccheck python benchmarks/sanitize_kernels.py   # barrier misuse

Each should end with "0 errors" (racecheck: "0 hazards"). Covers the contiguous and strided
paths, both transposes, batched/broadcast matmul, both sum strategies (with split rows), the
backward kernels and SGD with and without momentum.
"""
import sys
from pathlib import Path

import numpy as np
import cupy as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minitorch import dtypes  # noqa: E402
from minitorch.backends import cuda as B  # noqa: E402

rng = np.random.default_rng(1)


def f(*shape):
    return cp.asarray(rng.standard_normal(shape).astype(np.float32))


a, b = f(33, 7), f(7)
B.binary("add", a, a)
B.binary("mul", a, b)
B.binary("lt", a.T, a.T[:, :1])
B.binary("add", a[1:], a[:-1])
B.binary_scalar("sub", a, 1.5, True)
B.binary_scalar("pow", a.T, 2.0)
B.unary("sigmoid", a)
B.unary("exp", a[::2])
B.where(B.binary_scalar("gt", a, 0.0), a, b)
B.cast(a.T, dtypes.float64)
B.contiguous(a[::3, 1:])
B.cast(a, dtypes.bool)
B.transpose2d(f(65, 33))
B.transpose2d_naive(f(65, 33))
B.transpose2d(f(3, 1000)[:, ::2])
B.matmul(f(2, 1, 17, 9), f(3, 9, 5))
B.matmul(f(9), f(9, 4))
x = f(300, 70, 3)
for dims in ((0,), (1,), (2,), (0, 2), (0, 1, 2)):
    B.sum(x, dims)
    B.sum(x, dims, True, 0.5)
B.sum(f(200_003), (0,))
B.sum(f(5000, 64), (0,))
B.sum(f(64, 5000), (1,))
g = f(1001)
B.unary_backward("tanh", g, B.unary("tanh", g))
B.unary_backward("relu", g, g)
p, buf = f(1001), f(1001)
B.sgd_step(p, g, buf, 0.1, 0.9, 0.0, 0.01, True, False, True)
B.sgd_step(p, g, None, 0.1, 0.0, 0.0, 0.0, False, True, False)
cp.cuda.Device().synchronize()
print("sanitize script done")
