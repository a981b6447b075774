"""The fused attention softmax (scale, mask, softmax and dropout in one kernel each way,
``AttentionSoftmax``) against the step-by-step decomposition and PyTorch, on cpu and cuda."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch import native
from minitorch.native import cpu
from minitorch.ops import attention as A

from helpers import to_np as host

LENGTHS = [1, 7, 65, 257]


def _qkv(rng, shape_q, shape_k, ev, dtype, device):
    q = rng.standard_normal(shape_q).astype(dtype)
    k = rng.standard_normal(shape_k).astype(dtype)
    v = rng.standard_normal(shape_k[:-1] + (ev,)).astype(dtype)
    return q, k, v


def _run(fn, arrays, mask, device, **kw):
    """fn's output and the gradients of q, k, v (weights w for a loss sum(out * w)), as NumPy."""
    q, k, v = (mt.tensor(a, device=device, requires_grad=True) for a in arrays)
    m = None if mask is None else mt.tensor(mask, device=device)
    out = fn(q, k, v, m, **kw)
    w = np.random.default_rng(1).standard_normal(out.shape).astype(arrays[0].dtype)
    (out * mt.tensor(w, device=device)).sum().backward()
    return [host(out), host(q.grad), host(k.grad), host(v.grad)]


def _assert_all_close(got, want, rtol, atol):
    for name, g, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)


# ---- Philox: the published known-answer vector, and cpu == cuda bit for bit -----------------------
def test_philox_known_answer():
    # Random123's kat_vectors: philox4x32 10 rounds, counter 0, key 0
    assert [int(w) for w in cpu._philox_words(0, 4)] == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    # word e is word e % 4 of block e // 4: a longer stream starts with the shorter one
    np.testing.assert_array_equal(cpu._philox_words(12345, 6), cpu._philox_words(12345, 11)[:6])


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("n", [1, 7, 64, 65, 256, 1029, 2048])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_kernel_matches_cpu_twin(rng, n, dtype, causal):
    """The same seed drops the same elements on both devices; values and gradients agree."""
    from minitorch.dtypes import as_dtype
    np_dtype = as_dtype(dtype).numpy
    L, batch, p, scale = 5, 3, 0.3, 0.7
    s = rng.standard_normal((batch * L, n)).astype(np.float32).astype(np_dtype)
    g = rng.standard_normal((batch * L, n)).astype(np.float32).astype(np_dtype)
    mask = rng.standard_normal((1, L, n)).astype(np.float32).astype(np_dtype)
    seed = np.array([0x0123456789ABCDEF], dtype=np.uint64)
    cu = native.get(mt.device("cuda"))
    for m in (None, mask):
        y0, lse0 = cpu.attention_softmax(s, L, scale, causal, m, seed, p)
        ds0 = cpu.attention_softmax_backward(s, lse0, g, L, scale, causal, m, seed, p)
        dev = [cu.from_numpy(a) if a is not None else None for a in (s, g, m, seed)]
        y1, lse1 = cu.attention_softmax(dev[0], L, scale, causal, dev[2], dev[3], p)
        ds1 = cu.attention_softmax_backward(dev[0], lse1, dev[1], L, scale, causal, dev[2], dev[3], p)
        y1, lse1, ds1 = (cu.to_numpy(a) for a in (y1, lse1, ds1))
        np.testing.assert_array_equal(y1 == 0, y0 == 0)            # the same elements dropped
        tol = {"float64": 1e-12, "float32": 1e-5}.get(dtype, 1e-2)
        np.testing.assert_allclose(lse1, lse0, rtol=tol, atol=tol)
        np.testing.assert_allclose(y1.astype(np.float64), y0.astype(np.float64), rtol=tol, atol=tol)
        np.testing.assert_allclose(ds1.astype(np.float64), ds0.astype(np.float64), rtol=tol, atol=tol)
    # scores one element off a 16-byte boundary: the scalar path must draw the same words
    shifted = cu.from_numpy(np.concatenate([s.ravel()[:1], s.ravel()]))[1:].reshape(s.shape)
    y2, _ = cu.attention_softmax(shifted, L, scale, causal, None, cu.from_numpy(seed), p)
    y0, _ = cpu.attention_softmax(s, L, scale, causal, None, seed, p)
    np.testing.assert_array_equal(cu.to_numpy(y2) == 0, y0 == 0)


