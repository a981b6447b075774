# GENERATED from minitorch/native/cuda/layernorm.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""Layer normalization on ``DeviceArray``s with ``minitorch/cuda/layernorm.cu``: the cuda twins of
``layer_norm`` and ``layer_norm_backward`` in ``cpu.py``.

``x`` is a C-contiguous ``[rows, n]`` array (float32, float64, float16 or bfloat16): the Tensor
layer flattens ``normalized_shape`` into n. ``weight`` and ``bias`` are contiguous ``[n]`` arrays of
x's dtype, or None. ``mean`` and ``rstd`` are ``[rows]`` float32 (float64 for float64 input).

A row takes one warp when ``n <= WARP_MAX`` (blocks of GROUP threads, one row per warp), else one
block of 128..1024 threads (about UNROLL 16-byte vectors per thread). dgamma/dbeta take two
kernels: column partial sums over chunks of rows, then one thread per column adds the chunks in
order (deterministic, no atomics). Nothing here waits for the GPU.
"""
import functools

import numpy as np

from ...cuda.array import empty
from .launch import BLOCK, SUFFIX, UNROLL, cdiv, kernel, launch, launch_2d, launch_stride, sm_count

FILE = "layernorm.cu"
GROUP = 128              # threads per block in the warp kernels: 4 rows per block
WARP_MAX = 1024          # rows up to this long take one warp
_DTYPES = ("float32", "float64", "float16", "bfloat16")
_MIN_CHUNK = 16          # rows per partial sum of dgamma/dbeta, at least (fewer partials to add)


def _pow2ceil(n):
    return 1 << (n - 1).bit_length()


@functools.lru_cache(maxsize=None)
def _sms(index):
    return sm_count(index)


def _check(x, what):
    if x.ndim != 2 or not x.c_contiguous or x.dtype.name not in _DTYPES:
        raise ValueError(f"{what}: expected a C-contiguous [rows, n] array of {', '.join(_DTYPES)}, got "
                         f"{x.dtype} of shape {x.shape} and strides {x.strides}")


def _acc_dtype(dtype):
    """mean/rstd's dtype: float64 for float64 rows, float32 for the rest (computed in float)."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _team(rows, n, itemsize):
    """(team name, grid, block) of a row kernel."""
    if n <= WARP_MAX:
        return "warp", (cdiv(rows, GROUP // 32),), (GROUP,)
    vec = 16 // itemsize if n % (16 // itemsize) == 0 else 1
    return "block", (rows,), (min(1024, max(128, _pow2ceil(cdiv(n, vec * UNROLL)))),)


def layer_norm(x, weight, bias, eps):
    """(y [rows, n] of x's dtype, mean [rows], rstd [rows]): ``y = (x - mean) * rstd * weight + bias``
    per row, rstd = 1 / sqrt(biased var + eps); weight/bias None mean 1 and 0."""
    _check(x, "layer_norm")
    rows, n = x.shape
    idx = x.device_id
    y = empty((rows, n), x.dtype, idx)
    mean, rstd = empty((rows,), _acc_dtype(x.dtype), idx), empty((rows,), _acc_dtype(x.dtype), idx)
    if rows and n:
        team, grid, block = _team(rows, n, x.itemsize)
        launch(kernel(FILE, f"layer_norm_forward_{team}_{SUFFIX[x.dtype]}", idx), grid, block,
               (x, weight, bias, y, mean, rstd, rows, n, np.float64(eps)), index=idx)
    return y, mean, rstd


def layer_norm_backward(grad, x, mean, rstd, weight, bias_grad=True):
    """(dx [rows, n], dweight [n] or None, dbias [n] or None) from the saved mean and rstd.

    ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` per row with g = grad * weight and
    xhat = (x - mean) * rstd; dweight = sum over rows of grad * xhat and dbias = sum of grad, only
    when ``weight`` is given (dbias only with ``bias_grad``)."""
    _check(x, "layer_norm_backward")
    _check(grad, "layer_norm_backward")
    rows, n = x.shape
    idx = x.device_id
    suf = SUFFIX[x.dtype]
    dx = empty((rows, n), x.dtype, idx)
    if rows and n:
        team, grid, block = _team(rows, n, x.itemsize)
        launch(kernel(FILE, f"layer_norm_backward_{team}_{suf}", idx), grid, block,
               (grad, x, mean, rstd, weight, dx, rows, n), index=idx)
    if weight is None:
        return dx, None, None
    dweight = empty((n,), x.dtype, idx)
    dbias = empty((n,), x.dtype, idx) if bias_grad else None
    if n:
        columns = cdiv(n, BLOCK)
        target = max(1, 4 * _sms(idx) // columns)            # chunks so that the grid fills the GPU
        chunk = max(_MIN_CHUNK, cdiv(rows, target))
        chunks = max(1, cdiv(rows, chunk))                     # <= 65535: chunk >= rows / target
        part_w = empty((chunks, n), mean.dtype, idx)
        part_b = empty((chunks, n), mean.dtype, idx)
        launch_2d(kernel(FILE, f"layer_norm_backward_params_partial_{suf}", idx), (columns, chunks), (BLOCK,),
                  (grad, x, mean, rstd, part_w, part_b, rows, n, chunk), idx)
        launch_stride(kernel(FILE, f"layer_norm_backward_params_final_{suf}", idx), n, 1, idx,
                      (part_w, part_b, dweight, dbias, chunks, n))
    return dx, dweight, dbias
