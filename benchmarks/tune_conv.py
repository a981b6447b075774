"""Tune the convolution dispatcher: time every rung of the ladder for every pass on the course's
conv shapes and write the table ``minitorch/cuda/conv/tuned.json`` that
``minitorch/native/cuda/conv.py`` reads (shapes it does not hold follow ``choose``'s rule).

Shapes (float32, 3x3 or 5x5 kernels, stride 1): the seed CNN's two layers and LeNet-5's C1 and C3
(each followed by ReLU and MaxPool2d(2): the fused pooled forward is timed too), and the
Fashion-MNIST CNN's four (1->32 and 32->32 at 28x28, 32->64 and 64->64 at 14x14, no bias), at the
training batch (64) and the notebook's evaluation batch (500; forward passes only).

Passes: 'forward' (conv2d + bias), 'input_grad', 'weight_grad' (with dL/db when the layer has a
bias), 'forward_maxpool2' (conv2d_max_pool2d with the ReLU). Each rung is forced with
``conv.use_rung`` and the backend function called on raw arrays; time: CUDA events around one
call, the L2 flushed before each (benchmarks/gemm_common.py ``time_ms``), median of --repeats.
The input gradient of a training layer is then chosen again, by the whole block's forward+backward
as a model runs it (autograd; the fused conv + ReLU + pool where the layer has one) with each rung
for dL/dx, the rungs taking turns call by call: a pass timed alone misses the host's cost to issue
it, which is what these small layers' steps are made of (``_block_input_grad``).
The table holds, per compute capability and dtype, the fastest rung of each pass per problem
(keyed by the problem's ConvGeom ints, ``conv.geometry``'s ``key``) with every time measured; the
run's full record (GPU, versions, times) goes to --out as JSON as well.

    python benchmarks/tune_conv.py [--repeats 30] [--out DIR] [--no-write]
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
from gemm_common import time_interleaved_ms, time_ms  # noqa: E402
from minitorch.native.cuda import conv  # noqa: E402
from minitorch.utils.race import environment, slug  # noqa: E402

import cupy as cp  # noqa: E402

# name, in channels, out channels, H = W, kernel, padding, bias, followed by ReLU + MaxPool2d(2)
LAYERS = [
    ("seed.conv1", 1, 8, 28, 3, 1, True, True),
    ("seed.conv2", 8, 16, 14, 3, 1, True, True),
    ("lenet.c1", 1, 6, 28, 5, 2, True, True),
    ("lenet.c3", 6, 16, 14, 5, 0, True, True),
    ("fashion.b1c1", 1, 32, 28, 3, 1, False, False),
    ("fashion.b1c2", 32, 32, 28, 3, 1, False, False),
    ("fashion.b2c1", 32, 64, 14, 3, 1, False, False),
    ("fashion.b2c2", 64, 64, 14, 3, 1, False, False),
]
TRAIN_BATCH, EVAL_BATCH = 64, 500
ONE = (1, 1)


def _problem(batch, c, k, hw, ks, pad, bias, rng):
    """Raw float32 arrays (x, w, b or None, dy) and the conv2d arguments of one layer."""
    pads = ((pad, pad), (pad, pad))
    p = hw + 2 * pad - ks + 1
    dev = (lambda a: mt.tensor(a, device="cuda", dtype=mt.float32)._data)
    x = dev(rng.standard_normal((batch, c, hw, hw)))
    w = dev(rng.standard_normal((k, c, ks, ks)) / np.sqrt(c * ks * ks))
    b = dev(rng.standard_normal(k)) if bias else None
    dy = dev(rng.standard_normal((batch, k, p, p)))
    return x, w, b, dy, (ONE, pads, ONE, 1)


def _calls(x, w, b, dy, args, pooled, training):
    """pass name -> a function running that pass once (the rung is forced around it)."""
    calls = {"forward": lambda: conv.conv2d(x, w, b, *args)}
    if pooled:
        calls["forward_maxpool2"] = lambda: conv.conv2d_max_pool2d(x, w, b, *args, activation="relu")
    if training:
        calls["input_grad"] = lambda: conv.conv2d_input_grad(dy, w, x.shape, *args)
        calls["weight_grad"] = lambda: conv.conv2d_weight_grad(dy, x, w.shape, *args, bias_grad=b is not None)
    return calls


def _block_input_grad(table, key, arrays, pad, pooled, repeats):
    """{rung: us} of the layer's whole forward+backward as a model runs it (Tensor ops, autograd;
    conv + ReLU + 2x2 max-pool fused when ``pooled``) with each rung for dL/dx and the table's
    rungs for the other passes: the input gradient's rung is chosen by this, not by its pass alone.

    Why: these layers are small, and a training step issues its passes back to back, so the step
    costs about the larger of the host's time to issue all of them and the GPU's to run them all.
    A rung whose pass is fast on the GPU but takes more launches (02_im2col: a GEMM, its dispatch,
    col2im) can lose the step to one slower on the GPU that is a single launch (LeNet C3 on the
    H100: dL/dx alone 28 us by 02 vs 68 by 03, the whole block 300 vs 206 us)."""
    x, w, b, dy = (None if a is None else mt.Tensor(a, mt.device("cuda:0")) for a in arrays)
    x.requires_grad_(True)
    w.requires_grad_(True)
    if b is not None:
        b.requires_grad_(True)
    gy = mt.ones(*(dy.shape[:2] + tuple(n // 2 for n in dy.shape[2:])), device="cuda") if pooled else dy

    def step():
        y = (F.conv2d_relu_max_pool2d(x, w, b, padding=pad) if pooled else F.conv2d(x, w, b, padding=pad))
        for t in (x, w, b):
            if t is not None:
                t.grad = None
        y.backward(gy)

    def prepare(rung):          # the table as tuned so far, with this rung for dL/dx
        conv._tuned = {f"sm_{cp.cuda.Device().compute_capability}": {"f32": {key: {"rungs": {
            **table[key]["rungs"], "input_grad": rung}}}}}
        conv._tuned_rung.cache_clear()
    try:
        ms = time_interleaved_ms({rung: step for rung in conv.RUNGS}, repeats, prepare=prepare)
    finally:
        conv._tuned = None              # read tuned.json again on next use
        conv._tuned_rung.cache_clear()
    return {rung: round(t * 1e3, 2) for rung, t in ms.items()}


def tune(repeats, rng):
    """(table rows {key: row}, the list of every measurement)."""
    table, record = {}, []
    for name, c, k, hw, ks, pad, bias, pooled in LAYERS:
        for batch in (TRAIN_BATCH, EVAL_BATCH):
            x, w, b, dy, args = _problem(batch, c, k, hw, ks, pad, bias, rng)
            geom, _ = conv.geometry(x.shape, w.shape, *args)
            shape = f"{name} batch {batch}: x {list(x.shape)}, w {list(w.shape)}, padding {pad}, bias {bias}"
            us = {}
            for pass_name, call in _calls(x, w, b, dy, args, pooled, batch == TRAIN_BATCH).items():
                us[pass_name] = {}
                for rung in conv.RUNGS:
                    with conv.use_rung(rung):
                        us[pass_name][rung] = round(time_ms(call, repeats) * 1e3, 2)
            rungs = {p: min(t, key=t.get) for p, t in us.items()}
            table[geom.key] = {"shape": shape, "rungs": rungs, "us": us}
            if batch == TRAIN_BATCH and c > 1:          # a first layer computes no dL/dx
                us["block_input_grad"] = _block_input_grad(table, geom.key, (x, w, b, dy), pad, pooled, repeats)
                rungs["input_grad"] = min(us["block_input_grad"], key=us["block_input_grad"].get)
            record.append({"layer": name, "batch": batch, "key": geom.key, "rungs": rungs, "us": us})
            print(f"{shape}")
            for p, t in us.items():
                cells = "  ".join(f"{r} {v:8.1f}" for r, v in t.items())
                print(f"    {p:<17} {cells}   -> {rungs['input_grad' if p == 'block_input_grad' else p]}")
    return table, record


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--no-write", action="store_true", help="do not update minitorch/cuda/conv/tuned.json")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    arch = f"sm_{cp.cuda.Device().compute_capability}"
    table, record = tune(args.repeats, rng)
    env = environment("cuda", None)
    if not args.no_write:
        full = json.loads(conv.TUNED_JSON.read_text()) if conv.TUNED_JSON.exists() else {}
        full.setdefault(arch, {})["f32"] = table
        full["_about"] = (f"benchmarks/tune_conv.py: {arch} on {env.get('gpu_name')}, {time.strftime('%Y-%m-%d %H:%M')} "
                          f"UTC, CUDA events, L2 flushed, median of {args.repeats}; us = microseconds per call")
        conv.TUNED_JSON.write_text(json.dumps(full, indent=1, sort_keys=True) + "\n")
        print(f"table -> {conv.TUNED_JSON}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"tune_conv-{slug(env.get('gpu_name') or 'gpu')}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"arch": arch, "env": env, "repeats": args.repeats, "dtype": "float32",
                                "timing": "CUDA events, L2 flushed, median", "rows": record}, indent=1))
    print(f"record -> {path}")


if __name__ == "__main__":
    main()