# ---- fused vs the decomposition, no dropout: values and gradients ---------------------------------
@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_matches_decomposition(device, rng, T, causal, dtype):
    arrays = _qkv(rng, (2, 3, T, 16), (2, 3, T, 16), 8, dtype, device)
    got = _run(A._fused_attention, arrays, None, device, dropout_p=0.0, is_causal=causal, scale=0.25)
    want = _run(A._math_attention, arrays, None, device, dropout_p=0.0, is_causal=causal, scale=0.25)
    tol = 1e-12 if dtype == "float64" else 2e-5
    _assert_all_close(got, want, tol, tol)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("mask_shape", [(7, 65), (2, 1, 7, 65), (2, 3, 7, 65), (3, 1, 65)])
def test_fused_masks_match_decomposition(device, rng, mask_kind, mask_shape):
    arrays = _qkv(rng, (2, 3, 7, 16), (2, 3, 65, 16), 8, "float64", device)
    mask = rng.random(mask_shape) < 0.7 if mask_kind == "bool" else rng.standard_normal(mask_shape)
    if mask_kind == "bool":
        mask[..., 0] = True                  # no row fully masked (NaN)
    got = _run(A._fused_attention, arrays, mask, device, dropout_p=0.0, is_causal=False, scale=0.3)
    want = _run(A._math_attention, arrays, mask, device, dropout_p=0.0, is_causal=False, scale=0.3)
    _assert_all_close(got, want, 1e-12, 1e-12)


@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("causal", [False, True])
def test_public_sdpa_matches_torch(device, rng, T, causal):
    """On cuda the public function takes the fused path here (float64 never takes flash)."""
    arrays = _qkv(rng, (2, 3, T, 64), (2, 3, T, 64), 64, "float64", device)
    got = _run(lambda q, k, v, m: mt.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal),
               arrays, None, device)
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = torch.nn.functional.scaled_dot_product_attention(*ts, is_causal=causal)
    w = torch.tensor(np.random.default_rng(1).standard_normal(out.shape))
    (out * w).sum().backward()
    _assert_all_close(got, [out.detach().numpy()] + [t.grad.numpy() for t in ts], 1e-10, 1e-10)


