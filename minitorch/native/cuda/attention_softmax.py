# phase: 07
"""Attention's fused scale + mask + softmax + dropout and its backward on ``DeviceArray``s, with
``minitorch/cuda/attention_softmax.cu`` (one warp per row; see the .cu for the mapping).

Arguments shared by both directions (the cpu twins in ``cpu.py`` take the same):
    s: the scores ``q @ k^T``, a C-contiguous [rows, n] array (rows = batch * L), any floating dtype.
    L: queries per batch element: row r is query ``r % L`` (the causal cut) of batch ``r // L``.
    scale, causal: x = s * scale, with -inf above the diagonal (key j > query i) when causal.
    mask: None, or an additive mask of s's dtype, 3-D, broadcasting to [rows // L, L, n] (any strides,
        stride 0 for a broadcast dimension).
    seed: a uint64 array of one element (device memory: drawn by :func:`attention_seed`); ignored
        when p == 0.
    p: dropout probability in [0, 1].
"""
import numpy as np

from ...cuda.array import empty
from ..cpu import attention_dropout_threshold
from .launch import SUFFIX, broadcast_strides, cdiv, kernel, launch
from .layernorm import _acc_dtype
from .random import _random_words

FILE = "attention_softmax.cu"
ROWS_PER_BLOCK = 4           # one warp per row, 128 threads


def attention_seed(generator=None, index=0):
    """One 64-bit Philox key drawn from this GPU's generator (or ``generator``), left on the device."""
    return _random_words(1, generator, index)


def _mask_args(mask, rows, L, n):
    if mask is None:
        return None, 0, 0, 0
    if mask.ndim != 3 or any(m not in (1, want) for m, want in zip(mask.shape, (rows // L, L, n))):
        raise ValueError(f"attention_softmax: expected a 3-D mask broadcasting to {(rows // L, L, n)}, "
                         f"got shape {mask.shape}")
    return (mask, *broadcast_strides(mask.shape, mask.strides, mask.itemsize, (rows // L, L, n)))


def _check(s, L, mask):
    if s.ndim != 2 or not s.c_contiguous:
        raise ValueError(f"attention_softmax: expected C-contiguous [rows, n] scores, got shape {s.shape} "
                         f"and strides {s.strides}")
    if L <= 0 or s.shape[0] % L:
        raise ValueError(f"attention_softmax: {s.shape[0]} rows are not a whole number of batches of L = {L}")
    if mask is not None and mask.dtype != s.dtype:
        raise ValueError(f"attention_softmax: mask dtype {mask.dtype} differs from the scores' {s.dtype}")


def attention_softmax(s, L, scale, causal, mask, seed, p):
    """``Y = dropout(softmax(s * scale + mask))`` per row, and the rows' logsumexp (what backward
    needs besides s). Returns (Y [rows, n] of s's dtype, lse [rows] float32, float64 for float64)."""
    _check(s, L, mask)
    rows, n = s.shape
    idx = s.device_id
    y = empty((rows, n), s.dtype, idx)
    lse = empty((rows,), _acc_dtype(s.dtype), idx)
    if rows == 0:
        return y, lse
    threshold, keep_scale = attention_dropout_threshold(p)
    launch(kernel(FILE, f"attention_softmax_{SUFFIX[s.dtype]}", idx),
           (cdiv(rows, ROWS_PER_BLOCK),), (32 * ROWS_PER_BLOCK,),
           (s, y, lse, rows, n, L, np.float64(scale), np.bool_(causal), *_mask_args(mask, rows, L, n),
            seed if p > 0 else None, np.bool_(p > 0), np.int32(threshold), np.float64(keep_scale)),
           index=idx)
    return y, lse


def attention_softmax_backward(s, lse, grad, L, scale, causal, mask, seed, p):
    """dL/ds from dL/dY = ``grad`` (C-contiguous, s's shape and dtype): the same keep mask is drawn
    again from ``seed``, P is recomputed from s and lse: ``scale * P * (G' - sum(P G'))`` per row with
    ``G' = grad * keep / (1 - p)``."""
    _check(s, L, mask)
    if grad.shape != s.shape or grad.dtype != s.dtype or not grad.c_contiguous:
        raise ValueError(f"attention_softmax_backward: grad {grad.shape} {grad.dtype} does not match the "
                         f"scores {s.shape} {s.dtype} (or is not contiguous)")
    rows, n = s.shape
    idx = s.device_id
    ds = empty((rows, n), s.dtype, idx)
    if rows == 0:
        return ds
    threshold, keep_scale = attention_dropout_threshold(p)
    launch(kernel(FILE, f"attention_softmax_backward_{SUFFIX[s.dtype]}", idx),
           (cdiv(rows, ROWS_PER_BLOCK),), (32 * ROWS_PER_BLOCK,),
           (s, lse, grad, ds, rows, n, L, np.float64(scale), np.bool_(causal), *_mask_args(mask, rows, L, n),
            seed if p > 0 else None, np.bool_(p > 0), np.int32(threshold), np.float64(keep_scale)),
           index=idx)
    return ds
