"""Scaled dot-product attention on the GPU: our FlashAttention kernels, as the flash path picks them
(float32: rung 1c, ``minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu``, 3xTF32 on the tensor
cores, or rung 1b's FFMA after ``backends.cuda.enable_flash_3xtf32_sdp(False)``; bfloat16/float16:
rung 3, ``03_flash_wgmma.cu``, on sm_90 at head dims 64 and 128, else rung 2, ``02_flash_mma.cu``,
with ``MINITORCH_FLASH_RUNG=2`` forcing rung 2) and our decomposition (GEMM, softmax, GEMM) next to
PyTorch's SDPA backends (flash, memory-efficient, math and, where present, cuDNN, chosen with
``torch.nn.attention.sdpa_kernel``). The ladders step by step: benchmarks/probe_flash_mma.py
(tensor-core rungs) and benchmarks/probe_flash_fp32.py (float32 rungs 1, 1b, 1c).

For B = 4, H = 8, L = S in ``--lengths`` (default 512, 1024, ..., 8192), head dims 64 and 128,
causal and not: forward alone and forward + backward, each timed with CUDA events (warm-up, then the
median of the repeats). Long cases get fewer runs: after one warm-up run, one timed run sets how
many more fit in about 0.1 s of warm-up and 0.2 s of timing (at least 3 timed runs, at most 5
warm-ups and 20 timed runs; ``--quick``: 2 and 5). Throughput counts the two products of the
forward, 4 B H L S D flops (half of it when causal), and 2.5 times that for the backward (five
products): TFLOP/s = flops / time. TF32 is OFF on both sides (``torch.backends.cuda.matmul.allow_tf32
= False``; ours never uses it here): float32 against float32. PyTorch's flash backend takes only
float16/bfloat16: its float32 cells say "unsupported". The paths that write the [L, L] scores to
memory (our decomposition, torch's math backend) are not run where an estimate of their peak
memory (:func:`naive_bytes`) exceeds ``--memory-limit`` GB: those cells say "skipped", as does an
out-of-memory error. Before timing, each of our paths is checked against PyTorch's math backend at
L = 512.

Results go to ``--out`` as JSON (GPU, versions, date, every number); a table is printed last. The
bfloat16 sweep (rung 3 against torch's flash, memory-efficient and cuDNN backends) is sized to
finish within about two minutes on an H100, NVRTC compilation on a fresh machine included (an
estimate; it prints the seconds taken by the checks, which compile the kernels, and in all)::

    python benchmarks/bench_attention.py [--out DIR] [--quick] [--dtype float32|bfloat16|float16]
                                         [--lengths 512 1024 ...] [--memory-limit GB]

Peak memory against L: benchmarks/bench_attention_memory.py.
"""
import argparse
import gc
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
LENGTHS = [512, 1024, 2048, 4096, 8192]
NAIVE = ("ours_decomposition", "torch_math")     # the paths that write [L, S] scores to memory
WARMUP_MS, TIMED_MS = 100.0, 200.0                # about how long each case warms up and is timed


def naive_bytes(batch, heads, L, backward):
    """An estimate of the peak bytes of attention through the [L, L] scores: score-sized
    buffers of 4 bytes (float32; torch's math backend may upcast half dtypes), 4 alive at once in
    the forward, 6 with the backward. (Our decomposition on the cpu, traced by tracemalloc at
    B = 1, H = 8, L = 1024: 4.0 and 5.2 of them, 5.1 and 6.2 when causal.)"""
    return batch * heads * L * L * 4 * (6 if backward else 4)


def skip_reason(name, batch, heads, L, backward, limit_gb):
    """Why case ``name`` is not run at this size (a str), or None: only the paths through the
    [L, L] scores are skipped, where :func:`naive_bytes` exceeds ``limit_gb`` (1e9 bytes)."""
    need = naive_bytes(batch, heads, L, backward) / 1e9
    if name in NAIVE and need > limit_gb:
        return f"skipped: about {need:.0f} GB of [L, L] scores > {limit_gb:g} GB"
    return None


