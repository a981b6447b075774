# GENERATED from minitorch/native/cuda/batchnorm.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Batch normalization on ``DeviceArray``s with ``minitorch/cuda/batchnorm.cu``: the cuda twins of
the batch-norm functions of ``cpu.py``.

``x`` is a C-contiguous ``[N, C, L]`` array (float32 or float64; L = H * W, or 1 for [N, C]);
per-channel arrays (statistics, weight, bias, running statistics) are contiguous ``[C]`` of the
same dtype. Statistics take one block of THREADS threads per channel (Welford, then Chan et al.'s
merge); the elementwise passes one thread per element. Nothing here waits for the GPU: with
``momentum=None`` the kernel reads ``num_batches_tracked`` on the device.
"""
import numpy as np

from ...cuda.array import empty
from .launch import dtype_name, kernel_for, launch, launch_stride

FILE = "batchnorm.cu"
THREADS = 256            # per channel's block: 8 warps walk the channel's N * L elements


def _check(x, what):
    if x.ndim != 3 or not x.c_contiguous or dtype_name(x.dtype) not in ("float32", "float64"):
        raise ValueError(f"{what}: expected a C-contiguous float32/float64 [N, C, L] array, got "
                         f"{x.dtype} of shape {x.shape} and strides {x.strides}")


def batch_norm_stats(x, running_mean=None, running_var=None, num_batches_tracked=None, momentum=0.1):
    """Per-channel batch mean and biased variance ([C] each); when ``running_mean`` is given,
    updates the running statistics in place with the unbiased variance, by ``momentum`` or (None)
    by 1 / num_batches_tracked (a 0-d int64 array, already counting this batch)."""
    _check(x, "batch_norm_stats")
    N, C, L = x.shape
    mean, var = empty((C,), x.dtype, x.device_id), empty((C,), x.dtype, x.device_id)
    if C:
        launch(kernel_for(FILE, "batch_norm_stats", x.dtype, x.device_id), (C,), (THREADS,),
               (x, mean, var, running_mean, running_var, num_batches_tracked,
                np.float64(-1.0 if momentum is None else momentum), N, C, L), index=x.device_id)
    return mean, var


def batch_norm_apply(x, mean, var, weight, bias, eps):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel; weight/bias may be None."""
    _check(x, "batch_norm_apply")
    N, C, L = x.shape
    y = empty(x.shape, x.dtype, x.device_id)
    launch_stride(kernel_for(FILE, "batch_norm_apply", x.dtype, x.device_id), y.size, 4, x.device_id,
                  (x, mean, var, weight, bias, y, np.float64(eps), y.size, C, L))
    return y


def batch_norm_backward(grad, x, mean, var, weight, eps, training):
    """(dx [N, C, L], dweight [C], dbias [C]) in two kernels: per channel sum(dy) (= dbias) and
    sum(dy * xhat) (= dweight) in one pass, then dx elementwise (``training``: through the batch
    statistics; else they are constants and dx = weight * dy / sqrt(var + eps))."""
    _check(x, "batch_norm_backward")
    _check(grad, "batch_norm_backward")
    N, C, L = x.shape
    dweight, dbias = empty((C,), x.dtype, x.device_id), empty((C,), x.dtype, x.device_id)
    dx = empty(x.shape, x.dtype, x.device_id)
    if C:
        launch(kernel_for(FILE, "batch_norm_backward_reduce", x.dtype, x.device_id), (C,), (THREADS,),
               (grad, x, mean, var, dbias, dweight, np.float64(eps), N, C, L), index=x.device_id)
    launch_stride(kernel_for(FILE, "batch_norm_backward_apply", x.dtype, x.device_id), dx.size, 4, x.device_id,
                  (grad, x, mean, var, weight, dbias, dweight, dx, np.float64(eps), np.bool_(training),
                   dx.size, C, L))
    return dx, dweight, dbias
