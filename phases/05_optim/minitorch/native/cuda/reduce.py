# GENERATED from minitorch/native/cuda/reduce.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
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
        if a.dtype in _HALF_SUM:
            return _sum_half(a, dims, keepdim, scale)
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
    if _rows_contiguous(a.shape, a.strides, a.itemsize, dims):
        return _sum_rows(a, out, n_out, r, kept, T(scale), idx)
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


# ---- phase 04: the bandwidth-bound sum of contiguous rows, max/min with indices, var/std ----------
# The kernels are in reduce.cu's phase-04 section. Every function plans with _plan above (the same
# [n_out, R] picture, the same "threads" / "blocks" strategies), but cuts rows into slices by the
# blocks the GPU really holds at once (_resident: these kernels use more registers than sum_blocks).
import numpy as np  # noqa: E402 - phase 04 adds these

from .launch import UNROLL, blocks_per_gpu, launch_2d  # noqa: E402

_SUM_ROWS = {dt: f"sum_rows_{s}" for dt, s in _SUMMABLE.items()}
_I64, _BYTES = np.dtype(np.int64), np.dtype(np.uint8)   # index outputs; raw scratch bytes
_EXTREME = _SUMMABLE                                    # max/min: the same dtypes as sum
_WELFORD = {dt: s for dt, s in SUFFIX.items() if s in ("f32", "f64")}
# bytes of one partial result between the two launches: r4::Best<T> and r4::Moments<T> in reduce.cu
_BEST_BYTES = 16
_MOMENTS_BYTES = {np.dtype(np.float32): 16, np.dtype(np.float64): 24}
_occupancy = {}


