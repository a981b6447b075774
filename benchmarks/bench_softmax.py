"""Softmax and cross-entropy on the GPU: correctness against float64, then speed next to PyTorch
and next to what the memory system can do at all (a device-to-device copy).

1. Correctness: softmax, log-softmax, cross-entropy loss and gradient on fresh random data of odd
   shapes (rows of 1, 10, 1000, 1025, 4097, 20000), float32 and float64, against NumPy in float64.
2. Copy bandwidth: ``cudaMemcpyAsync`` device-to-device of the softmax's input size, counted as
   read + write bytes: the ceiling for any op that reads its input once and writes its output once.
3. Softmax and log-softmax over [16384, 4096] float32: ours (``minitorch.softmax``) and
   ``torch.softmax``, each timed with CUDA events on its own stream (warm-up, then the median of
   the repeats); effective bandwidth = (bytes read + written) / time, and its share of the copy's.
4. Cross-entropy forward + backward at [64, 10] (launch-bound: Python and launch costs decide) and
   [4096, 4096] (memory-bound), ours vs PyTorch, autograd included on both sides.

Results go to ``--out`` as JSON (GPU, driver, versions, date, sizes, every number); a compact
table is printed last.

    python benchmarks/bench_softmax.py [--out DIR] [--quick]
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
from minitorch.native import cpu as ref  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

try:
    import torch
except ImportError:          # the table then has no PyTorch column
    torch = None


def torch_cuda():
    return torch is not None and torch.cuda.is_available()


# ---- timing ----------------------------------------------------------------------------------------
def time_cupy(fn, warmup, repeats):
    """Median and min milliseconds of ``fn`` between two CUDA events on CuPy's current stream."""
    import cupy as cp
    for _ in range(warmup):
        fn()
    cp.cuda.runtime.deviceSynchronize()
    samples = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(samples), min(samples)


def time_torch(fn, warmup, repeats):
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
    return statistics.median(samples), min(samples)


# ---- 1. correctness --------------------------------------------------------------------------------
def max_rel(ours, want):
    """Largest |ours - want| / (1 + |want|) over the finite reference values."""
    ours, want = np.asarray(ours, dtype=np.float64), np.asarray(want, dtype=np.float64)
    ok = np.isfinite(want)
    return float(np.max(np.abs(ours[ok] - want[ok]) / (1 + np.abs(want[ok])))) if ok.any() else 0.0


def correctness(rng, quick):
    shapes = [(1, 1), (7, 10), (64, 10), (3, 1000), (5, 1025), (4, 4097), (2, 20000)]
    if not quick:
        shapes += [(1000, 3), (333, 333), (64, 65536)]
    limit = {"float32": 2e-5, "float64": 1e-12}
    rows = []
    for dtype in ("float32", "float64"):
        for shape in shapes:
            x = rng.standard_normal(shape) * 4
            t = rng.integers(0, shape[1], shape[0])
            xd = minitorch.tensor(x, dtype=getattr(minitorch, dtype), device="cuda", requires_grad=True)
            td = minitorch.tensor(t, device="cuda")
            xq = x.astype(dtype).astype(np.float64)            # the same inputs, rounded alike
            loss = F.cross_entropy(xd, td, reduction="sum")
            loss.backward()
            want_loss, lse = ref.cross_entropy(xq, t)
            errs = {
                "softmax": max_rel(minitorch.softmax(xd.detach(), 1).cpu().numpy(), ref.softmax(xq)),
                "log_softmax": max_rel(minitorch.log_softmax(xd.detach(), 1).cpu().numpy(), ref.log_softmax(xq)),
                "ce_loss": max_rel(loss.item(), want_loss.sum()),
                "ce_grad": max_rel(xd.grad.cpu().numpy(), ref.cross_entropy_backward(xq, t, lse, np.float64(1.0))),
                "argmax": float(np.mean(xd.detach().argmax(1).cpu().numpy() != np.argmax(xq, 1))),
            }
            worst = max(errs.values())
            rows.append({"dtype": dtype, "shape": list(shape), **errs, "ok": worst <= limit[dtype]})
    return rows


# ---- 2. copy bandwidth -----------------------------------------------------------------------------
def copy_bandwidth(nbytes, warmup, repeats):
    import cupy as cp
    src, dst = cp.empty(nbytes, dtype=cp.uint8), cp.empty(nbytes, dtype=cp.uint8)
    src.fill(1)
    stream = cp.cuda.get_current_stream()
    D2D = 3                                                    # cudaMemcpyDeviceToDevice
    ms, best = time_cupy(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, D2D, stream.ptr),
                         warmup, repeats)
    return {"bytes": nbytes, "ms": ms, "min_ms": best, "GBps": 2 * nbytes / ms / 1e6}


