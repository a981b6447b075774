"""scaled_dot_product_attention (decomposition and FlashAttention paths) and nn.MultiheadAttention,
against PyTorch (cpu build) on random, ragged shapes."""
import contextlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import backends, nn
from minitorch.ops import attention as A
from oracle import check_op

PAIRS = [(1, 7), (7, 33), (33, 1), (65, 200), (200, 65)]     # (L, S), L != S, none a multiple of a tile


@contextlib.contextmanager
def flash_sdp(enabled):
    before = backends.cuda.flash_sdp_enabled()
    backends.cuda.enable_flash_sdp(enabled)
    try:
        yield
    finally:
        backends.cuda.enable_flash_sdp(before)


def sdpa(lib, *args, **kwargs):
    f = F if lib is mt else TF
    return f.scaled_dot_product_attention(*args, **kwargs)


# ---- the decomposition, both devices, float64 -----------------------------------------------------
@pytest.mark.parametrize("L,S", PAIRS)
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_decomposition_matches_torch(device, rng, L, S, E, causal):
    with flash_sdp(False):
        check_op(lambda lib, q, k, v: sdpa(lib, q, k, v, is_causal=causal),
                 [(2, 3, L, E), (2, 3, S, E), (2, 3, S, E)], device, rng)


@pytest.mark.parametrize("mask_shape", [(7, 33), (2, 1, 7, 33), (2, 3, 7, 33)])
def test_bool_mask_keeps_where_true(device, rng, mask_shape):
    keep = rng.random(mask_shape) < 0.6
    keep[..., 0] = True                       # no row entirely masked (that row would be NaN)
    check_op(lambda lib, q, k, v: sdpa(lib, q, k, v, attn_mask=lib.tensor(keep, device=q.device)),
             [(2, 3, 7, 16), (2, 3, 33, 16), (2, 3, 33, 8)], device, rng)


def test_float_mask_is_added(device, rng):
    bias = rng.standard_normal((1, 3, 7, 33))
    check_op(lambda lib, q, k, v: sdpa(lib, q, k, v, attn_mask=lib.tensor(bias, device=q.device)),
             [(2, 3, 7, 16), (2, 3, 33, 16), (2, 3, 33, 8)], device, rng)


def test_scale_value_dim_and_broadcast_batch(device, rng):
    check_op(lambda lib, q, k, v: sdpa(lib, q, k, v, scale=0.3),
             [(2, 3, 7, 16), (1, 3, 5, 16), (3, 5, 24)], device, rng)


def test_non_contiguous_inputs(device, rng):
    check_op(lambda lib, q, k, v: sdpa(lib, q, k, v, is_causal=True),
             [(2, 9, 32), (2, 13, 32), (2, 13, 32)], device, rng, layout="transposed")


