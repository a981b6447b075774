"""Time the phase-04 reductions, scans and sorts of issue 13 against PyTorch's twins on a GPU.

    python benchmarks/bench_reduce_scan_sort.py [--out DIR] [--quick]

At 64M float32 elements (16M with --quick): prod, amax, all, logsumexp, norm (p=2), count_nonzero
(one full reduction each) and cumsum (one row), as GB/s of memory moved (a reduction reads 4 bytes
per element; a scan reads 4 and writes 4), next to the device-to-device copy bandwidth (read +
write) measured in the same run, and next to torch's same op. sort, argsort and topk(k=10) on one
row of 1M and on batched rows of 4096 (64M elements in all; 16M with --quick) against torch.
Every number is the median of CUDA-event timings after a warm-up, with the L2 cache flushed
(a 256 MB memset) before each timed call (benchmarks/gemm_common.py). Results are checked against
torch before timing. A table goes to stdout and a JSON file (GPU, versions, date) to --out
(default benchmarks/results).
"""
import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import cupy as cp
    import torch
except ImportError:
    sys.exit("bench_reduce_scan_sort.py needs CuPy, PyTorch and a CUDA GPU")

import minitorch as mt  # noqa: E402
from bench_kernels import time_torch  # noqa: E402
from gemm_common import time_ms  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

MB = 1 << 20

# name -> (ours, torch's, bytes moved per element)
STREAMS = {
    "sum": (lambda x: mt.sum(x), lambda x: torch.sum(x), 4),
    "prod": (lambda x: mt.prod(x), lambda x: torch.prod(x), 4),
    "amax": (lambda x: mt.amax(x), lambda x: torch.amax(x), 4),
    "all": (lambda x: mt.all(x), lambda x: torch.all(x), 4),
    "count_nonzero": (lambda x: mt.count_nonzero(x), lambda x: torch.count_nonzero(x), 4),
    "logsumexp": (lambda x: mt.logsumexp(x, 0), lambda x: torch.logsumexp(x, 0), 4),
    "norm p=2": (lambda x: mt.norm(x), lambda x: torch.linalg.vector_norm(x), 4),
    "cumsum": (lambda x: mt.cumsum(x, 0), lambda x: torch.cumsum(x, 0), 8),
}


def copy_bandwidth(n, repeats):
    """GB/s of a device-to-device copy of n float32 (bytes read + written)."""
    src, dst = cp.ones(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
    stream = cp.cuda.get_current_stream().ptr
    ms = time_ms(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                                     cp.cuda.runtime.memcpyDeviceToDevice, stream), repeats)
    return ms, 2 * src.nbytes / ms / 1e6


def _same(ours, theirs, what, rtol=1e-3):
    a, b = ours.cpu().numpy().astype(np.float64), theirs.cpu().numpy().astype(np.float64)
    if not np.allclose(a, b, rtol=rtol, atol=1e-3, equal_nan=True):
        raise AssertionError(f"{what}: ours {a.ravel()[:4]} torch {b.ravel()[:4]}")


def bench_streams(n, repeats, copy_gbs):
    rows = []
    host = np.random.default_rng(0).uniform(0.9999, 1.0001, n).astype(np.float32)   # prod stays finite
    ours_x, torch_x = mt.tensor(host, device="cuda"), torch.tensor(host, device="cuda")
    for name, (ours, theirs, per_elem) in STREAMS.items():
        if name == "prod":      # 64M float32 factors: each side's rounding walks off in its own order;
            truth = np.prod(host.astype(np.float64))       # both are checked against float64 instead
            for who, got in (("ours", ours(ours_x)), ("torch", theirs(torch_x))):
                print(f"prod f32 ({who}): {float(got.cpu().numpy()):.6f}, float64 truth {truth:.6f}")
        else:
            _same(ours(ours_x), theirs(torch_x), name, rtol=1e-2 if name == "cumsum" else 1e-3)
        for who, fn, timer in (("ours", lambda: ours(ours_x), time_ms), ("torch", lambda: theirs(torch_x), time_torch)):
            ms = timer(fn, repeats)
            gbs = per_elem * n / ms / 1e6
            rows.append(dict(name=f"{name} f32 ({who})", size=n, ms=ms, gbs=gbs, of_copy=gbs / copy_gbs))
    return rows


def bench_sorts(n_total, repeats):
    rows = []
    rng = np.random.default_rng(1)
    for shape in ((1 << 20,), (n_total // 4096, 4096)):
        host = rng.standard_normal(shape).astype(np.float32)
        ours_x, torch_x = mt.tensor(host, device="cuda"), torch.tensor(host, device="cuda")
        cases = {
            "sort": (lambda: mt.sort(ours_x), lambda: torch.sort(torch_x)),
            "argsort": (lambda: mt.argsort(ours_x), lambda: torch.argsort(torch_x)),
            "topk k=10": (lambda: mt.topk(ours_x, 10), lambda: torch.topk(torch_x, 10)),
        }
        _same(mt.sort(ours_x).values, torch.sort(torch_x).values, f"sort {shape}")
        _same(mt.topk(ours_x, 10).values, torch.topk(torch_x, 10).values, f"topk {shape}")
        for name, (ours, theirs) in cases.items():
            t_ours, t_torch = time_ms(ours, repeats), time_torch(theirs, repeats)
            rows.append(dict(name=f"{name} f32 {'x'.join(map(str, shape))}", size=host.size, ms=t_ours,
                             torch_ms=t_torch, vs_torch=t_torch / t_ours))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    parser.add_argument("--quick", action="store_true", help="16M elements and fewer repeats")
    args = parser.parse_args()
    info = dict(environment("cuda", torch), cuda_runtime=cp.cuda.runtime.runtimeGetVersion(),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), quick=args.quick)
    print(" ".join(f"{k}={v}" for k, v in info.items()))
    repeats = 10 if args.quick else 30
    n = (16 if args.quick else 64) * MB
    copy_ms, copy_gbs = copy_bandwidth(n, repeats)
    results = dict(copy=dict(size=n, ms=copy_ms, gbs=copy_gbs), streams=bench_streams(n, repeats, copy_gbs),
                   sorts=bench_sorts(n, max(3, repeats // 3)))

    print(f"\nreductions and scans of {n} float32 (median CUDA-event ms, L2 flushed); "
          f"d2d copy {copy_gbs:.0f} GB/s ({copy_ms:.3f} ms)")
    print(f"  {'':<32} {'ms':>9} {'GB/s':>8} {'vs copy':>8}")
    for r in results["streams"]:
        print(f"  {r['name']:<32} {r['ms']:9.3f} {r['gbs']:8.0f} {r['of_copy']:8.0%}")
    print("\nsorts (median CUDA-event ms, L2 flushed)")
    print(f"  {'':<32} {'ours ms':>9} {'torch ms':>9} {'torch/ours':>10}")
    for r in results["sorts"]:
        print(f"  {r['name']:<32} {r['ms']:9.3f} {r['torch_ms']:9.3f} {r['vs_torch']:10.2f}")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench_reduce_scan_sort-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(dict(info=info, results=results), indent=1, default=float))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
