"""Every GEMM of one nanoGPT training step (shakespeare-char: 6 layers, 6 heads, n_embd 384, block
256, batch 64 = 16384 tokens, vocabulary 65, no biases), with its real shape and layout, through
minitorch.matmul (the dispatcher) with the shape rules of minitorch/native/cuda/gemm.py on and off
(``gemm.SHAPE_RULES``: split-K by waves and 64-wide tiles for narrow products), against PyTorch
(cuBLAS) on the same operands. float32, TF32 off on both sides (printed).

Per layer the four Linears (c_attn 384 -> 1152, attention c_proj 384 -> 384, MLP c_fc 384 -> 1536,
MLP c_proj 1536 -> 384) each run forward ``y = x @ W^T`` ('nt'), ``dx = dy @ W`` ('nn') and
``dW = dy^T @ x`` ('tn', K = 16384 tokens); attention (the decomposition path, 64 x 6 = 384 batches
of T = 256, head dim 64) runs ``q @ k^T``, ``p @ v`` and the four products of their backward; once
per step, lm_head (384 -> 65, tied to the embedding) runs its three. The attention operands are
contiguous [384, 256, 64] batches (in the model q, k, v are strided views of c_attn's output).

Each product is checked against float64 (torch on the GPU) on its first call with each rule set,
then timed: gemm_common.time_ms (CUDA events, L2 flushed before each call, median of REPEATS).
The table gives ms, TFLOP/s and % of cuBLAS; the totals weigh each product by how often one step
runs it.

    python benchmarks/bench_gpt_gemms.py [--out DIR]     (default $OUT, else benchmarks/results)

Writes ``bench_gpt_gemms-<gpu>-<date>.json`` (environment, TF32 flags, every number) to the folder. Exit status
1 when a check fails. About 30 s on an H100, NVRTC compilation included.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

import minitorch as mt  # noqa: E402
from gemm_common import check_torch, set_torch_tf32, time_ms  # noqa: E402
from minitorch.native.cuda import gemm as G  # noqa: E402
from minitorch.utils.race import environment, slug  # noqa: E402

TOKENS, LAYERS, HEADS, T, D, VOCAB = 16384, 6, 6, 256, 64, 65
BATCHES = TOKENS // T * HEADS                     # 384 attention matrices per layer
REPEATS, WARMUP = 10, 3
LINEARS = [("c_attn", 384, 1152, LAYERS), ("attn.c_proj", 384, 384, LAYERS), ("mlp.c_fc", 384, 1536, LAYERS),
           ("mlp.c_proj", 1536, 384, LAYERS), ("lm_head", 384, VOCAB, 1)]


def cases():
    """[(name, layout, batch, M, N, K, count per step)] for C [batch, M, N] = op(A) [M, K] @ op(B) [K, N]."""
    out = []
    for name, fan_in, fan_out, count in LINEARS:
        out += [(f"{name} forward", "nt", 1, TOKENS, fan_out, fan_in, count),
                (f"{name} dX", "nn", 1, TOKENS, fan_in, fan_out, count),
                (f"{name} dW", "tn", 1, fan_out, fan_in, TOKENS, count)]
    out += [("attn q@k^T", "nt", BATCHES, T, T, D, LAYERS), ("attn p@v", "nn", BATCHES, T, D, T, LAYERS),
            ("attn dP = dO@v^T", "nt", BATCHES, T, T, D, LAYERS), ("attn dV = p^T@dO", "tn", BATCHES, T, D, T, LAYERS),
            ("attn dQ = dS@k", "nn", BATCHES, T, D, T, LAYERS), ("attn dK^T = q^T@dS", "tn", BATCHES, D, T, T, LAYERS)]
    return out


def operands(layout, batch, m, n, k, rng):
    """The same random float32 operands as minitorch and torch cuda tensors, a 't' operand a
    transposed view of a contiguous array (the kernel reads the layout, nothing is copied)."""
    lead = (batch,) if batch > 1 else ()
    a = rng.standard_normal(lead + ((k, m) if layout[0] == "t" else (m, k)), dtype=np.float32)
    b = rng.standard_normal(lead + ((n, k) if layout[1] == "t" else (k, n)), dtype=np.float32)
    ours, theirs = [], []
    for x, letter in ((a, layout[0]), (b, layout[1])):
        o, t = mt.tensor(x, device="cuda"), torch.from_numpy(x).cuda()
        ours.append(o.transpose(-2, -1) if letter == "t" else o)
        theirs.append(t.transpose(-2, -1) if letter == "t" else t)
    return ours, theirs


def plan(batch, m, n, k):
    """What the dispatch does with the current rules: 'BMxBN' tile, and ' /S' for S K-slices."""
    rung, options = G.choose(m, n, k, batch, "f32", G.arch_of(0))
    bm, bn = G.tile_of(rung, options)
    if batch > 1:
        slices = 1
    elif G.SHAPE_RULES:
        split = G.choose(m, n, k, 1, "f32", G.arch_of(0), size_class="large")
        slices = G.slices_for(m, n, k, *split, G.sm_count(0))
        if slices > 1:
            bm, bn = G.tile_of(*split)
    else:
        slices = G._power_of_two_slices(m, n, k, G.sm_count(0))
        bm, bn = G.tile_of(*G.choose(m, n, k // slices, slices, "f32", G.arch_of(0)))
    return f"{bm}x{bn}" + (f" /{slices}" if slices > 1 else "")


def run_case(case, rng):
    name, layout, batch, m, n, k, count = case
    (A, B), (ta, tb) = operands(layout, batch, m, n, k, rng)
    row = {"name": name, "layout": layout, "batch": batch, "m": m, "n": n, "k": k, "count": count}
    for label, rules in (("before", False), ("after", True)):
        G.SHAPE_RULES = rules
        ok, rel, worst = check_torch(torch.from_numpy(mt.matmul(A, B).cpu().numpy()).cuda(), ta, tb, None, "fp32")
        row[label] = {"ok": ok, "rel_err": rel, "worst_over_bound": worst, "plan": plan(batch, m, n, k),
                      "ms": time_ms(lambda: mt.matmul(A, B), REPEATS, WARMUP)}
    G.SHAPE_RULES = True
    row["cublas_ms"] = time_ms(lambda: torch.matmul(ta, tb), REPEATS, WARMUP)
    flops = 2.0 * batch * m * n * k
    for label in ("before", "after"):
        row[label]["tflops"] = flops / row[label]["ms"] / 1e9
        row[label]["pct_cublas"] = 100.0 * row["cublas_ms"] / row[label]["ms"]
    row["cublas_tflops"] = flops / row["cublas_ms"] / 1e9
    return row


def print_table(rows, flags):
    print(f"nanoGPT step GEMMs, float32 ({torch.cuda.get_device_name()}); TF32: {flags}, minitorch allow_tf32 = "
          f"{mt.backends.cuda.matmul.allow_tf32}; median of {REPEATS}, L2 flushed")
    head = (f"{'product':<20}{'lay':>4}{'batch x M x N x K':>24}{'x':>3}{'before ms':>10}{'after ms':>9}"
            f"{'cuBLAS':>8}{'TF/s after':>11}{'% before':>9}{'% after':>8}  {'tile before -> after'}")
    print(head)
    for r in rows:
        b, a = r["before"], r["after"]
        shape = f"{r['batch']} x {r['m']} x {r['n']} x {r['k']}"
        flag = "" if b["ok"] and a["ok"] else "  CHECK FAILED"
        print(f"{r['name']:<20}{r['layout']:>4}{shape:>24}{r['count']:>3}{b['ms']:>10.3f}{a['ms']:>9.3f}"
              f"{r['cublas_ms']:>8.3f}{a['tflops']:>11.1f}{b['pct_cublas']:>8.0f}%{a['pct_cublas']:>7.0f}%  "
              f"{b['plan']} -> {a['plan']}{flag}")
    totals = {key: sum(r["count"] * (r[key]["ms"] if key != "cublas" else r["cublas_ms"]) for r in rows)
              for key in ("before", "after", "cublas")}
    print(f"per step (each product x its count): before {totals['before']:.2f} ms, after {totals['after']:.2f} ms, "
          f"cuBLAS {totals['cublas']:.2f} ms ({100 * totals['cublas'] / totals['after']:.0f}% after, "
          f"{100 * totals['cublas'] / totals['before']:.0f}% before)")
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    began = time.perf_counter()
    flags = set_torch_tf32(torch, False)
    assert not mt.backends.cuda.matmul.allow_tf32, "float32 must stay off the tensor cores here"
    rng = np.random.default_rng(0)
    rows = [run_case(case, rng) for case in cases()]
    totals = print_table(rows, flags)
    ok = all(r[label]["ok"] for r in rows for label in ("before", "after"))
    record = {"benchmark": "bench_gpt_gemms", "env": environment("cuda", torch), "tf32": flags,
              "minitorch_allow_tf32": bool(mt.backends.cuda.matmul.allow_tf32), "dtype": "float32",
              "repeats": REPEATS, "warmup": WARMUP, "l2_flushed": True, "results": rows,
              "per_step_ms": totals, "ok": ok, "seconds": time.perf_counter() - began}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_gpt_gemms-{slug(record['env']['gpu_name'] or 'gpu')}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path} ({record['seconds']:.0f} s); checks ok: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
