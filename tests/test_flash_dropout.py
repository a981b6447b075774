"""Phase 07: dropout inside the float32 flash kernels (rung 1b, minitorch/cuda/attention/01b_flash_fp32_tiled.cu,
and rung 1c, 01c_flash_fp32_3xtf32.cu), cuda only.

The kernels must drop exactly the elements the fused softmax (attention_softmax.cu) drops for the same
Philox key: element (row bh * L + q, key k) of the [BH * L, S] scores, by the rule of philox.cuh. So:
  * the native launchers with a fixed key against float64 PyTorch given the mask that cpu.py's NumPy
    Philox draws for that key (output and dq, dk, dv): the forward's bits and both backward kernels'
    bits (laid out differently) are checked element by element;
  * with V one-hot per key, the output IS the dropped probabilities: the keep mask read off it equals
    NumPy's bit for bit, and its rate is 1 - p;
  * the public function after ``manual_seed``: flash with dropout equals the fused decomposition with
    dropout (same key drawn) to float32 rounding, reproducibly, and p = 1 gives zeros.
Lengths straddle the tiles (forward 128 query rows x 64 keys, backward 64 x 64) and rows start
anywhere within a Philox block of 4 (S odd). Outputs come from a poisoned allocator (NaN bytes).
"""
import numpy as np
import pytest
import torch

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import backends
from minitorch.native import cpu
from minitorch.ops import attention as A

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("poisoned_allocator")]

KEY = np.array([0x0123456789ABCDEF], dtype=np.uint64)

#          BH   L    S    causal
SHAPES = [(3, 1, 1, False), (2, 63, 65, False), (2, 129, 127, False), (2, 65, 300, False),
          (2, 257, 257, True), (2, 130, 130, True), (1, 200, 77, True)]


def _native():
    if not mt.cuda.is_available():
        pytest.skip("needs CuPy and a CUDA GPU")
    from minitorch.cuda import array
    from minitorch.native.cuda import attention as NA
    return array, NA


def _keep(bh, L, S, p):
    """NumPy's keep mask [BH, L, S] for KEY (the fused softmax's cpu twin) and 1 / (1 - p)."""
    keep, keep_scale = cpu._attention_keep((bh * L, S), KEY, p)
    return keep.reshape(bh, L, S), keep_scale


def _reference(q, k, v, w, causal, scale, keep, keep_scale):
    """float64 dropout(softmax(q k^T scale)) v with the given mask, and the gradients of sum(out * w)."""
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    s = tq @ tk.transpose(-2, -1) * scale
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    out = torch.softmax(s, -1) * torch.tensor(keep) * keep_scale @ tv
    (out * torch.tensor(w, dtype=torch.float64)).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in (tq, tk, tv)]


