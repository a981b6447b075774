"""LayerNorm (forward, backward) and GELU (forward, backward) on the GPU: ours next to PyTorch and
next to what the memory system can do at all (a device-to-device copy of the same bytes).

Shapes: [8 * 1024, 768] (GPT-2 small's activations for 8 sequences of 1024 tokens) and
[4 * 256, 384], float32 and bfloat16. For each op:

* correctness first: ours against PyTorch on the same inputs (max abs. error, in float32);
* the kernel time (our backend function on DeviceArrays, no Tensor layer) and PyTorch's aten op,
  both by CUDA events with the L2 cache flushed before every call (gemm_common.time_ms: the
  median of the repeats);
* effective bandwidth = bytes that must move (LayerNorm forward: read x, write y; backward: read
  dy and x, write dx; GELU: read x, write y / read dy and x, write dx) / time, and its share of
  the copy's bandwidth (cudaMemcpyAsync device-to-device of the op's input size, read + write).

Targets (issue 15): LayerNorm at >= 85% of copy bandwidth and >= 1.0x PyTorch's speed.

    python benchmarks/bench_transformer_ops.py [--out DIR] [--quick]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import minitorch  # noqa: E402
from gemm_common import time_ms  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

try:
    import torch
except ImportError:          # the table then has no PyTorch column
    torch = None

SHAPES = [(8 * 1024, 768), (4 * 256, 384)]
DTYPES = ("float32", "bfloat16")


def torch_cuda():
    return torch is not None and torch.cuda.is_available()


def copy_gbps(nbytes, repeats):
    """Device-to-device copy of ``nbytes``, counted as read + write: GB/s."""
    import cupy as cp
    src, dst = cp.empty(nbytes, dtype=cp.uint8), cp.empty(nbytes, dtype=cp.uint8)
    src.fill(1)
    stream = cp.cuda.get_current_stream()
    ms = time_ms(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr), repeats)
    return 2 * nbytes / ms / 1e6


def _np(t):
    """A minitorch or torch tensor's values as float32 NumPy (both spell it the same way)."""
    return t.float().cpu().numpy()


def cases(rows, n, dtype, rng):
    """[(op name, bytes moved, our kernel call, torch call, max abs error vs torch)]."""
    from minitorch.native import cuda as gpu
    mdt, tdt = getattr(minitorch, dtype), getattr(torch, dtype)
    host = [rng.standard_normal(s).astype(np.float32) for s in ((rows, n), (n,), (n,), (rows, n))]
    x, w, b, dy = (minitorch.tensor(a, device="cuda").to(mdt) for a in host)
    tx, tw, tb, tdy = (torch.tensor(a, device="cuda").to(tdt) for a in host)
    xd, wd, bd, dyd = x._data, w._data, b._data, dy._data
    size = rows * n * x.element_size()
    y, mean, rstd = gpu.layer_norm(xd, wd, bd, 1e-5)
    ty, tmean, trstd = torch.ops.aten.native_layer_norm(tx, [n], tw, tb, 1e-5)
    dx, dw, db = gpu.layer_norm_backward(dyd, xd, mean, rstd, wd)
    tdx, tdw, tdb = torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True])

    def err(ours, theirs):
        return float(np.max(np.abs(_np(minitorch.Tensor(ours, x.device)) - _np(theirs))))

    g = gpu.unary("gelu", xd)
    gb = gpu.unary_backward("gelu", dyd, xd)
    return [
        ("layer_norm fwd", 2 * size, lambda: gpu.layer_norm(xd, wd, bd, 1e-5),
         lambda: torch.ops.aten.native_layer_norm(tx, [n], tw, tb, 1e-5), err(y, ty)),
        ("layer_norm bwd", 3 * size, lambda: gpu.layer_norm_backward(dyd, xd, mean, rstd, wd),
         lambda: torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True]),
         max(err(dx, tdx), err(dw, tdw), err(db, tdb))),
        ("gelu fwd", 2 * size, lambda: gpu.unary("gelu", xd), lambda: torch.nn.functional.gelu(tx),
         err(g, torch.nn.functional.gelu(tx))),
        ("gelu bwd", 3 * size, lambda: gpu.unary_backward("gelu", dyd, xd),
         lambda: torch.ops.aten.gelu_backward(tdy, tx), err(gb, torch.ops.aten.gelu_backward(tdy, tx))),
    ]


def run(repeats, rng):
    rows_out = []
    for rows, n in SHAPES:
        for dtype in DTYPES:
            itemsize = 4 if dtype == "float32" else 2
            copy = copy_gbps(rows * n * itemsize, repeats)
            for name, nbytes, ours, theirs, error in cases(rows, n, dtype, rng):
                ms = time_ms(ours, repeats)
                tms = time_ms(theirs, repeats)
                rows_out.append({"op": name, "shape": [rows, n], "dtype": dtype, "bytes": nbytes,
                                 "max_abs_err_vs_torch": error, "ours_ms": ms, "torch_ms": tms,
                                 "ours_GBps": nbytes / ms / 1e6, "torch_GBps": nbytes / tms / 1e6,
                                 "copy_GBps": copy, "ours_vs_copy": nbytes / ms / 1e6 / copy,
                                 "speedup_vs_torch": tms / ms})
    return rows_out


def table(rows):
    lines = [f"{'op':16s} {'shape':>10s} {'dtype':>9s} {'ours ms':>9s} {'torch ms':>9s} {'ours GB/s':>9s} "
             f"{'% copy':>7s} {'x torch':>8s} {'max err':>9s}"]
    for r in rows:
        lines.append(f"{r['op']:16s} {'x'.join(map(str, r['shape'])):>10s} {r['dtype']:>9s} {r['ours_ms']:9.4f} "
                     f"{r['torch_ms']:9.4f} {r['ours_GBps']:9.0f} {100 * r['ours_vs_copy']:6.1f}% "
                     f"{r['speedup_vs_torch']:8.2f} {r['max_abs_err_vs_torch']:9.2e}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = p.parse_args()
    if not minitorch.cuda.is_available() or not torch_cuda():
        sys.exit("bench_transformer_ops needs CuPy, a CUDA GPU and PyTorch with CUDA")
    repeats = 10 if args.quick else 50
    record = {"benchmark": "transformer ops: layer_norm, gelu", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "env": environment("cuda", torch),
              "timing": f"CUDA events, L2 flushed before each call (256 MB memset), median of {repeats}",
              "rows": run(repeats, np.random.default_rng())}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_transformer_ops-cuda-{record['env']['gpu_name'].replace(' ', '-')}.json"
    path.write_text(json.dumps(record, indent=1))
    print("wrote", path)
    print(table(record["rows"]))


if __name__ == "__main__":
    main()