def count_runs(first_ms, warmup, repeats, budget_ms):
    """(warm-up runs, timed runs) for a case whose first timed run took ``first_ms``: as many as fit
    in ``budget_ms`` = (warm-up ms, timed ms), at most ``warmup`` and ``repeats``; at least 3 timed
    runs (a median of fewer says little)."""
    fit = [int(ms // max(first_ms, 1e-3)) for ms in budget_ms]
    return min(warmup, fit[0]), max(3, min(repeats, fit[1]))


def time_once(fn):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop)


def time_events(fn, warmup, repeats):
    """Median milliseconds of ``fn`` between CUDA events (PyTorch's, on the same default stream as
    CuPy's): one warm-up run (compilation, allocator), one timed run that sets how many more runs
    fit in (WARMUP_MS, TIMED_MS) (:func:`count_runs`), those warm-ups, then the timed runs."""
    fn()
    torch.cuda.synchronize()
    more_warmup, timed = count_runs(time_once(fn), warmup - 1, repeats, (WARMUP_MS, TIMED_MS))
    for _ in range(more_warmup):
        fn()
    torch.cuda.synchronize()
    return statistics.median(time_once(fn) for _ in range(timed))


def is_out_of_memory(error):
    """True for an allocation failure: CuPy's and our allocator's OutOfMemoryError (a MemoryError),
    torch.OutOfMemoryError and cudaErrorMemoryAllocation (RuntimeErrors saying "out of memory")."""
    return isinstance(error, MemoryError) or "out of memory" in str(error).lower()


def empty_caches():
    """Give both caching allocators' free blocks back to the driver, so that the next case (ours or
    torch's) finds the GPU's memory free."""
    minitorch.cuda.empty_cache()
    torch.cuda.empty_cache()


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


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--quick", action="store_true", help="lengths 512 and 2048, fewer repeats (a smoke run)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                   help="float32: rung 1c (3xTF32); bfloat16/float16: rung 3 (sm_90) or rung 2 on tensor cores")
    p.add_argument("--lengths", type=int, nargs="+", default=None, metavar="L",
                   help=f"sequence lengths L = S (default {' '.join(map(str, LENGTHS))})")
    p.add_argument("--memory-limit", type=float, default=60.0, metavar="GB",
                   help="skip the [L, L]-score paths whose estimated peak exceeds this (default 60)")
    args = p.parse_args(argv)
    if args.lengths is None:
        args.lengths = [512, 2048] if args.quick else LENGTHS
    if min(args.lengths) < 1:
        p.error(f"--lengths must be positive, got {args.lengths}")
    return args


def main():
    args = parse_args()
    global DTYPE
    DTYPE = args.dtype
    if not (minitorch.cuda.is_available() and torch.cuda.is_available()):
        sys.exit("bench_attention needs CuPy, a CUDA GPU and a CUDA build of PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    warmup, repeats = (2, 5) if args.quick else (5, 20)
    started = time.perf_counter()
    record = {"benchmark": f"scaled_dot_product_attention {DTYPE}", "dtype": DTYPE, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch), "batch": B, "heads": H, "tf32": False, "lengths": args.lengths,
              "timing": f"CUDA events, 1 warm-up run, 1 run to size the rest, up to {warmup - 1} more warm-ups and "
                        f"3 to {repeats} timed runs "
                        f"(as many as fit in {WARMUP_MS:g} and {TIMED_MS:g} ms), median",
              "flops": "forward 4 B H L^2 d (x0.5 causal); forward+backward 3.5x that",
              "skipped": f"{', '.join(NAIVE)} where B H L^2 x 4 bytes x (4 forward, 6 with backward) "
                         f"> {args.memory_limit:g} GB, or out of memory",
              "correctness": {}, "rows": []}
    for d in (64, 128):
        for causal in (False, True):
            record["correctness"][f"d{d}{'_causal' if causal else ''}"] = correctness(d, causal)
    print(f"checked against torch's math backend (kernels compiled) after {time.perf_counter() - started:.0f} s", flush=True)
    for d in (64, 128):
        for causal in (False, True):
            for backward in (False, True):
                for L in args.lengths:
                    row = {"L": L, "d": d, "causal": causal, "pass": "fwd+bwd" if backward else "fwd"}
                    cases = {"ours_flash": lambda: ours(True, L, d, causal, backward),
                             "ours_decomposition": lambda: ours(False, L, d, causal, backward)}
                    cases.update({name: lambda be=be: theirs(be, L, d, causal, backward)
                                  for name, be in TORCH_BACKENDS.items()})
                    for name, make in cases.items():
                        row[name] = time_case(name, make, L, backward, warmup, repeats, args.memory_limit)
                        if "ms" in row[name]:
                            row[name]["TFLOPs"] = flops(L, d, causal, backward) / row[name]["ms"] / 1e9
                        empty_caches()
                    backends.cuda.enable_flash_sdp(True)
                    gc.collect()        # once per row: it takes ~0.1 s with torch loaded
                    record["rows"].append(row)
                    print(table_line(row), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = record["env"]["gpu_name"].replace(" ", "-").lower()
    path = out / (f"bench_attention-{slug}.json" if DTYPE == "float32" else f"bench_attention-{DTYPE}-{slug}.json")
    path.write_text(json.dumps(record, indent=1))
    print("correctness (max abs error vs torch math, L=512):", record["correctness"])
    print(f"wrote {path} after {time.perf_counter() - started:.0f} s")


def time_case(name, make, L, backward, warmup, repeats, limit_gb):
    """{"ms": median} of the closure ``make()`` returns, or {"skipped": why} / {"unsupported": why}."""
    reason = skip_reason(name, B, H, L, backward, limit_gb)
    if reason:
        return {"skipped": reason}
    try:
        return {"ms": time_events(make(), warmup, repeats)}
    except (RuntimeError, MemoryError) as e:   # torch's flash backend refuses float32; out of memory
        first_line = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        return {"skipped": f"out of memory: {first_line}"} if is_out_of_memory(e) else {"unsupported": first_line}


def table_line(row):
    cells = []
    for name in ["ours_flash", "ours_decomposition", *TORCH_BACKENDS]:
        r = row[name]
        cells.append(f"{name}={r['TFLOPs']:.2f}" if "TFLOPs" in r else f"{name}={'skip' if 'skipped' in r else 'n/a'}")
    return f"L={row['L']:5d} d={row['d']:3d} causal={row['causal']!s:5s} {row['pass']:7s} TFLOP/s: " + " ".join(cells)


if __name__ == "__main__":
    main()