# ---- with dropout: the rate, the scaling, and gradients exact for the mask drawn -----------------
@pytest.mark.parametrize("T", [65, 257])
@pytest.mark.parametrize("causal", [False, True])
def test_dropout_rate_scaling_and_gradients(device, rng, T, causal):
    p = 0.2
    arrays = _qkv(rng, (2, 3, T, 16), (2, 3, T, 16), 8, "float64", device)
    q, k, v = (mt.tensor(a, device=device, requires_grad=True) for a in arrays)
    scores = (q @ k.transpose(-2, -1)).detach().requires_grad_(True)
    L = T
    y = A.AttentionSoftmax.apply(scores.reshape(-1, T), None, 0.25, causal, p, L)
    probs = host(A.AttentionSoftmax.apply(scores.detach().reshape(-1, T), None, 0.25, causal, 0.0, L))
    yn = host(y)
    visible = probs > 0                      # causal: the upper triangle is neither kept nor dropped
    keep = (yn != 0) & visible
    rate = keep.sum() / visible.sum()
    assert abs(rate - (1 - p)) < 4 * np.sqrt(p * (1 - p) / visible.sum()), rate   # 4 standard errors
    np.testing.assert_allclose(yn[keep], probs[keep] / (1 - p), rtol=1e-12)
    # the gradient equals PyTorch's for dropout with this very mask
    g = np.random.default_rng(2).standard_normal(yn.shape)
    y.backward(mt.tensor(g, device=device))
    ts = torch.tensor(host(scores).reshape(-1, T), requires_grad=True)
    x = ts * 0.25
    if causal:
        cut = np.arange(T)[None, :] > (np.arange(ts.shape[0]) % L)[:, None]
        x = x.masked_fill(torch.tensor(cut), float("-inf"))
    ty = torch.softmax(x, -1) * torch.tensor(keep) / (1 - p)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(yn, ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(scores.grad).reshape(-1, T), ts.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_dropout_repeats_with_the_seed_and_differs_between_calls(device, rng):
    arrays = _qkv(rng, (2, 3, 33, 16), (2, 3, 33, 16), 8, "float32", device)
    q, k, v = (mt.tensor(a, device=device) for a in arrays)
    mt.manual_seed(7)
    a = host(A._fused_attention(q, k, v, None, 0.5, True, 0.25))
    b = host(A._fused_attention(q, k, v, None, 0.5, True, 0.25))
    mt.manual_seed(7)
    c = host(A._fused_attention(q, k, v, None, 0.5, True, 0.25))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_dropout_one_drops_everything(device, rng):
    arrays = _qkv(rng, (1, 2, 9, 8), (1, 2, 9, 8), 4, "float32", device)
    got = _run(A._fused_attention, arrays, None, device, dropout_p=1.0, is_causal=False, scale=0.3)
    for a in got:
        np.testing.assert_array_equal(a, 0)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_half_close_to_float32(rng, dtype):
    arrays = _qkv(rng, (2, 3, 65, 64), (2, 3, 65, 64), 64, "float32", "cuda")
    want = _run(A._fused_attention, arrays, None, "cuda", dropout_p=0.0, is_causal=True, scale=0.125)
    q, k, v = (mt.tensor(a, device="cuda").to(dtype=getattr(mt, dtype)).requires_grad_(True) for a in arrays)
    out = A._fused_attention(q, k, v, None, 0.0, True, 0.125)
    w = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    (out.float() * mt.tensor(w, device="cuda")).sum().backward()
    got = [host(out.float())] + [host(t.grad.float()) for t in (q, k, v)]
    _assert_all_close(got, want, 5e-2, 5e-2)


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("S", [2048, 2049])
def test_long_rows(rng, S):
    """Rows of thousands of keys: each lane loops over its vectors (2048) or elements (2049)."""
    arrays = _qkv(rng, (1, 2, 5, 32), (1, 2, S, 32), 16, "float32", "cuda")
    got = _run(A._fused_attention, arrays, None, "cuda", dropout_p=0.0, is_causal=False, scale=0.2)
    want = _run(A._math_attention, arrays, None, "cuda", dropout_p=0.0, is_causal=False, scale=0.2)
    _assert_all_close(got, want, 2e-5, 2e-5)


def test_switch_selects_the_step_by_step_path(device, rng, monkeypatch):
    """``enable_fused_softmax_sdp(False)`` gives the same numbers through the step-by-step path
    (which the spy sees taken on both devices: cpu always takes it)."""
    from minitorch import backends
    arrays = _qkv(rng, (2, 3, 9, 16), (2, 3, 9, 16), 8, "float64", device)
    sdpa = lambda q, k, v, m: mt.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    mask = rng.random((9, 9)) < 0.8
    mask[:, 0] = True
    fused = _run(sdpa, arrays, mask, device)
    taken = []
    real = A._math_attention
    monkeypatch.setattr(A, "_math_attention", lambda *a: taken.append(1) or real(*a))
    backends.cuda.enable_fused_softmax_sdp(False)
    try:
        stepwise = _run(sdpa, arrays, mask, device)
    finally:
        backends.cuda.enable_fused_softmax_sdp(True)
    assert taken
    _assert_all_close(fused, stepwise, 1e-12, 1e-12)
    with pytest.raises(TypeError, match="expected a bool"):
        backends.cuda.enable_fused_softmax_sdp(1)
