"""Phase 07 (issue 15, nanoGPT speed): the float32 flash kernels (rungs 1b and 1c) read q, k, v and dO through
their strides and write O, dq, dk, dv in PyTorch flash's [B, T, H, D] memory layout; split/chunk are
ONE autograd node whose backward is one cat.

cuda cases (the lead's H100): flash on the GPT's head views (split, view, transpose of one [B, T, 3C]
GEMM output) and on generic views (transposed, sliced, head-broadcast, unaligned) equals flash on
contiguous copies of the same values (the same kernels, the same arithmetic: 1e-6), causal or not,
dropout 0.2 with the same key, head dims 32/64/128, odd lengths; and float64 torch without dropout.
O's layout: ``y.transpose(1, 2)`` is contiguous. A GPT attention block's forward + backward launches
no copy, fill or add kernels, and none for the split's gradient either: flash writes dq, dk, dv as
the pieces of one [B, T, 3C] buffer, which the split's backward takes whole (launches counted by name).
cpu cases: split/chunk values and gradients vs PyTorch (oracle.check_op), one node, in-place rules.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F
from oracle import check_op

cuda = pytest.mark.cuda


def _needs_cuda():
    if not mt.cuda.is_available():
        pytest.skip("needs CuPy and a CUDA GPU")


def _sdpa_with_grads(q, k, v, leaves, w, causal, p, seed=7):
    """out (NumPy) and the gradients of sum(out * w) w.r.t. ``leaves``, dropout keyed by ``seed``."""
    mt.manual_seed(seed)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
    (out * w).sum().backward()
    return out, [t.grad.cpu().numpy() for t in leaves]


def _gpt_heads(x, B, T, H, E):
    """q, k, v as CausalSelfAttention cuts them: split of [B, T, 3C], view, transpose: [B, H, T, E] views."""
    return [t.view(B, T, H, E).transpose(1, 2) for t in x.split(H * E, dim=2)]


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("T", [1, 65, 131])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("p", [0.0, 0.2])
def test_gpt_head_views_equal_contiguous_copies(rng, E, T, causal, p):
    """The GPT's strided q, k, v (read in place) against contiguous copies of them (copied first)."""
    _needs_cuda()
    from minitorch.ops import attention as A
    B, H = 2, 3
    xs = rng.standard_normal((B, T, 3 * H * E)).astype(np.float32)
    w = mt.tensor(rng.standard_normal((B, H, T, E)).astype(np.float32), device="cuda")
    x = mt.tensor(xs, device="cuda").requires_grad_(True)
    q, k, v = _gpt_heads(x, B, T, H, E)
    assert not q.is_contiguous() and A._flash_applies(q, k, v, None, p), "the strided case must take flash"
    out, (gx,) = _sdpa_with_grads(q, k, v, [x], w, causal, p)
    leaves = [t.detach().contiguous().requires_grad_(True) for t in (q, k, v)]
    want, grads = _sdpa_with_grads(*leaves, leaves, w, causal, p)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().cpu().numpy(), rtol=1e-6, atol=1e-6,
                               err_msg=f"output, T={T} E={E} causal={causal} p={p}")
    for name, got, g in zip("qkv", np.split(gx, 3, axis=2), grads):
        np.testing.assert_allclose(got, g.transpose(0, 2, 1, 3).reshape(B, T, H * E), rtol=1e-6, atol=1e-6,
                                   err_msg=f"gradient of {name} through the split, T={T} E={E} causal={causal} p={p}")
    assert out.transpose(1, 2).is_contiguous(), "O must lie in memory as [B, T, H, E] (PyTorch flash's layout)"


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_gpt_head_views_match_float64(rng, E, causal):
    """The strided flash path against torch's float64 SDPA on the same values (no dropout)."""
    _needs_cuda()
    B, T, H = 2, 77, 2
    xs = rng.uniform(-2, 2, (B, T, 3 * H * E))
    ws = rng.standard_normal((B, H, T, E))
    x = mt.tensor(xs.astype(np.float32), device="cuda").requires_grad_(True)
    out, (gx,) = _sdpa_with_grads(*_gpt_heads(x, B, T, H, E), [x], mt.tensor(ws.astype(np.float32), device="cuda"),
                                  causal, 0.0)
    tx = torch.tensor(xs, requires_grad=True)
    tq, tk, tv = (t.view(B, T, H, E).transpose(1, 2) for t in tx.split(H * E, dim=2))
    want = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    (want * torch.tensor(ws)).sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-3, atol=1e-3)


