# GENERATED from minitorch/native/cuda/softmax.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Softmax, log-softmax, their gradients, fused cross-entropy and NLL on ``DeviceArray``s,
with ``minitorch/cuda/softmax.cu``: the cuda twins of the phase-06 functions of ``cpu.py``.

Every function works on the LAST dimension of a C-contiguous 2-D array ``[rows, n]`` (float32 or
float64): the Tensor layer moves the dimension last and flattens the others.
Outputs are new contiguous arrays. Nothing here waits for the GPU.

How a row is shared among threads (details in softmax.cu):

* ``n <= 1024`` (float64: ``n <= 512``): a group of ``lanes`` threads per row, ``lanes`` = 32, or
  the next power of two >= n for shorter rows; blocks of 128 threads hold 128 / lanes rows. The
  softmax kernels keep the row in registers, ``E = ceil(n / lanes)`` values per thread, a compile
  time constant (kernels ``softmax_warp{1,2,4,8,16,32}``).
* longer rows: one block per row, 128..1024 threads so that each thread has about UNROLL 16-byte
  vectors; softmax keeps the row in shared memory when it fits in CACHE_BYTES, so that global
  memory is read once.

Targets are int64 class indices; one outside ``[0, n)`` gives a NaN loss and a NaN gradient row
(never an out-of-bounds read). Checking them here would need a device-to-host copy.
"""
import numpy as np

from ...cuda.array import empty
from .launch import SUFFIX, UNROLL, cdiv, dtype_name, kernel, launch

FILE = "softmax.cu"
GROUP = 128                  # threads per block when a row takes one group of <= 32 lanes
WARP_MAX = {"float32": 1024, "float64": 512}    # longest rows of the register-cached warp kernels
# float16/bfloat16 (softmax.cu's phase-05 kernels, same names with _f16/_bf16, same arguments): the
# registers hold floats, so rows up to 1024 as for float32; scalars go to them as C floats; a
# block kernel's cached row keeps the halves as read (n * 2 bytes)
WARP_MAX.update(float16=1024, bfloat16=1024)
_SCALAR = {"float16": np.float32, "bfloat16": np.float32}
CACHE_BYTES = 44 * 1024      # dynamic shared memory for a cached row: under the 48 KiB a launch may
#                              ask for without opting in, leaving room for the static 512 bytes
_LANES_MAX = 1024            # rows up to this long take one group of lanes in the row kernels


def _kernel(idx, name):
    return kernel(FILE, name, idx)


def _pow2ceil(n):
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def _suffix(x, allowed=("float32", "float64")):
    name = dtype_name(x.dtype)
    if name not in allowed:
        raise TypeError(f"softmax.cu kernels take {' or '.join(allowed)} arrays, got {name}")
    return SUFFIX[x.dtype]


_suffix_wide = _suffix


def _suffix(x, allowed=("float32", "float64", "float16", "bfloat16")):
    return _suffix_wide(x, allowed)


def _check_2d(x, what):
    if x.ndim != 2 or not x.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous 2-D [rows, n] array, got shape {x.shape} "
                         f"and strides {x.strides}")


def _vector_width(n, itemsize, *arrays):
    """Elements per 16-byte vector the kernels will use: 16 / itemsize when every row starts on a
    16-byte boundary (the kernels test the same), else 1."""
    v = 16 // itemsize
    return v if n % v == 0 and all(a.ptr % 16 == 0 for a in arrays) else 1


def _block_threads(n, vec):
    """Threads for one block per row: about UNROLL vectors each, a power of two in [128, 1024]."""
    return min(1024, max(128, _pow2ceil(cdiv(n, vec * UNROLL))))


def _row_launch(rows, n, vec):
    """(grid, block, lanes) of the row kernels (cross-entropy, NLL backward)."""
    if n <= _LANES_MAX:
        lanes = min(32, _pow2ceil(n))
        return (cdiv(rows, GROUP // lanes),), (GROUP,), lanes
    threads = _block_threads(n, vec)
    return (rows,), (threads,), threads


# ---- softmax and log-softmax ----------------------------------------------------------------------
def _softmax(x, log):
    _check_2d(x, "log_softmax" if log else "softmax")
    suf = _suffix(x)
    rows, n = x.shape
    idx = x.device_id
    y = empty((rows, n), x.dtype, idx)
    if rows == 0 or n == 0:
        return y
    if n <= WARP_MAX[dtype_name(x.dtype)]:
        lanes = min(32, _pow2ceil(n))
        elems = _pow2ceil(cdiv(n, lanes))
        launch(
            _kernel(idx, f"softmax_warp{elems}_{suf}"),
            (cdiv(rows, GROUP // lanes),), (GROUP,),
            (x, y, rows, n, np.int32(lanes), np.bool_(log)), index=idx)
    else:
        nbytes = n * x.itemsize
        cache = nbytes <= CACHE_BYTES
        threads = _block_threads(n, _vector_width(n, x.itemsize, x, y))
        launch(
            _kernel(idx, f"softmax_block_{suf}"),
            (rows,), (threads,), (x, y, n, np.bool_(log), np.bool_(cache)),
            shared_mem=nbytes if cache else 0, index=idx)
    return y


def softmax(x):
    """``exp(x - max) / sum(exp(x - max))`` along the last dimension of a contiguous [rows, n]."""
    return _softmax(x, False)


def log_softmax(x):
    """``x - max - log(sum(exp(x - max)))`` along the last dimension of a contiguous [rows, n]."""
    return _softmax(x, True)


def _softmax_backward(y, grad, log):
    what = "log_softmax_backward" if log else "softmax_backward"
    _check_2d(y, what)
    _check_2d(grad, what)
    if grad.shape != y.shape or grad.dtype != y.dtype:
        raise ValueError(f"{what}: grad {grad.shape} {grad.dtype} does not match output {y.shape} {y.dtype}")
    suf = _suffix(y)
    rows, n = y.shape
    idx = y.device_id
    dx = empty((rows, n), y.dtype, idx)
    if rows == 0 or n == 0:
        return dx
    args = (y, grad, dx)
    if n <= WARP_MAX[dtype_name(y.dtype)]:
        lanes = min(32, _pow2ceil(n))
        elems = _pow2ceil(cdiv(n, lanes))
        launch(
            _kernel(idx, f"softmax_backward_warp{elems}_{suf}"),
            (cdiv(rows, GROUP // lanes),), (GROUP,),
            args + (rows, n, np.int32(lanes), np.bool_(log)), index=idx)
    else:
        nbytes = 2 * n * y.itemsize                 # y and grad
        cache = nbytes <= CACHE_BYTES
        threads = _block_threads(n, _vector_width(n, y.itemsize, *args))
        launch(
            _kernel(idx, f"softmax_backward_block_{suf}"),
            (rows,), (threads,), args + (n, np.bool_(log), np.bool_(cache)),
            shared_mem=nbytes if cache else 0, index=idx)
    return dx


def softmax_backward(y, grad):
    """Gradient of softmax from its output ``y``: ``y * (grad - sum(grad * y))`` per row."""
    return _softmax_backward(y, grad, False)


def log_softmax_backward(y, grad):
    """Gradient of log-softmax from its output ``y``: ``grad - exp(y) * sum(grad)`` per row."""
    return _softmax_backward(y, grad, True)


# ---- cross-entropy and NLL ------------------------------------------------------------------------
def _check_target(x, target, what):
    _check_2d(x, what)
    if target.dtype != np.int64 or target.shape != (x.shape[0],) or not target.c_contiguous:
        raise ValueError(f"{what}: expected contiguous int64 targets of shape ({x.shape[0]},), got "
                         f"{target.dtype} {target.shape}")


def _grad_stride(grad, rows, what):
    """Element stride to read one upstream gradient per row: 0 for one number for all rows."""
    if grad.ndim == 0:
        return 0
    if grad.shape != (rows,):
        raise ValueError(f"{what}: expected a 0-d or ({rows},) gradient, got shape {grad.shape}")
    return grad.strides[0] // grad.itemsize


def cross_entropy(logits, target):
    """Per-row loss ``logsumexp(x_r) - x_r[t_r]`` and the logsumexp, from one read of ``logits``.

    Args: logits [rows, n] float32/float64, target [rows] int64.
    Returns: (loss [rows], logsumexp [rows]), logits' dtype; loss NaN where t_r is not in [0, n).
    """
    _check_target(logits, target, "cross_entropy")
    suf = _suffix(logits)
    rows, n = logits.shape
    idx = logits.device_id
    loss = empty((rows,), logits.dtype, idx)
    lse = empty((rows,), logits.dtype, idx)
    if rows:
        grid, block, lanes = _row_launch(rows, n, _vector_width(n, logits.itemsize, logits))
        launch(
            _kernel(idx, f"cross_entropy_{suf}"),
            grid, block, (logits, target, loss, lse, rows, n, np.int32(lanes)), index=idx)
    return loss, lse


def cross_entropy_backward(logits, target, logsumexp, grad, scale=1.0):
    """``(softmax(x_r) - onehot(t_r)) * grad_r * scale`` in one pass over ``logits``.

    ``grad`` is the upstream gradient per row: shape [rows] (any stride) or 0-d (the same for every
    row, as for reduction 'sum'/'mean'); ``scale`` is 1/rows for 'mean'. Rows whose target is out of
    range come out NaN.
    """
    _check_target(logits, target, "cross_entropy_backward")
    suf = _suffix(logits)
    rows, n = logits.shape
    gstride = _grad_stride(grad, rows, "cross_entropy_backward")
    idx = logits.device_id
    dx = empty((rows, n), logits.dtype, idx)
    T = logits.dtype.type
    T = _SCALAR.get(dtype_name(logits.dtype), T)
    if rows and n:
        grid, block, lanes = _row_launch(rows, n, _vector_width(n, logits.itemsize, logits, dx))
        launch(
            _kernel(idx, f"cross_entropy_backward_{suf}"),
            grid, block, (logits, target, logsumexp, grad, gstride, T(scale), dx,
                          rows, n, np.int32(lanes)), index=idx)
    return dx


def nll_loss(log_probs, target):
    """Per-row ``-log_probs[r, t_r]`` (NaN where t_r is out of range): [rows], log_probs' dtype."""
    _check_target(log_probs, target, "nll_loss")
    suf = _suffix(log_probs)
    rows, n = log_probs.shape
    idx = log_probs.device_id
    loss = empty((rows,), log_probs.dtype, idx)
    if rows:
        launch(
            _kernel(idx, f"nll_loss_{suf}"),
            (cdiv(rows, 256),), (256,), (log_probs, target, loss, rows, n), index=idx)
    return loss


def nll_loss_backward(target, grad, n, scale=1.0):
    """[rows, n] of zeros with ``-grad_r * scale`` at column t_r (a NaN row where t_r is out of
    range); ``grad`` 0-d or [rows] as in :func:`cross_entropy_backward`, its dtype the result's."""
    rows = target.shape[0]
    suf = _suffix(grad)
    gstride = _grad_stride(grad, rows, "nll_loss_backward")
    idx = grad.device_id
    dx = empty((rows, n), grad.dtype, idx)
    T = grad.dtype.type
    T = _SCALAR.get(dtype_name(grad.dtype), T)
    if rows and n:
        grid, block, lanes = _row_launch(rows, n, _vector_width(n, dx.itemsize, dx))
        launch(
            _kernel(idx, f"nll_loss_backward_{suf}"),
            grid, block, (target, grad, gstride, T(scale), dx,
                          rows, n, np.int32(lanes)), index=idx)
    return dx
