"""Phase 07: FlashAttention-2 in bfloat16 / float16 on tensor cores (minitorch/cuda/attention/02_flash_mma.cu),
forward and gradients, against float64 references.

Inputs are drawn in float64, rounded to bf16/fp16 once, and the references computed from those rounded
values (torch's SDPA in float64, our own decomposition in float64 on cpu, and torch's SDPA in float32 on
the upcast inputs), so the only differences left are the kernel's: P (and dS) rounded to the input type
before their mma, float32 sums, the output rounded once. That bounds the error to a few units of the type's
roundoff relative to the values' scale; a wrong fragment, swizzle, mask or pipeline stage gives O(1)
errors. Two measures per array: the relative Frobenius error (catches widespread small bias) and the
largest element error over the largest reference element (catches one wrong row or tile).
Cases: L in {1, 17, 64, 129, 1000}, head dims 32, 64, 128, causal and not, S != L when not causal,
batch * heads > 1, every ladder configuration and tile size, inputs in the transposed layout of MHA.
Both backward paths: the one-pass kernel (dq by float32 atomics, the default) and the deterministic
one (minitorch.use_deterministic_algorithms(True)), which must repeat bit for bit.
Outputs come from a poisoned allocator (NaN bytes): an element left unwritten fails. Needs sm_80+.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt

if not mt.cuda.is_available():
    pytest.skip("needs CuPy and a CUDA GPU", allow_module_level=True)

import cupy as cp  # noqa: E402
import ml_dtypes  # noqa: E402

import minitorch.nn.functional as F  # noqa: E402
from minitorch.cuda.array import from_numpy, to_numpy  # noqa: E402
from minitorch.native import cuda as native  # noqa: E402
from minitorch.native.cuda import attention as NA  # noqa: E402
from minitorch.ops import attention as A  # noqa: E402

if int(cp.cuda.Device().compute_capability) < 80:
    pytest.skip("the tensor-core kernels need sm_80 or newer", allow_module_level=True)

DTYPES = {"bfloat16": (mt.bfloat16, ml_dtypes.bfloat16), "float16": (mt.float16, np.float16)}
# (relative Frobenius error, max element error / max |reference|): bf16 keeps 8 bits, fp16 11
TOL = {"bfloat16": {"out": (1.5e-2, 4e-2), "grad": (3e-2, 8e-2)},
       "float16": {"out": (3e-3, 8e-3), "grad": (6e-3, 2e-2)}}
LENGTHS = [1, 17, 64, 129, 1000]
OTHER = {1: 17, 17: 64, 64: 129, 129: 1000, 1000: 129}      # S for the non-causal cases (S != L)

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("poisoned_allocator")]


def _rounded(rng, shape, npdtype, lo=-2.0, hi=2.0):
    """Random values already representable in the half type, as float64."""
    return rng.uniform(lo, hi, shape).astype(npdtype).astype(np.float64)


def _inputs(rng, lead, L, S, E, npdtype):
    """q [*lead, L, E], k, v [*lead, S, E] and the upstream weights w [*lead, L, E] (the loss is
    sum(out * w)), drawn in that order by :func:`_rounded`: q, k, v in [-2, 2], w in [-1, 1]."""
    q = _rounded(rng, (*lead, L, E), npdtype)
    k, v = (_rounded(rng, (*lead, S, E), npdtype) for _ in range(2))
    w = _rounded(rng, (*lead, L, E), npdtype, -1, 1)
    return q, k, v, w


def _device(x, npdtype):
    """``x`` rounded to ``npdtype``, as a contiguous DeviceArray on GPU 0 (what the native layer takes)."""
    return from_numpy(np.ascontiguousarray(x.astype(npdtype)), 0)


def _native_grads(q, k, v, w, scale, causal, npdtype, deterministic=False, config=None, rung=None):
    """dq, dk, dv (float64) of sum(out * w) by the native forward (``rung``; None: the dispatch's
    choice) and the backward (``deterministic``, the one-pass kernel's ``config``)."""
    qd, kd, vd = (_device(x, npdtype) for x in (q, k, v))
    out, lse = native.flash_attention_mma(qd, kd, vd, scale, causal, rung=rung)
    grads = native.flash_attention_mma_backward(qd, kd, vd, out, lse, _device(w, npdtype), scale, causal,
                                                deterministic, config)
    return [to_numpy(g).astype(np.float64) for g in grads]


def _close(ours, ref, dtype, kind, what):
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    assert np.isfinite(ours).all(), f"{what}: non-finite values (an unwritten or NaN element)"
    frob_tol, max_tol = TOL[dtype][kind]
    # inputs are O(1) (uniform in [-1, 1] or [0, 1]): errors are judged against at least 1e-2 of
    # that. A gradient that is exactly 0 (L = S = 1: one key, softmax 1, so dS = dP - D = 0) comes
    # out as rounding noise (~1e-7: D is summed from the rounded output), not as 0
    floor = 1e-2
    scale = max(np.abs(ref).max(), floor)
    frob = np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), floor * np.sqrt(ref.size))
    worst = np.abs(ours - ref).max() / scale
    where = np.unravel_index(np.abs(ours - ref).argmax(), ref.shape)
    assert frob <= frob_tol and worst <= max_tol, (
        f"{what}: relative error {frob:.2e} (tolerance {frob_tol}), largest element error {worst:.2e} of the "
        f"largest value (tolerance {max_tol}) at index {where}: ours {ours[where]:.5g}, reference {ref[where]:.5g}")


