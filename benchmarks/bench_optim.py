"""One optimizer step over many parameters: our multi-tensor kernel (one launch per group) against
one launch per parameter, and against PyTorch's Adam (fused=True, foreach=True, for-loop), on the
same GPU.

The parameters have the shapes of a small GPT (12 blocks of d=768: 148 tensors, 85M elements) or,
with ``--small``, of the MNIST MLP (784-128-10: 4 tensors). For each variant: host microseconds per
``step()`` (what the Python loop pays) and GPU microseconds per step (CUDA events around 20 steps),
medians of 5 rounds after a warm-up. float32 parameters and gradients, Adam(lr=1e-3).

    python benchmarks/bench_optim.py [--small] [--out DIR]

Prints a table and writes JSON (GPU name, versions, date) to benchmarks/results/.
"""
import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import cupy as cp
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import minitorch as mt  # noqa: E402


def shapes(small):
    if small:
        return [(128, 784), (128,), (10, 128), (10,)]
    d, out = 768, []
    for _ in range(12):      # per block: 2 layer norms, qkv and output projections, a 4d MLP
        out += [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    return out + [(50257 // 8, d), (1024, d), (d,), (d,)]     # embeddings (a 1/8 vocabulary), final norm


def timed(step, rounds=5, steps=20):
    """(host us, GPU us) per step: medians over rounds; the GPU time from CUDA events."""
    step()
    cp.cuda.Device().synchronize()
    host, gpu = [], []
    for _ in range(rounds):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        host.append((time.perf_counter() - t0) / steps * 1e6)
        end.record()
        end.synchronize()
        gpu.append(cp.cuda.get_elapsed_time(start, end) / steps * 1e3)
    return statistics.median(host), statistics.median(gpu)


def ours(sizes, per_parameter):
    params = [mt.randn(s, device="cuda", requires_grad=True) for s in sizes]
    for p in params:
        p.grad = mt.randn(tuple(p.shape), device="cuda")
    opts = [mt.optim.Adam([p], lr=1e-3) for p in params] if per_parameter else [mt.optim.Adam(params, lr=1e-3)]
    return lambda: [o.step() for o in opts]


def theirs(sizes, **kw):
    params = [torch.randn(s, device="cuda", requires_grad=True) for s in sizes]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(params, lr=1e-3, **kw)
    return opt.step


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()
    sizes = shapes(args.small)
    rows = {"minitorch Adam, multi-tensor (1 launch)": ours(sizes, False),
            "minitorch Adam, one launch per parameter": ours(sizes, True),
            "torch Adam fused=True": theirs(sizes, fused=True),
            "torch Adam foreach=True": theirs(sizes, foreach=True),
            "torch Adam foreach=False (for-loop)": theirs(sizes, foreach=False)}
    n = sum(torch.Size(s).numel() for s in sizes)
    print(f"{len(sizes)} tensors, {n / 1e6:.1f}M float32 elements, {torch.cuda.get_device_name()}")
    results = {}
    for name, step in rows.items():
        host, gpu = timed(step)
        results[name] = {"host_us": host, "gpu_us": gpu}
        print(f"{name:45s} host {host:9.1f} us   gpu {gpu:9.1f} us")
    gpu_name = torch.cuda.get_device_name()
    record = {"gpu": gpu_name, "torch": torch.__version__, "cupy": cp.__version__, "tensors": len(sizes),
              "elements": n, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "results": results}
    out = Path(args.out) / f"bench_optim-{'small' if args.small else 'gpt'}-{gpu_name.lower().replace(' ', '-')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    print("wrote", out)


if __name__ == "__main__":
    main()
