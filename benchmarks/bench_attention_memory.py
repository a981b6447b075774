"""Peak device memory of attention, forward + backward, as the sequence grows: FlashAttention keeps
O(L) bytes per (batch, head), the decomposition (matmul, mask, softmax, matmul) O(L^2), the [L, L]
scores and their gradients.

B = 1, H = 8, d = 64, L = S = 512, 1024, ..., 16384 (``--lengths``), not causal (``--causal``).
The lines, each in the dtype it is written with:

    ours_flash           float32   minitorch/cuda/attention/01_flash_fp32.cu
    ours_flash_bf16      bfloat16  minitorch/cuda/attention/02_flash_mma.cu (tensor cores)
    ours_decomposition   float32   the decomposition (enable_flash_sdp(False)), autograd through each op
    torch_flash          bfloat16  PyTorch's SDPA flash backend (FlashAttention-2; it takes no float32)
    torch_mem_efficient  float32   PyTorch's SDPA memory-efficient backend
    torch_math           float32   PyTorch's SDPA math backend (its decomposition)

Each case: every cache emptied, the bytes on loan read (``before``), q, k, v made (requires_grad),
the peak statistic reset, ``out = scaled_dot_product_attention(q, k, v)`` and
``out.backward(ones_like(out))``, a synchronize, the peak read. The number kept is peak - before:
inputs, output, its gradient, dq, dk, dv and every intermediate alive at the worst moment; not
what the process held before (PyTorch's cuBLAS workspace, say). Each library's own counter:
``minitorch.cuda.max_memory_allocated`` (our caching allocator, exact at every malloc and free)
and ``torch.cuda.max_memory_allocated``; memory a library takes outside its allocator (none in
ours) is not counted. Every case runs once at L = 512 first (compilation, lazy initialization).

The [L, L] paths are not run where an estimate of their peak (bench_attention.naive_bytes: 6
float32 score-sized buffers, 52 GB at L = 16384) exceeds ``--memory-limit`` GB (default 60, of the
H100's 80): those points say "skipped", and an allocation failure says "skipped: out of memory".

Results go to ``--out`` (default benchmarks/results) as bench_attention_memory-<gpu>.json (GPU,
versions, date, every number); a table is printed last. Well under a minute on an H100 (an
estimate: it prints the seconds it took)::

    python benchmarks/bench_attention_memory.py [--out DIR] [--lengths 512 1024 ...] [--causal]
                                                [--memory-limit GB]
"""
import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_attention import empty_caches, is_out_of_memory  # noqa: E402  (imports minitorch, torch)
import bench_attention  # noqa: E402

import minitorch  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from minitorch import backends  # noqa: E402
from minitorch.utils.race import environment, slug  # noqa: E402

import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

B, H, D = 1, 8, 64
LENGTHS = [512, 1024, 2048, 4096, 8192, 16384]
# name -> (library, dtype, path): the path says how memory grows (flash paths O(L), the others O(L^2))
CASES = {
    "ours_flash": ("minitorch", "float32", "flash"),
    "ours_flash_bf16": ("minitorch", "bfloat16", "flash"),
    "ours_decomposition": ("minitorch", "float32", "decomposition"),
    "torch_flash": ("torch", "bfloat16", "flash"),
    "torch_mem_efficient": ("torch", "float32", "memory-efficient"),
    "torch_math": ("torch", "float32", "math"),
}
TORCH_BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "memory-efficient": SDPBackend.EFFICIENT_ATTENTION,
                  "math": SDPBackend.MATH}


def skip_reason(name, L, limit_gb):
    """Why case ``name`` is not run at length ``L`` (a str), or None: bench_attention's rule for
    forward + backward (only the [L, L] paths, ours_decomposition and torch_math, are skipped)."""
    return bench_attention.skip_reason(name, B, H, L, True, limit_gb)


def peak_ours(flash, dtype, L, causal):
    """Peak bytes on loan in our allocator during one forward + backward, less those before."""
    cuda = minitorch.cuda
    before = cuda.memory_allocated()
    q, k, v = (minitorch.randn(B, H, L, D, device="cuda", dtype=getattr(minitorch, dtype), requires_grad=True)
               for _ in range(3))
    cuda.synchronize()
    cuda.reset_peak_memory_stats()
    backends.cuda.enable_flash_sdp(flash)
    try:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.backward(minitorch.ones_like(out))
        cuda.synchronize()
    finally:
        backends.cuda.enable_flash_sdp(True)
    return cuda.max_memory_allocated() - before


