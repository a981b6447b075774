# GENERATED from minitorch/native/cuda/matrix.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Matrix kernels on ``DeviceArray``s: transposes (``minitorch/cuda/transpose.cu``) and the naive
matrix product (``minitorch/cuda/matmul.cu``), twins of cpu.py's ``transpose2d`` and ``matmul``."""
import numpy as np

from ...cuda.array import empty
from .launch import SUFFIX, broadcast_layout, cdiv, kernel, launch_2d

_TILE, _ROWS = 32, 8          # transpose.cu: 32 x 32 tiles, blocks of 32 x 8 threads
_MM_BLOCK = 16                # matmul.cu: 16 x 16 threads, one per element of C


def _transpose(a, name, rows_per_block):
    """Launch transpose.cu's ``name`` on 2-D ``a``; blocks of 32 x 8 threads cover 32 columns and
    ``rows_per_block`` rows (32 for the tiled kernel, 8 for the naive one)."""
    if a.ndim != 2:
        raise ValueError(f"transpose2d expects a 2-D array, got shape {a.shape}")
    suffix = SUFFIX.get(a.dtype)
    if suffix is None:
        raise TypeError(f"cuda transpose2d has no kernel for {a.dtype}")
    m, n = a.shape
    s0, s1 = (s // a.itemsize for s in a.strides)
    idx = a.device_id
    out = empty((n, m), a.dtype, idx)
    launch_2d(kernel("transpose.cu", f"{name}_{suffix}", idx), (cdiv(n, _TILE), cdiv(m, rows_per_block)),
              (_TILE, _ROWS), (a, out, m, n, s0, s1), idx)
    return out


def transpose2d(a):
    """The transpose of a 2-D array ``a`` [M, N] (any strides, any of the four dtypes),
    materialised: a new contiguous [N, M] array with ``out[j, i] = a[i, j]``. Uses the
    shared-memory tiled kernel (coalesced reads and writes).

    Raises:
        ValueError: ``a`` is not 2-D.  TypeError: dtype without a kernel.
    """
    return _transpose(a, "transpose", _TILE)


def transpose2d_naive(a):
    """As :func:`transpose2d`, with the naive kernel (one thread per element, uncoalesced
    writes): kept to measure what the shared-memory tile buys."""
    return _transpose(a, "transpose_naive", _ROWS)


def matmul(a, b):
    """``a @ b`` with the naive kernel: ``a`` [..., M, K] and ``b`` [..., K, N] with broadcast batch
    dimensions (as ``np.matmul``, including 1-D operands: a [K] is a row, b [K] a column, and that
    dimension is dropped from the result). Any strides; nothing is copied first.

    float32 or float64, both the same. Returns a new contiguous [..., M, N] array; sums run in
    the dtype itself, in order of k.

    Raises:
        TypeError: dtypes other than float32/float64, or two dtypes.
        ValueError: 0-d operands, inner sizes that differ, batch shapes that do not broadcast.
    """
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise TypeError(f"cuda matmul takes two float32 or two float64 arrays, got {a.dtype} and {b.dtype}")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    isz = a.itemsize
    # a 1-D operand is one row (a) or one column (b); its missing stride is never used (size 1)
    if a.ndim == 1:
        (k,), (sak,) = a.shape, a.strides
        m, sam, a_batch, a_bstr = 1, 0, (), ()
    else:
        m, k = a.shape[-2:]
        sam, sak = a.strides[-2:]
        a_batch, a_bstr = a.shape[:-2], a.strides[:-2]
    if b.ndim == 1:
        (kb,), (sbk,) = b.shape, b.strides
        n, sbn, b_batch, b_bstr = 1, 0, (), ()
    else:
        kb, n = b.shape[-2:]
        sbk, sbn = b.strides[-2:]
        b_batch, b_bstr = b.shape[:-2], b.strides[:-2]
    if k != kb:
        raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")

    # batch dimensions: one Layout, two operands (stride 0 where one operand is broadcast)
    batch_shape, batch, layout = broadcast_layout(((a_batch, a_bstr, isz), (b_batch, b_bstr, isz)))
    out_shape = batch_shape + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
    suffix = SUFFIX[a.dtype]
    idx = a.device_id
    out = empty(out_shape, a.dtype, idx)
    if batch and m and n:
        launch_2d(kernel("matmul.cu", f"matmul_naive_{suffix}", idx),
                  (cdiv(n, _MM_BLOCK), cdiv(m, _MM_BLOCK), batch), (_MM_BLOCK, _MM_BLOCK),
                  (a, b, out, m, n, k,
                   sam // isz, sak // isz, sbk // isz, sbn // isz,
                   batch, layout), idx)
    return out
