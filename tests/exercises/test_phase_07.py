"""Grading tests of phase 07 (transformer): the embedding's gradient, LayerNorm forward, Welford's
update in the LayerNorm kernel, LayerNorm backward, GELU's derivative, attention as a
decomposition, FlashAttention's online softmax, the pre-LN block and top-k sampling.

Run by ``minitorch-course check 07`` against a workspace, and by pytest against the repository.
The cpu backend's functions are called on NumPy arrays; PyTorch (cpu) or float64 NumPy is the
reference. The kernel tests (07.3, 07.7) need a GPU.
"""
import math
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close  # noqa: E402

from minitorch.utils.exercises import exercise  # noqa: E402


# ---- 7b: embeddings ---------------------------------------------------------------------------------
@exercise("07.1")
def test_embedding_backward_adds_repeated_rows():
    from minitorch.native import cpu
    rng = np.random.default_rng(71)
    index = np.array([3, 1, 3, 0, 3, 5, 1], dtype=np.int64)          # 3 three times, 1 twice, 2 and 4 never
    for dtype in (np.float32, np.float64):
        grad = rng.standard_normal((len(index), 4)).astype(dtype)
        for padding_idx in (None, 1):
            w = torch.zeros(6, 4, dtype=torch.float64, requires_grad=True)
            torch.nn.functional.embedding(torch.tensor(index), w, padding_idx=padding_idx).backward(
                torch.tensor(grad, dtype=torch.float64))
            got = cpu.embedding_backward(grad, index, 6, padding_idx)
            assert got.dtype == dtype, f"the gradient of a {np.dtype(dtype)} table should be {np.dtype(dtype)}, got {got.dtype}"
            close(got, w.grad.numpy(), f"dweight ({np.dtype(dtype)}, padding_idx={padding_idx}) must hold the sum of a "
                  "token's rows", rtol=1e-5, atol=1e-6)


# ---- 7c: LayerNorm ---------------------------------------------------------------------------------
def _rows(rng, rows=5, n=37, dtype=np.float32):
    x = rng.standard_normal((rows, n)) * 3 + 1
    x[0] += 1000                           # a large mean: a sum of squares would lose the variance
    return x.astype(dtype)


def _ln_reference(x, w, b, eps):
    t = torch.tensor(x.astype(np.float64), requires_grad=True)
    tw = None if w is None else torch.tensor(w.astype(np.float64), requires_grad=True)
    tb = None if b is None else torch.tensor(b.astype(np.float64), requires_grad=True)
    return t, tw, tb, torch.nn.functional.layer_norm(t, (x.shape[1],), tw, tb, eps)


@exercise("07.2")
def test_layer_norm_forward():
    from minitorch.native import cpu
    rng = np.random.default_rng(72)
    for dtype, rtol, atol in ((np.float32, 1e-4, 1e-4), (np.float64, 1e-10, 1e-10)):
        x = _rows(rng, dtype=dtype)
        w, b = rng.standard_normal(37).astype(dtype), rng.standard_normal(37).astype(dtype)
        for weight, bias in ((w, b), (None, None)):
            _, _, _, want = _ln_reference(x, weight, bias, 1e-5)
            y, mean, rstd = cpu.layer_norm(x, weight, bias, 1e-5)
            what = f"layer_norm of {np.dtype(dtype)} rows ({'with' if weight is not None else 'without'} weight and bias)"
            assert y.dtype == dtype, f"{what} should keep the dtype, got {y.dtype}"
            close(y, want.detach().numpy(), f"{what}, row 0 around 1000", rtol=rtol, atol=atol)
            x64 = x.astype(np.float64)
            close(mean, x64.mean(axis=1), f"{what}: the saved mean of each row", rtol=1e-6, atol=1e-6)
            close(rstd, 1 / np.sqrt(x64.var(axis=1) + 1e-5), f"{what}: the saved rstd = 1 / sqrt(biased var + eps)",
                  rtol=1e-4, atol=1e-6)
    y, mean, rstd = cpu.layer_norm(np.full((2, 8), 7.0, np.float32), None, None, 1e-5)
    close(y, np.zeros((2, 8)), "layer_norm of a constant row is 0 (variance 0, eps keeps rstd finite)")


@exercise("07.3", cuda=True)
def test_welford_in_the_layer_norm_kernel():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(73)
    # warp rows (n <= 1024) and block rows, vectorized (n % 4 == 0) and not
    for rows, n in ((1, 1), (5, 37), (33, 64), (7, 1000), (3, 1031), (2, 4096)):
        x = _rows(rng, rows, n)
        w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        _, _, _, want = _ln_reference(x, w, b, 1e-5)
        y, mean, _ = backend.layer_norm(array.from_numpy(x, 0), array.from_numpy(w, 0), array.from_numpy(b, 0), 1e-5)
        close(array.to_numpy(mean), x.astype(np.float64).mean(axis=1), f"the kernel's row means on [{rows}, {n}]",
              rtol=1e-6, atol=1e-4)
        close(array.to_numpy(y), want.detach().numpy(), f"the LayerNorm kernel on [{rows}, {n}] (row 0 around 1000: "
              "one pass of Welford's update keeps its variance)", rtol=1e-3, atol=2e-3)


