# phase: 04
"""Inclusive scans along one dimension on ``DeviceArray``s (cumsum, cumprod) with
``minitorch/cuda/scan.cu``: the cuda twin of cpu.py's ``cumulative``."""
import functools
import math

import numpy as np

from ...cuda.array import empty
from .creation import fill_
from .launch import SUFFIX, blocks_per_gpu, cdiv, kernel, launch_2d, pack_layout

_SUFFIXES = ("f32", "f64", "i64")
_I64 = np.dtype(np.int64)
_BLOCK = 256                 # threads per block: scan.cu's THREADS
_BYTES = 256                 # of a row per thread, in registers (8-byte dtypes: half): scan.cu's SCAN_BYTES
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


# The look-back kernel runs one block of 512 threads per SM (compiled with these options): its tiles
# are twice as long, so the chain of tiles waiting on each other is half as long (H100, 64M floats:
# 0.223 ms against 0.227 with 256-thread blocks; benchmarks/tune_scan.py). The rows kernel keeps
# two 256-thread blocks per SM: many short rows want more blocks, not longer tiles.
_LOOKBACK_BLOCK = 512
_LOOKBACK_OPTIONS = (f"-DSCAN_THREADS={_LOOKBACK_BLOCK}", "-DSCAN_MIN_BLOCKS=1")


def _tile(itemsize, block=_BLOCK):
    """Elements of a row that one block of ``block`` threads scans at once (scan.cu's TILE<T>):
    64 float32 or 16 8-byte values per thread."""
    return block * (_BYTES if itemsize == 4 else _BYTES // 2) // itemsize


def _few_long_rows(fn, n_rows, length, index, tile):
    """True when one block per row would leave most of the GPU idle: fewer rows than the blocks it
    runs at once, and rows of more than a few tiles."""
    found = _occupancy.get(fn)
    if found is None:
        found = _occupancy[fn] = blocks_per_gpu(fn, _BLOCK, index)
    return n_rows < found and length > 4 * tile


def cumulative(op, a, dim):
    """Inclusive scan of ``a`` along ``dim``: ``op`` "cumsum" (running sums) or "cumprod".

    ``a``: float32, float64 or int64 of any strides and shape (0-d: pass it as shape (1,)); ``dim``
    non-negative. Returns a new contiguous array of ``a``'s shape and dtype. One block scans each
    row, or, for few long rows, one block each tile of 32768 floats (8192 8-byte values) in a single
    pass with decoupled look-back (scan.cu); float results differ from a sequential sum by rounding.

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
    rows = kernel("scan.cu", f"scan_rows_{op}_{suf}", idx)
    if not _few_long_rows(rows, n_rows, length, idx, _tile(a.itemsize)):
        launch_2d(rows, (n_rows,), (_BLOCK,), (a, out, length, kept, in_stride, out_stride), idx)
        return out
    tiles = cdiv(length, _tile(a.itemsize, _LOOKBACK_BLOCK))
    # ticket counter, then each tile's status word (a float32 value travels inside it), zeroed on
    # the stream before the kernel: no host synchronization
    state = fill_(empty((1 + n_rows * tiles,), _I64, idx), 0)
    # 8-byte values: each tile's aggregate and inclusive prefix beside the status word
    values = empty((2 * n_rows * tiles if a.itemsize == 8 else 1,), a.dtype, idx)
    lookback = kernel("scan.cu", f"scan_lookback_{op}_{suf}", idx, _LOOKBACK_OPTIONS)
    launch_2d(lookback, (n_rows * tiles,), (_LOOKBACK_BLOCK,),
              (a, out, length, tiles, kept, in_stride, out_stride, state, values), idx)
    return out
