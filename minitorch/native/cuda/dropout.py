# phase: 06
"""Dropout's mask and masked scaling on ``DeviceArray``s with ``minitorch/cuda/dropout.cu``.

The mask is drawn on the device: cuRAND's uniform floats (``creation.rand``, on the current
stream, from the generator ``manual_seed`` reseeds), compared with p by ``dropout_mask``. The
Tensor layer keeps the bool mask for backward, which runs ``masked_scale`` on the gradient.
Forward runs :func:`dropout`: cuRAND's draw, then ONE kernel that compares, writes the mask and
the scaled output (the two steps as separate passes, and ``rand``'s flip of cuRAND's (0, 1] to
[0, 1), read and write the draws and the mask three more times: about twice the memory traffic
and two more launches per dropout).
"""
import numpy as np

from ... import dtypes
from .creation import _curand, rand
from .launch import cp, kernel, kernel_for, launch_stride
from ...cuda.array import empty


def dropout_mask(shape, p, generator=None, index=0):
    """bool array of ``shape``: True (keep) with probability 1 - p, each element independently."""
    u = rand(shape, dtypes.float32, generator, index)
    mask = empty(tuple(shape), np.dtype(np.bool_), index)
    launch_stride(kernel("dropout.cu", "dropout_mask", index), mask.size, 4, index,
                  (u, mask, mask.size, np.float32(p)))
    return mask


def masked_scale(x, mask, scale):
    """``x * scale`` where the mask keeps, 0 elsewhere. ``x`` C-contiguous; ``mask`` a contiguous
    bool array whose shape is a prefix of x's (each mask element covers x.size / mask.size
    consecutive elements: one channel for dropout2d)."""
    if not x.c_contiguous or x.shape[:mask.ndim] != mask.shape:
        raise ValueError(f"masked_scale: expected a contiguous array whose shape starts with the mask's "
                         f"{mask.shape}, got {x.shape}")
    out = empty(x.shape, x.dtype, x.device_id)
    group = x.size // mask.size if mask.size else 1
    S = np.float64 if x.dtype == np.float64 else np.float32
    launch_stride(kernel_for("dropout.cu", "masked_scale", x.dtype, x.device_id), x.size, 4, x.device_id,
                  (x, mask, out, x.size, group, S(scale)))
    return out


def dropout(x, mask_shape, p, scale, generator=None, index=0):
    """(out, mask): ``out = x * scale`` where a fresh keep-mask of ``mask_shape`` (a prefix of x's
    shape: x.shape for dropout, [N, C] for dropout2d) keeps, 0 elsewhere; ``mask`` bool, True with
    probability 1 - p. The same mask as ``dropout_mask`` draws from the same generator state
    (keep where ``1 - u >= p`` for cuRAND's u in (0, 1], as ``rand`` flips it), with one kernel
    after the draw instead of three. ``x`` C-contiguous."""
    if not x.c_contiguous or x.shape[:len(mask_shape)] != tuple(mask_shape):
        raise ValueError(f"dropout: expected a contiguous array whose shape starts with {tuple(mask_shape)}, "
                         f"got {x.shape}")
    mask = empty(tuple(mask_shape), np.dtype(np.bool_), index)
    u = empty(tuple(mask_shape), dtypes.float32, index)
    with cp.cuda.Device(index):
        handle = _curand(index, generator)
        if u.size:
            cp.cuda.curand.generateUniform(handle, u.ptr, u.size)
    out = empty(x.shape, x.dtype, index)
    group = x.size // mask.size if mask.size else 1
    S = np.float64 if x.dtype == np.float64 else np.float32
    launch_stride(kernel_for("dropout.cu", "dropout_forward", x.dtype, index), x.size, 4, index,
                  (u, x, out, mask, x.size, group, np.float32(p), S(scale)))
    return out, mask