def _generic_views(rng, B, H, L, S, E):
    """q transposed out of [B, L, H, E]; k a slice of a longer sequence; v broadcast over the heads
    (stride 0); each with its contiguous values for the reference."""
    qb = rng.standard_normal((B, L, H, E)).astype(np.float32)
    kb = rng.standard_normal((B, H, S + 5, E)).astype(np.float32)
    vb = rng.standard_normal((B, 1, S, E)).astype(np.float32)
    q = mt.tensor(qb, device="cuda").transpose(1, 2)
    k = mt.tensor(kb, device="cuda")[:, :, 3:3 + S]
    v = mt.tensor(vb, device="cuda").expand(B, H, S, E)
    return (q, k, v), (qb.transpose(0, 2, 1, 3), kb[:, :, 3:3 + S], np.broadcast_to(vb, (B, H, S, E)))


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
@pytest.mark.parametrize("E", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("p", [0.0, 0.2])
def test_generic_views_equal_contiguous_copies(rng, E, causal, p):
    """Transposed, sliced and head-broadcast views read in place; an unaligned one (first element 4
    bytes past 16) copied: all equal contiguous copies of the same values."""
    _needs_cuda()
    B, H, L = 2, 3, 129
    S = L if causal else 67
    views, arrays = _generic_views(rng, B, H, L, S, E)
    base = mt.tensor(rng.standard_normal((B, H, L, E + 4)).astype(np.float32), device="cuda")
    unaligned = base[..., 1:1 + E]
    w = mt.tensor(rng.standard_normal((B, H, L, E)).astype(np.float32), device="cuda")
    for q in (views[0], unaligned):
        leaves = [t.detach().requires_grad_(True) for t in (q,) + views[1:]]
        out, grads = _sdpa_with_grads(*leaves, leaves, w, causal, p)
        refs = [mt.tensor(np.ascontiguousarray(a), device="cuda").requires_grad_(True)
                for a in ((q.detach().cpu().numpy(),) + arrays[1:])]
        want, ref_grads = _sdpa_with_grads(*refs, refs, w, causal, p)
        np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().cpu().numpy(), rtol=1e-6, atol=1e-6)
        for name, g, r in zip("qkv", grads, ref_grads):
            np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-6, err_msg=f"gradient of {name}, E={E} p={p}")