@pytest.mark.parametrize("tensor_cores", [False, True])
@pytest.mark.parametrize("p", [0.2, 0.9])
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("bh,L,S,causal", SHAPES)
def test_native_dropout_matches_numpy_mask(rng, bh, L, S, causal, E, p, tensor_cores):
    """The launchers with a fixed key: output and gradients equal float64 PyTorch's for the mask
    NumPy draws from that key (atol scaled by 1 / (1 - p): kept weights are that much larger).
    Rung 1b's kernels (tensor_cores=False) and rung 1c's (01c_flash_fp32_3xtf32.cu: other keep-bit layouts)."""
    array, NA = _native()
    q = rng.uniform(-2, 2, (bh, L, E)).astype(np.float32)
    k, v = (rng.uniform(-2, 2, (bh, S, E)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((bh, L, E)).astype(np.float32)
    scale = 1 / np.sqrt(E)
    keep, keep_scale = _keep(bh, L, S, p)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    seed = array.from_numpy(KEY, 0)
    out, lse = NA.flash_attention(*dev, scale, causal, seed=seed, p=p, tensor_cores=tensor_cores)
    grads = NA.flash_attention_backward(*dev, out, lse, array.from_numpy(w, 0), scale, causal, seed=seed, p=p,
                                        tensor_cores=tensor_cores)
    want, want_grads = _reference(q, k, v, w, causal, scale, keep, keep_scale)
    what = f"BH={bh} L={L} S={S} E={E} causal={causal} p={p} tensor_cores={tensor_cores}"
    tol = 1e-4 * keep_scale
    np.testing.assert_allclose(array.to_numpy(out), want, rtol=1e-4, atol=tol, err_msg=f"output, {what}")
    for name, ours, ref in zip("qkv", grads, want_grads):
        np.testing.assert_allclose(array.to_numpy(ours), ref, rtol=1e-3, atol=10 * tol, err_msg=f"d{name}, {what}")


@pytest.mark.parametrize("tensor_cores", [False, True])
@pytest.mark.parametrize("p", [0.2, 0.9])
@pytest.mark.parametrize("L,S,E,causal", [(131, 37, 64, False), (70, 100, 128, False), (200, 128, 128, True)])
def test_native_keep_mask_bit_for_bit(rng, L, S, E, causal, p, tensor_cores):
    """V row j = unit vector j, so out[q, j] = P[q, j] * Z[q, j] (exactly with FFMA; with 3xTF32, P
    as big + small, to ~2^-22): its nonzeros are the kept elements, which must be NumPy's, at the
    rate 1 - p, each P / (1 - p). Rung 1b's forward and rung 1c's."""
    array, NA = _native()
    bh = 4
    q = rng.uniform(-0.5, 0.5, (bh, L, E)).astype(np.float32)      # small scores: no P underflows to 0
    k = rng.uniform(-0.5, 0.5, (bh, S, E)).astype(np.float32)
    v = np.zeros((bh, S, E), np.float32)
    v[:, np.arange(S), np.arange(S)] = 1.0
    scale = 1 / np.sqrt(E)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    out, _ = NA.flash_attention(*dev, scale, causal, seed=array.from_numpy(KEY, 0), p=p, tensor_cores=tensor_cores)
    y = array.to_numpy(out)[..., :S]
    keep, keep_scale = _keep(bh, L, S, p)
    visible = np.ones((L, S), bool) if not causal else np.tril(np.ones((L, S), bool))
    visible = np.broadcast_to(visible, keep.shape)
    np.testing.assert_array_equal(y != 0, keep & visible, err_msg="kept elements differ from NumPy's Philox mask")
    assert not array.to_numpy(out)[..., S:].any(), "columns past S must be 0"
    rate = keep[visible].mean()
    assert abs(rate - (1 - p)) < 5 * np.sqrt(p * (1 - p) / visible.sum()), f"keep rate {rate}, want {1 - p}"
    s = np.einsum("bld,bsd->bls", q.astype(np.float64), k.astype(np.float64)) * scale
    s = np.where(visible, s, -np.inf)
    probs = np.exp(s - s.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(y[keep & visible], probs[keep & visible] * keep_scale, rtol=1e-5,
                               err_msg="kept weights must be P / (1 - p), P the softmax before dropout")


def test_native_dropout_needs_rung_1b():
    array, NA = _native()
    x = array.from_numpy(np.zeros((1, 8, 32), np.float32), 0)
    seed = array.from_numpy(KEY, 0)
    with pytest.raises(ValueError, match="rung 1b"):
        NA.flash_attention(x, x, x, 0.1, False, tiled=False, seed=seed, p=0.5)
    with pytest.raises(ValueError, match="seed"):
        NA.flash_attention(x, x, x, 0.1, False, p=0.5)


# ---- the public function: flash with dropout == the fused decomposition with dropout ---------------
def _sdpa(arrays, w, p, causal, flash, seed=11):
    """Output and gradients of sum(out * w) after manual_seed(seed), flash on or off."""
    q, k, v = (mt.tensor(a, device="cuda", requires_grad=True) for a in arrays)
    before = backends.cuda.flash_sdp_enabled()
    backends.cuda.enable_flash_sdp(flash)
    try:
        assert A._flash_applies(q, k, v, None, p) is flash, f"flash={flash}: the wrong path would run"
        mt.manual_seed(seed)
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
        (out * mt.tensor(w, device="cuda")).sum().backward()
    finally:
        backends.cuda.enable_flash_sdp(before)
    return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (q, k, v)]


def _arrays(rng, L, S, E):
    q = rng.uniform(-1, 1, (2, 3, L, E)).astype(np.float32)
    k, v = (rng.uniform(-1, 1, (2, 3, S, E)).astype(np.float32) for _ in range(2))
    return (q, k, v), rng.standard_normal((2, 3, L, E)).astype(np.float32)


@pytest.mark.parametrize("p", [0.2, 0.9])
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("L,S,causal", [(1, 1, False), (65, 129, False), (129, 63, False), (257, 257, True),
                                        (100, 100, True)])
def test_flash_dropout_matches_fused_decomposition(rng, L, S, E, causal, p):
    arrays, w = _arrays(rng, L, S, E)
    flash = _sdpa(arrays, w, p, causal, True)
    fused = _sdpa(arrays, w, p, causal, False)
    tol = 1e-4 / (1 - p)            # float32 on both sides; a wrongly dropped element costs O(0.1)
    for name, a, b in zip(("out", "dq", "dk", "dv"), flash, fused):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=tol if name == "out" else 10 * tol,
                                   err_msg=f"flash vs fused {name}, L={L} S={S} E={E} causal={causal} p={p}")


def test_flash_dropout_repeats_with_manual_seed(rng):
    arrays, w = _arrays(rng, 70, 70, 64)
    a = _sdpa(arrays, w, 0.3, True, True, seed=5)
    b = _sdpa(arrays, w, 0.3, True, True, seed=6)
    c = _sdpa(arrays, w, 0.3, True, True, seed=5)
    for name, x, y in zip(("out", "dq", "dk", "dv"), a, c):
        np.testing.assert_array_equal(x, y, err_msg=f"{name} must repeat after the same manual_seed")
    assert not np.array_equal(a[0], b[0]), "another seed must drop other elements"


def test_flash_dropout_one_gives_zeros(rng):
    arrays, w = _arrays(rng, 65, 65, 32)
    for name, x in zip(("out", "dq", "dk", "dv"), _sdpa(arrays, w, 1.0, False, True)):
        np.testing.assert_array_equal(x, 0, err_msg=f"p = 1: {name} must be 0")


def test_half_flash_keeps_dropout_off(rng):
    """bfloat16 / float16 flash has no dropout: those take the decomposition."""
    q = mt.tensor(rng.standard_normal((2, 33, 64)).astype(np.float16), device="cuda")
    assert not A._flash_applies(q, q, q, None, 0.1, 0.125)
    assert A._flash_applies(q, q, q, None, 0.0, 0.125)


def test_dispatch_passes_dropout_to_the_flash_kernels(rng, monkeypatch):
    from minitorch.native import cuda as native
    calls = []
    for name in ("flash_attention", "flash_attention_backward"):
        real = getattr(native, name)
        monkeypatch.setattr(native, name, lambda *a, _real=real, _name=name, **kw: calls.append((_name, kw["p"]))
                            or _real(*a, **kw))
    q = mt.tensor(rng.standard_normal((2, 33, 64)).astype(np.float32), device="cuda").requires_grad_(True)
    F.scaled_dot_product_attention(q, q, q, dropout_p=0.25, is_causal=True).sum().backward()
    assert calls == [("flash_attention", 0.25), ("flash_attention_backward", 0.25)], (
        f"float32 attention with dropout on cuda must run the flash forward then backward with p, ran {calls}")
