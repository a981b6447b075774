# phase: 07
"""Layer normalization on ``DeviceArray``s with ``minitorch/cuda/layernorm.cu``: the cuda twins of
``layer_norm`` and ``layer_norm_backward`` in ``cpu.py``.

``x`` is a C-contiguous ``[rows, n]`` array (float32, float64, float16 or bfloat16): the Tensor
layer flattens ``normalized_shape`` into n. ``weight`` and ``bias`` are contiguous ``[n]`` arrays of
x's dtype, or None. ``mean`` and ``rstd`` are ``[rows]`` float32 (float64 for float64 input).

Rows that fit in registers (``_fused_plan``): each lane holds K 16-byte vectors of its team's row
(the team: a warp for rows of up to 32 * V * K elements, else a block of up to 1024 threads), so
the row is read from memory once. Forward: GROUP // 32 rows per block of warps, or one row per
block. Backward: x and dy are read once, dx is written, and each block leaves one row of partial
dgamma/dbeta sums; the grid is about one block per SM, so there are few partial rows, and
``layer_norm_backward_params_final`` adds them per column, in order (deterministic, no atomics).

Rows too long for the registers (over about 8192 float32 elements): the forward streams each row
twice through one block; the backward writes dx the same way, then sums columns over chunks of
rows. Nothing here waits for the GPU.
"""
import functools

import numpy as np

from ...cuda.array import empty
from .launch import BLOCK, SUFFIX, UNROLL, blocks_per_gpu, cdiv, dtype_name, kernel, launch, launch_2d, sm_count

FILE = "layernorm.cu"
GROUP = 128              # threads per block of the forward's warp kernels: 4 rows per block
_DTYPES = ("float32", "float64", "float16", "bfloat16")
_MIN_CHUNK = 16          # rows per partial sum of dgamma/dbeta, at least (fewer partials to add)


def _pow2ceil(n):
    return 1 << (n - 1).bit_length()


@functools.lru_cache(maxsize=None)
def _sms(index):
    return sm_count(index)


def _check(x, what):
    if x.ndim != 2 or not x.c_contiguous or dtype_name(x.dtype) not in _DTYPES:
        raise ValueError(f"{what}: expected a C-contiguous [rows, n] array of {', '.join(_DTYPES)}, got "
                         f"{x.dtype} of shape {x.shape} and strides {x.strides}")


