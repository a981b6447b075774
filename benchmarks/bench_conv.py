"""Conv2d on the GPU: every layer of the seed CNN and of LeNet-5, forward and forward+backward, each
rung of our ladder and the dispatcher's choice, against PyTorch's cuDNN (TF32 off).

Layers (float32, batch 64 unless --batch):
    seed.conv1    1 -> 8,  28x28, 3x3, padding 1     seed.conv2    8 -> 16, 14x14, 3x3, padding 1
    lenet.c1      1 -> 6,  28x28, 5x5, padding 2     lenet.c3      6 -> 16, 14x14, 5x5
Each layer also as conv + bias + ReLU: ours fused (``conv2d_relu``: the epilogue) vs
``relu(conv2d(...))`` in PyTorch. A first layer's input is data: its backward computes dL/dw and
dL/db only (as in training); the others compute dL/dx too.

1. Correctness: every rung's output and gradients against PyTorch (float64 on the GPU) before timing.
2. Timing: CUDA events around one call (the Tensor op with autograd, as a model runs it), the L2
   flushed before each repeat (benchmarks/gemm_common.py: ``time_ms``, median of the repeats).
   PyTorch runs with ``torch.backends.cudnn.benchmark = True`` (its fastest algorithm per shape);
   ours with the rule of ``minitorch/native/cuda/conv.py:choose`` ("auto"), in benchmark mode
   ("auto-timed": ``minitorch.backends.cudnn.benchmark``), and with each rung forced.

Results go to ``--out`` as JSON (GPU, versions, date, shapes, every number); a table is printed.

    python benchmarks/bench_conv.py [--out DIR] [--batch 64] [--repeats 50]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import minitorch as mt  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from gemm_common import set_torch_tf32, time_ms  # noqa: E402
from minitorch import backends  # noqa: E402
from minitorch.native.cuda import conv  # noqa: E402
from minitorch.ops.conv import conv2d_relu  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

import torch  # noqa: E402

LAYERS = [  # name, in channels, out channels, H = W, kernel, padding
    ("seed.conv1", 1, 8, 28, 3, 1),
    ("seed.conv2", 8, 16, 14, 3, 1),
    ("lenet.c1", 1, 6, 28, 5, 2),
    ("lenet.c3", 6, 16, 14, 5, 0),
]
CHOICES = ("auto", "auto-timed") + conv.RUNGS


def _inputs(batch, c, k, hw, ksize, dtype, rng):
    x = rng.standard_normal((batch, c, hw, hw))
    w = rng.standard_normal((k, c, ksize, ksize)) / np.sqrt(c * ksize * ksize)
    b = rng.standard_normal(k) * 0.1
    return x, w, b


def _ours(arrays, dtype, need_x):
    x, w, b = (mt.tensor(a, device="cuda", dtype=dtype) for a in arrays)
    x.requires_grad_(need_x)
    w.requires_grad_(True)
    b.requires_grad_(True)
    return x, w, b


def _theirs(arrays, dtype, need_x):
    x, w, b = (torch.tensor(a, device="cuda", dtype=dtype) for a in arrays)
    x.requires_grad_(need_x)
    w.requires_grad_(True)
    b.requires_grad_(True)
    return x, w, b


def _mode(choice):
    """(context forcing a rung or None, benchmark flag) for one of CHOICES."""
    if choice in conv.RUNGS:
        return conv.use_rung(choice), False
    return conv.use_rung(None), choice == "auto-timed"


def _step(lib, x, w, b, pad, fused, backward, gy):
    """One forward (and backward) of the layer; ``lib`` 'ours' or 'torch'."""
    if lib == "ours":
        y = conv2d_relu(x, w, b, padding=pad) if fused else F.conv2d(x, w, b, padding=pad)
    else:
        y = torch.nn.functional.conv2d(x, w, b, padding=pad)
        y = torch.relu(y) if fused else y
    if backward:
        for t in (x, w, b):
            t.grad = None
        y.backward(gy)
    return y


def check(batch, rng):
    """Every choice's output and gradients vs PyTorch, float64 on the GPU: max relative errors."""
    rows = []
    for name, c, k, hw, ks, pad in LAYERS:
        arrays = _inputs(batch, c, k, hw, ks, "float64", rng)
        for fused in (False, True):
            tx, tw, tb = _theirs(arrays, torch.float64, True)
            ty = _step("torch", tx, tw, tb, pad, fused, False, None)
            gy = rng.standard_normal(tuple(ty.shape))
            ty.backward(torch.tensor(gy, device="cuda"))
            want = [ty.detach(), tx.grad, tw.grad, tb.grad]
            for choice in CHOICES:
                ctx, bench = _mode(choice)
                backends.cudnn.benchmark = bench
                with ctx:
                    x, w, b = _ours(arrays, mt.float64, True)
                    y = _step("ours", x, w, b, pad, fused, True, mt.tensor(gy, device="cuda"))
                backends.cudnn.benchmark = False
                errs = {}
                for what, got, ref in zip(("y", "dx", "dw", "db"), [y.detach(), x.grad, w.grad, b.grad], want):
                    r = ref.cpu().numpy()
                    errs[what] = float(np.abs(got.cpu().numpy() - r).max() / max(np.abs(r).max(), 1e-30))
                ok = max(errs.values()) < 1e-10
                rows.append({"layer": name, "fused_relu": fused, "choice": choice, "max_rel_err": errs, "ok": ok})
                if not ok:
                    print(f"WRONG: {name} fused={fused} {choice}: {errs}")
    return rows


