"""Phase 07 (issue 15): rung 1c of the attention ladder, float32 FlashAttention forward and backward
on TF32 tensor cores as 3xTF32 (minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu), and its dispatch.

3xTF32's point is float32 accuracy at tensor-core speed, so every case measures the largest |error|
against float64 of rung 1c AND of rung 1b (FFMA, 01b_flash_fp32_tiled.cu) on the same inputs and
asserts rung 1c's within FACTOR times rung 1b's (or times float32's rounding of the result, whichever
is larger: a case rung 1b gets exactly right, one key, must not demand exactness). The very same
kernels with one TF32 mma per product (TF32_TERMS=1, ~1e-3 off) must fail that bound: the check can
fail. Lengths straddle the tiles (forward 128 query rows x 64 keys, backward 128 rows x 32
per step; 16 rows per warp), head dims 32, 64, 128, causal and not, S != L, a running max that
climbs, the rungs mixed (one's forward, the other's backward), the backward both ways (one pass with dq by
float32 atomics, the default; dK/dV then dQ, deterministic), the GPT's strided head views (read in
place, results in [B, T, H, D] memory) through F.scaled_dot_product_attention, and the switch that
forces rung 1b, dropout (rung 1c equals rung 1b, which tests/test_flash_dropout.py checks against
NumPy's mask; its native cases run both rungs too). Outputs come from a poisoned allocator (NaN
bytes): an element the kernels never write fails.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import backends
from test_flash_strided import _count_launches, _gpt_heads   # the GPT's head views; kernel names launched

cuda = pytest.mark.cuda
FACTOR = 8                     # rung 1c's error may be this many times rung 1b's (1xTF32: hundreds of times)
EPS32 = 2.0 ** -23             # float32's spacing at 1


def _native():
    if not mt.cuda.is_available():
        pytest.skip("needs CuPy and a CUDA GPU")
    from minitorch.cuda import array
    from minitorch.native.cuda import attention as NA
    return array, NA


def _inputs(rng, bh, L, S, E):
    q = (2 * rng.uniform(-2, 2, (bh, L, E))).astype(np.float32)     # sharp rows: the running max moves
    k, v = (rng.uniform(-2, 2, (bh, S, E)).astype(np.float32) for _ in range(2))
    return q, k, v


def _reference(q, k, v, scale, causal):
    """float64 output and natural log-sum-exp; q [..., L, d], k, v [..., S, d]."""
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - mx)
    return e / e.sum(-1, keepdims=True) @ v.astype(np.float64), (mx + np.log(e.sum(-1, keepdims=True)))[..., 0]


def _max_error(ours, want):
    ours = np.asarray(ours, np.float64)
    return float("inf") if not np.isfinite(ours).all() else float(np.abs(ours - want).max())


def _errors(NA, array, q, k, v, scale, causal):
    """Max |error| vs float64 of out and lse for rung 1c (3 terms), rung 1c with 1 term, rung 1b."""
    want, want_lse = _reference(q, k, v, scale, causal)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    errs = {}
    for name, kw in (("3xtf32", {}), ("1xtf32", {"tf32_terms": 1}), ("ffma", {"tensor_cores": False})):
        out, lse = NA.flash_attention(*dev, scale, causal, **kw)
        errs[name] = (_max_error(array.to_numpy(out), want), _max_error(array.to_numpy(lse), want_lse))
    return errs, float(np.abs(want).max()), float(np.abs(want_lse).max())


def _bound(err_ffma, magnitude, length=1):
    """What rung 1c may be off: FACTOR times rung 1b's error, or times float32's rounding of a dot
    product of ``length`` terms of this magnitude (errors grow as sqrt(length)), whichever is larger.
    The floor matters where the exact result cancels to ~0 (a single key: dS = P (dP - delta) = 0, so
    dq and dk are rounding noise of O(1) terms, where rung 1b's error can happen to be tiny)."""
    return FACTOR * max(err_ffma, EPS32 * magnitude * np.sqrt(length))


def _grad_bound(err_ffma, mags, E, L, S):
    """What rung 1c's dq, dk or dv may be off: :func:`_bound` with the largest gradient's magnitude and
    the longest sum a gradient element goes through: E terms in a score, S keys in the forward's O, l
    and lse (so in delta and the recomputed P) and in dq = sum over keys of dS K, L queries in dk, dv.
    With S = 520 (E = 32) rung 1c's dk was 15x rung 1b's 2.4e-6 on the H100 (dq 11x), the one-pass and
    the deterministic backward alike, on rung 1b's forward 3.5x: the error comes through the forward's
    lse and O, whose 3xTF32 scores may be up to 12x less exact than FFMA's (3 x 2^-22 a product against
    2^-24), where rung 1b's error happened to be small; the float32 floor over 520 terms (7.8e-6 x 8)
    covers it. 1xTF32 (1.3e-3 there) misses this bound too (test_one_tf32_term_fails_the_backward_bound)."""
    return _bound(err_ffma, max(mags), max(E, L, S))


def _needs_3xtf32(NA, E):
    if not NA._has_3xtf32(E, 0):
        pytest.skip("rung 1c needs sm_80+ and its shared memory")


#          BH   L    S    causal
SHAPES = [(5, 1, 1, False), (3, 1, 65, False), (2, 63, 1, False), (3, 127, 129, False), (3, 129, 127, False),
          (2, 300, 300, True), (2, 65, 257, True), (1, 513, 513, True)]
# the backward's: key blocks past every query (causal, L < S) and query blocks past S
BWD_SHAPES = [(5, 1, 1, False), (2, 63, 1, False), (3, 127, 129, False), (3, 129, 127, False), (2, 300, 300, True),
              (2, 65, 257, True), (2, 300, 129, True), (2, 77, 520, False)]


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("bh,L,S,causal", SHAPES)
def test_3xtf32_error_within_a_factor_of_ffma(rng, bh, L, S, causal, E):
    """Rung 1c's out and lse vs float64: within FACTOR of rung 1b's error on the same inputs."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    errs, mag, mag_lse = _errors(NA, array, *_inputs(rng, bh, L, S, E), 1 / np.sqrt(E), causal)
    what = f"BH={bh} L={L} S={S} E={E} causal={causal}: errors (out, lse) {errs}"
    assert errs["3xtf32"][0] <= _bound(errs["ffma"][0], mag), f"3xTF32 output not float32-accurate, {what}"
    assert errs["3xtf32"][1] <= _bound(errs["ffma"][1], mag_lse), f"3xTF32 log-sum-exp not float32-accurate, {what}"


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_one_tf32_term_fails_the_bound(rng, E, causal):
    """The check above can fail: the same kernel with plain TF32 products (TF32_TERMS=1) is far
    outside it, and still right to TF32's ~1e-3 (so the bound measures precision, not a broken kernel)."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    errs, mag, _ = _errors(NA, array, *_inputs(rng, 2, 200, 200, E), 1 / np.sqrt(E), causal)
    assert errs["1xtf32"][0] > 10 * _bound(errs["ffma"][0], mag), f"1xTF32 must miss the 3xTF32 bound: {errs}"
    assert errs["1xtf32"][0] < 2e-2, f"1xTF32 is TF32-accurate, not wrong: {errs}"


def _grad_errors(NA, array, q, k, v, w, scale, causal):
    """Max |error| of dq, dk, dv vs float64 torch (gradients of sum(out * w)) for each rung's backward
    on its own forward (rung 1c with 3 terms and 1, one pass and deterministic; rung 1b), and rung
    1c's on rung 1b's forward."""
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    out = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale)
    (out * torch.tensor(w, dtype=torch.float64)).sum().backward()
    want = [t.grad.numpy() for t in (tq, tk, tv)]
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    g = array.from_numpy(w, 0)
    errs, got = {}, {}
    for name, fwd, bwd in (("3xtf32", {}, {}), ("3x_det", {}, {"deterministic": True}),
                           ("1xtf32", {"tf32_terms": 1}, {"tf32_terms": 1}),
                           ("ffma", {"tensor_cores": False}, {"tensor_cores": False}),
                           ("mixed", {"tensor_cores": False}, {})):
        out, lse = NA.flash_attention(*dev, scale, causal, **fwd)
        got[name] = [array.to_numpy(x) for x in NA.flash_attention_backward(*dev, out, lse, g, scale, causal, **bwd)]
        errs[name] = [_max_error(x, ref) for x, ref in zip(got[name], want)]
    return errs, [float(np.abs(ref).max()) for ref in want], want, got


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("bh,L,S,causal", BWD_SHAPES)
def test_3xtf32_backward_error_within_a_factor_of_ffma(rng, bh, L, S, causal, E):
    """Rung 1c's dq, dk, dv vs float64: within FACTOR of rung 1b's error on the same inputs on its own
    forward, by the one-pass backward and by the deterministic one; on rung 1b's forward (mixed), to
    float32-level tolerances."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    q, k, v = _inputs(rng, bh, L, S, E)
    w = rng.standard_normal(q.shape).astype(np.float32)
    errs, mags, want, got = _grad_errors(NA, array, q, k, v, w, 1 / np.sqrt(E), causal)
    what = f"BH={bh} L={L} S={S} E={E} causal={causal}: errors (dq, dk, dv) {errs}"
    for rung in ("3xtf32", "3x_det"):
        for i, name in enumerate(("dq", "dk", "dv")):
            bound = _grad_bound(errs["ffma"][i], mags, E, L, S)
            assert errs[rung][i] <= bound, f"{rung} {name} not float32-accurate (bound {bound:.3g}), {what}"
    # Mixed (never dispatched: the backward follows the forward's rung): rung 1c recomputes P from its own
    # S against rung 1b's lse, so the two S's rounding differences (~2^-21 |S|) no longer cancel as they
    # do within one rung (H100: up to ~9x rung 1b's error, 3x rung 1c's own): held to float32-level
    # tolerances against float64, as rung 1b's suite holds its mixed case.
    for x, ref, name in zip(got["mixed"], want, ("dq", "dk", "dv")):
        np.testing.assert_allclose(x, ref, rtol=1e-4, atol=1e-4, err_msg=f"3xTF32 {name} on rung 1b's forward, {what}")


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_one_tf32_term_fails_the_backward_bound(rng, E, causal):
    """The backward's check can fail too: plain TF32 products (TF32_TERMS=1) miss it, by far (10x the
    bound of each gradient's own magnitude), and miss the bound of the accuracy test above."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    L = S = 150
    q, k, v = _inputs(rng, 2, L, S, E)
    w = rng.standard_normal(q.shape).astype(np.float32)
    errs, mags, _, _ = _grad_errors(NA, array, q, k, v, w, 1 / np.sqrt(E), causal)
    for i, name in enumerate(("dq", "dk", "dv")):
        assert errs["1xtf32"][i] > 10 * _bound(errs["ffma"][i], mags[i]), f"1xTF32 {name} must miss the bound: {errs}"
        bound = _grad_bound(errs["ffma"][i], mags, E, L, S)
        assert errs["1xtf32"][i] > bound, f"1xTF32 {name} must miss the accuracy test's bound {bound:.3g}: {errs}"


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_onepass_backward_matches_deterministic(rng, E, causal):
    """The one-pass backward (dq by atomics from 3 key blocks of 128) and the deterministic one: dk, dv
    from the same code (to float32 rounding), dq from other products (dS K from dS^T's block vs Q's
    block) to float32 level; the deterministic one twice: the same bits."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    q, k, v = _inputs(rng, 2, 97, 300, E)
    w = rng.standard_normal(q.shape).astype(np.float32)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    g = array.from_numpy(w, 0)
    out, lse = NA.flash_attention(*dev, 1 / np.sqrt(E), causal)
    runs = [[array.to_numpy(x) for x in NA.flash_attention_backward(*dev, out, lse, g, 1 / np.sqrt(E), causal,
                                                                     deterministic=det)]
            for det in (False, True, True)]
    what = f"E={E} causal={causal}"
    for name, a, b, tol in zip(("dq", "dk", "dv"), runs[0], runs[1], (1e-4, 1e-5, 1e-5)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"one pass vs deterministic: {name}, {what}")
    for name, a, b in zip(("dq", "dk", "dv"), runs[1], runs[2]):
        np.testing.assert_array_equal(a, b, err_msg=f"deterministic backward, two runs: {name}, {what}")


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("causal", [False, True])
def test_3xtf32_running_max_climbs_across_tiles(rng, causal):
    """Keys grow along S, so each row's max moves up tile after tile (scores reach ~60 in base e): a
    missing or doubled rescaling of O or l shows. A negative scale too."""
    array, NA = _native()
    _needs_3xtf32(NA, 64)
    L = S = 300
    q = rng.uniform(0.5, 1.0, (2, L, 64)).astype(np.float32)
    k = (rng.uniform(0.5, 1.0, (2, S, 64)) * np.linspace(0.1, 8.0, S)[:, None]).astype(np.float32)
    v = rng.standard_normal((2, S, 64)).astype(np.float32)
    for scale in (0.125, -0.125):
        errs, mag, mag_lse = _errors(NA, array, q, k, v, scale, causal)
        assert errs["3xtf32"][0] <= _bound(errs["ffma"][0], mag), f"output, scale {scale}: {errs}"
        assert errs["3xtf32"][1] <= _bound(errs["ffma"][1], mag_lse), f"log-sum-exp, scale {scale}: {errs}"


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
def test_3xtf32_strided_heads_and_layout(rng):
    """4-D q, k, v (and the gradient) read through their strides (q transposed out of [B, L, H, E]; k
    sliced; v broadcast over the heads) give what the same values contiguous give, and out, dq, dk, dv
    lie in memory as [B, len, H, E]."""
    array, NA = _native()
    _needs_3xtf32(NA, 64)
    B, H, L, S, E = 2, 3, 129, 67, 64
    qb = rng.standard_normal((B, L, H, E)).astype(np.float32)
    kb = rng.standard_normal((B, H, S + 5, E)).astype(np.float32)
    vb = rng.standard_normal((B, 1, S, E)).astype(np.float32)
    q = array.from_numpy(qb, 0).transpose(0, 2, 1, 3)
    k = array.from_numpy(kb, 0)[:, :, 3:3 + S]
    v = array.from_numpy(vb, 0).as_strided((B, H, S, E), (vb.strides[0], 0, vb.strides[2], vb.strides[3]))
    assert all(NA.rows_aligned(x) for x in (q, k, v)) and not q.c_contiguous
    dense = [np.ascontiguousarray(x) for x in (qb.transpose(0, 2, 1, 3), kb[:, :, 3:3 + S],
                                                 np.broadcast_to(vb, (B, H, S, E)))]
    gb = rng.standard_normal((B, L, H, E)).astype(np.float32)
    g = array.from_numpy(gb, 0).transpose(0, 2, 1, 3)
    dense = [array.from_numpy(x, 0) for x in dense]
    g2 = array.from_numpy(np.ascontiguousarray(gb.transpose(0, 2, 1, 3)), 0)

    def host(a):             # [B, H, len, E] in [B, len, H, E] memory, as NumPy [B, len, H, E]
        assert a.transpose(0, 2, 1, 3).c_contiguous, "results must lie in memory as [B, len, H, E]"
        return array.to_numpy(a.transpose(0, 2, 1, 3))
    for causal in (False, True):
        out, lse = NA.flash_attention(q, k, v, 0.125, causal)
        out2, lse2 = NA.flash_attention(*dense, 0.125, causal)
        np.testing.assert_array_equal(host(out), host(out2), err_msg=f"strided vs contiguous, causal={causal}")
        np.testing.assert_array_equal(array.to_numpy(lse), array.to_numpy(lse2))
        grads = NA.flash_attention_backward(q, k, v, out, lse, g, 0.125, causal)
        grads2 = NA.flash_attention_backward(*dense, out2, lse2, g2, 0.125, causal)
        for name, a, b in zip("qkv", grads, grads2):
            np.testing.assert_array_equal(host(a), host(b), err_msg=f"d{name} strided vs contiguous, causal={causal}")


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 128])
@pytest.mark.parametrize("bh,L,S,causal", [(2, 65, 129, False), (2, 130, 130, True), (1, 200, 77, True)])
def test_3xtf32_dropout_matches_ffma(rng, bh, L, S, causal, E):
    """Dropout 0.3 with one Philox key: rung 1c's output and gradients equal rung 1b's (which
    tests/test_flash_dropout.py checks against NumPy's mask) to float32 level: both drop the same
    elements (a keep bit read at the wrong place moves a value by O(1))."""
    array, NA = _native()
    _needs_3xtf32(NA, E)
    q, k, v = _inputs(rng, bh, L, S, E)
    w = rng.standard_normal(q.shape).astype(np.float32)
    dev = [array.from_numpy(x, 0) for x in (q, k, v)]
    g = array.from_numpy(w, 0)
    seed = array.from_numpy(np.array([0x0123456789ABCDEF], dtype=np.uint64), 0)
    runs = {}
    for tensor_cores in (True, False):
        kw = dict(seed=seed, p=0.3, tensor_cores=tensor_cores)
        out, lse = NA.flash_attention(*dev, 1 / np.sqrt(E), causal, **kw)
        grads = NA.flash_attention_backward(*dev, out, lse, g, 1 / np.sqrt(E), causal, **kw)
        runs[tensor_cores] = [array.to_numpy(x) for x in (out, lse, *grads)]
    what = f"BH={bh} L={L} S={S} E={E} causal={causal}"
    for name, a, b in zip(("out", "lse", "dq", "dk", "dv"), runs[True], runs[False]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=f"rung 1c vs 1b with dropout: {name}, {what}")


@cuda
def test_tf32_terms_must_be_1_or_3():
    array, NA = _native()
    x = array.from_numpy(np.zeros((1, 8, 32), np.float32), 0)
    with pytest.raises(ValueError, match="tf32_terms"):
        NA.flash_attention(x, x, x, 0.1, False, tf32_terms=2)


# ---- the public function: dispatch, the switch, the GPT's head views, the backward --------------------
def _sdpa(xs, ws, B, T, H, E, causal, tensor_cores, deterministic=False):
    """out, the gradient of sum(out * w) w.r.t. the [B, T, 3C] input, and the flash kernels launched,
    with backends.cuda.enable_flash_3xtf32_sdp(tensor_cores) and use_deterministic_algorithms(deterministic)."""
    before = backends.cuda.flash_3xtf32_sdp_enabled(), mt.are_deterministic_algorithms_enabled()
    backends.cuda.enable_flash_3xtf32_sdp(tensor_cores)
    mt.use_deterministic_algorithms(deterministic)
    try:
        x = mt.tensor(xs.astype(np.float32), device="cuda").requires_grad_(True)
        w = mt.tensor(ws.astype(np.float32), device="cuda")
        with pytest.MonkeyPatch.context() as mp:
            names = _count_launches(mp)
            out = F.scaled_dot_product_attention(*_gpt_heads(x, B, T, H, E), is_causal=causal)
            (out * w).sum().backward()
        assert out.transpose(1, 2).is_contiguous(), "O must lie in memory as [B, T, H, E]"
        return out.detach().cpu().numpy(), x.grad.cpu().numpy(), [n for n in names if n.startswith("flash_")]
    finally:
        backends.cuda.enable_flash_3xtf32_sdp(before[0])
        mt.use_deterministic_algorithms(before[1])


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("T", [1, 131])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_gpt_heads_3xtf32_vs_ffma_and_float64(rng, E, T, causal):
    """F.scaled_dot_product_attention on the GPT's strided head views: rung 1c by default, rung 1b
    with the switch off; both vs torch float64, rung 1c's output and input gradient within FACTOR of
    rung 1b's errors."""
    _, NA = _native()
    _needs_3xtf32(NA, E)
    B, H = 2, 2
    xs = rng.uniform(-2, 2, (B, T, 3 * H * E))
    ws = rng.standard_normal((B, H, T, E))
    out_c, gx_c, names_c = _sdpa(xs, ws, B, T, H, E, causal, True)
    out_b, gx_b, names_b = _sdpa(xs, ws, B, T, H, E, causal, False)
    assert names_c == [f"flash_fwd_3xtf32_f32_d{E}", f"flash_bwd_dot_tiled_f32_d{E}",
                       f"flash_bwd_onepass_3xtf32_f32_d{E}"], names_c
    assert names_b == [f"flash_{n}_tiled_f32_d{E}" for n in ("fwd", "bwd_dot", "bwd_dkdv", "bwd_dq")], names_b
    tx = torch.tensor(xs, requires_grad=True)
    want = TF.scaled_dot_product_attention(*_gpt_heads(tx, B, T, H, E), is_causal=causal)
    (want * torch.tensor(ws)).sum().backward()
    want = want.detach().numpy()
    what = f"T={T} E={E} causal={causal}"
    for name, c, b, ref in (("output", out_c, out_b, want), ("input gradient", gx_c, gx_b, tx.grad.numpy())):
        err_c, err_b = _max_error(c, ref), _max_error(b, ref)
        assert err_c <= _bound(err_b, np.abs(ref).max(), E), f"{name} error 3xTF32 {err_c:.3g} vs FFMA {err_b:.3g}, {what}"
        assert err_b < 1e-3, f"{name} error of rung 1b {err_b:.3g}, {what}"


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [64, 128])
def test_sdpa_deterministic_backward(rng, E):
    """use_deterministic_algorithms(True): rung 1c's backward runs dK/dV then dQ (no atomics), the same
    bits twice, and the one-pass default's values to float32 level."""
    _, NA = _native()
    _needs_3xtf32(NA, E)
    B, H, T = 2, 2, 300                                        # 3 key blocks add into each row of dq
    xs = rng.uniform(-2, 2, (B, T, 3 * H * E))
    ws = rng.standard_normal((B, H, T, E))
    runs = [_sdpa(xs, ws, B, T, H, E, True, True, deterministic) for deterministic in (True, True, False)]
    assert runs[0][2] == [f"flash_{n}_f32_d{E}" for n in ("fwd_3xtf32", "bwd_dot_tiled", "bwd_dkdv_3xtf32",
                                                           "bwd_dq_3xtf32")], runs[0][2]
    np.testing.assert_array_equal(runs[0][1], runs[1][1], err_msg="deterministic input gradient, two runs")
    np.testing.assert_allclose(runs[0][1], runs[2][1], rtol=1e-4, atol=1e-4, err_msg="deterministic vs one pass")


def test_switch_takes_bools_only():
    assert backends.cuda.flash_3xtf32_sdp_enabled() is True, "3xTF32 is the default"
    with pytest.raises(TypeError, match="bool"):
        backends.cuda.enable_flash_3xtf32_sdp(1)
    backends.cuda.enable_flash_3xtf32_sdp(False)
    try:
        assert backends.cuda.flash_3xtf32_sdp_enabled() is False
    finally:
        backends.cuda.enable_flash_3xtf32_sdp(True)
