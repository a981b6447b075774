# GENERATED from minitorch/native/cuda/indexing.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Gathers, scatters, strided copies and nonzero on ``DeviceArray``s with ``minitorch/cuda/index.cu``:
the cuda twins of ``take``, ``gather``, ``index_add_``, ``index_copy_``, ``scatter_add_``,
``scatter_``, ``copy_`` and ``nonzero`` in ``native/cpu.py``.

Each builds one ``Layout`` over the shape it walks (see index.cu) with ``launch.pack_layout``
(cached by shapes and strides), so inputs of any strides - slices, transposes, a column of
nonzero()'s output - are read in place. Indices are int64; negative ones count from the end; an
index out of range is never used to address memory (the gather writes NaN / 0 / False, the
scatters skip it). Only :func:`nonzero` waits for the GPU (it must know how many elements are true).
"""
import numpy as np

from ...cuda.array import empty
from .launch import (LAYOUT, MAX_DIMS, SUFFIX, StructArg, broadcast_strides, cdiv, kernel, launch_2d,
                     launch_stride, pack_layout)

FILE = "index.cu"
_SCATTER_DTYPES = ("f32", "f64", "i64")
_GATHER_DTYPES = ("f32", "f64", "i64", "bool")
_REDUCE_DTYPES = ("f32", "f64", "i64")      # scatter_mul/max/min: atomicCAS on 4 and 8 bytes
_SCATTER_DTYPES += ("f16", "bf16")      # atomicAdd on __half / __nv_bfloat16 (index.cu)
_GATHER_DTYPES += ("f16", "bf16")
_I64 = np.dtype(np.int64)
_CHUNK = 4096                # index.cu's ix::CHUNK: mask elements per block in nonzero
_BLOCK = 256
_SCAN_BLOCK = 1024


def _elem_strides(x):
    isz = x.dtype.itemsize
    return tuple([s // isz for s in x.strides])     # (a list: cheaper than a generator, every gather)


def _suffix(x, what, allowed=None):
    suf = SUFFIX.get(x.dtype)
    if suf not in (allowed or _GATHER_DTYPES):
        raise TypeError(f"cuda {what} has no kernel for {x.dtype}")
    return suf


def _check_index(index, what):
    if index.dtype != _I64:
        raise TypeError(f"cuda {what}: index must be int64, got {index.dtype}")


def take(a, dim, index):
    """``a`` gathered along ``dim`` at ``index`` (int64, any shape and strides): a new contiguous
    array of shape ``a.shape[:dim] + index.shape + a.shape[dim+1:]`` with
    ``out[p, b, q] = a[p, index[b], q]`` (NumPy's ``take`` with an axis). ``a`` may have any
    strides and dtype (float32, float64, int64, bool).

    Raises:
        TypeError: index not int64, or a dtype without a kernel.
    """
    _check_index(index, "take")
    suf = _suffix(a, "take")
    shape = a.shape[:dim] + index.shape + a.shape[dim + 1:]
    sa, si = _elem_strides(a), _elem_strides(index)
    zeros_b, rest = (0,) * index.ndim, (0,) * (a.ndim - dim - 1)
    layout = pack_layout(shape, (sa[:dim] + zeros_b + sa[dim + 1:], (0,) * dim + si + rest))
    idx = a.device_id
    out = empty(shape, a.dtype, idx)
    n = out.size
    launch_stride(kernel(FILE, f"gather_{suf}", idx), n, 1, idx,
                  (a, index, out, n, a.shape[dim], sa[dim], layout))
    return out


def _scatter(dst, index, src, dim, dst_strides, index_strides, what, combine="add"):
    """Add (``combine="add"``, atomicAdd) or store (``"store"``) every element of ``src`` into
    ``dst`` (the shape walked is src's; callers check it)."""
    allowed = {"add": _SCATTER_DTYPES, "store": _GATHER_DTYPES}.get(combine, _REDUCE_DTYPES)
    suf = _suffix(dst, what, allowed)
    if src.dtype != dst.dtype:
        raise TypeError(f"cuda {what}: src {src.dtype} and dst {dst.dtype} differ")
    layout = pack_layout(src.shape, (dst_strides, index_strides, _elem_strides(src)))
    idx = dst.device_id
    n = src.size
    launch_stride(kernel(FILE, f"scatter_{combine}_{suf}", idx), n, 1, idx,
                  (dst, index, src, n, dst.shape[dim],
                   dst.strides[dim] // dst.itemsize, layout))
    return dst


def index_add_(dst, dim, index, src, combine="add"):
    """``dst[p, index[b], q] += src[p, b, q]`` in place, with atomicAdd (repeated indices add up,
    in no fixed order: float results may vary in the last bits); returns ``dst``.
    ``combine="store"`` writes ``=`` instead (that is :func:`index_copy_`).

    ``dst``: float32/float64/int64, any strides, its elements distinct; ``src``: the same dtype,
    shape ``dst.shape[:dim] + index.shape + dst.shape[dim+1:]``, any strides; ``index``: int64.

    Raises:
        TypeError: dtypes.  ValueError: src of the wrong shape.
    """
    what = "index_add_" if combine == "add" else "index_copy_"
    _check_index(index, what)
    shape = dst.shape[:dim] + index.shape + dst.shape[dim + 1:]
    if src.shape != shape:
        raise ValueError(f"{what}: src has shape {src.shape}, expected {shape}")
    sd = _elem_strides(dst)
    return _scatter(dst, index, src, dim, sd[:dim] + (0,) * index.ndim + sd[dim + 1:],
                    (0,) * dim + _elem_strides(index) + (0,) * (dst.ndim - dim - 1), what, combine)


def scatter_add_(dst, dim, index, src, combine="add"):
    """``dst[i_0, .., index[i], .., i_k] += src[i]`` for every position ``i`` of ``index``
    (PyTorch's ``scatter_add_``), in place with atomicAdd; returns ``dst``. ``index`` (int64) and
    ``src`` share a shape of dst's rank, no larger than dst's outside ``dim``.
    ``combine="store"`` writes ``=`` instead (that is :func:`scatter_`).

    Raises:
        TypeError: dtypes.  ValueError: shapes.
    """
    what = {"add": "scatter_add_", "store": "scatter_"}.get(combine, "scatter_reduce_")
    _check_index(index, what)
    if src.shape != index.shape or index.ndim != dst.ndim or any(
            i > d for k, (i, d) in enumerate(zip(index.shape, dst.shape)) if k != dim):
        raise ValueError(f"{what}: index {index.shape} and src {src.shape} must share a shape of dst's "
                         f"rank, within dst {dst.shape} outside dim {dim}")
    sd = list(_elem_strides(dst))
    sd[dim] = 0                          # along dim the index says where
    return _scatter(dst, index, src, dim, tuple(sd), _elem_strides(index), what, combine)


# ---- torch.gather, scatter_, index_copy_: the same two kernels with other Layouts ----------------
def gather(a, dim, index):
    """``out[i_0, .., i_k] = a[i_0, .., index[i_0, .., i_k], .., i_k]`` with ``index[..]`` in place
    of coordinate ``dim`` (``torch.gather``): a new contiguous array of index's shape and a's
    dtype. ``index``: int64, a's rank, no larger than ``a`` outside ``dim``; any strides.

    Raises:
        TypeError: index not int64, or a dtype without a kernel.  ValueError: shapes.
    """
    _check_index(index, "gather")
    suf = _suffix(a, "gather")
    if index.ndim != a.ndim or any(i > n for k, (i, n) in enumerate(zip(index.shape, a.shape)) if k != dim):
        raise ValueError(f"gather: index {index.shape} must have a's rank and fit in a {a.shape} outside dim {dim}")
    sa = list(_elem_strides(a))
    stride, sa[dim] = sa[dim], 0          # along dim the index says where
    idx = a.device_id
    out = empty(index.shape, a.dtype, idx)
    n = out.size
    if n:
        layout = pack_layout(index.shape, (tuple(sa), _elem_strides(index)))
        launch_stride(kernel(FILE, f"gather_{suf}", idx), n, 1, idx,
                      (a, index, out, n, a.shape[dim], stride, layout))
    return out


def scatter_(dst, dim, index, src):
    """``dst[i_0, .., index[i], .., i_k] = src[i]`` in place (``torch.Tensor.scatter_``); with
    repeated indices, which source element stays is unspecified. Shapes as :func:`scatter_add_`;
    any dtype with a gather kernel (bool and halves too: a store computes nothing)."""
    return scatter_add_(dst, dim, index, src, combine="store")


def scatter_reduce_(dst, dim, index, src, op):
    """``dst[i_0, .., index[i], .., i_k] = op(that element, src[i])`` in place (PyTorch's
    ``scatter_reduce_`` with include_self=True): ``op`` "sum" (atomicAdd), "prod", "amax" or "amin"
    (atomicCAS loops in index.cu; NaN propagates). float32, float64, int64; shapes as
    :func:`scatter_add_`; returns ``dst``.

    Raises:
        TypeError: dtypes.  ValueError: shapes.
    """
    return scatter_add_(dst, dim, index, src, combine={"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}[op])


def index_copy_(dst, dim, index, src):
    """``dst[p, index[b], q] = src[p, b, q]`` in place (``torch.Tensor.index_copy_``, and
    ``x[idx] = v``); shapes as :func:`index_add_`. Repeated indices: one of the values stays."""
    return index_add_(dst, dim, index, src, combine="store")


def copy_(dst, src):
    """Copy ``src`` (same dtype, broadcast to dst's shape, any strides) into ``dst``, a view of any
    strides whose elements are distinct and do not overlap ``src``; returns ``dst``.

    Raises:
        TypeError: dtypes differ.  ValueError: src does not broadcast to dst's shape.
    """
    suf = _suffix(dst, "copy_")
    if src.dtype != dst.dtype:
        raise TypeError(f"cuda copy_: src {src.dtype} and dst {dst.dtype} differ")
    pad = dst.ndim - src.ndim
    if pad < 0 or any(s not in (1, d) for s, d in zip(src.shape, dst.shape[pad:])):
        raise ValueError(f"copy_: src of shape {src.shape} does not broadcast to {dst.shape}")
    ss = broadcast_strides(src.shape, src.strides, src.itemsize, dst.shape)
    n = dst.size
    if n == 0:
        return dst
    layout = pack_layout(dst.shape, (_elem_strides(dst), ss))
    idx = dst.device_id
    launch_stride(kernel(FILE, f"copy_into_{suf}", idx), n, 1, idx, (dst, src, n, layout))
    return dst


def _shape_arg(shape):
    """A Layout holding only ``shape`` (innermost first, not merged: nonzero needs every
    coordinate), as the by-value struct argument of nonzero_write."""
    words = np.zeros(LAYOUT.itemsize // 8, dtype=np.int64)
    words[0] = len(shape)
    words[1:1 + len(shape)] = shape[::-1]
    return StructArg(words.view(LAYOUT))


def nonzero(mask):
    """Coordinates of the true elements of ``mask`` in row-major order: a new int64 array
    [count, mask.ndim] (``torch.nonzero``). Other dtypes count ``x != 0``.

    Waits for the GPU: the count must reach the host to size the output (one 8-byte copy).

    Raises:
        ValueError: more than MAX_DIMS (8) dimensions.
    """
    if mask.ndim > MAX_DIMS:
        raise ValueError(f"nonzero: at most {MAX_DIMS} dimensions, got shape {mask.shape}")
    if mask.dtype != np.bool_ or not mask.c_contiguous:
        from .elementwise import cast
        mask = cast(mask, np.bool_)
    n = mask.size
    idx = mask.device_id
    if n == 0:
        return empty((0, mask.ndim), _I64, idx)
    groups = cdiv(n, _CHUNK)
    counts = empty((groups + 1,), _I64, idx)
    launch_2d(kernel(FILE, "nonzero_count", idx), (groups,), (_BLOCK,), (mask, n, counts), idx)
    launch_2d(kernel(FILE, "nonzero_scan", idx), (1,), (_SCAN_BLOCK,), (counts, groups), idx)
    total = int(counts[groups:].get()[0])          # the synchronisation: the host needs the count
    out = empty((total, mask.ndim), _I64, idx)
    if total and mask.ndim:
        launch_2d(kernel(FILE, "nonzero_write", idx), (groups,), (_BLOCK,),
                  (mask, n, counts, out, _shape_arg(mask.shape)), idx)
    return out
