# GENERATED from minitorch/native/cuda/__init__.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 01
"""The cuda backend: each function takes and returns ``DeviceArray``s, computed by our kernels.

One module per concept; this file gathers their functions so ``native.get(device)`` gives one
namespace with the same names as ``native/cpu.py``.
"""
from .creation import arange, empty, fill_, from_numpy, full, rand, randn, to_numpy
from ...cuda.array import as_strided
from .elementwise import BINARY_OPS, COMPARISONS, UNARY_OPS
from .elementwise import binary, binary_scalar, cast, contiguous, unary, where
from .elementwise import PREDICATES, nan_to_num
from .matrix import matmul, transpose2d, transpose2d_naive
from .random import empty_strided, eye, linspace, normal_, randint, uniform_
from .elementwise import unary_backward
from .optim import sgd_step
from .reduce import sum
from .indexing import copy_, index_add_, nonzero, scatter_add_, take
from .reduce import extreme, var_mean
from .indexing import gather, index_copy_, scatter_
from .indexing import scatter_reduce_
from .random import multinomial, randperm
from .histogram import bincount, histc
from .reduce import fold
from .scan import cumulative
from .sort import mode, sort, unique
from ...cuda.array import joined_view
