"""Attention with dropout at nanoGPT's shape: our decomposition step by step (GEMM, scale, mask,
softmax, dropout, GEMM: ``_math_attention``), the same with scale + mask + softmax + dropout fused
into one kernel each way (``_fused_attention``, ``minitorch/cuda/attention_softmax.cu``), FlashAttention
with dropout inside its kernels (``_flash_attention``, rung 1b ``01b_flash_fp32_tiled.cu``), our public
``scaled_dot_product_attention`` (which takes the flash path for float32, dropout or not), and PyTorch's
``F.scaled_dot_product_attention`` with its default backend choice (memory-efficient with dropout).

Shape: B 64, heads 6, T 256, head dim 64, float32, causal, dropout p = 0.2 and 0 (nanoGPT's
shakespeare-char training). Each case is timed forward only (inputs requiring grad, as in training)
and forward + backward (gradients of q, k, v, cleared every run), with CUDA events (PyTorch's, on the
default stream that CuPy shares), the contenders interleaved (gemm_common.time_interleaved_ms, L2
flushed): 3 warm-ups, then the median of 15 runs. TF32 off on both sides. q, k, v are contiguous
[B, heads, T, D] tensors ("contiguous"); the "gpt_split" rows take them as a GPT block does, views of
one [B, T, 3 * heads * D] projection split in three and transposed (our flash path reads them in
place and split's backward is one cat; benchmarks/bench_gpt_attention.py times the whole sub-block).
Before timing, the fused path is checked against the step-by-step one on the GPU: values and gradients
at p = 0 (max difference relative to the largest value), and at p = 0.2 the keep rate, the
1 / (1 - p) scaling, and the gradient for the mask actually drawn (against PyTorch on that mask); the
flash path against the fused one at p = 0.2 after the same manual_seed (the same elements dropped).

    python benchmarks/bench_sdpa_dropout.py [--out DIR]     (default $OUT, else benchmarks/results)

Prints a table; writes ``bench_sdpa_dropout-<gpu>.json`` (GPU, versions, every number) to the folder.
About 30 s on an H100, NVRTC compilation included.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import minitorch  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from minitorch.ops import attention as A  # noqa: E402
from minitorch.utils.race import disable_tf32, environment  # noqa: E402
from gemm_common import time_interleaved_ms, write_record  # noqa: E402

import torch  # noqa: E402

B, H, T, D = 64, 6, 256, 64
SCALE = 1.0 / D ** 0.5
WARMUP, REPEATS = 3, 15


def case(attention, p, qkv, g, backward):
    """One timed call: forward (and backward with the gradients cleared first). qkv() gives q, k, v
    and the leaves to clear (the same tensors, or the projection they are views of)."""
    def run():
        q, k, v, leaves = qkv()
        for t in leaves:
            t.grad = None
        out = attention(q, k, v, p)
        if backward:
            out.backward(g)
    return run


def torch_sdpa(q, k, v, p):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)


PATHS = {
    "ours_unfused": lambda q, k, v, p: A._math_attention(q, k, v, None, p, True, SCALE),
    "ours_fused": lambda q, k, v, p: A._fused_attention(q, k, v, None, p, True, SCALE),
    "ours_flash": lambda q, k, v, p: A._flash_attention(q, k, v, True, SCALE, p),
    "ours_sdpa": lambda q, k, v, p: F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True),
}


def gpt_split(proj):
    """q, k, v [B, heads, T, D] as a GPT block makes them: the projection [B, T, 3 * heads * D] split
    in three along the last dim, each viewed as [B, T, heads, D] and transposed (strided views)."""
    def qkv():
        q, k, v = proj.split(H * D, dim=2)
        return (*(x.view(B, T, H, D).transpose(1, 2) for x in (q, k, v)), (proj,))
    return qkv


def host(t):
    return t.detach().cpu().numpy()


def _grads(out_fn, q, k, v, g):
    for t in (q, k, v):
        t.grad = None
    out = out_fn()
    out.backward(g)
    return [host(out)] + [host(t.grad) for t in (q, k, v)]


def check(q, k, v, g):
    """Max abs differences fused vs step by step (p = 0), and the dropout checks (p = 0.2)."""
    want = _grads(lambda: PATHS["ours_unfused"](q, k, v, 0.0), q, k, v, g)
    got = _grads(lambda: PATHS["ours_fused"](q, k, v, 0.0), q, k, v, g)
    result = {f"max_rel_diff_{n}": float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))
              for n, a, b in zip(("out", "dq", "dk", "dv"), got, want)}
    # dropout, on the probabilities: the same scores through AttentionSoftmax at p = 0.2 and p = 0
    p = 0.2
    scores = (q @ k.transpose(-2, -1)).detach()[:4].reshape(-1, T).requires_grad_(True)
    y = A.AttentionSoftmax.apply(scores, None, SCALE, True, p, T)
    probs = host(A.AttentionSoftmax.apply(scores.detach(), None, SCALE, True, 0.0, T))
    yn, visible = host(y), probs > 0
    keep = (yn != 0) & visible
    normal = keep & (probs > 1e-30)          # subnormal probabilities carry no relative precision
    result["keep_rate"] = float(keep.sum() / visible.sum())
    result["max_rel_err_scaling"] = float(np.abs(yn[normal] * (1 - p) / probs[normal] - 1).max())
    gy = np.random.default_rng(3).standard_normal(yn.shape).astype(np.float32)
    y.backward(minitorch.tensor(gy, device=q.device))
    ts = torch.tensor(host(scores), dtype=torch.float64, requires_grad=True)
    cut = torch.tensor(np.arange(T)[None, :] > (np.arange(ts.shape[0]) % T)[:, None])
    ref = torch.softmax((ts * SCALE).masked_fill(cut, float("-inf")), -1) * torch.tensor(keep) / (1 - p)
    ref.backward(torch.tensor(gy, dtype=torch.float64))
    result["max_abs_diff_dscores_dropout"] = float(np.abs(host(scores.grad) - ts.grad.numpy()).max())
    # flash with dropout vs fused with dropout: the same key after the same manual_seed
    runs = []
    for name in ("ours_flash", "ours_fused"):
        minitorch.manual_seed(1234)
        runs.append(_grads(lambda: PATHS[name](q, k, v, p), q, k, v, g))
    for n, a, b in zip(("out", "dq", "dk", "dv"), *runs):
        result[f"flash_vs_fused_dropout_max_rel_diff_{n}"] = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))
    ok = (max(result[f"max_rel_diff_{n}"] for n in ("out", "dq", "dk", "dv")) < 1e-5
          and max(result[f"flash_vs_fused_dropout_max_rel_diff_{n}"] for n in ("out", "dq", "dk", "dv")) < 1e-4
          and abs(result["keep_rate"] - (1 - p)) < 5 * np.sqrt(p * (1 - p) / visible.sum())     # 5 std errors
          and result["max_rel_err_scaling"] < 1e-5
          and result["max_abs_diff_dscores_dropout"] < 1e-5)
    result["ok"] = bool(ok)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    began = time.perf_counter()
    disable_tf32(torch)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((B, H, T, D)).astype(np.float32) for _ in range(4)]
    q, k, v = (minitorch.tensor(a, device="cuda", requires_grad=True) for a in arrays[:3])
    g = minitorch.tensor(arrays[3], device="cuda")
    tq, tk, tv = (torch.tensor(a, device="cuda", requires_grad=True) for a in arrays[:3])
    tg = torch.tensor(arrays[3], device="cuda")

    checks = check(q, k, v, g)
    print("checks (fused vs step by step, dropout statistics, flash vs fused with dropout):", json.dumps(checks))

    proj = minitorch.tensor(rng.standard_normal((B, T, 3 * H * D)).astype(np.float32), device="cuda",
                            requires_grad=True)
    tproj = torch.tensor(host(proj), device="cuda", requires_grad=True)

    def torch_gpt_split():
        tq_, tk_, tv_ = tproj.split(H * D, dim=2)
        return (*(x.view(B, T, H, D).transpose(1, 2) for x in (tq_, tk_, tv_)), (tproj,))

    layouts = {"contiguous": (lambda: (q, k, v, (q, k, v)), lambda: (tq, tk, tv, (tq, tk, tv))),
               "gpt_split": (gpt_split(proj), torch_gpt_split)}
    rows = []
    for layout, (ours_qkv, torch_qkv) in layouts.items():
        for p in (0.2, 0.0):
            if layout == "gpt_split" and p == 0.0:
                continue                                # the training case only
            for mode, backward in (("fwd", False), ("fwd+bwd", True)):
                fns = {name: case(fn, p, ours_qkv, g, backward) for name, fn in PATHS.items()
                       if layout == "contiguous" or name != "ours_unfused"}
                fns["torch_default"] = case(torch_sdpa, p, torch_qkv, tg, backward)
                for name, ms in time_interleaved_ms(fns, repeats=REPEATS, warmup=WARMUP).items():
                    rows.append({"layout": layout, "mode": mode, "path": name, "dropout_p": p, "ms": ms})

    print(f"\nSDPA, B {B} x heads {H} x T {T} x D {D}, float32, causal, TF32 off "
          f"({torch.cuda.get_device_name()}), median of {REPEATS}, contenders interleaved")
    print(f"{'layout':<12}{'mode':<9}{'path':<16}{'p':>6}{'ms':>10}{'vs torch':>10}")
    for r in rows:
        ref = next(x["ms"] for x in rows if x["path"] == "torch_default" and
                   all(x[f] == r[f] for f in ("layout", "mode", "dropout_p")))
        r["ratio_to_torch"] = r["ms"] / ref
        print(f"{r['layout']:<12}{r['mode']:<9}{r['path']:<16}{r['dropout_p']:>6.1f}{r['ms']:>10.3f}"
              f"{r['ratio_to_torch']:>10.2f}")
    record = {"benchmark": "bench_sdpa_dropout", "env": environment("cuda", torch),
              "shape": {"B": B, "heads": H, "T": T, "D": D}, "dtype": "float32", "causal": True, "tf32": False,
              "warmup": WARMUP, "repeats": REPEATS, "checks": checks, "results": rows,
              "seconds": time.perf_counter() - began}
    path = write_record(record, args.out, "bench_sdpa_dropout")
    print(f"\nwrote {path} ({record['seconds']:.0f} s); checks ok: {checks['ok']}")
    return 0 if checks["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
