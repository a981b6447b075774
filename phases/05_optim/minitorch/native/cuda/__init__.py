# GENERATED from minitorch/native/cuda/__init__.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 01
"""The cuda backend: each function takes and returns ``DeviceArray``s, computed by our kernels.

One module per concept; this file gathers their functions so ``native.get(device)`` gives one
namespace with the same names as ``native/cpu.py``.
"""
from .creation import arange, empty, fill_, from_numpy, full, rand, randn, to_numpy
from ...cuda.array import as_strided
from .elementwise import BINARY_OPS, COMPARISONS, UNARY_OPS
from .elementwise import binary, binary_scalar, cast, contiguous, unary, where
from .matrix import matmul, transpose2d, transpose2d_naive
from .elementwise import unary_backward
from .optim import sgd_step
from .reduce import sum
from .indexing import copy_, index_add_, nonzero, scatter_add_, take
from .reduce import extreme, var_mean
from .gemm import linear, matmul   # the GEMM ladder, rung chosen per shape (replaces matrix.py's naive matmul)
# float16/bfloat16 max/min, var/std and softmax: float32 kernels on float32 copies, rounded once
# (half.py); sum has kernels of its own that read half (reduce.py, _sum_half)
from .half import in_float32  # noqa: E402

# function -> position of the argument whose dtype decides
for _name, _at in (("extreme", 0), ("var_mean", 0), ("softmax", 0), ("log_softmax", 0), ("softmax_backward", 0),
                   ("log_softmax_backward", 0), ("cross_entropy", 0), ("cross_entropy_backward", 0),
                   ("nll_loss", 0), ("nll_loss_backward", 1)):
    if _name in globals():       # softmax and the losses exist from phase 06 on
        globals()[_name] = in_float32(globals()[_name], _at)