def _torch_ref(q, k, v, w, causal, scale, torch_dtype):
    leaves = [torch.tensor(x, dtype=torch_dtype, requires_grad=True) for x in (q, k, v)]
    out = TF.scaled_dot_product_attention(*leaves, is_causal=causal, scale=scale)
    (out * torch.tensor(w, dtype=torch_dtype)).sum().backward()
    return [out.detach().double().numpy()] + [t.grad.double().numpy() for t in leaves]


def _decomposition_ref(q, k, v, w, causal, scale):
    """Our own decomposition (matmul, mask, softmax, matmul) in float64 on cpu."""
    leaves = [mt.tensor(x).requires_grad_(True) for x in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal, scale=scale)
    (out * mt.tensor(w)).sum().backward()
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


def _ours(q, k, v, w, causal, scale, dtype, transposed=False):
    """Output and gradients of sum(out * w) through F.scaled_dot_product_attention on cuda in `dtype`."""
    mt_dtype, npdtype = DTYPES[dtype]

    def leaf(x):
        if transposed:       # [B, L, H, E] memory seen as [B, H, L, E], the layout MHA produces
            t = mt.tensor(np.ascontiguousarray(x.transpose(0, 2, 1, 3)).astype(npdtype), device="cuda")
            return t.requires_grad_(True), t.transpose(1, 2)
        t = mt.tensor(x.astype(npdtype), device="cuda").requires_grad_(True)
        return t, t
    (lq, q_), (lk, k_), (lv, v_) = leaf(q), leaf(k), leaf(v)
    assert q_.dtype is mt_dtype
    s = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    assert A._flash_applies(q_, k_, v_, None, 0.0, s), "this case must take the tensor-core flash path"
    out = F.scaled_dot_product_attention(q_, k_, v_, is_causal=causal, scale=scale)
    assert out.dtype is mt_dtype, f"the output must keep the input dtype {mt_dtype}, got {out.dtype}"
    (out * mt.tensor(w.astype(npdtype), device="cuda")).sum().backward()
    grads = [g.grad.cpu().numpy().astype(np.float64) for g in (lq, lk, lv)]
    if transposed:
        grads = [g.transpose(0, 2, 1, 3) for g in grads]
    return [out.detach().cpu().numpy().astype(np.float64)] + grads


def _check_all(ours, refs, dtype, label):
    for ref_name, ref in refs.items():
        for name, a, b in zip(["output", "dq", "dk", "dv"], ours, ref):
            _close(a, b, dtype, "out" if name == "output" else "grad", f"{label} {name} vs {ref_name}")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("L", LENGTHS)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_forward_and_gradients(rng, dtype, E, L, causal):
    S = L if causal else OTHER[L]
    npdtype = DTYPES[dtype][1]
    q, k, v, w = _inputs(rng, (2, 3), L, S, E, npdtype)
    ours = _ours(q, k, v, w, causal, None, dtype)
    refs = {"torch float64": _torch_ref(q, k, v, w, causal, None, torch.float64),
            "torch float32 (upcast)": _torch_ref(q, k, v, w, causal, None, torch.float32)}
    if L <= 129:        # our cpu decomposition; the large case is covered by torch's float64
        refs["our float64 decomposition"] = _decomposition_ref(q, k, v, w, causal, None)
    _check_all(ours, refs, dtype, f"{dtype} L={L} S={S} E={E} causal={causal}")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("L,S", [(17, 129), (129, 64)])       # causal with L != S: top-left aligned
