"""LayerNorm forward and backward on the GPU: ours next to PyTorch's and next to a copy of the same
bytes (what the memory system can do at all).

Shapes: nanoGPT's activations [64 * 256, 384], GPT-2 small's [8 * 1024, 768], a short row
[2048, 64], an odd row [8192, 383], [4096, 1024], and long rows [1024, 8192] (the largest the fused
backward holds in registers) and [256, 16384] (its two-pass fallback); float32 and bfloat16.

For each case:
* correctness first: y, dx, dweight, dbias against PyTorch's on the same inputs (max abs. error
  divided by max(1, max |torch's|), compared in float32);
* kernel times by CUDA events, the L2 cache flushed before every call, the median of the repeats
  (gemm_common.time_ms): our backend functions on DeviceArrays (no Tensor layer) and PyTorch's aten
  ops (native_layer_norm, native_layer_norm_backward with all three gradients);
* bytes that must move: forward reads x and writes y, backward reads x and dy and writes dx (the
  weights, saved statistics and partial sums are not counted); GB/s = bytes / time;
* the copy: cudaMemcpyAsync device-to-device of half those bytes (it reads and writes them), timed
  the same way: "% copy" = our GB/s / the copy's.
"bwd no-affine" is our backward without a weight (dx only: no partial sums, no second kernel): the
difference to "bwd" is what dweight/dbias cost.

Targets (issue 15): forward and backward >= 85% of the copy and >= 1.0x PyTorch.

    python benchmarks/bench_layernorm.py [--out DIR] [--quick]      (DIR defaults to $OUT or results/)
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
import minitorch  # noqa: E402
from gemm_common import time_ms  # noqa: E402
from minitorch.utils.race import environment, slug  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SHAPES = [(64 * 256, 384), (8 * 1024, 768), (2048, 64), (8192, 383), (4096, 1024), (1024, 8192), (256, 16384)]
DTYPES = ("float32", "bfloat16")
EPS = 1e-5


def copy_ms(nbytes, repeats):
    """Milliseconds of a device-to-device copy of ``nbytes`` (it moves 2 * nbytes)."""
    import cupy as cp
    src, dst = cp.empty(nbytes, dtype=cp.uint8), cp.empty(nbytes, dtype=cp.uint8)
    src.fill(1)
    stream = cp.cuda.get_current_stream()
    return time_ms(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr), repeats)


def _np(t):
    return t.float().cpu().numpy()


def _err(ours, theirs):
    """max |ours - theirs| / max(1, max |theirs|), in float32."""
    a, b = _np(ours), _np(theirs)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def case(rows, n, dtype, rng, repeats):
    """One shape and dtype: errors and the timings of each op, as table rows."""
    from minitorch.native import cuda as gpu
    mdt, tdt = getattr(minitorch, dtype), getattr(torch, dtype)
    host = [rng.standard_normal(s).astype(np.float32) for s in ((rows, n), (n,), (n,), (rows, n))]
    x, w, b, dy = (minitorch.tensor(a, device="cuda").to(mdt) for a in host)
    tx, tw, tb, tdy = (torch.tensor(a, device="cuda").to(tdt) for a in host)
    xd, wd, bd, dyd = x._data, w._data, b._data, dy._data
    dev = x.device

    y, mean, rstd = gpu.layer_norm(xd, wd, bd, EPS)
    ty, tmean, trstd = torch.ops.aten.native_layer_norm(tx, [n], tw, tb, EPS)
    grads = gpu.layer_norm_backward(dyd, xd, mean, rstd, wd)
    tgrads = torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True])
    fwd_err = _err(minitorch.Tensor(y, dev), ty)
    bwd_err = max(_err(minitorch.Tensor(o, dev), t) for o, t in zip(grads, tgrads))

    size = rows * n * x.element_size()
    ops = [
        ("fwd", 2 * size, fwd_err, lambda: gpu.layer_norm(xd, wd, bd, EPS),
         lambda: torch.ops.aten.native_layer_norm(tx, [n], tw, tb, EPS)),
        ("bwd", 3 * size, bwd_err, lambda: gpu.layer_norm_backward(dyd, xd, mean, rstd, wd),
         lambda: torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True])),
        ("bwd no-affine", 3 * size, None, lambda: gpu.layer_norm_backward(dyd, xd, mean, rstd, None),
         lambda: torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], tmean, trstd, None, None,
                                                            [True, False, False])),
    ]
    out = []
    for name, nbytes, error, ours, theirs in ops:
        ms, tms, cms = time_ms(ours, repeats), time_ms(theirs, repeats), copy_ms(nbytes // 2, repeats)
        out.append({"op": name, "shape": [rows, n], "dtype": dtype, "bytes": nbytes, "err_vs_torch": error,
                    "ours_ms": ms, "torch_ms": tms, "copy_ms": cms, "ours_GBps": nbytes / ms / 1e6,
                    "torch_GBps": nbytes / tms / 1e6, "copy_GBps": nbytes / cms / 1e6,
                    "ours_vs_copy": cms / ms, "torch_vs_copy": cms / tms, "speedup_vs_torch": tms / ms})
    return out


def table(rows):
    lines = [f"{'op':14s} {'shape':>10s} {'dtype':>9s} {'ours ms':>8s} {'torch ms':>8s} {'copy ms':>8s} "
             f"{'ours GB/s':>9s} {'% copy':>7s} {'torch %':>7s} {'x torch':>7s} {'err':>8s}"]
    for r in rows:
        err = "" if r["err_vs_torch"] is None else f"{r['err_vs_torch']:8.1e}"
        lines.append(f"{r['op']:14s} {'x'.join(map(str, r['shape'])):>10s} {r['dtype']:>9s} {r['ours_ms']:8.4f} "
                     f"{r['torch_ms']:8.4f} {r['copy_ms']:8.4f} {r['ours_GBps']:9.0f} {100 * r['ours_vs_copy']:6.1f}% "
                     f"{100 * r['torch_vs_copy']:6.1f}% {r['speedup_vs_torch']:7.2f} {err:>8s}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.environ.get("OUT") or str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = p.parse_args()
    if not minitorch.cuda.is_available() or torch is None or not torch.cuda.is_available():
        sys.exit("bench_layernorm needs CuPy, a CUDA GPU and PyTorch with CUDA")
    repeats = 7 if args.quick else 30
    rng = np.random.default_rng(0)
    rows = []
    for shape in SHAPES:
        for dtype in DTYPES:
            rows += case(*shape, dtype, rng, repeats)
            print(table(rows[-3:]).split("\n", 1)[1], flush=True)
    record = {"benchmark": "layer_norm forward and backward", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch),
              "timing": f"CUDA events, L2 flushed before each call (256 MB memset), median of {repeats}",
              "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_layernorm-{slug(record['env']['gpu_name'])}.json"
    path.write_text(json.dumps(record, indent=1))
    print("wrote", path)
    print(table(rows))
    worst = {op: min(r["ours_vs_copy"] for r in rows if r["op"] == op) for op in ("fwd", "bwd")}
    print("lowest share of the copy: " + ", ".join(f"{op} {100 * v:.1f}%" for op, v in worst.items()))


if __name__ == "__main__":
    main()
