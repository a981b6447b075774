"""The fused conv -> ReLU -> MaxPool2d(2) (``F.conv2d_relu_max_pool2d``: rung 03 pools in its
epilogue) on the GPU, in about a minute on an H100: first checked, then timed.

Layers (the conv -> ReLU -> MaxPool2d(2) blocks of the course, batch 64 unless --batch):
    seed.conv1    1 -> 8,  28x28, 3x3, padding 1     seed.conv2    8 -> 16, 14x14, 3x3, padding 1
    lenet.c1      1 -> 6,  28x28, 5x5, padding 2     lenet.c3      6 -> 16, 14x14, 5x5

1. Checks, float64 on the GPU, with every rung forced and with the dispatcher's choice: the fused
   op against our unfused path (conv2d_relu, then max_pool2d with return_indices) and against
   PyTorch (conv2d, relu, max_pool2d): pooled values, argmax indices (exactly), dL/dx, dL/dw, dL/db
   (max relative error). float32: fused against unfused with the dispatcher's rungs (the same
   sums: expected bit-identical).
2. Timing, float32, forward and forward+backward of the block as a model runs it (Tensor ops with
   autograd; a first layer's backward computes dL/dw and dL/db only): ours fused, ours
   conv2d_relu + max_pool2d, ours conv2d + relu + max_pool2d, and PyTorch with cuDNN
   (``cudnn.benchmark = True``, TF32 off on both sides). CUDA events around one call, the L2
   flushed before each, median of --repeats; the four contenders take turns call by call
   (benchmarks/gemm_common.py ``time_interleaved_ms``), so that the host's drift hits all alike.

A table is printed; the JSON record (GPU, versions, every number) goes to $OUT (or --out).

    python benchmarks/check_conv_fused.py [--batch 64] [--repeats 50] [--out DIR]
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import minitorch as mt  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from gemm_common import set_torch_tf32, time_interleaved_ms  # noqa: E402
from minitorch.native.cuda import conv  # noqa: E402
from minitorch.ops.conv import conv2d_relu  # noqa: E402
from minitorch.utils.race import environment, slug  # noqa: E402

import torch  # noqa: E402

LAYERS = [  # name, in channels, out channels, H = W, kernel, padding
    ("seed.conv1", 1, 8, 28, 3, 1),
    ("seed.conv2", 8, 16, 14, 3, 1),
    ("lenet.c1", 1, 6, 28, 5, 2),
    ("lenet.c3", 6, 16, 14, 5, 0),
]
PATHS = ("fused", "conv_relu+pool", "conv+relu+pool")      # ours; then "cudnn"
NAMES = ("pooled", "indices", "dx", "dw", "db")


def _inputs(batch, c, k, hw, ks, rng):
    return (rng.standard_normal((batch, c, hw, hw)), rng.standard_normal((k, c, ks, ks)) / np.sqrt(c * ks * ks),
            rng.standard_normal(k) * 0.1)


def _block(lib, path, x, w, b, pad):
    """(pooled, indices) of one conv -> ReLU -> MaxPool2d(2) block: ``lib`` 'ours' or 'torch'."""
    if lib == "torch":
        return torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(x, w, b, padding=pad)), 2,
                                              return_indices=True)
    if path == "fused":
        return F.conv2d_relu_max_pool2d(x, w, b, padding=pad, return_indices=True)
    y = conv2d_relu(x, w, b, padding=pad) if path == "conv_relu+pool" else F.relu(F.conv2d(x, w, b, padding=pad))
    return F.max_pool2d(y, 2, return_indices=True)


def _tensors(lib, arrays, dtype, need_x):
    make = ((lambda a: mt.tensor(a, device="cuda", dtype=dtype)) if lib == "ours"
            else (lambda a: torch.tensor(a, device="cuda", dtype=dtype)))
    x, w, b = (make(a) for a in arrays)
    x.requires_grad_(need_x)
    w.requires_grad_(True)
    b.requires_grad_(True)
    return x, w, b


def _results(lib, path, arrays, gy, dtype, rung=None):
    """[pooled, indices, dx, dw, db] as NumPy arrays, ``rung`` forced (ours; None: the dispatcher)."""
    x, w, b = _tensors(lib, arrays[:3], dtype, True)
    with conv.use_rung(rung):
        y, idx = _block(lib, path, x, w, b, arrays[3])
        g = mt.tensor(gy, device="cuda", dtype=dtype) if lib == "ours" else torch.tensor(gy, device="cuda", dtype=dtype)
        y.backward(g)
    return [t.detach().cpu().numpy() for t in (y, idx, x.grad, w.grad, b.grad)]


def _rel(got, ref):
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))


def check(batch, rng):
    rows, ok = [], True
    for name, c, k, hw, ks, pad in LAYERS:
        arrays = _inputs(batch, c, k, hw, ks, rng) + (pad,)
        p = (hw + 2 * pad - ks + 1) // 2
        gy = rng.standard_normal((batch, k, p, p))
        want = _results("torch", None, arrays, gy, torch.float64)
        for rung in (None,) + conv.RUNGS:
            fused = _results("ours", "fused", arrays, gy, mt.float64, rung)
            plain = _results("ours", "conv_relu+pool", arrays, gy, mt.float64, rung)
            row = {"layer": name, "dtype": "float64", "rung": rung or "auto"}
            for what, f, u, t in zip(NAMES, fused, plain, want):
                if what == "indices":
                    row["indices_equal_unfused"] = bool((f == u).all())
                    row["indices_equal_torch"] = bool((f == t).all())
                else:
                    row[f"{what}_rel_err_unfused"] = _rel(f, u)
                    row[f"{what}_rel_err_torch"] = _rel(f, t)
            row["ok"] = (row["indices_equal_unfused"] and row["indices_equal_torch"]
                         and max(v for key, v in row.items() if key.endswith("rel_err_unfused")) < 1e-12
                         and max(v for key, v in row.items() if key.endswith("rel_err_torch")) < 1e-10)
            ok &= row["ok"]
            rows.append(row)
            if not row["ok"]:
                print(f"WRONG: {row}")
        fused = _results("ours", "fused", arrays, gy, mt.float32)
        plain = _results("ours", "conv_relu+pool", arrays, gy, mt.float32)
        diffs = {what: float(np.abs(f.astype(np.float64) - u).max()) for what, f, u in zip(NAMES, fused, plain)}
        rows.append({"layer": name, "dtype": "float32", "rung": "auto", "max_abs_diff_unfused": diffs,
                     "ok": max(diffs.values()) == 0})
        if max(diffs.values()) != 0:
            print(f"NOTE float32 {name}: fused differs from unfused by {diffs} (expected bit-identical)")
    return rows, ok


def race(batch, repeats, rng):
    rows = []
    for name, c, k, hw, ks, pad in LAYERS:
        arrays = _inputs(batch, c, k, hw, ks, rng)
        need_x = c > 1                      # a first layer's input is the data
        p = (hw + 2 * pad - ks + 1) // 2
        for backward in (False, True):
            row = {"layer": name, "x": [batch, c, hw, hw], "w": [k, c, ks, ks], "padding": pad,
                   "pass": "forward+backward" if backward else "forward"}
            steps = {}
            for lib, path in [("ours", q) for q in PATHS] + [("torch", None)]:
                steps[path or "cudnn"] = _step(lib, path, arrays, pad, need_x, backward, (batch, k, p, p))
            for path, ms in time_interleaved_ms(steps, repeats).items():
                row[f"{path}_us"] = ms * 1e3
            for path in PATHS:
                row[f"{path}_speedup_vs_cudnn"] = row["cudnn_us"] / row[f"{path}_us"]
            row["fused_speedup_vs_unfused"] = row["conv_relu+pool_us"] / row["fused_us"]
            rows.append(row)
    return rows


def _step(lib, path, arrays, pad, need_x, backward, pooled_shape):
    """One forward (and backward) of the block on fresh leaf tensors, as a training step runs it."""
    x, w, b = _tensors(lib, arrays, torch.float32 if lib == "torch" else mt.float32, need_x)
    gy = torch.ones(pooled_shape, device="cuda") if lib == "torch" else mt.ones(*pooled_shape, device="cuda")

    def step():
        y, _ = _block(lib, path, x, w, b, pad)
        if backward:
            for t in (x, w, b):
                t.grad = None
            y.backward(gy)
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).resolve().parent / "results"))
    args = p.parse_args()
    rng = np.random.default_rng(0)
    tf32 = set_torch_tf32(torch, False)
    torch.backends.cudnn.benchmark = True
    started = time.time()
    checks, ok = check(args.batch, rng)
    rows = race(args.batch, args.repeats, rng)
    env = environment("cuda", torch)
    record = {"benchmark": "conv2d -> ReLU -> MaxPool2d(2): fused vs unfused vs cuDNN",
              "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "env": env, "batch": args.batch, "dtype": "float32",
              "repeats": args.repeats, "torch_settings": {**tf32, "cudnn.benchmark": True},
              "timing": "CUDA events, L2 flushed, median; contenders interleaved call by call", "checks_ok": ok,
              "checks": checks, "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"check_conv_fused-{slug(env['gpu_name'] or 'gpu')}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1))

    n_ok = sum(r["ok"] for r in checks if r["dtype"] == "float64")
    print(f"correctness (float64, fused vs unfused and vs torch, every rung): {n_ok}/"
          f"{sum(r['dtype'] == 'float64' for r in checks)} ok; float32 bit-identical to unfused: "
          f"{sum(r['ok'] for r in checks if r['dtype'] == 'float32')}/{len(LAYERS)}")
    head = (f"{'layer':<11} {'pass':<17} {'cuDNN us':>9} " + " ".join(f"{q:>20}" for q in PATHS)
            + f" {'fused/unfused':>14}")
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = " ".join(f"{r[q + '_us']:10.1f} ({r[q + '_speedup_vs_cudnn']:4.2f}x)" for q in PATHS)
        print(f"{r['layer']:<11} {r['pass']:<17} {r['cudnn_us']:9.1f} {cells} {r['fused_speedup_vs_unfused']:13.2f}x")
    print(f"(us per call; (x) = cuDNN time / ours, > 1 is faster than cuDNN; fused/unfused = conv_relu+pool time "
          f"/ fused time)  {time.time() - started:.0f} s -> {path}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