# ---- 3. softmax ------------------------------------------------------------------------------------
def softmax_speed(rows, n, copy, warmup, repeats):
    from minitorch.native import cuda as gpu
    nbytes = 2 * rows * n * 4                                  # read x once, write y once
    x = minitorch.randn(rows, n, device="cuda")
    xd = x._data                       # the backend's input: a DeviceArray (the kernel-only timing)
    out = []
    cases = [("softmax", lambda: minitorch.softmax(x, -1), lambda: gpu.softmax(xd),
              (lambda tx: torch.softmax(tx, -1))),
             ("log_softmax", lambda: minitorch.log_softmax(x, -1), lambda: gpu.log_softmax(xd),
              (lambda tx: torch.log_softmax(tx, -1)))]
    tx = torch.randn(rows, n, device="cuda") if torch_cuda() else None
    for name, op, raw, theirs in cases:
        ms, best = time_cupy(op, warmup, repeats)
        kms, _ = time_cupy(raw, warmup, repeats)
        row = {"op": name, "shape": [rows, n], "dtype": "float32", "bytes": nbytes,
               "ours_ms": ms, "ours_min_ms": best, "ours_kernel_ms": kms, "ours_GBps": nbytes / ms / 1e6,
               "ours_vs_copy": (nbytes / ms / 1e6) / copy["GBps"]}
        if tx is not None:
            tms, tbest = time_torch(lambda: theirs(tx), warmup, repeats)
            row.update(torch_ms=tms, torch_min_ms=tbest, torch_GBps=nbytes / tms / 1e6,
                       torch_vs_copy=(nbytes / tms / 1e6) / copy["GBps"])
        out.append(row)
    return out


# ---- 4. cross-entropy forward + backward -----------------------------------------------------------
def cross_entropy_speed(shapes, warmup, repeats, rng):
    out = []
    for n_rows, c in shapes:
        x = minitorch.randn(n_rows, c, device="cuda", requires_grad=True)
        t = minitorch.tensor(rng.integers(0, c, n_rows), device="cuda")

        def ours():
            x.grad = None
            F.cross_entropy(x, t).backward()

        ms, best = time_cupy(ours, warmup, repeats)
        row = {"op": "cross_entropy fwd+bwd", "shape": [n_rows, c], "dtype": "float32",
               "bytes": 3 * n_rows * c * 4, "ours_ms": ms, "ours_min_ms": best}
        if torch_cuda():
            tx = torch.randn(n_rows, c, device="cuda", requires_grad=True)
            tt = torch.tensor(rng.integers(0, c, n_rows), device="cuda")

            def theirs():
                tx.grad = None
                torch.nn.functional.cross_entropy(tx, tt).backward()

            tms, tbest = time_torch(theirs, warmup, repeats)
            row.update(torch_ms=tms, torch_min_ms=tbest)
        out.append(row)
    return out


def table(record):
    lines = ["", f"GPU: {record['env'].get('gpu_name')}   copy D2D: {record['copy']['GBps']:.0f} GB/s "
             f"(read + write, {record['copy']['bytes'] / 2**20:.0f} MiB)"]
    bad = [r for r in record["correctness"] if not r["ok"]]
    worst = {d: max(max(r[k] for k in ("softmax", "log_softmax", "ce_loss", "ce_grad"))
                    for r in record["correctness"] if r["dtype"] == d) for d in ("float32", "float64")}
    lines.append(f"correctness vs float64: {len(record['correctness']) - len(bad)}/{len(record['correctness'])} ok; "
                 f"worst rel. error float32 {worst['float32']:.1e}, float64 {worst['float64']:.1e}"
                 + ("" if not bad else f"  FAILED: {[(r['dtype'], r['shape']) for r in bad]}"))
    lines.append(f"{'op':24s} {'shape':>12s} {'ours ms':>9s} {'kernel ms':>9s} {'torch ms':>9s} "
                 f"{'ours GB/s':>9s} {'% copy':>7s} {'torch %copy':>11s} {'ours/torch':>10s}")
    for r in record["softmax"] + record["cross_entropy"]:
        shape = "x".join(map(str, r["shape"]))
        tms = r.get("torch_ms")
        lines.append(f"{r['op']:24s} {shape:>12s} {r['ours_ms']:9.4f} "
                     f"{r.get('ours_kernel_ms', float('nan')):9.4f} {tms if tms is not None else float('nan'):9.4f} "
                     f"{r.get('ours_GBps', float('nan')):9.0f} {100 * r.get('ours_vs_copy', float('nan')):6.1f}% "
                     f"{100 * r.get('torch_vs_copy', float('nan')):10.1f}% "
                     f"{(r['ours_ms'] / tms) if tms else float('nan'):10.2f}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--quick", action="store_true", help="fewer shapes and repeats (a smoke run)")
    args = p.parse_args()
    if not minitorch.cuda.is_available():
        sys.exit("bench_softmax needs CuPy and a CUDA GPU")
    warmup, repeats = (3, 10) if args.quick else (10, 50)
    rng = np.random.default_rng()                               # fresh data every run
    rows, n = 16384, 4096

    record = {"benchmark": "softmax / cross-entropy", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch if torch_cuda() else None),
              "timing": f"CUDA events, {warmup} warm-up runs, median of {repeats}",
              "sizes": {"softmax": [rows, n], "cross_entropy": [[64, 10], [4096, 4096]]}}
    import cupy as cp
    record["env"]["cuda_runtime_version"] = cp.cuda.runtime.runtimeGetVersion()
    print("correctness ...", flush=True)
    record["correctness"] = correctness(rng, args.quick)
    print("copy bandwidth ...", flush=True)
    record["copy"] = copy_bandwidth(rows * n * 4, warmup, repeats)
    print("softmax ...", flush=True)
    record["softmax"] = softmax_speed(rows, n, record["copy"], warmup, repeats)
    print("cross-entropy ...", flush=True)
    record["cross_entropy"] = cross_entropy_speed([(64, 10), (4096, 4096)], warmup, repeats, rng)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = record["env"]["gpu_name"].replace(" ", "-")
    path = out / f"bench_softmax-cuda-{slug}.json"
    path.write_text(json.dumps(record, indent=1))
    print("wrote", path)
    print(table(record))
    if not all(r["ok"] for r in record["correctness"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