def test_causal_with_unequal_lengths(rng, dtype, L, S):
    npdtype = DTYPES[dtype][1]
    q, k, v, w = _inputs(rng, (1, 2), L, S, 64, npdtype)
    ours = _ours(q, k, v, w, True, None, dtype)
    _check_all(ours, {"torch float64": _torch_ref(q, k, v, w, True, None, torch.float64)}, dtype,
               f"{dtype} causal L={L} S={S}")


@pytest.mark.parametrize("causal", [False, True])
def test_scale_and_transposed_inputs(rng, causal):
    B, H, L, S, E = 2, 4, 70, 70 if causal else 129, 64
    npdtype = ml_dtypes.bfloat16
    q, k, v, w = _inputs(rng, (B, H), L, S, E, npdtype)
    ours = _ours(q, k, v, w, causal, 0.3, "bfloat16", transposed=True)
    _check_all(ours, {"torch float64": _torch_ref(q, k, v, w, causal, 0.3, torch.float64)}, "bfloat16",
               f"bf16 scale=0.3 transposed causal={causal}")


def test_dispatch_calls_the_mma_kernels(rng, monkeypatch):
    calls = []
    for name in ("flash_attention_mma", "flash_attention_mma_backward"):
        real = getattr(native, name)
        monkeypatch.setattr(native, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    q = mt.tensor(rng.standard_normal((2, 33, 64)).astype(ml_dtypes.bfloat16), device="cuda").requires_grad_(True)
    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    assert calls == ["flash_attention_mma", "flash_attention_mma_backward"], (
        f"bf16 attention on cuda must run the tensor-core forward then backward, ran {calls}")


def test_fallbacks_take_the_decomposition(rng):
    q = mt.tensor(rng.standard_normal((2, 33, 64)).astype(np.float16), device="cuda")
    assert not A._flash_applies(q, q, q, None, 0.0, -0.5), "a negative scale must not take the tensor-core path"
    assert not A._flash_applies(q, q, q, None, 0.1, 0.125), "dropout must not take the flash path"
    odd = mt.tensor(rng.standard_normal((2, 33, 48)).astype(np.float16), device="cuda")
    assert not A._flash_applies(odd, odd, odd, None, 0.0, 0.125), "head dim 48 has no flash kernel"
    out = F.scaled_dot_product_attention(q, q, q, scale=-0.5)      # the decomposition, still right
    x = q.cpu().numpy().astype(np.float64)
    ref = TF.scaled_dot_product_attention(*(torch.tensor(x),) * 3, scale=-0.5).numpy()
    _close(out.cpu().numpy(), ref, "float16", "out", "float16 scale=-0.5 by the decomposition")


# (L, S, causal): odd lengths off the tiles; causal with S > L leaves key tiles no query sees (their
# dK, dV must be 0) and with L > S rows that see every key
BWD_CASES = [(1, 17, False), (17, 17, True), (17, 129, True), (129, 64, False), (129, 64, True),
             (333, 1000, False), (1000, 1000, True)]


@pytest.mark.parametrize("deterministic", [False, True], ids=["onepass", "deterministic"])
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("L,S,causal", BWD_CASES)
def test_both_backward_paths(rng, deterministic, dtype, E, L, S, causal):
    """The one-pass backward (dq by float32 atomics) and the deterministic one (dk/dv, then dq), called
    natively, against torch's gradients in float64 and float32 (upcast inputs), BH = 3."""
    npdtype = DTYPES[dtype][1]
    q, k, v, w = _inputs(rng, (3,), L, S, E, npdtype)
    scale = 1 / np.sqrt(E)
    ours = _native_grads(q, k, v, w, scale, causal, npdtype, deterministic)
    label = f"{'deterministic' if deterministic else 'one-pass'} {dtype} L={L} S={S} E={E} causal={causal}"
    for ref_name, torch_dtype in (("torch float64", torch.float64), ("torch float32 (upcast)", torch.float32)):
        ref = _torch_ref(q, k, v, w, causal, scale, torch_dtype)[1:]
        for name, a, b in zip(["dq", "dk", "dv"], ours, ref):
            _close(a, b, dtype, "grad", f"{label} {name} vs {ref_name}")


@pytest.mark.parametrize("keys", NA.ONEPASS_CHOICES)
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("L,S,causal", [(200, 300, False), (300, 300, True), (70, 300, True)])
def test_onepass_keys_per_block(rng, keys, E, L, S, causal):
    """The one-pass backward compiled with each choice of keys per block (config ONEPASS_KEYS: 4 or 8
    warps) against float64 gradients: several key blocks per head add into each dq row."""
    npdtype = ml_dtypes.bfloat16
    q, k, v, w = _inputs(rng, (2,), L, S, E, npdtype)
    scale = 1 / np.sqrt(E)
    grads = _native_grads(q, k, v, w, scale, causal, npdtype, config={"ONEPASS_KEYS": keys})
    ref = _torch_ref(q, k, v, w, causal, scale, torch.float64)[1:]
    for name, a, b in zip(["dq", "dk", "dv"], grads, ref):
        _close(a, b, "bfloat16", "grad", f"one-pass keys={keys} E={E} L={L} S={S} causal={causal} {name}")


def _sdpa_grads(leaves_np, w, causal, npdtype):
    """dq, dk, dv (raw bits, uint16) of sum(sdpa(q, k, v) * w) on cuda, from fresh leaves."""
    leaves = [mt.tensor(x.astype(npdtype), device="cuda").requires_grad_(True) for x in leaves_np]
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    (out * mt.tensor(w.astype(npdtype), device="cuda")).sum().backward()
    return [t.grad.cpu().numpy().view(np.uint16) for t in leaves]


@pytest.mark.parametrize("causal", [False, True])
def test_deterministic_mode_repeats_bitwise(rng, monkeypatch, causal):
    """use_deterministic_algorithms(True) selects the deterministic backward: two runs give the same
    bits (with many key tiles adding into each dq row, as in the one-pass kernel's atomics); without
    it the one-pass backward runs and agrees within rounding."""
    flags = []
    real = native.flash_attention_mma_backward
    monkeypatch.setattr(native, "flash_attention_mma_backward", lambda *a: flags.append(a[-1]) or real(*a))
    npdtype = ml_dtypes.bfloat16
    B, H, L, E = 2, 4, 1000, 64
    *qkv, w = _inputs(rng, (B, H), L, L, E, npdtype)
    mt.use_deterministic_algorithms(True)
    try:
        first = _sdpa_grads(qkv, w, causal, npdtype)
        second = _sdpa_grads(qkv, w, causal, npdtype)
    finally:
        mt.use_deterministic_algorithms(False)
    assert flags == [True, True], f"deterministic mode must ask the backend for the deterministic backward, got {flags}"
    for name, a, b in zip(["dq", "dk", "dv"], first, second):
        assert np.array_equal(a, b), f"deterministic mode: {name} differs between two runs ({(a != b).sum()} elements)"
    fast = _sdpa_grads(qkv, w, causal, npdtype)
    assert flags[-1] is False, "by default the one-pass (atomic) backward must run"
    for name, a, b in zip(["dq", "dk", "dv"], fast, first):
        _close(a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16), "bfloat16", "grad",
               f"causal={causal} {name}: one-pass vs deterministic")


