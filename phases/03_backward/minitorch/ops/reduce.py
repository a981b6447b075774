# GENERATED from minitorch/ops/reduce.py by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Reductions: ``sum`` and ``mean`` over any dimensions, and their gradients.

On cuda, ``reduce.cu`` gives each output element to a block that adds its inputs with a
shared-memory tree and warp shuffles. A mean is a sum scaled by 1/n in the same kernel.
"""
import math

from ..autograd.function import Function
from ..dtypes import int64
from ..tensor import Tensor


class Sum(Function):
    @staticmethod
    def forward(ctx, a, dims, keepdim, scale):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.scale = a.shape, dims, keepdim, scale
        return Tensor(a._backend.sum(a._data, dims, keepdim, scale), a.device)

    @staticmethod
    def backward(ctx, grad):
        # every input element contributed once (times scale) to its output: spread grad back
        if not ctx.keepdim:
            shape = list(ctx.shape)
            for d in ctx.dims:
                shape[d] = 1
            grad = grad.reshape(tuple(shape))
        grad = grad.expand(ctx.shape)
        return (grad * ctx.scale if ctx.scale != 1.0 else grad), None, None, None


def _reduce_dims(a, dim):
    if dim is None:
        return tuple(range(a.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(sorted({a._dim(d) for d in dims}))
    return dims


def sum(a, dim=None, keepdim=False):
    """Sum over ``dim`` (an int, a tuple of ints, or None for all), keeping reduced dims as size 1
    when ``keepdim``. Integer and bool inputs sum to int64, as in PyTorch."""
    if not a.dtype.is_floating_point and a.dtype is not int64:
        a = a.to(int64)
    return Sum.apply(a, _reduce_dims(a, dim), keepdim, 1.0)


def mean(a, dim=None, keepdim=False):
    """Arithmetic mean over ``dim`` (see :func:`sum`).

    Raises:
        RuntimeError: for integer or bool tensors (PyTorch asks for a floating dtype too).
    """
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"mean(): expected a floating point tensor, got {a.dtype}; use .float() first")
    dims = _reduce_dims(a, dim)
    n = math.prod(a.shape[d] for d in dims)
    return Sum.apply(a, dims, keepdim, 1.0 / n if n else float("nan"))
