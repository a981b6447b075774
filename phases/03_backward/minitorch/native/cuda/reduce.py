# GENERATED from minitorch/native/cuda/reduce.py by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Sums over any set of dimensions on ``DeviceArray``s with ``minitorch/cuda/reduce.cu``: the
cuda twin of cpu.py's ``sum`` (and so of mean, with ``scale = 1/n``)."""
import functools
import math

from ...cuda.array import empty
from .launch import SUFFIX, cdiv, coalesce, kernel, launch, launch_stride, pack_layout, sm_count

_SUMMABLE = {dt: s for dt, s in SUFFIX.items() if s in ("f32", "f64", "i64")}   # dtype -> name suffix
_NAMES = {dt: (f"sum_threads_{s}", f"sum_blocks_{s}") for dt, s in _SUMMABLE.items()}
_SHORT_ROW = 32            # rows this short: one thread per output (see reduce.cu)
_SHORT_COLUMN = 4096       # strided rows up to this long: one thread per output too
_MAX_BLOCK = 256


def _block_for(r):
    """Threads per block for rows of length r: a power of two from one warp (32) to 256, so
    short rows do not leave most of a block idle."""
    return min(_MAX_BLOCK, max(32, 1 << (r - 1).bit_length()))


def _inner_stride(shape, strides):
    sizes, per_operand = coalesce(shape, strides)
    return per_operand[0][0] if sizes else 1


# Fewest elements worth a slice of their own. Slicing a row spreads it over more SMs, but the
# partial sums then need a second launch (~3 us of host time, ~2 us on the GPU): about what one
# block takes to sum 32K elements alone. Below that, one block per row is faster.
MIN_SLICE = 1 << 15


def _slices(cap, n_out, r, block, per_thread):
    """Slices per row so that the (n_out, slices) grid holds about ``cap`` blocks (1 when n_out
    rows already do), each thread keeping at least ``per_thread`` elements and each slice at
    least MIN_SLICE; at most 65535 (the grid's y limit)."""
    if n_out >= cap:
        return 1
    return max(1, min(cdiv(cap, n_out), cdiv(r, max(block * per_thread, MIN_SLICE)), 65535))


@functools.lru_cache(maxsize=1024)
def _plan(shape, strides, itemsize, dims, keepdim, sms):
    """Everything about a reduction that depends only on shapes: cached, so a training loop's
    repeated sums cost one lookup.

    Returns (out_shape, n_out, R, kept Layout, reduced Layout, strategy, block, splits).
    """
    reduced = set(dims)
    for d in reduced:
        if not 0 <= d < len(shape):
            raise ValueError(f"sum: dimension {d} out of range for shape {shape}")
    elem = [s // itemsize for s in strides]
    kept_dims = [d for d in range(len(shape)) if d not in reduced]
    red_dims = [d for d in range(len(shape)) if d in reduced]
    kept_shape = tuple(shape[d] for d in kept_dims)
    red_shape = tuple(shape[d] for d in red_dims)
    n_out, r = math.prod(kept_shape), math.prod(red_shape)
    out_shape = tuple(1 if d in reduced else shape[d] for d in range(len(shape))) if keepdim else kept_shape
    if n_out == 0:
        return out_shape, 0, r, None, None, None, 0, 0
    kept_strides = (tuple(elem[d] for d in kept_dims),)
    red_strides = (tuple(elem[d] for d in red_dims),)
    kept, red = pack_layout(kept_shape, kept_strides), pack_layout(red_shape, red_strides)

    # innermost strides after merging dimensions; 1 when nothing is left
    kept_inner = _inner_stride(kept_shape, kept_strides)
    red_inner = _inner_stride(red_shape, red_strides)
    if r <= _SHORT_ROW or (r <= _SHORT_COLUMN and kept_inner == 1 and red_inner != 1):
        return out_shape, n_out, r, kept, red, "threads", 0, 0

    block = _block_for(r)
    if n_out > 2**31 - 1:
        raise ValueError(f"sum: {n_out} outputs is more blocks than a grid holds")
    # few outputs, long rows: cut each row into `splits` slices so that about one full GPU of
    # blocks works at once, each thread still adding at least 8 elements
    splits = _slices(sms * (2048 // block), n_out, r, block, 8)
    return out_shape, n_out, r, kept, red, "blocks", block, splits


def sum(a, dims, keepdim=False, scale=1.0):
    """``scale * a.sum(dims)`` for ``a`` float32, float64 or int64 of any strides.

    ``dims``: non-negative axes (any order, any number; an empty tuple sums nothing and returns a
    scaled copy). ``keepdim`` keeps reduced axes as size 1. ``scale`` (converted to ``a``'s dtype,
    as cpu.py does) turns a sum into a mean without a second pass. Returns a new contiguous array
    of ``a``'s dtype; float32 sums in float32 in tree order (see reduce.cu).

    Raises:
        TypeError: dtype other than float32, float64, int64.  ValueError: axis out of range.
    """
    names = _NAMES.get(a.dtype)
    if names is None:
        raise TypeError(f"cuda sum has no kernel for {a.dtype}; float32, float64 and int64 only")
    T = a.dtype.type
    idx = a.device_id
    dims = tuple(sorted(set(dims)))
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    out = empty(out_shape, a.dtype, idx)
    if n_out == 0:
        return out
    if strategy == "threads":
        launch_stride(kernel("reduce.cu", names[0], idx), n_out, 1, idx,
                      (a, out, n_out, r, kept, red, T(scale)))
        return out
    fn = kernel("reduce.cu", names[1], idx)
    if splits == 1:
        launch(fn, (n_out,), (block,), (a, out, r, kept, red, T(scale)), index=idx)
        return out
    # pass 1: partial sums, n_out rows of `splits`; pass 2: add each row's partials, scale
    partial = empty((n_out * splits,), a.dtype, idx)
    launch(fn, (n_out, splits), (block,), (a, partial, r, kept, red, T(1)), index=idx)
    kept2, red2 = _partials_layouts(n_out, splits)
    launch(fn, (n_out,), (_block_for(splits),), (partial, out, splits, kept2, red2, T(scale)),
           index=idx)
    return out


@functools.lru_cache(maxsize=256)
def _partials_layouts(n_out, splits):
    """Layouts reading a contiguous [n_out, splits] array of partial sums row by row."""
    return pack_layout((n_out,), ((splits,),)), pack_layout((splits,), ((1,),))
