"""Phase 07: rung 1b of the attention ladder, the float32 FlashAttention forward and backward with
register tiling (minitorch/cuda/attention/01b_flash_fp32_tiled.cu), against float64 references and
against rung 1 (01_flash_fp32.cu).

Its tiles are 128 query rows by 64 keys, so the lengths below sit on both sides of them (1, 63, 65,
127, 129, 257, 300, 513); head dims 32, 64, 128; causal and not; S != L; batch * heads > 1; the
two rungs mixed (one's forward, the other's backward: the log-sum-exp is the same quantity).
Outputs come from a poisoned allocator (NaN bytes), so an element the kernel never writes fails.
The first test also runs on cpu (the decomposition): both devices answer the same cases.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F

LENGTHS = [1, 63, 65, 257]
OTHER_S = {1: 65, 63: 1, 65: 300, 257: 129}       # S for non-causal cases with S != L


def _reference(q, k, v, w, causal, scale):
    """float64 output, natural log-sum-exp and gradients of sum(out * w) (torch autograd, cpu)."""
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    out = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale)
    (out * torch.tensor(w, dtype=torch.float64)).sum().backward()
    s = np.einsum("...ld,...sd->...ls", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    lse = (mx + np.log(np.exp(s - mx).sum(-1, keepdims=True)))[..., 0]
    return out.detach().numpy(), lse, [t.grad.numpy() for t in (tq, tk, tv)]


def _inputs(rng, bh, L, S, E):
    q = (2 * rng.uniform(-2, 2, (*bh, L, E))).astype(np.float32)     # sharp rows: the running max moves
    k, v = (rng.uniform(-2, 2, (*bh, S, E)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((*bh, L, E)).astype(np.float32)
    return q, k, v, w


@pytest.mark.usefixtures("poisoned_allocator_on_cuda")
@pytest.mark.parametrize("L", LENGTHS)
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_float32_matches_float64(device, rng, L, E, causal):
    """F.scaled_dot_product_attention in float32 (cuda: the flash path, rung 1b forward and backward)."""
    S = L if causal else OTHER_S[L]
    q, k, v, w = _inputs(rng, (2, 2), L, S, E)
    scale = 1 / np.sqrt(E)
    leaves = [mt.tensor(x, device=device).requires_grad_(True) for x in (q, k, v)]
    if device == "cuda":
        from minitorch.ops import attention as A
        assert A._flash_applies(*leaves, None, 0.0), "this case must take the flash path"
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    (out * mt.tensor(w, device=device)).sum().backward()
    want, _, grads = _reference(q, k, v, w, causal, scale)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want, rtol=1e-4, atol=1e-4,
                               err_msg=f"output, L={L} S={S} E={E} causal={causal}")
    for name, t, g in zip("qkv", leaves, grads):
        np.testing.assert_allclose(t.grad.cpu().numpy(), g, rtol=1e-3, atol=1e-3,
                                   err_msg=f"gradient of {name}, L={L} S={S} E={E} causal={causal}")


# ---- the native launcher, cuda only -----------------------------------------------------------------
def _native():
    if not mt.cuda.is_available():
        pytest.skip("needs CuPy and a CUDA GPU")
    from minitorch.cuda import array
    from minitorch.native.cuda import attention as NA
    return array, NA


#          BH   L    S    causal
SHAPES = [(5, 1, 1, False), (3, 127, 129, False), (3, 129, 127, False), (2, 300, 300, True),
          (2, 128, 128, True), (2, 65, 257, True), (2, 300, 129, True), (4, 257, 64, False),
          (1, 513, 513, True)]


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("bh,L,S,causal", SHAPES)
def test_tiled_forward_output_and_lse(rng, bh, L, S, causal, E):
    """Rung 1b's out and lse against float64 and against rung 1 (the same quantities, ~1e-6 apart)."""
    array, NA = _native()
    q, k, v, w = _inputs(rng, (bh,), L, S, E)
    scale = 1 / np.sqrt(E)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    out, lse = (array.to_numpy(a) for a in NA.flash_attention(*dev, scale, causal, tensor_cores=False))
    out1, lse1 = (array.to_numpy(a) for a in NA.flash_attention(*dev, scale, causal, tiled=False))
    want, want_lse, _ = _reference(q, k, v, w, causal, scale)
    what = f"BH={bh} L={L} S={S} E={E} causal={causal}"
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4, err_msg=f"tiled output, {what}")
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-4, err_msg=f"tiled log-sum-exp, {what}")
    np.testing.assert_allclose(out, out1, rtol=1e-4, atol=1e-5, err_msg=f"tiled vs rung 1 output, {what}")
    np.testing.assert_allclose(lse, lse1, rtol=1e-5, atol=1e-5, err_msg=f"tiled vs rung 1 lse, {what}")


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("bh,L,S,causal", SHAPES)
def test_tiled_backward_gradients(rng, bh, L, S, causal, E):
    """Rung 1b's dQ, dK, dV (from rung 1b's forward) against float64 and against rung 1's backward
    fed rung 1's forward; and rung 1b's backward fed rung 1's forward (the rungs mix)."""
    array, NA = _native()
    q, k, v, w = _inputs(rng, (bh,), L, S, E)
    scale = 1 / np.sqrt(E)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    g = array.from_numpy(w, 0)
    _, _, want = _reference(q, k, v, w, causal, scale)
    runs = {}
    for fwd, bwd in ((True, True), (False, False), (False, True)):
        out, lse = NA.flash_attention(*dev, scale, causal, tiled=fwd, tensor_cores=False)
        grads = NA.flash_attention_backward(*dev, out, lse, g, scale, causal, tiled=bwd, tensor_cores=False)
        runs[fwd, bwd] = [array.to_numpy(x) for x in grads]
    what = f"BH={bh} L={L} S={S} E={E} causal={causal}"
    for name, ours, ref, rung1, mixed in zip("qkv", runs[True, True], want, runs[False, False], runs[False, True]):
        np.testing.assert_allclose(ours, ref, rtol=1e-3, atol=1e-3, err_msg=f"tiled d{name}, {what}")
        np.testing.assert_allclose(ours, rung1, rtol=1e-3, atol=1e-4, err_msg=f"tiled vs rung 1 d{name}, {what}")
        np.testing.assert_allclose(mixed, rung1, rtol=1e-3, atol=1e-4,
                                   err_msg=f"rung 1b backward on rung 1's forward, d{name}, {what}")


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_running_max_climbs_across_tiles(rng, causal):
    """Keys grow along S, so each row's max moves up tile after tile (and scores reach ~60 in base e):
    a missing or doubled rescaling of O or l by exp(m - m') shows. A negative scale too."""
    array, NA = _native()
    L = S = 300
    q = rng.uniform(0.5, 1.0, (2, L, 64)).astype(np.float32)
    k = (rng.uniform(0.5, 1.0, (2, S, 64)) * np.linspace(0.1, 8.0, S)[:, None]).astype(np.float32)
    v = rng.standard_normal((2, S, 64)).astype(np.float32)
    for scale in (0.125, -0.125):
        out, lse = (array.to_numpy(a) for a in NA.flash_attention(*(array.from_numpy(x, 0) for x in (q, k, v)),
                                                                   scale, causal, tensor_cores=False))
        want, want_lse, _ = _reference(q, k, v, np.zeros_like(q), causal, scale)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4, err_msg=f"output, scale {scale}")
        np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-4, err_msg=f"log-sum-exp, scale {scale}")


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
def test_misaligned_inputs_fall_back_to_rung_1(rng):
    """A contiguous view 4 bytes past an aligned address cannot be copied in 16-byte pieces: the
    launchers must take rung 1 and still be right, forward and backward."""
    array, NA = _native()
    bh, L, E = 2, 70, 32
    q, k, v, w = _inputs(rng, (bh,), L, L, E)

    def shifted(x):
        flat = array.from_numpy(np.concatenate([[0.0], x.ravel()]).astype(np.float32), 0)
        view = flat.as_strided(x.shape, x.strides, offset=4)
        assert view.c_contiguous and view.ptr % 16 == 4
        return view
    dev = [shifted(x) for x in (q, k, v)]
    out, lse = NA.flash_attention(*dev, 1 / np.sqrt(E), True)
    grads = NA.flash_attention_backward(*dev, out, lse, shifted(w), 1 / np.sqrt(E), True)
    want, want_lse, want_grads = _reference(q, k, v, w, True, 1 / np.sqrt(E))
    np.testing.assert_allclose(array.to_numpy(out), want, rtol=1e-4, atol=1e-4, err_msg="misaligned output")
    np.testing.assert_allclose(array.to_numpy(lse), want_lse, rtol=1e-5, atol=1e-4, err_msg="misaligned log-sum-exp")
    for name, ours, ref in zip("qkv", grads, want_grads):
        np.testing.assert_allclose(array.to_numpy(ours), ref, rtol=1e-3, atol=1e-3, err_msg=f"misaligned d{name}")
