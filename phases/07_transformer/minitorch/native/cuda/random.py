# GENERATED from minitorch/native/cuda/random.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Random numbers on the GPU: cuRAND draws, our kernels (random.cu, fill.cu) shape them.

``generator`` is the cuRAND handle of a ``minitorch.Generator``, or None for this GPU's default
generator (the one ``minitorch.manual_seed`` reseeds). cuRAND runs on the current stream and,
like our kernels, never makes the host wait. Also the deterministic factories of phase 02:
``linspace``/``logspace``, ``eye``, ``empty_strided``.
"""
import numpy as np

from ...cuda import array
from .creation import _curand, empty
from .launch import cp, kernel, kernel_for, launch, launch_1d, launch_stride


def _draw_buffer(dtype, n, index):
    """A scratch array for ``n`` draws of cuRAND's type for ``dtype``: double for float64, float
    otherwise (cuRAND has no half draws); rounded up to an even count (its normal draws need one)."""
    draw_dtype = dtype if dtype == np.float64 else np.dtype(np.float32)
    return array.empty((n + n % 2,), draw_dtype, index)


def _affine(u, out, a, b):
    """``out = a + b * u`` elementwise (``out`` contiguous; ``u`` its draws, possibly longer)."""
    n = out.size
    launch_stride(kernel_for("random.cu", "affine", out.dtype, out.device_id), n, 4, out.device_id,
                  (u, out, np.float64(a), np.float64(b), n))


def uniform_(x, low, high, generator=None):
    """Fill the contiguous array ``x`` (floating) with U(low, high) draws in place; returns x."""
    u = _draw_buffer(x.dtype, x.size, x.device_id)
    with cp.cuda.Device(x.device_id):
        handle = _curand(x.device_id, generator)
        draw = cp.cuda.curand.generateUniformDouble if u.dtype == np.float64 else cp.cuda.curand.generateUniform
        if x.size:
            draw(handle, u.ptr, u.size)
    _affine(u, x, high, low - high)          # cuRAND's (0, 1] -> [low, high): see random.cu
    return x


def normal_(x, mean, std, generator=None):
    """Fill the contiguous array ``x`` (floating) with N(mean, std^2) draws in place; returns x."""
    u = _draw_buffer(x.dtype, x.size, x.device_id)
    with cp.cuda.Device(x.device_id):
        handle = _curand(x.device_id, generator)
        draw = cp.cuda.curand.generateNormalDouble if u.dtype == np.float64 else cp.cuda.curand.generateNormal
        if x.size:
            draw(handle, u.ptr, u.size, 0.0, 1.0)
    _affine(u, x, mean, std)
    return x


def _random_words(n64, generator, index):
    """``n64`` uniform 64-bit words (two of cuRAND's 32-bit words each) in a new uint64 array."""
    bits = array.empty((n64,), np.dtype(np.uint64), index)
    with cp.cuda.Device(index):
        handle = _curand(index, generator)
        if n64:
            cp.cuda.curand.generate(handle, bits.ptr, 2 * n64)
    return bits


def randint(low, high, shape, generator=None, index=0):
    """int64 array of ``shape`` uniform on [low, high) (high > low, checked by the caller)."""
    out = array.empty(tuple(shape), np.dtype(np.int64), index)
    bits = _random_words(out.size, generator, index)
    span = high - low                        # up to 2^64 - 1: passed as the same 64 bits, signed
    launch_stride(kernel("random.cu", "randint_i64", index), out.size, 4, index,
                  (bits, out, int(low), span - (1 << 64) if span >= 1 << 63 else span, out.size))
    return out


def linspace(start, end, steps, dtype, base=None, index=0):
    """``steps`` values from ``start`` to ``end`` (``base ** value`` for logspace when ``base`` is
    given), PyTorch's two-ended formula (fill.cu). ``start``/``end`` already in the output type."""
    out = empty((steps,), dtype, index)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    launch_1d(kernel_for("fill.cu", "linspace", out.dtype, index), steps, index,
              (out, np.float64(start), np.float64(end), np.float64(step), steps,
               np.float64(base or 0.0), np.int32(base is not None)))
    return out


def eye(n, m, dtype, index=0):
    """The n x m identity (ones on the main diagonal, zeros elsewhere)."""
    out = empty((n, m), dtype, index)
    launch_1d(kernel_for("fill.cu", "eye", out.dtype, index), n * m, index, (out, m, n * m))
    return out


def empty_strided(shape, strides, dtype, index=0):
    """Uninitialised memory viewed with ``shape`` and element ``strides`` (non-negative): a buffer
    just large enough for the farthest element, 1 + sum((size - 1) * stride), 0 if any size is 0."""
    need = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, strides))
    buf = empty((need,), dtype, index)
    return buf.as_strided(tuple(shape), tuple(st * buf.itemsize for st in strides))