@cuda
@pytest.mark.usefixtures("poisoned_allocator")
def test_native_launchers_layouts_and_refusals(rng):
    """The launchers: 4-D strided arrays give what 3-D contiguous ones give; out, dq, dk, dv lie as
    [B, T, H, D]; rung 1 refuses strided arrays; rows_aligned's rule."""
    _needs_cuda()
    from minitorch.cuda import array
    from minitorch.native.cuda import attention as NA
    B, H, L, S, E = 2, 3, 70, 45, 64
    host = [rng.standard_normal((B, n, H, E)).astype(np.float32) for n in (L, S, S, L)]
    base = [array.from_numpy(a, 0) for a in host]
    q, k, v, g = (a.transpose(0, 2, 1, 3) for a in base)            # [B, H, len, E] views
    out, lse = NA.flash_attention(q, k, v, 0.125, False)
    assert out.shape == (B, H, L, E) and out.transpose(0, 2, 1, 3).c_contiguous and lse.shape == (B * H, L)
    grads = NA.flash_attention_backward(q, k, v, out, lse, g, 0.125, False)
    flat = [array.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 1, 3)).reshape(B * H, -1, E), 0) for a in host]
    out3, lse3 = NA.flash_attention(*flat[:3], 0.125, False)
    grads3 = NA.flash_attention_backward(*flat[:3], out3, lse3, flat[3], 0.125, False)
    def host_of(a):          # [B, H, len, E] in [B, len, H, E] memory, as a [B H, len, E] NumPy array
        return array.to_numpy(a.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3).reshape(B * H, -1, E)
    np.testing.assert_allclose(host_of(out), array.to_numpy(out3), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(array.to_numpy(lse), array.to_numpy(lse3), rtol=1e-6, atol=1e-6)
    for name, a, b in zip("qkv", grads, grads3):
        assert a.transpose(0, 2, 1, 3).c_contiguous, f"d{name} must lie as [B, len, H, E]"
        np.testing.assert_allclose(host_of(a), array.to_numpy(b), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="C-contiguous"):
        NA.flash_attention(q, k, v, 0.125, False, tiled=False)
    assert NA.rows_aligned(q) and not NA.rows_aligned(base[0][..., 1:1 + 32])          # 4 bytes past 16
    assert not NA.rows_aligned(array.from_numpy(np.zeros((2, 32, 64), np.float32), 0).transpose(0, 2, 1))


def _count_launches(monkeypatch):
    """Record the name of every kernel launched (both of launch.launch's ways of launching)."""
    from minitorch.native.cuda import launch as L
    names = []
    for attr in ("_launch_fast", "_launch_cupy"):
        real = getattr(L, attr)

        def record(fn, *args, _real=real, **kw):
            names.append(fn.name if hasattr(fn, "name") else str(fn))
            return _real(fn, *args, **kw)
        monkeypatch.setattr(L, attr, record)
    return names


@cuda
def test_gpt_attention_launches_no_copies(monkeypatch, rng):
    """CausalSelfAttention forward + backward (dropout 0.2, training): q, k, v, y and dO are never
    copied (no cast/copy kernels), no zero fills, adds or copies for the split's gradient (flash writes
    dq, dk, dv where the split's cat would put them), flash's kernels (three with rung 1c, four with 1b)."""
    _needs_cuda()
    from minitorch.models.gpt import CausalSelfAttention, GPTConfig
    cfg = GPTConfig(block_size=64, vocab_size=65, n_layer=1, n_head=2, n_embd=128, dropout=0.2, bias=True)
    attn = CausalSelfAttention(cfg).to("cuda")
    x = mt.tensor(rng.standard_normal((2, 33, 128)).astype(np.float32), device="cuda")
    g = mt.tensor(rng.standard_normal((2, 33, 128)).astype(np.float32), device="cuda")
    attn(x).backward(g)                          # compile everything first
    for prm in attn.parameters():
        prm.grad = None                          # (else the second pass adds into .grad)
    names = _count_launches(monkeypatch)
    attn(x).backward(g)
    flash = [n for n in names if n.startswith("flash_")]
    from minitorch.native.cuda import attention as NA
    if NA._has_3xtf32(64, 0):       # rung 1c where it runs (its one-pass backward), else rung 1b
        assert flash == [f"flash_{n}_f32_d64" for n in ("fwd_3xtf32", "bwd_dot_tiled", "bwd_onepass_3xtf32")], names
    else:
        assert flash == [f"flash_{n}_tiled_f32_d64" for n in ("fwd", "bwd_dot", "bwd_dkdv", "bwd_dq")], names
    copies = [n for n in names if n.startswith("cast") or n.startswith("fill") or n.startswith("add_f32")]
    assert copies == [], f"copies, fills or adds in the attention block: {names}"
    assert not any(n.startswith("copy_into") for n in names), f"the split's gradient is flash's buffer, {names}"


# ---- split / chunk: one node, one cat (cpu and cuda) --------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("sizes,dim", [(2, 0), ([1, 4, 2], 1), (3, -1), ([0, 5, 2], -1), (7, 1)])
def test_split_values_and_gradients(device, rng, sizes, dim, layout):
    """Uneven pieces, empty ones, negative dims, non-contiguous inputs, every piece used."""
    check_op(lambda lib, x: lib.split(x, sizes, dim), [(4, 7, 7)], device, rng, layout=layout)


@pytest.mark.parametrize("chunks,dim", [(3, 0), (2, -1), (4, 1)])
def test_chunk_values_and_gradients(device, rng, chunks, dim):
    check_op(lambda lib, x: lib.chunk(x, chunks, dim), [(5, 6, 3)], device, rng, layout="transposed")


def test_unused_pieces_get_zero_gradient(device, rng):
    """Only pieces 0 and 2 used (once scaled, once twice): the others' part of the gradient is 0."""
    def f(lib, x):
        a, _, c, _ = lib.split(x, [2, 1, 3, 1], 1)
        return a * 3 + c[:, :2] + a
    check_op(f, [(3, 7)], device, rng)


def test_split_is_one_node_whose_backward_is_one_cat(device, monkeypatch):
    from minitorch.ops import rearrange
    cats = []
    real = rearrange.cat
    monkeypatch.setattr(rearrange, "cat", lambda ts, dim: cats.append(len(ts)) or real(ts, dim))
    x = mt.arange(12.0, device=device).reshape(3, 4).requires_grad_(True)
    pieces = x.split([1, 2, 1], dim=1)
    assert len({id(p.grad_fn) for p in pieces}) == 1 and pieces[0].grad_fn.name() == "SplitBackward"
    (pieces[0] * 2 + pieces[2]).sum().backward()
    assert cats == [3]
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.tile([2.0, 0.0, 0.0, 1.0], (3, 1)))


def test_split_pieces_are_views(device):
    """Pieces share the input's memory and version counter; writes with no graph land in the input."""
    x = mt.zeros(2, 6, device=device)
    a, b = x.split(3, dim=1)
    b.add_(1)
    assert x._version == a._version == b._version == 1
    np.testing.assert_array_equal(x.cpu().numpy(), [[0, 0, 0, 1, 1, 1]] * 2)
    with mt.no_grad():
        y = mt.ones(4, device=device).requires_grad_(True)
        p, _ = y.split(2)
        p.mul_(3)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), [3, 3, 1, 1])


def test_inplace_on_a_piece_raises_as_pytorch(device):
    leaf = mt.ones(6, device=device).requires_grad_(True)
    tleaf = torch.ones(6, requires_grad=True)
    w = mt.ones(3, device=device).requires_grad_(True)
    for ours, theirs in (
            (lambda: leaf.split(3)[0].mul_(2), lambda: tleaf.split(3)[0].mul_(2)),
            (lambda: (leaf * 1).split(3)[1].add_(1), lambda: (tleaf * 1).split(3)[1].add_(1)),
            (lambda: mt.zeros(6, device=device).split(3)[0].copy_(w * 2),
             lambda: torch.zeros(6).split(3)[0].copy_(torch.ones(3, requires_grad=True) * 2))):
        with pytest.raises(RuntimeError) as theirs_err:
            theirs()
        with pytest.raises(RuntimeError, match="output of a function that returns multiple views"):
            ours()
        assert "returns multiple views" in str(theirs_err.value)
