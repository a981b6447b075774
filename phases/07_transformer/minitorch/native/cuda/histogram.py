# GENERATED from minitorch/native/cuda/histogram.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Counting into bins on ``DeviceArray``s with ``minitorch/cuda/histogram.cu``: the cuda twins of
cpu.py's ``bincount`` and ``histc``. Both read a minimum/maximum back to the host (a
synchronization, as PyTorch does), since the data decides the output's size or the bins' range."""
import numpy as np

from ...cuda.array import empty
from .creation import fill_
from .elementwise import cast, contiguous
from .launch import SUFFIX, kernel, launch_stride
from .reduce import fold

_I64, _F64 = np.dtype(np.int64), np.dtype(np.float64)


def _zeros(n, dtype, index):
    return fill_(empty((n,), dtype, index), 0)


def _flat(a):
    return (a if a.c_contiguous else contiguous(a)).reshape(-1)


def _scalar(x):
    """One element of a device array as a Python number (waits for the GPU)."""
    return x.reshape(1).get()[0].item()


def bincount(x, weights=None, minlength=0):
    """Occurrences of each value 0..max(x) (at least ``minlength`` bins) in the 1-d int64 ``x``;
    with ``weights`` (same length, float), the sum of their weights instead. Returns int64 counts,
    or float32 sums for float32 weights, float64 for any other weights.

    Raises:
        ValueError: a negative value in ``x``.
    """
    idx = x.device_id
    x = _flat(x)
    n = x.size
    size = minlength
    if n:
        lo, hi = _scalar(fold("amin", x, (0,))), _scalar(fold("amax", x, (0,)))   # host syncs
        if lo < 0:
            raise ValueError(f"bincount: input must be non-negative, found {lo}")
        size = max(size, hi + 1)
    if weights is None:
        out = _zeros(size, _I64, idx)
        launch_stride(kernel("histogram.cu", "bincount_count", idx), n, 4, idx, (x, out, n))
        return out
    w = _flat(weights) if weights.dtype in (np.float32, np.float64) else cast(weights, _F64)
    out = _zeros(size, w.dtype, idx)
    launch_stride(kernel("histogram.cu", f"bincount_weights_{SUFFIX[w.dtype]}", idx), n, 4, idx, (x, w, out, n))
    return out


def histc(x, bins=100, min=0, max=0):
    """Histogram of the float ``x`` (any shape) in ``bins`` equal-width bins over [min, max]
    (both 0: the data's own min and max; equal bounds widen by 1 on each side); values outside
    are ignored, the last bin includes max. Returns ``x``'s dtype, shape (bins,)."""
    idx = x.device_id
    x = _flat(x)
    n = x.size
    lo, hi = float(min), float(max)
    if lo == hi == 0 and n:
        lo, hi = _scalar(fold("amin", x, (0,))), _scalar(fold("amax", x, (0,)))   # host syncs
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts = _zeros(bins, _I64, idx)
    T = x.dtype.type
    launch_stride(kernel("histogram.cu", f"histc_{SUFFIX[x.dtype]}", idx), n, 4, idx, (x, counts, n, bins, T(lo), T(hi)))
    return cast(counts, x.dtype)