def _acc_dtype(dtype):
    """mean/rstd's dtype: float64 for float64 rows, float32 for the rest (computed in float)."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _block_threads(n, itemsize):
    """Threads of a block that streams a whole row: about UNROLL vectors each, 128..1024."""
    vec = 16 // itemsize if n % (16 // itemsize) == 0 else 1
    return min(1024, max(128, _pow2ceil(cdiv(n, vec * UNROLL))))


def _vector_width(n, itemsize, *arrays):
    """Elements per 16-byte vector when every row of every array starts 16-byte aligned, else 1."""
    vec = 16 // itemsize
    aligned = n % vec == 0 and all(a is None or a.ptr % 16 == 0 for a in arrays)
    return vec if aligned else 1


# vectors per lane of the warp kernels: layernorm.cu instantiates those with V * K within the cap
# below (so K over 8 only for V = 1: odd rows of up to 32 * 32 elements in a warp)
WARP_K = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def _fused_plan(n, vec, dtype):
    """(team, vectors per lane K, threads per team) of the kernels that hold a row in registers: a
    warp when it can, else a block (which may need more threads than the kernel's registers allow:
    the caller checks). A thread holds at most 32 float (16 double) elements of a row."""
    cap = 16 if dtype == np.float64 else 32
    nv = n // vec
    for k in WARP_K:
        if vec * k <= cap and nv <= 32 * k:
            return "warp", k, 32
    k = min(8, cap // vec)
    return "block", k, max(64, _pow2ceil(cdiv(nv, k)))


_fits = {}               # (kernel, threads per block) -> blocks of it per SM


def _blocks_per_sm(fn, threads, idx):
    """How many ``threads``-thread blocks of ``fn`` one SM runs at once (0: they do not fit)."""
    key = (fn, threads)
    if key not in _fits:
        fits = threads <= fn.max_threads_per_block
        _fits[key] = blocks_per_gpu(fn, threads, idx) // _sms(idx) if fits else 0
    return _fits[key]


def layer_norm(x, weight, bias, eps):
    """(y [rows, n] of x's dtype, mean [rows], rstd [rows]): ``y = (x - mean) * rstd * weight + bias``
    per row, rstd = 1 / sqrt(biased var + eps); weight/bias None mean 1 and 0."""
    _check(x, "layer_norm")
    rows, n = x.shape
    idx = x.device_id
    suf = SUFFIX[x.dtype]
    y = empty((rows, n), x.dtype, idx)
    mean, rstd = empty((rows,), _acc_dtype(x.dtype), idx), empty((rows,), _acc_dtype(x.dtype), idx)
    if not rows or not n:
        return y, mean, rstd
    args = (x, weight, bias, y, mean, rstd, rows, n, np.float64(eps))
    vec = _vector_width(n, x.itemsize, x, weight, bias, y)
    team, k, threads = _fused_plan(n, vec, x.dtype)
    fn = kernel(FILE, f"layer_norm_forward_{team}_{vec}x{k}_{suf}", idx)
    if team == "warp":                     # GROUP // 32 rows per block
        launch(fn, (cdiv(rows, GROUP // 32),), (GROUP,), args, index=idx)
    elif _blocks_per_sm(fn, threads, idx):
        launch(fn, (rows,), (threads,), args, index=idx)
    else:                                  # the row does not fit in the block's registers
        launch(kernel(FILE, f"layer_norm_forward_block_{suf}", idx), (rows,), (_block_threads(n, x.itemsize),),
               args, index=idx)
    return y, mean, rstd


def _backward_fused(grad, x, mean, rstd, weight, dx, idx):
    """dx into ``dx`` by the one-pass kernel, and the [blocks, n] partial dgamma and dbeta (None
    without a weight); None when the rows are too long for it."""
    rows, n = x.shape
    vec = _vector_width(n, x.itemsize, grad, x, weight, dx)
    team, k, threads = _fused_plan(n, vec, x.dtype)
    fn = kernel(FILE, f"layer_norm_backward_{team}_{vec}x{k}_{SUFFIX[x.dtype]}", idx)
    if team == "warp":
        # one block per SM of up to as many warps (teams) as fit: the fewest rounds of rows, then
        # the fewest warps that still need only that many (every team gets about as many rows)
        sms = _sms(idx)
        rounds = cdiv(rows, sms * max(1, min(32, _blocks_per_sm(fn, 32, idx))))
        warps = cdiv(rows, sms * rounds)
        threads, grid = 32 * warps, min(sms, cdiv(rows, warps))
    else:
        per_sm = _blocks_per_sm(fn, threads, idx)
        if per_sm == 0:
            return None
        grid = min(rows, per_sm * _sms(idx))
    part_w = part_b = None
    if weight is not None:
        part_w, part_b = empty((grid, n), mean.dtype, idx), empty((grid, n), mean.dtype, idx)
    launch(fn, (grid,), (threads,), (grad, x, mean, rstd, weight, dx, part_w, part_b, rows, n), index=idx)
    return part_w, part_b


def _backward_two_pass(grad, x, mean, rstd, weight, dx, idx):
    """The same for rows too long for the registers: dx by one block per row (two passes over it),
    then column partial sums over chunks of rows."""
    rows, n = x.shape
    suf = SUFFIX[x.dtype]
    launch(kernel(FILE, f"layer_norm_backward_dx_{suf}", idx), (rows,), (_block_threads(n, x.itemsize),),
           (grad, x, mean, rstd, weight, dx, rows, n), index=idx)
    if weight is None:
        return None, None
    columns = cdiv(n, BLOCK)
    target = max(1, 4 * _sms(idx) // columns)            # chunks so that the grid fills the GPU
    chunk = max(_MIN_CHUNK, cdiv(rows, target))
    chunks = max(1, cdiv(rows, chunk))                     # <= 65535: chunk >= rows / target
    part_w = empty((chunks, n), mean.dtype, idx)
    part_b = empty((chunks, n), mean.dtype, idx)
    launch_2d(kernel(FILE, f"layer_norm_backward_params_partial_{suf}", idx), (columns, chunks), (BLOCK,),
              (grad, x, mean, rstd, part_w, part_b, rows, n, chunk), idx)
    return part_w, part_b


def layer_norm_backward(grad, x, mean, rstd, weight, bias_grad=True):
    """(dx [rows, n], dweight [n] or None, dbias [n] or None) from the saved mean and rstd.

    ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` per row with g = grad * weight and
    xhat = (x - mean) * rstd; dweight = sum over rows of grad * xhat and dbias = sum of grad, only
    when ``weight`` is given (dbias only with ``bias_grad``)."""
    _check(x, "layer_norm_backward")
    _check(grad, "layer_norm_backward")
    rows, n = x.shape
    idx = x.device_id
    dx = empty((rows, n), x.dtype, idx)
    part_w = part_b = None              # no rows: no partial sums, dweight and dbias are 0
    if rows and n:
        parts = _backward_fused(grad, x, mean, rstd, weight, dx, idx)
        part_w, part_b = parts if parts is not None else _backward_two_pass(grad, x, mean, rstd, weight, dx, idx)
    if weight is None:
        return dx, None, None
    dweight = empty((n,), x.dtype, idx)
    dbias = empty((n,), x.dtype, idx) if bias_grad else None
    if n:
        parts = 0 if part_w is None else part_w.shape[0]
        launch(kernel(FILE, f"layer_norm_backward_params_final_{SUFFIX[x.dtype]}", idx), (cdiv(n, 32),), (32, 32),
               (part_w, part_b, dweight, dbias, parts, n), index=idx)
    return dx, dweight, dbias
