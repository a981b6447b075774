# GENERATED from minitorch/native/cuda/dropout.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Dropout's mask and masked scaling on ``DeviceArray``s with ``minitorch/cuda/dropout.cu``.

The mask is drawn on the device: cuRAND's uniform floats (``creation.rand``, on the current
stream, from the generator ``manual_seed`` reseeds), compared with p by ``dropout_mask``. The
Tensor layer keeps the bool mask for backward, which runs ``masked_scale`` on the gradient.
"""
import numpy as np

from ... import dtypes
from .creation import rand
from .launch import kernel, kernel_for, launch_stride
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
