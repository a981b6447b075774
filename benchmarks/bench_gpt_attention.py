"""nanoGPT's attention sub-block, forward + backward, ours vs PyTorch eager, float32, exactly as
``CausalSelfAttention.forward`` runs it between its two Linears:

    q, k, v = qkv.split(C, dim=2)                                # qkv: c_attn's output [B, T, 3C]
    q, k, v = (t.view(B, T, nh, hs).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2, is_causal=True)
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    y.backward(g)                                                # the gradient c_proj sends back

at nanoGPT's shakespeare-char shape (B 64, nh 6, T 256, hs 64). Rows: "ours" (the flash kernels read
the strided q, k, v and dO in place, write y in [B, T, nh, hs] memory, and split's backward is one
cat), "ours_copied" (the same with q, k, v made contiguous first, what the flash path did before:
copies there and back), "torch" (PyTorch's default SDPA backend, memory-efficient with dropout).
Timed two ways, TF32 off on both sides: one call at a time from an idle GPU (CUDA events, contenders
interleaved, L2 flushed: gemm_common.time_interleaved_ms, 3 warm-ups, median of 20), which adds the
host's time to issue the ops where it exceeds the GPU's; and "pipelined", 50 calls back to back
(wall time / 50 after a synchronize), the host running ahead of the GPU as in a training loop.
Before timing, ours is checked against ours_copied with dropout (the same manual_seed: the same
elements dropped) and against PyTorch without dropout (y and the gradient of qkv).

    python benchmarks/bench_gpt_attention.py [--out DIR]     (default $OUT, else benchmarks/results)

Prints a table; writes ``bench_gpt_attention-<gpu>.json``. About 15 s on an H100.
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
from minitorch.utils.race import disable_tf32, environment  # noqa: E402
from gemm_common import time_interleaved_ms, write_record  # noqa: E402

import torch  # noqa: E402

B, NH, T, HS = 64, 6, 256, 64
C = NH * HS
P = 0.2
WARMUP, REPEATS = 3, 20


def block(lib, sdpa, qkv, p, copied=False):
    """The sub-block's forward on ``qkv`` [B, T, 3C] with library ``lib``'s ops (minitorch or torch)."""
    q, k, v = qkv.split(C, dim=2)
    q, k, v = (t.view(B, T, NH, HS).transpose(1, 2) for t in (q, k, v))
    if copied:
        q, k, v = (t.contiguous() for t in (q, k, v))
    y = sdpa(q, k, v, dropout_p=p, is_causal=True)
    return y.transpose(1, 2).contiguous().view(B, T, C)


def step(lib, sdpa, qkv, g, p, copied=False):
    def run():
        qkv.grad = None
        block(lib, sdpa, qkv, p, copied).backward(g)
    return run


def host(t):
    return t.detach().cpu().numpy()


def pipelined_ms(fn, calls=50, warmup=5):
    """Milliseconds per call of ``calls`` back-to-back calls (the host queues ahead of the GPU)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    began = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - began) * 1e3 / calls


def results(lib, sdpa, qkv, g, p, copied=False, seed=None):
    """y and qkv's gradient (after ``manual_seed(seed)`` when given)."""
    if seed is not None:
        lib.manual_seed(seed)
    qkv.grad = None
    y = block(lib, sdpa, qkv, p, copied)
    y.backward(g)
    return host(y), host(qkv.grad)


def rel_diff(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    began = time.perf_counter()
    disable_tf32(torch)
    rng = np.random.default_rng(0)
    x, gy = (rng.standard_normal((B, T, n)).astype(np.float32) for n in (3 * C, C))
    qkv = minitorch.tensor(x, device="cuda", requires_grad=True)
    g = minitorch.tensor(gy, device="cuda")
    tqkv = torch.tensor(x, device="cuda", requires_grad=True)
    tg = torch.tensor(gy, device="cuda")
    ours_sdpa, torch_sdpa = F.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention

    strided = results(minitorch, ours_sdpa, qkv, g, P, seed=5)
    copied = results(minitorch, ours_sdpa, qkv, g, P, copied=True, seed=5)
    plain = results(minitorch, ours_sdpa, qkv, g, 0.0)
    ref = results(torch, torch_sdpa, tqkv, tg, 0.0)
    checks = {"strided_vs_copied_dropout_y": rel_diff(strided[0], copied[0]),
              "strided_vs_copied_dropout_dqkv": rel_diff(strided[1], copied[1]),
              "vs_torch_no_dropout_y": rel_diff(plain[0], ref[0]),
              "vs_torch_no_dropout_dqkv": rel_diff(plain[1], ref[1])}
    checks["ok"] = bool(max(checks.values()) < 1e-4)
    print("checks:", json.dumps(checks))

    fns = {"ours": step(minitorch, ours_sdpa, qkv, g, P),
           "ours_copied": step(minitorch, ours_sdpa, qkv, g, P, copied=True),
           "torch": step(torch, torch_sdpa, tqkv, tg, P)}
    times = time_interleaved_ms(fns, repeats=REPEATS, warmup=WARMUP)
    print(f"\nGPT attention sub-block (split, view, transpose, SDPA causal p {P}, transpose, contiguous, view), "
          f"forward + backward, B {B} nh {NH} T {T} hs {HS}, float32, TF32 off ({torch.cuda.get_device_name()}), "
          f"median of {REPEATS}")
    piped = {name: pipelined_ms(fn) for name, fn in fns.items()}
    rows = []
    print(f"{'path':<14}{'one call':>12}{'vs torch':>10}{'pipelined':>12}{'vs torch':>10}")
    for name, ms in times.items():
        rows.append({"path": name, "ms": ms, "ratio_to_torch": ms / times["torch"],
                     "ms_pipelined": piped[name], "ratio_to_torch_pipelined": piped[name] / piped["torch"]})
        print(f"{name:<14}{ms:>9.3f} ms{ms / times['torch']:>10.2f}{piped[name]:>9.3f} ms"
              f"{piped[name] / piped['torch']:>10.2f}")
    record = {"benchmark": "bench_gpt_attention", "env": environment("cuda", torch),
              "shape": {"B": B, "heads": NH, "T": T, "head_dim": HS}, "dropout_p": P, "dtype": "float32",
              "tf32": False, "warmup": WARMUP, "repeats": REPEATS, "checks": checks, "results": rows,
              "seconds": time.perf_counter() - began}
    path = write_record(record, args.out, "bench_gpt_attention")
    print(f"\nwrote {path} ({record['seconds']:.0f} s); checks ok: {checks['ok']}")
    return 0 if checks["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
