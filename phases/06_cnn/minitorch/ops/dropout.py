# GENERATED from minitorch/ops/dropout.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Dropout (Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from
Overfitting", JMLR 2014) and channel dropout (Dropout2d, Tompson et al., "Efficient Object
Localization Using Convolutional Networks", CVPR 2015).

In training each element (dropout) or each whole channel ``[n, c, ...]`` (dropout2d) is zeroed
with probability p and the survivors are scaled by 1 / (1 - p), so every element keeps its
expected value. The keep-mask is drawn on the input's device (cuRAND on cuda, the cpu generator
on cpu; ``minitorch.manual_seed`` makes both reproducible), kept as bools, and backward applies
the SAME mask to the gradient: ``dx = mask * dy / (1 - p)``. In evaluation both are the identity.
"""
import warnings

from .. import random
from ..autograd.function import Function
from ..tensor import Tensor


def _contiguous_raw(backend, data):
    return data if data.flags.c_contiguous else backend.contiguous(data)


class Dropout(Function):
    """``x * mask / (1 - p)``; the mask covers the first ``mask_dims`` dimensions of x."""

    @staticmethod
    def forward(ctx, x, p, mask_dims):
        b = x._backend
        ctx.scale = 1.0 / (1.0 - p)
        out, ctx.mask = b.dropout(_contiguous_raw(b, x._data), tuple(x.shape[:mask_dims]), p, ctx.scale,
                                  random.engine(None, x.device), index=x.device.index)
        return Tensor(out, x.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        return Tensor(b.masked_scale(_contiguous_raw(b, grad._data), ctx.mask, ctx.scale), grad.device), None, None


def _dropout(what, input, p, training, mask_dims):
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(input).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{what}: expected a floating point input, got {input.dtype}")
    if not training or p == 0 or input.numel() == 0:
        return input                            # PyTorch returns the input itself here too
    if p == 1:
        return input * 0                        # all dropped (NaN * 0 stays NaN, as in PyTorch)
    return Dropout.apply(input, float(p), mask_dims)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (training only).

    Args:
        input: a floating tensor of any shape.
        p: the drop probability, in [0, 1].
        training: False gives ``input`` back unchanged.
        inplace: accepted for PyTorch compatibility; the result is always a new tensor.
    Returns:
        A tensor of input's shape and dtype (``input`` itself when nothing is dropped).
    Raises:
        ValueError: p outside [0, 1].  RuntimeError: integer or bool input.
    """
    return _dropout("dropout", input, p, training, input.ndim if isinstance(input, Tensor) else 0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each [n, c] slice of an [N, C, H, W] input (or [N, C, L]: PyTorch, too,
    treats a 3-D input as batched 1-D channels) with probability ``p``; survivors scaled by 1 / (1 - p).

    Same arguments, results and errors as :func:`dropout`; other ranks warn (as PyTorch) and drop
    the slices of the first two dimensions.
    """
    if isinstance(input, Tensor) and input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: received a {input.ndim}-D input; expected [N, C, H, W] (or [N, C, L]). "
                      "Channels are taken as the first two dimensions", UserWarning, stacklevel=2)
    return _dropout("dropout2d", input, p, training, min(2, input.ndim) if isinstance(input, Tensor) else 0)