def peak_torch(path, dtype, L, causal):
    """Peak bytes PyTorch's allocator had on loan during one forward + backward, less those before."""
    before = torch.cuda.memory_allocated()
    q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
               for _ in range(3))
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with sdpa_kernel(TORCH_BACKENDS[path]):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(torch.ones_like(out))
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def measure(name, L, causal, limit_gb):
    """One point of a line: {"peak_bytes": n} or {"skipped": why} or {"unsupported": why}."""
    reason = skip_reason(name, L, limit_gb)
    if reason:
        return {"skipped": reason}
    library, dtype, path = CASES[name]
    try:
        if library == "minitorch":
            return {"peak_bytes": peak_ours(path == "flash", dtype, L, causal)}
        return {"peak_bytes": peak_torch(path, dtype, L, causal)}
    except (RuntimeError, MemoryError) as e:
        first_line = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        return {"skipped": f"out of memory: {first_line}"} if is_out_of_memory(e) else {"unsupported": first_line}
    finally:
        gc.collect()            # the failed case's tensors (held by the traceback) die here
        empty_caches()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--lengths", type=int, nargs="+", default=LENGTHS, metavar="L",
                   help=f"sequence lengths L = S (default {' '.join(map(str, LENGTHS))})")
    p.add_argument("--causal", action="store_true", help="is_causal=True (default: not causal)")
    p.add_argument("--memory-limit", type=float, default=60.0, metavar="GB",
                   help="skip the [L, L] paths whose estimated peak exceeds this (default 60)")
    args = p.parse_args(argv)
    if min(args.lengths) < 1:
        p.error(f"--lengths must be positive, got {args.lengths}")
    return args


def main():
    args = parse_args()
    if not (minitorch.cuda.is_available() and torch.cuda.is_available()):
        sys.exit("bench_attention_memory needs CuPy, a CUDA GPU and a CUDA build of PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    started = time.perf_counter()
    for name in CASES:                    # compile, initialize: nothing of it is measured
        measure(name, 512, args.causal, args.memory_limit)
    record = {"benchmark": "scaled_dot_product_attention peak memory, forward + backward",
              "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "env": environment("cuda", torch),
              "batch": B, "heads": H, "head_dim": D, "causal": args.causal, "lengths": args.lengths,
              "memory_limit_gb": args.memory_limit,
              "measure": "max_memory_allocated after reset_peak_memory_stats (each library's allocator), "
                         "minus memory_allocated before the inputs were made: inputs, output, its gradient, "
                         "dq, dk, dv and the intermediates",
              "cases": {name: {"library": lib, "dtype": dtype, "path": path} for name, (lib, dtype, path) in CASES.items()},
              "rows": []}
    for L in args.lengths:
        for name, (library, dtype, path) in CASES.items():
            row = {"L": L, "case": name, "library": library, "dtype": dtype, "path": path,
                   **measure(name, L, args.causal, args.memory_limit)}
            record["rows"].append(row)
            print(f"L={L:6d} {name:20s} {dtype:9s} " + (f"{row['peak_bytes'] / 2**20:10.1f} MiB" if "peak_bytes" in row
                                                         else row.get("skipped") or row["unsupported"]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_attention_memory-{slug(record['env']['gpu_name'])}.json"
    path.write_text(json.dumps(record, indent=1))
    print(table(record))
    print(f"wrote {path} after {time.perf_counter() - started:.0f} s")


def table(record):
    """The rows as text: one line per L, one column per case, MiB (or skip / n/a)."""
    names = list(record["cases"])
    lines = ["L".rjust(6) + "".join(f"{n:>21s}" for n in names)]
    for L in record["lengths"]:
        cells = []
        for n in names:
            row = next(r for r in record["rows"] if r["L"] == L and r["case"] == n)
            cells.append(f"{row['peak_bytes'] / 2**20:18.1f} MiB" if "peak_bytes" in row
                         else ("skip" if "skipped" in row else "n/a").rjust(21))
        lines.append(f"{L:6d}" + "".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