from .elementwise import contiguous  # noqa: E402 - phase 04 adds it


# ---- sorting random keys: randperm, multinomial without replacement ----------------------------
def _segment(n):
    """The power of two a row of ``n`` keys is padded to for the bitonic sort (random.cu)."""
    return 1 << max(n - 1, 0).bit_length()


def _bitonic_sort(keys, vals, rows, seg):
    """Sort each of ``rows`` rows of ``seg`` keys (uint64) ascending, carrying ``vals`` along: the
    log2(seg) (log2(seg) + 1) / 2 launches of bitonic_step, in stream order."""
    fn = kernel("random.cu", "bitonic_step", keys.device_id)
    total = rows * seg
    k = 2
    while k <= seg:
        j = k // 2
        while j >= 1:
            launch_stride(fn, total, 4, keys.device_id, (keys, vals, total, seg, j, k))
            j //= 2
        k *= 2


def randperm(n, generator=None, index=0):
    """A random permutation of 0..n-1 (int64): 63-bit random keys sorted, positions carried."""
    seg = _segment(n)
    keys = _random_words(seg, generator, index)
    vals = array.empty((seg,), np.dtype(np.int64), index)
    launch_stride(kernel("random.cu", "randperm_keys", index), seg, 4, index, (keys, keys, vals, n, seg))
    _bitonic_sort(keys, vals, 1, seg)
    return vals[:n]


def _uniform_doubles(n, generator, index):
    u = array.empty((n,), np.dtype(np.float64), index)
    with cp.cuda.Device(index):
        handle = _curand(index, generator)
        if n:
            cp.cuda.curand.generateUniformDouble(handle, u.ptr, n)     # (0, 1]
    return u


def multinomial(probs, num_samples, replacement, generator=None):
    """Category indices drawn from each row of ``probs`` (a contiguous [rows, n] float32/float64
    array of non-negative weights, n >= 1): int64 [rows, num_samples].

    With replacement: inverse CDF (multinomial_cdf, then a binary search per sample). Without:
    the exponential race, keys -log(u)/p sorted per row, the first ``num_samples`` kept (random.cu).
    Invalid rows (negative, NaN, all zero) are not detected here: that would make the host wait.
    """
    rows, n = probs.shape
    index = probs.device_id
    out_shape = (rows, num_samples)
    if rows * num_samples == 0:
        return array.empty(out_shape, np.dtype(np.int64), index)
    suffix = "f32" if probs.dtype == np.float32 else "f64"
    if replacement:
        cdf = array.empty((rows, n), np.dtype(np.float64), index)
        # one block of 256 threads (random.cu's SCAN_BLOCK) per row; blocks loop over further rows
        launch(kernel("random.cu", f"multinomial_cdf_{suffix}", index), (min(rows, 65535),), (256,),
               (probs, cdf, rows, n), 0, index)
        u = _uniform_doubles(rows * num_samples, generator, index)
        out = array.empty(out_shape, np.dtype(np.int64), index)
        launch_stride(kernel("random.cu", "multinomial_draw", index), rows * num_samples, 4, index,
                      (cdf, u, out, rows, n, num_samples))
        return out
    seg = _segment(n)
    u = _uniform_doubles(rows * n, generator, index)
    keys = array.empty((rows * seg,), np.dtype(np.uint64), index)
    vals = array.empty((rows * seg,), np.dtype(np.int64), index)
    launch_stride(kernel("random.cu", f"multinomial_keys_{suffix}", index), rows * seg, 4, index,
                  (probs, u, keys, vals, rows, n, seg))
    _bitonic_sort(keys, vals, rows, seg)
    return contiguous(vals.reshape(rows, seg)[:, :num_samples])