@exercise("07.4")
def test_layer_norm_backward():
    from minitorch.native import cpu
    rng = np.random.default_rng(74)
    x = _rows(rng, dtype=np.float64)
    w, b = rng.standard_normal(37), rng.standard_normal(37)
    g = rng.standard_normal(x.shape)
    mean, rstd = x.mean(axis=1), 1 / np.sqrt(x.var(axis=1) + 1e-5)
    for weight, bias in ((w, b), (None, None)):
        t, tw, tb, y = _ln_reference(x, weight, bias, 1e-5)
        y.backward(torch.tensor(g))
        dx, dw, db = cpu.layer_norm_backward(g, x, mean, rstd, weight)
        affine = "with" if weight is not None else "without"
        close(dx, t.grad.numpy(), f"layer_norm_backward's dx {affine} weight (dx = rstd (g - mean(g) - xhat mean(g xhat)))",
              rtol=1e-6, atol=1e-8)
        if weight is None:
            assert dw is None and db is None, "without weight, layer_norm_backward returns no dweight and no dbias"
            continue
        close(dw, tw.grad.numpy(), "layer_norm_backward's dweight (the column sums of grad * xhat)", rtol=1e-6, atol=1e-8)
        close(db, tb.grad.numpy(), "layer_norm_backward's dbias (the column sums of grad)", rtol=1e-6, atol=1e-8)


# ---- 7d: GELU --------------------------------------------------------------------------------------
@exercise("07.5")
def test_gelu_derivative():
    from minitorch.native import cpu
    rng = np.random.default_rng(75)
    x = np.concatenate([np.linspace(-6, 6, 49), rng.standard_normal(20) * 2])
    g = rng.standard_normal(x.shape)
    for dtype, rtol, atol in ((np.float64, 1e-10, 1e-12), (np.float32, 1e-5, 1e-6)):
        t = torch.tensor(x.astype(dtype), requires_grad=True)
        torch.nn.functional.gelu(t).backward(torch.tensor(g.astype(dtype)))
        got = cpu.unary_backward("gelu", g.astype(dtype), x.astype(dtype))
        close(got, t.grad.numpy(), f"the gradient of GELU (erf form) in {np.dtype(dtype)}: grad * (Phi(x) + x phi(x))",
              rtol=rtol, atol=atol)


# ---- 7e: attention ---------------------------------------------------------------------------------
def _qkv(rng, shape_q, shape_k, shape_v, dtype=np.float64):
    return tuple(rng.standard_normal(s).astype(dtype) for s in (shape_q, shape_k, shape_v))


@exercise("07.6")
def test_attention_decomposition_with_causal_and_explicit_masks():
    import minitorch
    from minitorch.nn import functional as F
    rng = np.random.default_rng(76)
    cases = [((2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8), True, None, None),
             ((1, 2, 4, 6), (1, 2, 7, 6), (1, 2, 7, 3), True, None, 0.5),        # L != S: top-left aligned
             ((2, 4, 8), (2, 6, 8), (2, 6, 5), False, None, None),
             ((2, 4, 8), (2, 6, 8), (2, 6, 5), False, "bool", None),
             ((2, 4, 8), (2, 6, 8), (2, 6, 5), False, "float", None)]
    for sq, sk, sv, causal, mask_kind, scale in cases:
        q, k, v = _qkv(rng, sq, sk, sv)
        g = rng.standard_normal(sq[:-1] + sv[-1:])
        mask = tmask = None
        if mask_kind == "bool":
            m = rng.random((sq[-2], sk[-2])) < 0.7
            m[:, 0] = True                                                # every query sees a key
            mask, tmask = minitorch.tensor(m), torch.tensor(m)
        elif mask_kind == "float":
            m = rng.standard_normal((sq[-2], sk[-2]))
            mask, tmask = minitorch.tensor(m), torch.tensor(m)
        ours = [minitorch.tensor(a, requires_grad=True) for a in (q, k, v)]
        theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ours, attn_mask=mask, is_causal=causal, scale=scale)
        want = torch.nn.functional.scaled_dot_product_attention(*theirs, attn_mask=tmask, is_causal=causal, scale=scale)
        what = f"attention of q {sq}, k {sk}, v {sv} (is_causal={causal}, attn_mask={mask_kind}, scale={scale})"
        close(out.detach().numpy(), want.detach().numpy(), what, rtol=1e-9, atol=1e-10)
        out.backward(minitorch.tensor(g))
        want.backward(torch.tensor(g))
        for name, a, b in zip("qkv", ours, theirs):
            assert a.grad is not None, f"{what}: q, k and v must all get gradients (build it from recorded Tensor ops)"
            close(a.grad.numpy(), b.grad.numpy(), f"{what}: the gradient of {name}", rtol=1e-8, atol=1e-10)


