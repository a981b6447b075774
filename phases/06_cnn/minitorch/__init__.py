# GENERATED from minitorch/__init__.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 01
"""MiniTorch: a PyTorch-like framework built from raw GPU memory up, one phase at a time.

``import minitorch`` gives tensors on two devices: ``cpu`` (NumPy) and ``cuda`` (our own kernels,
compiled at run time by NVRTC through CuPy). Names and signatures follow PyTorch.
"""
from . import cuda
from .creation import (arange, empty, empty_like, from_numpy, full, full_like, ones, ones_like, rand,
                       rand_like, randn, randn_like, tensor, zeros, zeros_like)
from .device import device
from .dtypes import bool, double, dtype, float, float32, float64, int64, long, promote_types, result_type
from .random import initial_seed, manual_seed
from .tensor import Size, Tensor
from . import ops
from .ops import (abs, add, broadcast_shapes, div, exp, flatten, log, matmul, maximum, minimum, mul, neg, permute,
                  pow, relu, reshape, sigmoid, sqrt, squeeze, sub, tanh, transpose, unsqueeze, where)
from .creation import empty_strided, eye, linspace, logspace, randint
from .random import Generator, default_generator
from .ops import (allclose, ceil, clamp, clip, clone, cos, erf, expm1, floor, floor_divide, isclose, isfinite,
                  isinf, isnan, log1p, logical_and, logical_not, logical_or, logical_xor, masked_fill, nan_to_num,
                  remainder, round, rsqrt, sign, sin)
from . import autograd, nn, optim
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops import mean, sum
from .ops import argmax, argmin, cat, index_add, index_select, max, min, nonzero, stack, std, var
from .ops import (chunk, diagonal, flip, gather, index_put, movedim, moveaxis, narrow, roll, scatter, scatter_add,
                  split, take_along_dim, tile, tril, triu, unbind)
from .ops.scatter import where        # where(condition) joins the three-argument where of phase 02
from .ops import scatter_reduce
from .creation import bernoulli, multinomial, randperm
from .ops import einsum
from .ops import (all, amax, amin, any, argsort, bincount, count_nonzero, cumprod, cumsum, histc, kthvalue,
                  logsumexp, median, mode, norm, prod, sort, topk, unique)
from .ops.inplace import clamp_, fill_, index_put_, zero_
from . import backends
from .dtypes import bfloat16, float16, half
from .ops import bmm
from .random import get_rng_state, set_rng_state
from .serialization import load, save
from .ops import log_softmax, softmax
from .ops import conv2d

__version__ = "0.1.0"