def test_dropout_one_drops_everything(device, rng):
    q, k, v = (mt.tensor(rng.standard_normal((2, 5, 32)).astype(np.float32), device=device) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not out.cpu().numpy().any(), "dropout_p=1 must zero every attention weight, hence the output"


def test_errors(rng):
    q = mt.randn(2, 4, 8)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=mt.ones(4, 4, dtype=mt.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="do not fit"):
        F.scaled_dot_product_attention(q, mt.randn(2, 4, 6), q)
    with pytest.raises(RuntimeError, match="dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


def test_flash_switch():
    assert backends.cuda.flash_sdp_enabled() is True, "the flash path is allowed by default, as in PyTorch"
    with flash_sdp(False):
        assert backends.cuda.flash_sdp_enabled() is False
    with pytest.raises(TypeError):
        backends.cuda.enable_flash_sdp(1)


def test_cpu_never_takes_flash():
    q = mt.randn(1, 7, 64)
    assert not A._flash_applies(q, q, q, None, 0.0), "cpu has only the decomposition"


# ---- the flash path (cuda, float32) ---------------------------------------------------------------
def _torch64(q, k, v, causal, scale=None):
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    out = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale)
    return out, (tq, tk, tv)


def _flash_run(q, k, v, causal, w, scale=None, transposed=False):
    """Our flash path on cuda: output and the gradients of q, k, v for the loss sum(out * w)."""
    def leaf(x):
        if transposed:       # [B, L, H, E] memory seen as [B, H, L, E]: the layout MHA produces
            t = mt.tensor(np.ascontiguousarray(x.transpose(0, 2, 1, 3)), device="cuda")
            return t.requires_grad_(True), t.transpose(1, 2)
        t = mt.tensor(x, device="cuda").requires_grad_(True)
        return t, t
    (lq, q_), (lk, k_), (lv, v_) = leaf(q), leaf(k), leaf(v)
    assert A._flash_applies(q_, k_, v_, None, 0.0), "this case must take the flash path"
    out = F.scaled_dot_product_attention(q_, k_, v_, is_causal=causal, scale=scale)
    (out * mt.tensor(w, device="cuda")).sum().backward()
    grads = [g.grad.cpu().numpy() for g in (lq, lk, lv)]
    if transposed:
        grads = [g.transpose(0, 2, 1, 3) for g in grads]
    return out.detach().cpu().numpy(), grads


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("L,S", PAIRS)
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_matches_torch(rng, L, S, E, causal):
    shape = lambda n: (2, 3, n, E)
    q, k, v = (rng.uniform(-2, 2, shape(n)).astype(np.float32) for n in (L, S, S))
    w = rng.standard_normal(shape(L)).astype(np.float32)
    out, grads = _flash_run(q, k, v, causal, w)
    ref, leaves = _torch64(q, k, v, causal)
    (ref * torch.tensor(w, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(out, ref.detach().numpy(), rtol=1e-4, atol=1e-4, err_msg="flash output")
    for name, g, t in zip("qkv", grads, leaves):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-3, atol=1e-3, err_msg=f"flash gradient of {name}")


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("causal", [False, True])
def test_flash_scale_and_strided_inputs(rng, causal):
    B, L, S, H, E = 2, 70, 129, 4, 64
    q = rng.uniform(-2, 2, (B, H, L, E)).astype(np.float32)
    k, v = (rng.uniform(-2, 2, (B, H, S, E)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((B, H, L, E)).astype(np.float32)
    out, grads = _flash_run(q, k, v, causal, w, scale=0.05, transposed=True)
    ref, leaves = _torch64(q, k, v, causal, scale=0.05)
    (ref * torch.tensor(w, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(out, ref.detach().numpy(), rtol=1e-4, atol=1e-4, err_msg="flash output")
    for name, g, t in zip("qkv", grads, leaves):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-3, atol=1e-3, err_msg=f"flash gradient of {name}")


@pytest.mark.cuda
@pytest.mark.parametrize("causal", [False, True])
def test_flash_agrees_with_decomposition(rng, causal):
    q = rng.standard_normal((3, 257, 128)).astype(np.float32)
    k, v = (rng.standard_normal((3, 300, 128)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((3, 257, 128)).astype(np.float32)
    results = []
    for enabled in (True, False):
        with flash_sdp(enabled):
            leaves = [mt.tensor(x, device="cuda").requires_grad_(True) for x in (q, k, v)]
            out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
            (out * mt.tensor(w, device="cuda")).sum().backward()
            results.append([out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in leaves])
    for name, a, b in zip(["output", "dq", "dk", "dv"], *results):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3, err_msg=f"flash vs decomposition: {name}")


@pytest.mark.cuda
def test_flash_memory_is_linear_in_length():
    L, E = 4096, 64
    q, k, v = (mt.randn(1, L, E, device="cuda", requires_grad=True) for _ in range(3))
    mt.cuda.synchronize()
    base = mt.cuda.memory_allocated()
    mt.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.sum().backward()
    mt.cuda.synchronize()
    extra = mt.cuda.max_memory_allocated() - base
    scores = L * L * 4
    assert extra < scores // 4, (f"the flash path used {extra} bytes beyond its inputs at L={L}; an [L, L] "
                                 f"float32 score matrix alone is {scores} bytes: it must be O(L), not O(L^2)")


# ---- nn.MultiheadAttention ------------------------------------------------------------------------
def _mha_pair(E, H, batch_first, device, bias=True):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first).double()
    ours = nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first)
    ours.load_state_dict({name: mt.tensor(t.detach().numpy()) for name, t in theirs.state_dict().items()})
    return ours.to(device), theirs


def _close(ours, theirs, what):
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=1e-7, atol=1e-9,
                               err_msg=what)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_matches_torch(device, rng, batch_first, need_weights, average):
    ours, theirs = _mha_pair(32, 4, batch_first, device)
    N, L, S = 2, 7, 9
    shape = (lambda n: (N, n, 32)) if batch_first else (lambda n: (n, N, 32))
    x, y = rng.standard_normal(shape(L)), rng.standard_normal(shape(S))
    pad = np.zeros((N, S), bool)
    pad[0, 5:] = True                         # the first sequence has 5 real keys
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    mx, my = mt.tensor(x, device=device, requires_grad=True), mt.tensor(y, device=device, requires_grad=True)
    t_out, t_w = theirs(tx, ty, ty, key_padding_mask=torch.tensor(pad), need_weights=need_weights,
                        average_attn_weights=average)
    m_out, m_w = ours(mx, my, my, key_padding_mask=mt.tensor(pad, device=device), need_weights=need_weights,
                      average_attn_weights=average)
    _close(m_out, t_out, "output")
    assert (m_w is None) == (t_w is None), "weights returned exactly when need_weights is True"
    if t_w is not None:
        _close(m_w, t_w, "attention weights")
    t_out.sum().backward()
    m_out.sum().backward()
    _close(mx.grad, tx.grad, "gradient of query")
    _close(my.grad, ty.grad, "gradient of key/value")
    _close(ours.in_proj_weight.grad, theirs.in_proj_weight.grad, "gradient of in_proj_weight")
    _close(ours.out_proj.weight.grad, theirs.out_proj.weight.grad, "gradient of out_proj.weight")


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_causal_mask_and_no_bias(device, rng, need_weights):
    ours, theirs = _mha_pair(16, 2, True, device, bias=False)
    x = rng.standard_normal((3, 6, 16))
    causal = np.triu(np.ones((6, 6), bool), 1)             # True = not allowed (MHA's convention)
    t_out, _ = theirs(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal), is_causal=True,
                      need_weights=need_weights)
    m_out, _ = ours(*(mt.tensor(x, device=device),) * 3, attn_mask=mt.tensor(causal, device=device),
                    is_causal=True, need_weights=need_weights)
    _close(m_out, t_out, "causal output")


def test_mha_unbatched_and_errors(rng):
    ours, theirs = _mha_pair(8, 2, True, "cpu")
    x = rng.standard_normal((5, 8))
    t_out, t_w = theirs(*(torch.tensor(x),) * 3)
    m_out, m_w = ours(*(mt.tensor(x),) * 3)
    _close(m_out, t_out, "unbatched output")
    _close(m_w, t_w, "unbatched weights")
    assert set(ours.state_dict()) == set(theirs.state_dict()), "parameter names must be PyTorch's"
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(RuntimeError, match="is_causal"):
        ours(*(mt.tensor(x),) * 3, is_causal=True)
