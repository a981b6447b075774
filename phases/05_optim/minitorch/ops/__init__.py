# GENERATED from minitorch/ops/__init__.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 02
"""The ops: each a :class:`~minitorch.autograd.Function` plus a public function with checks."""
from .elementwise import (abs, add, broadcast_shapes, compare, div, exp, log, maximum, minimum, mul, neg, pow,
                          relu, sigmoid, sqrt, sub, tanh, where)
from .elementwise import (allclose, ceil, clamp, clip, cos, erf, expm1, floor, floor_divide, isclose, isfinite,
                          isinf, isnan, log1p, logical_and, logical_not, logical_or, logical_xor, masked_fill,
                          nan_to_num, remainder, round, rsqrt, sign, sin)
from .matmul import matmul
from .shape import clone, contiguous, expand, flatten, permute, reshape, squeeze, transpose, unsqueeze, view
from .reduce import mean, sum
from .indexing import cat, getitem, index_add, index_select, nonzero, setitem, stack
from .reduce import argmax, argmin, max, min, std, var
from .rearrange import (chunk, diagonal, flip, movedim, moveaxis, narrow, repeat, roll, split, tile, tril, triu,
                        unbind)
from .scatter import gather, index_put, scatter, scatter_add, take_along_dim
from .scatter import scatter_reduce
from .einsum import einsum
from .reduce import all, amax, amin, any, count_nonzero, logsumexp, norm, prod
from .sorting import (argsort, bincount, cumprod, cumsum, histc, kthvalue, median, mode, sort, topk,
                      unique)
from . import inplace
from .linear import linear
from .matmul import bmm
