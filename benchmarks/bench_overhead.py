"""Per-op overhead: how long one tiny op takes from Python, ours vs PyTorch, in the same run.

For tiny tensors the GPU finishes each kernel in a few microseconds, so the host's cost of
launching (Python dispatch, argument packing, the CUDA launch call) decides the speed. We time a
loop of N ops with a host clock, after a synchronize, and divide by N: microseconds per op. Rounds
of ours and PyTorch's alternate, and each side's median over the rounds is reported.

    python benchmarks/bench_overhead.py [--device cuda] [--out DIR]
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import minitorch  # noqa: E402
import torch  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402


def loop_us(fn, sync, n):
    """Microseconds per call of ``fn`` over a loop of ``n`` calls, waiting for the GPU at the end."""
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t0) / n * 1e6


def per_op_us(ours, theirs, sync_ours, sync_theirs, n=2000, rounds=15):
    """(median, min) microseconds per op for each side. Rounds alternate ours, theirs, ours...
    so that a slow stretch of the host (clock changes, another process) hits both sides alike."""
    for fn, sync in ((ours, sync_ours), (theirs, sync_theirs)):
        for _ in range(50):
            fn()
        sync()
    mine, other = [], []
    for _ in range(rounds):
        mine.append(loop_us(ours, sync_ours, n))
        other.append(loop_us(theirs, sync_theirs, n))
    return (statistics.median(mine), min(mine)), (statistics.median(other), min(other))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if minitorch.cuda.is_available() else "cpu")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = p.parse_args()
    dev = args.device
    sync_ours = minitorch.cuda.synchronize if dev == "cuda" else (lambda: None)
    sync_theirs = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    a, b = minitorch.ones(1000, device=dev), minitorch.ones(1000, device=dev)
    ta, tb = torch.ones(1000, device=dev), torch.ones(1000, device=dev)
    cases = {
        "fill_ (1000 f32)": (lambda: a.fill_(1.0), lambda: ta.fill_(1.0)),
        "a + b (1000 f32)": (lambda: a + b, lambda: ta + tb),
        "a * 2.0 (1000 f32)": (lambda: a * 2.0, lambda: ta * 2.0),
        "a.sigmoid() (1000 f32)": (lambda: a.sigmoid(), lambda: ta.sigmoid()),
    }
    rows = []
    for name, (ours, theirs) in cases.items():
        o, t = per_op_us(ours, theirs, sync_ours, sync_theirs)
        rows.append({"op": name, "ours_us": o[0], "ours_min_us": o[1], "theirs_us": t[0], "theirs_min_us": t[1],
                     "ratio": o[0] / t[0]})
        print(f"{name:24s} ours {o[0]:7.2f} us/op   PyTorch {t[0]:7.2f} us/op   ours/theirs {o[0] / t[0]:.2f}")
    record = {"benchmark": "per-op overhead", "device": dev, "unit": "microseconds per op (host loop of 2000, median of 15 alternating rounds)",
              "rows": rows, "env": environment(dev, torch), "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"bench_overhead-{dev}-{(record['env'].get('gpu_name') or 'cpu').replace(' ', '-')}.json"
    (out / name).write_text(json.dumps(record, indent=1))
    print("wrote", out / name)


if __name__ == "__main__":
    main()