LADDER_CASES = [(name, cfg) for name, cfg in NA.LADDER] + [
    (f"tiles BQ={bq} BKV={bkv}", dict(NA.TUNED, BQ=bq, BKV=bkv)) for bq, bkv in NA.TILE_CHOICES]


@pytest.mark.parametrize("name,config", LADDER_CASES, ids=[n for n, _ in LADDER_CASES])
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_ladder_step_and_tile(rng, name, config, E, causal):
    """Each compile-time configuration the notebook times computes the same forward (native call)."""
    BH, L = 3, 300
    S = L if causal else 257
    npdtype = ml_dtypes.bfloat16
    q, k, v, _ = _inputs(rng, (BH,), L, S, E, npdtype)
    scale = 1 / np.sqrt(E)
    out, lse = native.flash_attention_mma(*(_device(x, npdtype) for x in (q, k, v)), scale, causal, config)
    s = q @ k.transpose(0, 2, 1) * scale
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    ref_lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    ref = np.exp(s - ref_lse[..., None]) @ v
    _close(to_numpy(out).astype(np.float64), ref, "bfloat16", "out", f"{name} E={E} causal={causal} output")
    np.testing.assert_allclose(to_numpy(lse), ref_lse, rtol=1e-3, atol=1e-3,
                               err_msg=f"{name} E={E} causal={causal}: the saved log-sum-exp")


