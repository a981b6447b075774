# GENERATED from minitorch/native/cuda/sort.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Sorting on ``DeviceArray``s with ``minitorch/cuda/sort.cu`` (a bitonic sort, stable by original
position), unique on sorted rows, and mode (sort.cu's own introsort, to match PyTorch's index).
Cuda twins of cpu.py's ``sort``, ``mode`` and ``unique``."""
import numpy as np

from ...cuda.array import empty
from .elementwise import contiguous
from .launch import SUFFIX, kernel, launch_2d, launch_stride
from .scan import cumulative

# Elements of a row sorted in one block's shared memory: 8 bytes of position + the key each, within
# the 48 KB a block may use without opting in (4096 x 12 bytes for 4-byte keys, 2048 x 16 for 8-byte)
TILE = {1: 4096, 4: 4096, 8: 2048}
_I64 = np.dtype(np.int64)
_SUFFIXES = ("f32", "f64", "i64", "bool")


def _suffix(what, a):
    suf = SUFFIX.get(a.dtype)
    if suf not in _SUFFIXES:
        raise TypeError(f"cuda {what} has no kernel for {a.dtype}; float32, float64, int64 and bool only")
    return suf


def _sort_rows(rows, n_rows, length, descending):
    """Sort each of the ``n_rows`` contiguous rows of ``length`` of ``rows`` (see sort.cu): returns
    (values, int64 original positions), both new contiguous arrays of ``rows``' shape."""
    suf = _suffix("sort", rows)
    idx = rows.device_id
    vals, ids = empty(rows.shape, rows.dtype, idx), empty(rows.shape, _I64, idx)
    if rows.size == 0:
        return vals, ids
    padded = 1 << (length - 1).bit_length()
    most = TILE[rows.itemsize]
    n = min(padded, most)
    block = (max(32, min(n // 2, 1024)),)
    smem = n * (8 + rows.itemsize)
    tile = kernel("sort.cu", f"sort_tile_{suf}", idx)
    down = np.bool_(descending)
    if padded <= most:          # one tile per row: one launch sorts everything
        launch_2d(tile, (n_rows, 1), block, (rows, None, vals, ids, length, padded, np.int32(n), 0, down,
                                             np.bool_(True)), idx, smem)
        return vals, ids
    tiles = padded // most
    if tiles > 65535:
        raise ValueError(f"cuda sort: rows of {length} elements are longer than {65535 * most}")
    keys, pos = empty((n_rows * padded,), rows.dtype, idx), empty((n_rows * padded,), _I64, idx)
    step = kernel("sort.cu", f"sort_step_{suf}", idx)
    launch_2d(tile, (n_rows, tiles), block, (rows, None, keys, pos, length, padded, np.int32(n), 0, down,
                                             np.bool_(False)), idx, smem)
    k = 2 * most
    while k <= padded:
        j = k // 2
        while j >= most:        # pairs in different tiles: one launch per round, in global memory
            launch_stride(step, n_rows * padded // 2, 4, idx, (keys, pos, n_rows, length, padded, k, j, down))
            j //= 2
        last = k == padded
        launch_2d(tile, (n_rows, tiles), block, (keys, pos, vals if last else keys, ids if last else pos, length,
                                                 padded, np.int32(n), k, down, np.bool_(last)), idx, smem)
        k *= 2
    return vals, ids


def _rows_of(a, dim):
    """``a`` with ``dim`` moved last, contiguous (a copy only if needed), and the permutation."""
    perm = tuple(d for d in range(a.ndim) if d != dim) + (dim,)
    view = a.transpose(perm)
    return (view if view.c_contiguous else contiguous(view)), perm


def sort(a, dim, descending=False):
    """``a`` sorted along ``dim`` and where each value was: (values, int64 indices), both of
    ``a``'s shape (views of arrays sorted with ``dim`` last). Stable; NaN sorts as the largest.

    ``a``: float32, float64, int64 or bool, any strides, at least 1-d; ``dim`` non-negative.

    Raises:
        TypeError: another dtype.  ValueError: a row longer than 65535 tiles (134M elements of 8 bytes).
    """
    rows, perm = _rows_of(a, dim)
    vals, ids = _sort_rows(rows, a.size // max(a.shape[dim], 1), a.shape[dim], descending)
    back = tuple(int(d) for d in np.argsort(perm))
    return vals.transpose(back), ids.transpose(back)


def mode(a, dim, keepdim=False):
    """The most frequent value along ``dim`` (the smallest on a tie) and the index PyTorch's cpu
    mode returns (the last of the modal run after libstdc++'s unstable std::sort, which sort.cu's
    mode_rows reproduces): (values, int64 indices) of the reduced shape (``dim`` kept as size 1 if
    ``keepdim``). One thread per row (see sort.cu).

    Raises:
        TypeError: another dtype.  ValueError: ``dim`` of size 0.
    """
    length = a.shape[dim]
    if length == 0:
        raise ValueError(f"mode: cannot reduce a dimension of size 0 (shape {a.shape})")
    suf = _suffix("mode", a)
    rows, _ = _rows_of(a, dim)
    n_rows = a.size // length
    shape = tuple(1 if d == dim else s for d, s in enumerate(a.shape)) if keepdim else \
        tuple(s for d, s in enumerate(a.shape) if d != dim)
    idx = a.device_id
    keys, ids = empty((a.size,), a.dtype, idx), empty((a.size,), _I64, idx)     # scratch rows to sort
    out, out_ids = empty(shape, a.dtype, idx), empty(shape, _I64, idx)
    if n_rows:
        launch_stride(kernel("sort.cu", f"mode_rows_{suf}", idx), n_rows, 1, idx,
                      (rows, keys, ids, out, out_ids, n_rows, length))
    return out, out_ids


def unique(a, return_inverse=False, return_counts=False):
    """The distinct values of ``a`` (all elements), ascending: (values, inverse, counts), where
    ``inverse`` (int64, ``a``'s shape; None unless asked) gives each element's position in values
    and ``counts`` (int64; None unless asked) how often each value occurs.

    The number of distinct values decides the output's size, so this reads it back to the host
    (a synchronization, as PyTorch's unique): sort, flag where a new value starts, count the flags
    with a scan, then scatter.

    Raises:
        TypeError: another dtype.
    """
    suf = _suffix("unique", a)
    idx = a.device_id
    n = a.size
    flat = (a if a.c_contiguous else contiguous(a)).reshape(1, n)
    s, perm = _sort_rows(flat, 1, n, False)
    groups = 0
    if n:
        flags = empty((n,), _I64, idx)
        launch_stride(kernel("sort.cu", f"unique_flags_{suf}", idx), n, 4, idx, (s, flags, n))
        group = cumulative("cumsum", flags, 0)
        groups = int(group[n - 1:].get()[0])            # host sync: the output size depends on the data
    values, starts = empty((groups,), a.dtype, idx), empty((groups,), _I64, idx)
    inverse = empty(a.shape, _I64, idx) if return_inverse else None
    counts = empty((groups,), _I64, idx) if return_counts else None
    if n:
        launch_stride(kernel("sort.cu", f"unique_scatter_{suf}", idx), n, 4, idx,
                      (s, perm, group, n, values, starts, inverse))
        if return_counts:
            launch_stride(kernel("sort.cu", "unique_counts", idx), groups, 4, idx, (starts, counts, groups, n))
    return values, inverse, counts