# ---- 7f: FlashAttention ----------------------------------------------------------------------------
def _attention64(q, k, v, scale, causal):
    """(out, natural log-sum-exp of each row) in float64."""
    s = np.einsum("bld,bsd->bls", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], dtype=bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64), (m + np.log(e.sum(-1, keepdims=True)))[..., 0]


@exercise("07.7", cuda=True)
def test_flash_attention_forward_online_softmax():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(77)
    #        BH   L    S    D   causal
    for bh, L, S, d, causal in ((2, 7, 7, 32, True), (1, 64, 64, 64, False), (3, 130, 130, 64, True),
                                (2, 65, 100, 32, False), (1, 100, 65, 128, True), (1, 1, 1, 32, False)):
        q, k, v = _qkv(rng, (bh, L, d), (bh, S, d), (bh, S, d), np.float32)
        q *= 2                                           # sharper rows: the running maximum moves
        scale = 1 / math.sqrt(d)
        # tiled=False: rung 1 (01_flash_fp32.cu, the exercise's file), not rung 1b that runs by default
        out, lse = backend.flash_attention(*(array.from_numpy(a, 0) for a in (q, k, v)), scale, causal, tiled=False)
        want, want_lse = _attention64(q, k, v, scale, causal)
        what = f"FlashAttention forward, BH {bh}, L {L}, S {S}, D {d}, causal={causal}"
        close(array.to_numpy(out), want, f"{what}: the output (tiles of 64 keys, rescaled by exp(m - m') each)",
              rtol=1e-4, atol=2e-5)
        close(array.to_numpy(lse), want_lse, f"{what}: the saved log-sum-exp m + log l", rtol=1e-5, atol=1e-4)


# ---- 7g: the GPT -----------------------------------------------------------------------------------
@exercise("07.8")
def test_block_is_pre_layer_norm_with_residuals():
    import minitorch
    from minitorch import nn
    from minitorch.models.gpt import Block, GPTConfig

    class Fn(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)

    block = Block(GPTConfig(block_size=8, vocab_size=11, n_layer=1, n_head=2, n_embd=8))
    # stand-ins that tell the wirings apart: x + attn(ln_1(x)) is not ln_1(x + attn(x)) nor attn(ln_1(x))
    block.ln_1, block.attn = Fn(lambda h: h * 2.0), Fn(lambda h: h - 1.0)
    block.ln_2, block.mlp = Fn(lambda h: h * h), Fn(lambda h: h * 0.5)
    x = np.random.default_rng(78).standard_normal((2, 3, 8))
    got = block(minitorch.tensor(x)).numpy()
    h = x + (2 * x - 1)
    close(got, h + 0.5 * h * h, "Block.forward with stand-in sublayers: x = x + attn(ln_1(x)), then x + mlp(ln_2(x))")


# ---- 7i: sampling ----------------------------------------------------------------------------------
@exercise("07.9")
def test_generate_samples_only_from_the_top_k():
    import minitorch
    from minitorch.models.gpt import GPT

    logits = np.array([0.3, 2.0, -1.0, 1.9, 1.8, 0.0, 1.7, -0.5])   # the top 3: tokens 1, 3, 4

    class Fixed:
        """A stand-in model: the same next-token logits whatever the context."""
        config = type("Config", (), {"block_size": 4})

        def __call__(self, idx):
            B = idx.shape[0]
            return minitorch.tensor(np.broadcast_to(logits, (B, 1, len(logits))).astype(np.float32)), None

    start = minitorch.tensor([[0], [5]])
    for top_k, allowed in ((3, {1, 3, 4}), (1, {1}), (100, set(range(8)))):
        gen = minitorch.Generator().manual_seed(79)
        out = GPT.generate(Fixed(), start, 300, temperature=1.0, top_k=top_k, generator=gen).numpy()
        assert out.shape == (2, 301), f"generate of 300 tokens after 1 should give shape (2, 301), got {out.shape}"
        drawn = set(out[:, 1:].ravel().tolist())
        assert drawn <= allowed, f"with top_k={top_k} only tokens {sorted(allowed)} may be drawn, got {sorted(drawn)}"
        if top_k == 3:
            assert drawn == allowed, f"with top_k=3 each of the 3 most likely tokens is drawn in 600 tries, got {sorted(drawn)}"
    probs = np.exp(logits[[1, 3, 4]] - logits[1])
    gen = minitorch.Generator().manual_seed(80)
    out = GPT.generate(Fixed(), minitorch.tensor([[0]] * 8), 250, top_k=3, generator=gen).numpy()[:, 1:]
    freq = np.array([(out == t).mean() for t in (1, 3, 4)])
    close(freq, probs / probs.sum(), "the frequencies of the 3 kept tokens follow the softmax over those 3 alone",
          rtol=0, atol=0.05)