@functools.lru_cache(maxsize=1024)
def _rows_contiguous(shape, strides, itemsize, dims):
    """True when every row of the [n_out, R] picture is contiguous: the reduced dimensions merge
    into one of element stride 1 (a full sum of a contiguous tensor, a sum over its last dims).
    Cached, as _plan is: a training loop sums the same shapes at every step."""
    red_dims = [d for d in dims if shape[d] != 1]
    sizes, per_operand = coalesce(tuple(shape[d] for d in red_dims), (tuple(strides[d] // itemsize for d in red_dims),))
    return len(sizes) <= 1 and (not sizes or per_operand[0][0] == 1)


def _resident(fn, block, index):
    """Blocks of ``block`` threads of ``fn`` the whole GPU runs at once (launch.blocks_per_gpu),
    cached per (kernel, block)."""
    found = _occupancy.get((fn, block))
    if found is None:
        found = _occupancy[(fn, block)] = blocks_per_gpu(fn, block, index)
    return found


def _splits(fn, block, n_out, r, per_thread, index):
    """Slices per row so that the (n_out, splits) grid is at most one wave of resident blocks
    (none left over for a half-empty second wave), each thread keeping >= per_thread elements."""
    return _slices(_resident(fn, block, index), n_out, r, block, per_thread)


def _sum_rows(a, out, n_out, r, kept, scale, idx):
    """Sum contiguous rows with 16-byte loads (reduce.cu, sum_rows): threads per block so that each
    gets about two rounds of UNROLL vectors, and, for few rows, slices so that one wave of resident
    blocks covers the GPU exactly; slices' partial sums are then added in order by sum_blocks."""
    vec = 16 // a.itemsize
    per_round = vec * UNROLL
    block = _block_for(cdiv(r, 2 * per_round))
    fn = kernel("reduce.cu", _SUM_ROWS[a.dtype], idx)
    splits = _splits(fn, block, n_out, r, per_round, idx)
    if splits == 1:
        launch_2d(fn, (n_out,), (block,), (a, out, r, kept, scale), idx)
        return out
    partial = empty((n_out * splits,), a.dtype, idx)
    launch_2d(fn, (n_out, splits), (block,), (a, partial, r, kept, a.dtype.type(1)), idx)
    kept2, red2 = _partials_layouts(n_out, splits)
    launch_2d(kernel("reduce.cu", _NAMES[a.dtype][1], idx), (n_out,), (_block_for(splits),),
              (partial, out, splits, kept2, red2, scale), idx)
    return out


def _check_dims(what, a, dims):
    for d in dims:
        if not 0 <= d < a.ndim:
            raise ValueError(f"{what}: dimension {d} out of range for shape {a.shape}")


def extreme(a, dims, keepdim=False, largest=True):
    """Maxima (``largest``) or minima of ``a`` over ``dims`` and where they are: (values, indices).

    ``a``: float32, float64 or int64, any strides. ``dims``: non-negative axes, at least one, every
    one of non-zero size. ``indices`` (int64) count positions in row-major order over the reduced
    dimensions: the index along the dimension when there is one, the flat index when all are
    reduced. NaN beats every number (the first NaN is returned); ties go to the smallest index.
    Both outputs are new contiguous arrays of the reduced shape (size-1 dims kept if ``keepdim``).

    Raises:
        TypeError: another dtype.  ValueError: an axis out of range, no axes, or an empty reduction.
    """
    suf = _EXTREME.get(a.dtype)
    if suf is None:
        raise TypeError(f"cuda max/min has no kernel for {a.dtype}; float32, float64 and int64 only")
    dims = tuple(sorted(set(dims)))
    _check_dims("max/min", a, dims)
    if not dims:
        raise ValueError("max/min: at least one dimension must be reduced")
    if any(a.shape[d] == 0 for d in dims):
        raise ValueError(f"max/min: cannot reduce a dimension of size 0 (shape {a.shape}, dims {dims})")
    idx = a.device_id
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    vals = empty(out_shape, a.dtype, idx)
    inds = empty(out_shape, _I64, idx)
    if n_out == 0:
        return vals, inds
    big = np.bool_(largest)
    if strategy == "threads":
        launch_stride(kernel("reduce.cu", f"extreme_threads_{suf}", idx), n_out, 1, idx,
                      (a, vals, inds, n_out, r, kept, red, big))
        return vals, inds
    fn = kernel("reduce.cu", f"extreme_blocks_{suf}", idx)
    splits = _splits(fn, block, n_out, r, 8, idx)
    if splits == 1:          # `part` is unused when final: any pointer will do
        launch_2d(fn, (n_out,), (block,), (a, vals, inds, vals, r, kept, red, big, np.bool_(True)), idx)
        return vals, inds
    part = empty((n_out * splits * _BEST_BYTES,), _BYTES, idx)
    launch_2d(fn, (n_out, splits), (block,), (a, vals, inds, part, r, kept, red, big, np.bool_(False)), idx)
    launch_2d(kernel("reduce.cu", f"extreme_combine_{suf}", idx), (n_out,), (_block_for(splits),),
              (part, vals, inds, splits, big), idx)
    return vals, inds


def var_mean(a, dims, correction=1, keepdim=False, take_sqrt=False):
    """Variance (standard deviation if ``take_sqrt``) and mean of ``a`` over ``dims``: (out, mean).

    ``a``: float32 or float64, any strides; ``dims``: non-negative axes. The variance is
    ``sum((x - mean)^2) / max(R - correction, 0)`` for the R reduced elements (NaN for 0/0, inf
    for x/0, as PyTorch; the mean of an empty reduction is NaN), computed in one read of the data
    with Welford's update and Chan et al.'s merge (see reduce.cu). Both outputs are new contiguous
    arrays of ``a``'s dtype and the reduced shape.

    Raises:
        TypeError: another dtype.  ValueError: an axis out of range.
    """
    suf = _WELFORD.get(a.dtype)
    if suf is None:
        raise TypeError(f"cuda var/std has no kernel for {a.dtype}; float32 and float64 only")
    dims = tuple(sorted(set(dims)))
    _check_dims("var/std", a, dims)
    T = a.dtype.type
    idx = a.device_id
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    out = empty(out_shape, a.dtype, idx)
    mean = empty(out_shape, a.dtype, idx)
    if n_out == 0:
        return out, mean
    dof = T(max(r - correction, 0))
    root = np.bool_(take_sqrt)
    if strategy == "threads":        # also R == 0: no element read, NaN results
        launch_stride(kernel("reduce.cu", f"welford_threads_{suf}", idx), n_out, 1, idx,
                      (a, out, mean, n_out, r, kept, red, dof, root))
        return out, mean
    fn = kernel("reduce.cu", f"welford_blocks_{suf}", idx)
    splits = _splits(fn, block, n_out, r, 8, idx)
    if splits == 1:          # `part` is unused when final: any pointer will do
        launch_2d(fn, (n_out,), (block,), (a, out, mean, out, r, kept, red, dof, root, np.bool_(True)), idx)
        return out, mean
    part = empty((n_out * splits * _MOMENTS_BYTES[a.dtype],), _BYTES, idx)
    launch_2d(fn, (n_out, splits), (block,), (a, out, mean, part, r, kept, red, dof, root, np.bool_(False)), idx)
    launch_2d(kernel("reduce.cu", f"welford_combine_{suf}", idx), (n_out,), (_block_for(splits),),
              (part, out, mean, splits, dof, root), idx)
    return out, mean


# ---- phase 05: float16 / bfloat16 sums, accumulated in float ------------------------------------------
# sum_blocks_f16 / sum_threads_f16 (and _bf16) read half and write float sums; partial sums of
# sliced rows are added by sum_blocks_f32, and the float result is rounded to half once, by the
# cast kernel: PyTorch's answer (float32 accumulation, one rounding).
import numpy as _np  # noqa: E402 - phase 05 adds these

from .elementwise import cast as _cast  # noqa: E402

_F32 = _np.dtype(_np.float32)
_HALF_SUM = {dt: (f"sum_threads_{s}", f"sum_blocks_{s}") for dt, s in SUFFIX.items() if s in ("f16", "bf16")}


def _sum_half(a, dims, keepdim, scale):
    """``scale * a.sum(dims)`` for float16/bfloat16 ``a`` (any strides): float sums, one rounding.
    Same plan as :func:`sum` (one thread or one block per output, long rows cut into slices)."""
    names = _HALF_SUM[a.dtype]
    idx = a.device_id
    dims = tuple(sorted(set(dims)))
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    out = empty(out_shape, _F32, idx)
    s = _np.float32(scale)
    if n_out == 0:
        pass
    elif strategy == "threads":
        launch_stride(kernel("reduce.cu", names[0], idx), n_out, 1, idx, (a, out, n_out, r, kept, red, s))
    elif splits == 1:
        launch(kernel("reduce.cu", names[1], idx), (n_out,), (block,), (a, out, r, kept, red, s), index=idx)
    else:
        # pass 1: float partial sums, n_out rows of `splits`; pass 2: the float32 kernel adds them
        partial = empty((n_out * splits,), _F32, idx)
        launch(kernel("reduce.cu", names[1], idx), (n_out, splits), (block,),
               (a, partial, r, kept, red, _np.float32(1)), index=idx)
        kept2, red2 = _partials_layouts(n_out, splits)
        launch(kernel("reduce.cu", "sum_blocks_f32", idx), (n_out,), (_block_for(splits),),
               (partial, out, splits, kept2, red2, s), index=idx)
    return _cast(out, a.dtype)


# ---- phase 05: float16 / bfloat16 max/min and var/std -----------------------------------------------
# reduce.cu's phase-05 kernels (extreme_*_f16, welford_*_f16 and _bf16) load half, compare and
# accumulate in float, and round their outputs once; their partial results are r4::Best<float> and
# r4::Moments<float>, 16 bytes each. extreme() above only needs to know their names; var_mean()
# passes dof as a C float to them, so half goes through the function below.
_HALF = {dt: s for dt, s in SUFFIX.items() if s in ("f16", "bf16")}
_EXTREME = {**_EXTREME, **_HALF}
_var_mean_float = var_mean


def var_mean(a, dims, correction=1, keepdim=False, take_sqrt=False):
    """Variance (standard deviation if ``take_sqrt``) and mean of ``a`` over ``dims``: (out, mean).

    Phase 04's :func:`var_mean` (same arguments, results and errors), extended to float16 and
    bfloat16 ``a``: the moments are float (Welford/Chan in float32) and both outputs are rounded
    to ``a``'s dtype once, as PyTorch computes half."""
    suf = _HALF.get(a.dtype)
    if suf is None:
        return _var_mean_float(a, dims, correction, keepdim, take_sqrt)
    dims = tuple(sorted(set(dims)))
    _check_dims("var/std", a, dims)
    idx = a.device_id
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    out = empty(out_shape, a.dtype, idx)
    mean = empty(out_shape, a.dtype, idx)
    if n_out == 0:
        return out, mean
    dof = _np.float32(max(r - correction, 0))
    root = _np.bool_(take_sqrt)
    if strategy == "threads":
        launch_stride(kernel("reduce.cu", f"welford_threads_{suf}", idx), n_out, 1, idx,
                      (a, out, mean, n_out, r, kept, red, dof, root))
        return out, mean
    fn = kernel("reduce.cu", f"welford_blocks_{suf}", idx)
    splits = _splits(fn, block, n_out, r, 8, idx)
    if splits == 1:          # `part` is unused when final: any pointer will do
        launch_2d(fn, (n_out,), (block,), (a, out, mean, out, r, kept, red, dof, root, _np.bool_(True)), idx)
        return out, mean
    part = empty((n_out * splits * _MOMENTS_BYTES[_F32],), _BYTES, idx)     # r4::Moments<float>
    launch_2d(fn, (n_out, splits), (block,), (a, out, mean, part, r, kept, red, dof, root, _np.bool_(False)), idx)
    launch_2d(kernel("reduce.cu", f"welford_combine_{suf}", idx), (n_out,), (_block_for(splits),),
              (part, out, mean, splits, dof, root), idx)
    return out, mean


# ---- phase 04: one generic fold for prod, amax/amin, all/any, count_nonzero, norms, logsumexp ------
# reduce.cu's fold_* kernels: the op is a struct (init, add, merge, finish), so one planner serves
# them all. Partial results between the two launches are Op::Acc, at most 16 bytes each.
_NUMBERS, _FLOATS_ONLY = ("f32", "f64", "i64"), ("f32", "f64")
FOLD_OPS = {   # op -> (kernel suffixes it has, output dtype or None for the input's)
    "prod": (_NUMBERS, None), "amax": (_NUMBERS, None), "amin": (_NUMBERS, None),
    "all": (_NUMBERS + ("bool",), np.dtype(np.bool_)), "any": (_NUMBERS + ("bool",), np.dtype(np.bool_)),
    "count_nonzero": (_NUMBERS + ("bool",), _I64),
    "norm1": (_FLOATS_ONLY, None), "norm2": (_FLOATS_ONLY, None), "norminf": (_FLOATS_ONLY, None),
    "logsumexp": (_FLOATS_ONLY, None),
}
_PARTIAL_BYTES = 16


def fold(op, a, dims, keepdim=False):
    """Reduce ``a`` over ``dims`` with ``op`` (a key of FOLD_OPS; see the table in reduce.cu).

    ``a``: any strides; ``dims``: non-negative axes (all of them for a full reduction). An empty
    reduction gives the op's starting value (prod 1, all True, any False, count 0, norms 0,
    logsumexp -inf; amax/amin give -inf/+inf: the Tensor layer raises before). Returns a new
    contiguous array of the reduced shape: bool for all/any, int64 for count_nonzero, else ``a``'s
    dtype.

    Raises:
        TypeError: a dtype ``op`` has no kernel for.  ValueError: an axis out of range.
    """
    sufs, out_dtype = FOLD_OPS[op]
    suf = SUFFIX.get(a.dtype)
    if suf not in sufs:
        raise TypeError(f"cuda {op} has no kernel for {a.dtype}; {', '.join(sufs)} only")
    dims = tuple(sorted(set(dims)))
    _check_dims(op, a, dims)
    idx = a.device_id
    out_shape, n_out, r, kept, red, strategy, block, splits = _plan(
        a.shape, a.strides, a.itemsize, dims, bool(keepdim), sm_count(idx))
    out = empty(out_shape, out_dtype or a.dtype, idx)
    if n_out == 0:
        return out
    if strategy == "threads":        # also R == 0: each output is the op's starting value
        launch_stride(kernel("reduce.cu", f"fold_threads_{op}_{suf}", idx), n_out, 1, idx,
                      (a, out, n_out, r, kept, red))
        return out
    fn = kernel("reduce.cu", f"fold_blocks_{op}_{suf}", idx)
    splits = _splits(fn, block, n_out, r, 16 // a.itemsize * UNROLL, idx)
    if splits == 1:          # `part` is unused when final: any pointer will do
        launch_2d(fn, (n_out,), (block,), (a, out, out, r, kept, red, np.bool_(True)), idx)
        return out
    part = empty((n_out * splits * _PARTIAL_BYTES,), _BYTES, idx)
    launch_2d(fn, (n_out, splits), (block,), (a, out, part, r, kept, red, np.bool_(False)), idx)
    launch_2d(kernel("reduce.cu", f"fold_combine_{op}_{suf}", idx), (n_out,), (_block_for(splits),),
              (part, out, splits), idx)
    return out
