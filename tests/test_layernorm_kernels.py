"""LayerNorm's kernels at the backend level (``layer_norm(x, weight, bias, eps)`` and
``layer_norm_backward(grad, x, mean, rstd, weight)``) against a float64 NumPy reference, on cpu and
(marked cuda) the GPU.

The row lengths pick every kernel of layernorm.cu: the warp kernels with K = 1, 2, 3, 4, 6, 8
vectors per lane (and 12, 16, 24, 32 single elements), 16-byte vectors (n a multiple of 16 / itemsize) and single elements (odd n, or
rows that start 4 bytes into a buffer), the block kernels (rows over 32 * V * K elements), and the
fallbacks for rows too long for the registers. On the GPU the rows are many more than
the grid's teams, so each team takes several rows and every block adds the sums of several.
Partial sums are never left unwritten (the allocator is poisoned with NaN), and dgamma/dbeta are the
same bits on a second run (no atomics).
"""
import numpy as np
import pytest
import torch

import minitorch.nn.functional as F
from minitorch.dtypes import as_dtype
from minitorch.native import cpu

from helpers import tensor, to_np

pytestmark = pytest.mark.usefixtures("poisoned_allocator_on_cuda")

# (dtype, n): for float32 V = 4, warp K = ceil(n / 128) up to 8 (n <= 1024), block kernels up to
# about 8192, then the fallbacks; odd n take V = 1 (warp K = ceil(n / 32) in 1..8, 12, 16, 24, 32:
# n <= 1024, then blocks, fallbacks past about 4096). float64: V = 2, at most 16 elements per
# thread (odd n: warps up to 512). float16/bfloat16: V = 8, warp K up to 4 (n <= 1024).
CASES = [("float32", n) for n in (1, 4, 7, 33, 64, 65, 128, 132, 255, 256, 257, 383, 384, 511, 512, 640, 767, 768,
                                  1000, 1023, 1024, 1025, 1028, 2048, 4095, 4097, 8192, 8196)] + \
        [("float64", n) for n in (2, 3, 64, 66, 127, 130, 256, 257, 384, 511, 512, 513, 514, 2049, 4096, 4098)] + \
        [(half, n) for half in ("float16", "bfloat16")
         for n in (7, 8, 33, 65, 127, 191, 256, 264, 383, 511, 768, 1023, 1024, 1025, 1032, 8192, 8200)]
