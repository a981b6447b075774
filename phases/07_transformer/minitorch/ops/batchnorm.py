# GENERATED from minitorch/ops/batchnorm.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Batch normalization (Ioffe & Szegedy, "Batch Normalization: Accelerating Deep Network Training
by Reducing Internal Covariate Shift", ICML 2015).

Per channel c of an input [N, C, ...]: ``y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c``.
Training uses the batch's own mean and biased variance over the N * (H * W ...) elements of the
channel, computed in one pass (Welford's update, partial results merged by Chan et al.'s formula:
cpu.py's welford_merge, batchnorm.cu), and updates the running estimates in place with the
unbiased variance: ``running = (1 - momentum) * running + momentum * batch_stat``. Evaluation
normalizes with the running estimates.

Backward is fused: with xhat = (x - mean) * invstd and M the elements per channel,
``dbias = sum(dy)``, ``dweight = sum(dy * xhat)`` (two sums from one pass) and
``dx = weight * invstd * (dy - dbias / M - xhat * dweight / M)`` (the batch statistics depend on
x), or ``weight * invstd * dy`` in evaluation. Double backward is not supported.
"""
import math

from ..autograd.function import Function
from ..dtypes import int64
from ..tensor import Tensor


def _contiguous_raw(backend, data):
    return data if data.flags.c_contiguous else backend.contiguous(data)


def _raw(t):
    return None if t is None else t._data


class BatchNorm(Function):
    """Normalize [N, C, L] per channel; running statistics (raw arrays) updated in place."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, num_batches_tracked, training, momentum, eps):
        b = x._backend
        N, C = x.shape[0], x.shape[1]
        x3 = _contiguous_raw(b, x._data).reshape(N, C, math.prod(x.shape[2:]))
        if training:
            mean, var = b.batch_norm_stats(x3, _raw(running_mean), _raw(running_var), _raw(num_batches_tracked),
                                           momentum)
        else:
            mean, var = running_mean._data, running_var._data
        w = _raw(weight)
        y = b.batch_norm_apply(x3, mean, var, w, _raw(bias), eps)
        ctx.x3, ctx.mean, ctx.var, ctx.w, ctx.eps, ctx.training = x3, mean, var, w, eps, training
        return Tensor(y.reshape(tuple(x.shape)), x.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g3 = _contiguous_raw(b, grad._data).reshape(ctx.x3.shape)
        dx, dweight, dbias = b.batch_norm_backward(g3, ctx.x3, ctx.mean, ctx.var, ctx.w, ctx.eps, ctx.training)
        dx = Tensor(dx.reshape(tuple(grad.shape)), grad.device)
        return (dx, Tensor(dweight, grad.device), Tensor(dbias, grad.device)) + (None,) * 6


def _check_channel_tensor(name, t, input, C):
    if t is None:
        return
    if not isinstance(t, Tensor):
        raise TypeError(f"batch_norm: {name} must be a Tensor or None, got {type(t).__name__}")
    if tuple(t.shape) != (C,):
        raise RuntimeError(f"batch_norm: {name} should contain {C} elements (one per channel of input "
                           f"{tuple(input.shape)}), got shape {tuple(t.shape)}")
    if t.device != input.device or t.dtype != input.dtype:
        raise RuntimeError(f"batch_norm: {name} is {t.dtype} on {t.device} but input is {input.dtype} on "
                           f"{input.device}; they must match")
    if not t.is_contiguous():
        raise RuntimeError(f"batch_norm: {name} must be contiguous")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5, num_batches_tracked=None):
    """Batch normalization over dimension 1 of ``input``.

    Args:
        input: [N, C] or [N, C, d1, ...], float32 or float64.
        running_mean, running_var: [C] tensors of input's dtype and device, or None (then
            ``training`` must be True). Updated in place when training.
        weight, bias: [C] (the affine transform) or None.
        training: normalize with the batch statistics (and update the running ones), else with
            the running statistics.
        momentum: the running estimates' update factor; None: a cumulative average, factor
            1 / num_batches_tracked (the 0-d int64 count, already including this batch: what
            ``nn.BatchNorm*`` passes; read on the device, so nothing waits for the GPU).
        eps: added to the variance before the square root.
    Returns:
        A tensor of input's shape and dtype.
    Raises:
        ValueError: training with one value per channel, or momentum None without a count.
        RuntimeError: input not 2-D or more, a [C] tensor of the wrong shape, dtype or device,
            missing running statistics in evaluation.
        TypeError: float16/bfloat16 or integer input (convert to float32 first).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"batch_norm: expected a Tensor, got {type(input).__name__}")
    if input.dtype.name not in ("float32", "float64"):
        raise TypeError(f"batch_norm: expected float32 or float64 input, got {input.dtype}; use .float()")
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected input of shape [N, C, ...], got {tuple(input.shape)}")
    C = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_channel_tensor(name, t, input, C)
    if (running_mean is None) != (running_var is None):
        raise RuntimeError("batch_norm: give both running_mean and running_var, or neither")
    if training and input.numel() // max(C, 1) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{tuple(input.shape)}")
    if not training and running_mean is None:
        raise RuntimeError("batch_norm: evaluation mode (training=False) needs running_mean and running_var")
    if training and running_mean is not None and momentum is None:
        if not (isinstance(num_batches_tracked, Tensor) and num_batches_tracked.dtype is int64
                and num_batches_tracked.ndim == 0 and num_batches_tracked.device == input.device):
            raise ValueError("batch_norm: momentum=None (a cumulative average) needs num_batches_tracked, a 0-d "
                             f"int64 tensor on {input.device}, got {num_batches_tracked!r}")
    return BatchNorm.apply(input, weight, bias, running_mean, running_var, num_batches_tracked, bool(training),
                           momentum, float(eps))
