"""Scaled dot-product attention on the GPU: our FlashAttention kernels (in float32 rung 1b,
``minitorch/cuda/attention/01b_flash_fp32_tiled.cu``, the default of the flash path; rung 02 in
bfloat16/float16 on tensor cores, ``02_flash_mma.cu``, with ``--dtype bfloat16``) and our
decomposition (GEMM, softmax, GEMM) next to PyTorch's SDPA backends (flash, memory-efficient, math
and, where present, cuDNN, chosen with ``torch.nn.attention.sdpa_kernel``). The ladder of rung 02,
step by step: benchmarks/probe_flash_mma.py; float32 rungs 1 and 1b: benchmarks/probe_flash_fp32.py.

For B = 4, H = 8, L = S in 512..4096, head dims 64 and 128, causal and not: forward alone and
forward + backward, each timed with CUDA events (warm-up, then the median of the repeats).
Throughput counts the two products of the forward, 4 B H L S D flops (half of it when causal), and
2.5 times that for the backward (five products): TFLOP/s = flops / time. TF32 is OFF on both sides
(``torch.backends.cuda.matmul.allow_tf32 = False``; ours never uses it here): float32 against
float32. PyTorch's flash backend takes only float16/bfloat16: its float32 cells say "unsupported".
Before timing, each of our paths is checked against PyTorch's math backend at L = 512.

Results go to ``--out`` as JSON (GPU, versions, date, every number); a table is printed last.

    python benchmarks/bench_attention.py [--out DIR] [--quick] [--dtype float32|bfloat16|float16]
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import minitorch  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from minitorch import backends  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

B, H = 4, 8
TORCH_BACKENDS = {"torch_flash": SDPBackend.FLASH_ATTENTION, "torch_mem_efficient": SDPBackend.EFFICIENT_ATTENTION,
                  "torch_math": SDPBackend.MATH}
if hasattr(SDPBackend, "CUDNN_ATTENTION"):
    TORCH_BACKENDS["torch_cudnn"] = SDPBackend.CUDNN_ATTENTION
DTYPE = "float32"            # set by --dtype: the dtype of every q, k, v below


def time_events(fn, warmup, repeats):
    """Median milliseconds of ``fn`` between CUDA events (PyTorch's, on the same default stream as CuPy's)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop))
    return statistics.median(samples)


def flops(L, d, causal, backward):
    f = 4 * B * H * L * L * d * (0.5 if causal else 1.0)
    return f * 3.5 if backward else f


def ours(flash, L, d, causal, backward):
    """A closure running our attention (flash or decomposition) once."""
    dt = getattr(minitorch, DTYPE)
    q, k, v = (minitorch.randn(B, H, L, d, device="cuda", dtype=dt, requires_grad=backward) for _ in range(3))

    def run():
        backends.cuda.enable_flash_sdp(flash)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if backward:
            out.backward(minitorch.ones_like(out))
            q.grad = k.grad = v.grad = None
    return run


def theirs(backend, L, d, causal, backward):
    dt = getattr(torch, DTYPE)
    q, k, v = (torch.randn(B, H, L, d, device="cuda", dtype=dt, requires_grad=backward) for _ in range(3))

    def run():
        with sdpa_kernel(backend):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if backward:
            out.backward(torch.ones_like(out))
            q.grad = k.grad = v.grad = None
    return run


def correctness(d, causal):
    """Max |ours - torch math| of the output and the gradients, both our paths, at L = 512 (half
    dtypes: inputs rounded to DTYPE, torch's math backend on them upcast to float32)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 4, 512, d)).astype(np.float32) for _ in range(3)]
    if DTYPE != "float32":
        import ml_dtypes
        half = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[DTYPE]
        arrays = [a.astype(half) for a in arrays]
    tq, tk, tv = (torch.tensor(a.astype(np.float32), device="cuda", requires_grad=True) for a in arrays)
    with sdpa_kernel(SDPBackend.MATH):
        ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    ref.sum().backward()
    want = [ref.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (tq, tk, tv)]
    errs = {}
    for flash in (True, False):
        backends.cuda.enable_flash_sdp(flash)
        q, k, v = (minitorch.tensor(a, device="cuda", requires_grad=True) for a in arrays)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.sum().backward()
        got = [x.astype(np.float32) for x in [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (q, k, v)]]
        errs["flash" if flash else "decomposition"] = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    backends.cuda.enable_flash_sdp(True)
    return errs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--quick", action="store_true", help="fewer lengths and repeats (a smoke run)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                   help="float32: rung 01; bfloat16/float16: rung 02 on tensor cores")
    args = p.parse_args()
    global DTYPE
    DTYPE = args.dtype
    if not (minitorch.cuda.is_available() and torch.cuda.is_available()):
        sys.exit("bench_attention needs CuPy, a CUDA GPU and a CUDA build of PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    warmup, repeats = (2, 5) if args.quick else (5, 20)
    lengths = [512, 2048] if args.quick else [512, 1024, 2048, 4096]
    record = {"benchmark": f"scaled_dot_product_attention {DTYPE}", "dtype": DTYPE, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch), "batch": B, "heads": H, "tf32": False,
              "timing": f"CUDA events, {warmup} warm-up runs, median of {repeats}",
              "flops": "forward 4 B H L^2 d (x0.5 causal); forward+backward 3.5x that",
              "correctness": {}, "rows": []}
    for d in (64, 128):
        for causal in (False, True):
            record["correctness"][f"d{d}{'_causal' if causal else ''}"] = correctness(d, causal)
    for d in (64, 128):
        for causal in (False, True):
            for backward in (False, True):
                for L in lengths:
                    row = {"L": L, "d": d, "causal": causal, "pass": "fwd+bwd" if backward else "fwd"}
                    cases = {"ours_flash": ours(True, L, d, causal, backward),
                             "ours_decomposition": ours(False, L, d, causal, backward)}
                    cases.update({name: theirs(be, L, d, causal, backward) for name, be in TORCH_BACKENDS.items()})
                    for name, run in cases.items():
                        try:
                            ms = time_events(run, warmup, repeats)
                            row[name] = {"ms": ms, "TFLOPs": flops(L, d, causal, backward) / ms / 1e9}
                        except RuntimeError as e:      # e.g. torch's flash backend refuses float32
                            row[name] = {"unsupported": str(e).splitlines()[0][:200]}
                        torch.cuda.empty_cache()
                    backends.cuda.enable_flash_sdp(True)
                    record["rows"].append(row)
                    print(table_line(row), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = record["env"]["gpu_name"].replace(" ", "-").lower()
    path = out / (f"bench_attention-{slug}.json" if DTYPE == "float32" else f"bench_attention-{DTYPE}-{slug}.json")
    path.write_text(json.dumps(record, indent=1))
    print("correctness (max abs error vs torch math, L=512):", record["correctness"])
    print("wrote", path)


def table_line(row):
    cells = []
    for name in ["ours_flash", "ours_decomposition", *TORCH_BACKENDS]:
        r = row[name]
        cells.append(f"{name}={r['TFLOPs']:.2f}" if "TFLOPs" in r else f"{name}=n/a")
    return f"L={row['L']:5d} d={row['d']:3d} causal={row['causal']!s:5s} {row['pass']:7s} TFLOP/s: " + " ".join(cells)


if __name__ == "__main__":
    main()
