# GENERATED from minitorch/native/cuda/scan.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Inclusive scans along one dimension on ``DeviceArray``s (cumsum, cumprod) with
``minitorch/cuda/scan.cu``: the cuda twin of cpu.py's ``cumulative``."""
import functools
import math

from ...cuda.array import empty
from .launch import SUFFIX, blocks_per_gpu, cdiv, kernel, launch_2d, pack_layout

_SUFFIXES = ("f32", "f64", "i64")
_BLOCK = 256                 # threads per block: 4 items each, a chunk of 1024 per round
MIN_TILE = 1 << 14           # shortest tile worth a block of its own (below: one tile per row)
_occupancy = {}


@functools.lru_cache(maxsize=1024)
def _plan(shape, strides, itemsize, dim):
    """(n_rows, L, kept Layout of input and output row starts, input element stride along dim,
    output element stride along dim) for scanning ``dim`` of an array of ``shape``/byte ``strides``
    into a contiguous output of the same shape."""
    elem = [s // itemsize for s in strides]
    out_elem = [math.prod(shape[d + 1:]) for d in range(len(shape))]       # contiguous output
    kept_dims = [d for d in range(len(shape)) if d != dim]
    kept_shape = tuple(shape[d] for d in kept_dims)
    kept = pack_layout(kept_shape, (tuple(elem[d] for d in kept_dims), tuple(out_elem[d] for d in kept_dims)))
    return math.prod(kept_shape), shape[dim], kept, elem[dim], out_elem[dim]


def _tiles(fn, n_rows, length, index):
    """Tiles per row: 1 when the rows alone fill the GPU or are short; else enough that the
    (n_rows, tiles) grid is about one wave of resident blocks, each tile >= MIN_TILE elements."""
    found = _occupancy.get(fn)
    if found is None:
        found = _occupancy[fn] = blocks_per_gpu(fn, _BLOCK, index)
    if n_rows >= found or length <= MIN_TILE:
        return 1
    return max(1, min(cdiv(found, n_rows), cdiv(length, MIN_TILE), 65535))


def cumulative(op, a, dim):
    """Inclusive scan of ``a`` along ``dim``: ``op`` "cumsum" (running sums) or "cumprod".

    ``a``: float32, float64 or int64 of any strides and shape (0-d: pass it as shape (1,)); ``dim``
    non-negative. Returns a new contiguous array of ``a``'s shape and dtype. Few long rows are
    scanned in three passes (scan.cu); float results differ from a sequential sum by rounding.

    Raises:
        TypeError: another dtype.
    """
    suf = SUFFIX.get(a.dtype)
    if suf not in _SUFFIXES:
        raise TypeError(f"cuda {op} has no kernel for {a.dtype}; float32, float64 and int64 only")
    idx = a.device_id
    out = empty(a.shape, a.dtype, idx)
    if a.size == 0:
        return out
    n_rows, length, kept, in_stride, out_stride = _plan(a.shape, a.strides, a.itemsize, dim)
    scan = kernel("scan.cu", f"scan_tiles_{op}_{suf}", idx)
    tiles = _tiles(scan, n_rows, length, idx)
    if tiles == 1:
        launch_2d(scan, (n_rows,), (_BLOCK,), (a, out, None, length, length, kept, in_stride, out_stride), idx)
        return out
    tile = cdiv(length, tiles)
    tiles = cdiv(length, tile)           # every tile non-empty
    part = empty((n_rows, tiles), a.dtype, idx)
    totals = empty((n_rows, tiles), a.dtype, idx)
    rows = pack_layout((n_rows,), ((tiles,), (tiles,)))
    launch_2d(kernel("scan.cu", f"scan_reduce_{op}_{suf}", idx), (n_rows, tiles), (_BLOCK,),
              (a, part, length, tile, kept, in_stride), idx)
    launch_2d(scan, (n_rows,), (_BLOCK,), (part, totals, None, tiles, tiles, rows, 1, 1), idx)
    launch_2d(scan, (n_rows, tiles), (_BLOCK,), (a, out, totals, length, tile, kept, in_stride, out_stride), idx)
    return out