def race(batch, repeats, rng):
    rows = []
    for name, c, k, hw, ks, pad in LAYERS:
        arrays = _inputs(batch, c, k, hw, ks, "float32", rng)
        need_x = c > 1                      # a first layer's input is the data
        shape = {"x": [batch, c, hw, hw], "w": [k, c, ks, ks], "padding": pad}
        for fused in (False, True):
            for backward in (False, True):
                tx, tw, tb = _theirs(arrays, torch.float32, need_x)
                p = (hw + 2 * pad - ks + 1)
                tgy = torch.ones((batch, k, p, p), device="cuda")
                torch_ms = time_ms(lambda: _step("torch", tx, tw, tb, pad, fused, backward, tgy), repeats)
                row = {"layer": name, "shape": shape, "fused_relu": fused,
                       "pass": "forward+backward" if backward else "forward", "torch_cudnn_ms": torch_ms}
                x, w, b = _ours(arrays, mt.float32, need_x)
                gy = mt.ones(batch, k, p, p, device="cuda")
                for choice in CHOICES:
                    ctx, bench = _mode(choice)
                    backends.cudnn.benchmark = bench
                    with ctx:
                        ms = time_ms(lambda: _step("ours", x, w, b, pad, fused, backward, gy), repeats)
                    backends.cudnn.benchmark = False
                    row[f"{choice}_ms"] = ms
                    row[f"{choice}_speedup_vs_cudnn"] = torch_ms / ms
                row["auto_rungs"] = {pname: conv.choose(pname, tuple(shape["x"]), tuple(shape["w"]), 1)
                                     for pname in conv.PASSES}
                rows.append(row)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--repeats", type=int, default=50)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    tf32 = set_torch_tf32(torch, False)
    torch.backends.cudnn.benchmark = True
    checks = check(args.batch, rng)
    rows = race(args.batch, args.repeats, rng)
    record = {"benchmark": "conv2d: seed CNN and LeNet-5 layers", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch), "batch": args.batch, "dtype": "float32", "repeats": args.repeats,
              "torch_settings": {**tf32, "cudnn.benchmark": True}, "timing": "CUDA events, L2 flushed, median",
              "checks": checks, "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = (record["env"]["gpu_name"] or "gpu").replace(" ", "-").lower()
    path = out / f"bench_conv-{slug}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1))

    print(f"correctness: {sum(r['ok'] for r in checks)}/{len(checks)} choices match PyTorch (float64)")
    head = f"{'layer':<11} {'relu':<5} {'pass':<17} {'cuDNN us':>9} " + " ".join(f"{c:>17}" for c in CHOICES)
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = " ".join(f"{r[c + '_ms'] * 1e3:8.1f} ({r[c + '_speedup_vs_cudnn']:4.2f}x)" for c in CHOICES)
        print(f"{r['layer']:<11} {'fused' if r['fused_relu'] else '-':<5} {r['pass']:<17} "
              f"{r['torch_cudnn_ms'] * 1e3:9.1f} {cells}")
    print(f"(us per call; (x) = cuDNN time / ours, > 1 is faster than cuDNN)  -> {path}")


if __name__ == "__main__":
    main()