def test_memory_is_linear_in_length():
    L, E = 4096, 64
    q, k, v = (mt.randn(1, L, E, device="cuda", dtype=mt.bfloat16, requires_grad=True) for _ in range(3))
    mt.cuda.synchronize()
    base = mt.cuda.memory_allocated()
    mt.cuda.reset_peak_memory_stats()
    F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    mt.cuda.synchronize()
    extra = mt.cuda.max_memory_allocated() - base
    scores = L * L * 2
    assert extra < scores // 4, (f"the bf16 flash path used {extra} bytes beyond its inputs at L={L}; an [L, L] "
                                 f"bf16 score matrix alone is {scores} bytes: it must be O(L), not O(L^2)")


# ---- rung 3: the forward on Hopper's wgmma (03_flash_wgmma.cu, sm_90a only) -------------------------
needs_sm90 = pytest.mark.skipif(int(cp.cuda.Device().compute_capability) != 90,
                                reason="rung 3 (wgmma) is built for sm_90a: H100/H200 only")
WGMMA_LENGTHS = [1, 7, 65, 200, 1000]
WGMMA_OTHER = {1: 7, 7: 65, 65: 200, 200: 1000, 1000: 65}     # S for the non-causal cases (S != L)


def _reference_forward(q, k, v, scale, causal):
    """float64 output and natural log-sum-exp; q [BH, L, E], k, v [BH, S, E]."""
    s = q @ k.transpose(0, 2, 1) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    lse = np.log(np.exp(s - mx).sum(-1)) + mx[..., 0]
    return np.exp(s - lse[..., None]) @ v, lse


def _rung(q, k, v, scale, causal, dtype, rung, config=None):
    npdtype = DTYPES[dtype][1]
    out, lse = native.flash_attention_mma(*(_device(x, npdtype) for x in (q, k, v)), scale, causal, config, rung=rung)
    return to_numpy(out).astype(np.float64), to_numpy(lse)


@needs_sm90
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("E", [64, 128])
@pytest.mark.parametrize("L", WGMMA_LENGTHS)
@pytest.mark.parametrize("causal", [False, True])
def test_wgmma_forward(rng, dtype, E, L, causal):
    """Rung 3's output and log-sum-exp against float64, torch's SDPA (float32 on the same rounded
    inputs) and rung 2 on odd lengths; 3 batch-heads, so a wrong head offset shows too."""
    S = L if causal else WGMMA_OTHER[L]
    q, k, v, _ = _inputs(rng, (3,), L, S, E, DTYPES[dtype][1])
    scale = 1 / np.sqrt(E)
    out, lse = _rung(q, k, v, scale, causal, dtype, 3)
    what = f"rung 3 {dtype} E={E} L={L} S={S} causal={causal}"
    ref, ref_lse = _reference_forward(q, k, v, scale, causal)
    _close(out, ref, dtype, "out", f"{what} output vs float64")
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-3, atol=1e-3, err_msg=f"{what}: the saved log-sum-exp")
    tq, tk, tv = (torch.tensor(x, dtype=torch.float32) for x in (q, k, v))
    _close(out, TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale).double().numpy(),
           dtype, "out", f"{what} output vs torch float32")
    _close(out, _rung(q, k, v, scale, causal, dtype, 2)[0], dtype, "out", f"{what} output vs rung 2")


# (BKV, PIPELINE, NWG, E) that 03_flash_wgmma.cu's static_asserts and entry points allow (TMA = 0)
WGMMA_CONFIGS = [(bkv, pipe, nwg, e) for bkv in (64, 128) for pipe in (0, 1) for nwg in (2, 3) for e in (64, 128)
                 if nwg == 2 or (e == 64 and not (bkv == 128 and pipe))]
ODD_SHAPES = [(300, 257, False), (300, 300, True), (129, 1000, True), (1000, 129, True), (1, 1, True), (7, 1, False)]


