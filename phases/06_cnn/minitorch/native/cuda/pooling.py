# GENERATED from minitorch/native/cuda/pooling.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 06
"""2-D max, average and adaptive average pooling and their gradients on ``DeviceArray``s, with
``minitorch/cuda/pooling.cu``: the cuda twins of the pooling functions of ``cpu.py``.

Inputs are C-contiguous ``[..., H, W]`` arrays (every leading dimension is a stack of planes;
the Tensor layer passes ``[N, C, H, W]``); ``kernel_size``, ``stride``, ``padding``, ``dilation``
are (rows, columns) pairs and output sizes are computed by the Tensor layer. Forward kernels run
one thread per output element, backward kernels one thread per input element (the gather form:
deterministic, no atomics; see pooling.cu). float32, float64, float16, bfloat16. Nothing here
waits for the GPU.
"""
import functools
import math

import numpy as np

from ...cuda.array import empty
from .launch import kernel_for, launch_stride

FILE = "pooling.cu"


def _check(x, what):
    if x.ndim < 2 or not x.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous [..., H, W] array, got shape {x.shape} "
                         f"and strides {x.strides}")


def _planes(shape):
    return math.prod(shape[:-2])


@functools.lru_cache(maxsize=256)
def _ints(*pairs):
    """(rows, columns) pairs flattened into the kernels' C int arguments: KH, KW, SH, SW, ...
    Cached (NumPy scalars are immutable): making eight np.int32 cost ~4 us of host time per pass."""
    return tuple([np.int32(v) for pair in pairs for v in pair])


def max_pool2d(x, kernel_size, stride, padding, dilation, out_size):
    """Window maxima and their positions: (values [..., OH, OW] of x's dtype, int64 indices
    [..., OH, OW] into each H x W input plane, h * W + w, the first maximum on ties)."""
    _check(x, "max_pool2d")
    *lead, H, W = x.shape
    shape = (*lead, *out_size)
    y, indices = empty(shape, x.dtype, x.device_id), empty(shape, np.dtype(np.int64), x.device_id)
    launch_stride(kernel_for(FILE, "max_pool2d", x.dtype, x.device_id), y.size, 1, x.device_id,
                  (x, y, indices, _planes(x.shape), H, W, *out_size,
                   *_ints(kernel_size, stride, padding, dilation)))
    return y, indices


def max_pool2d_backward(grad, indices, in_size, kernel_size, stride, padding, dilation, relu_out=None):
    """dx [..., H, W]: each input element sums the gradients of the outputs whose saved index is it.
    ``grad`` and ``indices`` [..., OH, OW], ``in_size`` (H, W); ``relu_out`` [..., OH, OW] or None:
    the pooled output of a ReLU before the pooling, whose outputs that are not > 0 pass nothing."""
    _check(grad, "max_pool2d_backward")
    _check(indices, "max_pool2d_backward")
    if relu_out is not None:
        _check(relu_out, "max_pool2d_backward")
    dx = empty((*grad.shape[:-2], *in_size), grad.dtype, grad.device_id)
    launch_stride(kernel_for(FILE, "max_pool2d_backward", grad.dtype, grad.device_id), dx.size, 1, grad.device_id,
                  (grad, indices, relu_out, dx, _planes(grad.shape), *in_size, *grad.shape[-2:],
                   *_ints(kernel_size, stride, padding, dilation)))
    return dx


def avg_pool2d(x, kernel_size, stride, padding, out_size, count_include_pad, divisor_override):
    """Window means [..., OH, OW] with PyTorch's divisor (``divisor_override`` 0: none)."""
    _check(x, "avg_pool2d")
    *lead, H, W = x.shape
    y = empty((*lead, *out_size), x.dtype, x.device_id)
    launch_stride(kernel_for(FILE, "avg_pool2d", x.dtype, x.device_id), y.size, 1, x.device_id,
                  (x, y, _planes(x.shape), H, W, *out_size, *_ints(kernel_size, stride, padding),
                   np.bool_(count_include_pad), np.int32(divisor_override)))
    return y


def avg_pool2d_backward(grad, in_size, kernel_size, stride, padding, count_include_pad, divisor_override):
    """dx [..., H, W]: each input element sums grad / divisor over the windows holding it."""
    _check(grad, "avg_pool2d_backward")
    dx = empty((*grad.shape[:-2], *in_size), grad.dtype, grad.device_id)
    launch_stride(kernel_for(FILE, "avg_pool2d_backward", grad.dtype, grad.device_id), dx.size, 1, grad.device_id,
                  (grad, dx, _planes(grad.shape), *in_size, *grad.shape[-2:],
                   *_ints(kernel_size, stride, padding), np.bool_(count_include_pad), np.int32(divisor_override)))
    return dx


def adaptive_avg_pool2d(x, out_size):
    """Means over PyTorch's adaptive windows: rows [floor(i H / OH), ceil((i + 1) H / OH))."""
    _check(x, "adaptive_avg_pool2d")
    *lead, H, W = x.shape
    y = empty((*lead, *out_size), x.dtype, x.device_id)
    launch_stride(kernel_for(FILE, "adaptive_avg_pool2d", x.dtype, x.device_id), y.size, 1, x.device_id,
                  (x, y, _planes(x.shape), H, W, *out_size))
    return y


def adaptive_avg_pool2d_backward(grad, in_size):
    """dx [..., H, W] of adaptive average pooling."""
    _check(grad, "adaptive_avg_pool2d_backward")
    dx = empty((*grad.shape[:-2], *in_size), grad.dtype, grad.device_id)
    launch_stride(kernel_for(FILE, "adaptive_avg_pool2d_backward", grad.dtype, grad.device_id), dx.size, 1,
                  grad.device_id, (grad, dx, _planes(grad.shape), *in_size, *grad.shape[-2:]))
    return dx