TOL = {"float64": 1e-10, "float32": 2e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def _rows(device, n):
    """Few rows on cpu; on the GPU more rows than the grid has teams (about 10-32 warps per SM)."""
    return 37 if device == "cpu" else max(300, min(5000, 3_000_000 // n))


def _inputs(rng, rows, n, dtype):
    """x (a large mean in row 0), dy, weight in ``dtype``; the saved mean/rstd (float64 from x, in
    the kernels' accumulation type)."""
    dt = as_dtype(dtype).numpy
    x = (rng.standard_normal((rows, n)) * 2 + 0.5)
    x[:1] += 100
    x, dy, w = x.astype(dt), rng.standard_normal((rows, n)).astype(dt), rng.standard_normal(n).astype(dt)
    x64 = x.astype(np.float64)
    acc = np.float64 if dtype == "float64" else np.float32
    mean = x64.mean(axis=1).astype(acc)
    rstd = (1 / np.sqrt(x64.var(axis=1) + 1e-5)).astype(acc)
    return x, dy, w, mean, rstd


def _reference(x, dy, w, mean, rstd):
    """dx, dweight, dbias in float64 from the same (rounded) inputs and saved statistics."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mean, rstd = mean.astype(np.float64)[:, None], rstd.astype(np.float64)[:, None]
    xhat = (x - mean) * rstd
    g = dy if w is None else dy * w.astype(np.float64)
    dx = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def _run(device, dy, x, mean, rstd, w, bias_grad=True, offset=False):
    """The backend's (dx, dweight, dbias) as float64 NumPy (None stays None). ``offset``: on the
    GPU, x and dy start one element into their buffers (rows not 16-byte aligned)."""
    if device == "cpu":
        out = cpu.layer_norm_backward(dy, x, mean, rstd, w, bias_grad)
    else:
        from minitorch.cuda import array
        from minitorch.native import cuda as backend

        def put(a):
            if a is None or not offset:
                return None if a is None else array.from_numpy(a, 0)
            flat = array.from_numpy(np.concatenate([a.ravel()[:1], a.ravel()]), 0)
            return flat.as_strided(a.shape, (a.shape[1] * a.itemsize, a.itemsize), a.itemsize)
        out = backend.layer_norm_backward(put(dy), put(x), array.from_numpy(mean, 0), array.from_numpy(rstd, 0),
                                          None if w is None else array.from_numpy(w, 0), bias_grad)
        out = [None if o is None else array.to_numpy(o) for o in out]
    return [None if o is None else np.asarray(o).astype(np.float64) for o in out]


def _close(got, want, dtype, what):
    """|got - want| <= tol * max(1, max |want|): one scale per array (dx's entries cancel)."""
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want))) if want.size else 0.0
    assert err <= TOL[dtype], f"{what}: scaled max error {err:.3g} > {TOL[dtype]:.1g}"


@pytest.mark.parametrize("dtype, n", CASES + [("float32", 8193), ("float32", 16388)])
def test_forward_matches_float64(device, rng, dtype, n):
    """y, mean and rstd; 8193 and 16388 floats are past the register kernels of the forward."""
    rows = _rows(device, n)
    x, _, w, _, _ = _inputs(rng, rows, n, dtype)
    b = rng.standard_normal(n).astype(x.dtype)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=1), x64.var(axis=1)
    want = ((x64 - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * w.astype(np.float64) + b.astype(np.float64),
            mean, 1 / np.sqrt(var + 1e-5))
    if device == "cpu":
        got = cpu.layer_norm(x, w, b, 1e-5)
    else:
        from minitorch.cuda import array
        from minitorch.native import cuda as backend
        got = [array.to_numpy(o) for o in backend.layer_norm(*(array.from_numpy(a, 0) for a in (x, w, b)), 1e-5)]
    # mean: relative to the row's size (row 0 is around 100); rstd ~ 0.5 in every row
    for g, t, name in zip(got, want, ("y", "mean", "rstd")):
        _close(np.asarray(g).astype(np.float64), t, dtype, f"{name} of [{rows}, {n}] {dtype}")


@pytest.mark.parametrize("dtype, n", CASES)
def test_backward_matches_float64(device, rng, dtype, n):
    rows = _rows(device, n)
    x, dy, w, mean, rstd = _inputs(rng, rows, n, dtype)
    want = _reference(x, dy, w, mean, rstd)
    got = _run(device, dy, x, mean, rstd, w)
    for g, t, name in zip(got, want, ("dx", "dweight", "dbias")):
        _close(g, t, dtype, f"{name} of [{rows}, {n}] {dtype}")
    if device == "cuda":            # the same bits again: partial sums added in a fixed order
        again = _run(device, dy, x, mean, rstd, w)
        for g, a, name in zip(got, again, ("dx", "dweight", "dbias")):
            assert np.array_equal(g, a), f"{name} of [{rows}, {n}] {dtype} differs between two runs"


@pytest.mark.parametrize("dtype, n", [("float32", 768), ("float32", 1024), ("float32", 2048), ("float16", 768),
                                      ("float64", 384)])
def test_backward_unaligned_rows(device, rng, dtype, n):
    """x and dy one element into their buffers: the kernels take single elements (V = 1)."""
    rows = _rows(device, n)
    x, dy, w, mean, rstd = _inputs(rng, rows, n, dtype)
    want = _reference(x, dy, w, mean, rstd)
    for g, t, name in zip(_run(device, dy, x, mean, rstd, w, offset=True), want, ("dx", "dweight", "dbias")):
        _close(g, t, dtype, f"{name} of unaligned [{rows}, {n}] {dtype}")


@pytest.mark.parametrize("n", [7, 768, 2048, 8196])
def test_backward_without_weight_or_bias(device, rng, n):
    rows = _rows(device, n)
    x, dy, w, mean, rstd = _inputs(rng, rows, n, "float32")
    dx, dw, db = _run(device, dy, x, mean, rstd, None)
    assert dw is None and db is None, "no weight: no dweight and no dbias"
    _close(dx, _reference(x, dy, None, mean, rstd)[0], "float32", f"dx of [{rows}, {n}] without weight")
    dx, dw, db = _run(device, dy, x, mean, rstd, w, bias_grad=False)
    want = _reference(x, dy, w, mean, rstd)
    assert db is None, "bias_grad=False: no dbias"
    _close(dx, want[0], "float32", f"dx of [{rows}, {n}] with weight, no bias")
    _close(dw, want[1], "float32", f"dweight of [{rows}, {n}] with no bias")


@pytest.mark.parametrize("n", [5, 768])
def test_backward_of_no_rows(device, rng, n):
    x, dy, w, mean, rstd = _inputs(rng, 0, n, "float32")
    dx, dw, db = _run(device, dy, x, mean, rstd, w)
    assert dx.shape == (0, n)
    np.testing.assert_array_equal(dw, np.zeros(n), err_msg="no rows: dweight is an empty sum, 0")
    np.testing.assert_array_equal(db, np.zeros(n), err_msg="no rows: dbias is an empty sum, 0")


@pytest.mark.parametrize("shape", [(64, 256, 384), (4, 2048, 64), (3, 383), (2, 8192)])
def test_layer_norm_gradients_match_torch(device, rng, shape):
    """Through the Tensor layer and autograd: nanoGPT's [B, T, C], short and odd rows, long rows."""
    if device == "cpu" and np.prod(shape) > 1_000_000:
        shape = (8,) + shape[2:]
    n = shape[-1]
    x, dy = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ours = [tensor(a, device, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    F.layer_norm(ours[0], (n,), ours[1], ours[2]).backward(tensor(dy, device))
    torch.nn.functional.layer_norm(theirs[0], (n,), theirs[1], theirs[2]).backward(torch.tensor(dy))
    for o, t, name in zip(ours, theirs, ("x", "weight", "bias")):
        want = t.grad.numpy()
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(to_np(o.grad) / scale, want / scale, rtol=0, atol=1e-4,
                                   err_msg=f"the gradient of {name} for {list(shape)}")