def _check_configuration(rng, config, E, L, S, causal):
    """Rung 3 in `config` against float64 on one shape, with scale 0.3: output and log-sum-exp."""
    q, k, v, _ = _inputs(rng, (2,), L, S, E, ml_dtypes.bfloat16)
    out, lse = _rung(q, k, v, 0.3, causal, "bfloat16", 3, config)
    ref, ref_lse = _reference_forward(q, k, v, 0.3, causal)
    what = f"rung 3 {config} E={E} L={L} S={S} causal={causal} scale=0.3"
    _close(out, ref, "bfloat16", "out", f"{what} output")
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-3, atol=1e-3, err_msg=f"{what}: the saved log-sum-exp")


@needs_sm90
@pytest.mark.parametrize("BKV,PIPELINE,NWG,E", WGMMA_CONFIGS)
@pytest.mark.parametrize("L,S,causal", ODD_SHAPES)
def test_wgmma_configurations(rng, BKV, PIPELINE, NWG, E, L, S, causal):
    """Every compile-time configuration of the cp.async kernel (K/V tile, pipelining, warpgroups), a
    scale other than 1/sqrt(E), causal with L != S (top-left aligned), a single key."""
    _check_configuration(rng, {"BKV": BKV, "PIPELINE": PIPELINE, "NWG": NWG, "TMA": 0}, E, L, S, causal)


@needs_sm90
@pytest.mark.parametrize("BKV", [64, 128])
@pytest.mark.parametrize("PIPELINE", [0, 1])
@pytest.mark.parametrize("E", [64, 128])
@pytest.mark.parametrize("L,S,causal", ODD_SHAPES + [(700, 700, True)])
def test_wgmma_tma(rng, BKV, PIPELINE, E, L, S, causal):
    """The warp-specialized TMA variant (TMA = 1: mbarriers, a producer warpgroup), the same shapes;
    causal L = 700 gives blocks whose two warpgroups own different numbers of tiles (BKV 64)."""
    _check_configuration(rng, {"BKV": BKV, "PIPELINE": PIPELINE, "NWG": 2, "TMA": 1}, E, L, S, causal)


@needs_sm90
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("causal", [False, True])
def test_wgmma_forward_feeds_rung2_backward(rng, dtype, causal):
    """Rung 2's backward on rung 3's out and lse gives the float64 gradients."""
    L, S, E = 200, 200 if causal else 65, 128
    npdtype = DTYPES[dtype][1]
    q, k, v, w = _inputs(rng, (2,), L, S, E, npdtype)
    scale = 1 / np.sqrt(E)
    grads = _native_grads(q, k, v, w, scale, causal, npdtype, rung=3)
    ref = _torch_ref(q[None], k[None], v[None], w[None], causal, scale, torch.float64)
    for name, g, r in zip(("dq", "dk", "dv"), grads, ref[1:]):
        _close(g, r[0], dtype, "grad", f"{dtype} causal={causal} {name} after rung 3")


@needs_sm90
def test_dispatch_runs_wgmma_on_hopper(rng, monkeypatch):
    """The default forward runs rung 3 for head dims 64 and 128 on sm_90; head dim 32, a rung-2
    config (the ladder) and FORCE_RUNG_2 (MINITORCH_FLASH_RUNG=2) run rung 2."""
    calls = []
    real = NA._flash_wgmma
    monkeypatch.setattr(NA, "_flash_wgmma", lambda *a: calls.append(a[0].shape[-1]) or real(*a))
    for E in (32, 64, 128):
        x = from_numpy(rng.standard_normal((2, 33, E)).astype(ml_dtypes.bfloat16), 0)
        native.flash_attention_mma(x, x, x, 0.125, True)
        native.flash_attention_mma(x, x, x, 0.125, True, NA.TUNED)
    assert calls == [64, 128], f"rung 3 must run by default for head dims 64 and 128 only, ran for {calls}"
    monkeypatch.setattr(NA, "FORCE_RUNG_2", True)
    native.flash_attention_mma(x, x, x, 0.125, True)
    assert calls == [64, 128], "FORCE_RUNG_2 must keep the forward on rung 2"
    with pytest.raises(ValueError, match="rung 3"):
        y = from_numpy(rng.standard_normal((2, 33, 32)).astype(ml_dtypes.bfloat16), 0)
        native.flash_attention_mma(y, y, y, 0.125, True, rung=3)
