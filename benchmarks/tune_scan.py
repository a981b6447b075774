"""Time the look-back scan (minitorch/cuda/scan.cu) over its compile-time options on one long row.

    python benchmarks/tune_scan.py [--n 67108864]

For each (threads, items per thread, min blocks per SM, longest look-back sleep): compile scan.cu
with those -D options, check cumsum of fresh random float32 against a float64 NumPy reference,
then time it (median CUDA-event ms, L2 flushed, the zeroing of the status words included, as in
real use) beside a device-to-device copy and torch.cumsum. The fastest configuration is the one to
put in scan.cu's defaults and scan.py's TILE/_BLOCK.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cupy as cp  # noqa: E402
import torch  # noqa: E402

from bench_reduce_scan_sort import copy_bandwidth  # noqa: E402
from gemm_common import time_ms  # noqa: E402
from minitorch.cuda.array import empty, from_cuda_array, to_numpy  # noqa: E402
from minitorch.cuda.compiler import kernel  # noqa: E402
from minitorch.native.cuda.creation import fill_  # noqa: E402
from minitorch.native.cuda.launch import cdiv, launch_2d  # noqa: E402
from minitorch.native.cuda.scan import _plan  # noqa: E402

I64 = np.dtype(np.int64)
# (threads per block, items per thread, min blocks per SM, longest sleep in ns, streaming cache
# hints): the shipped
# default first; on the H100 (2026-11-24) 256 x 16 gave 62% of copy, 256 x 32 (4 blocks) 76%,
# 256 x 64 (2 blocks) 80%, 256 x 48 52% (12 chunks of 4 split unevenly), 8 items 50%
CONFIGS = [(256, 64, 2, 256, 0), (256, 64, 2, 256, 1), (256, 64, 1, 256, 0), (256, 64, 1, 256, 1),
           (512, 64, 1, 256, 0), (512, 64, 1, 256, 1), (512, 32, 2, 256, 0), (512, 32, 2, 256, 1),
           (256, 32, 4, 256, 0), (256, 32, 4, 256, 1), (128, 64, 4, 256, 1), (256, 64, 2, 64, 1)]


def cumsum_with(options, threads, tile, x):
    """cumsum of the 1-D DeviceArray x with scan.cu compiled under ``options``."""
    fn = kernel("scan.cu", "scan_lookback_cumsum_f32", 0, options)
    n_rows, length, kept, in_stride, out_stride = _plan(x.shape, x.strides, x.itemsize, 0)
    tiles = cdiv(length, tile)
    out = empty(x.shape, x.dtype, 0)
    state = fill_(empty((1 + tiles,), I64, 0), 0)
    launch_2d(fn, (tiles,), (threads,), (x, out, length, tiles, kept, in_stride, out_stride, state, out), 0)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 26)
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args()
    n = args.n
    copy_ms, copy_gbs = copy_bandwidth(n, args.repeats)
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xc = cp.asarray(host)
    x = from_cuda_array(xc)
    want = np.cumsum(host.astype(np.float64))
    tx = torch.as_tensor(xc, device="cuda")
    torch_ms = time_ms(lambda: torch.cumsum(tx, 0), args.repeats)
    rows = []
    print(f"copy {copy_ms:.3f} ms; torch.cumsum {torch_ms:.3f} ms ({100 * copy_ms / torch_ms:.0f}% of copy)", flush=True)
    print(f"{'threads':>8}{'items':>6}{'minb':>5}{'sleep':>6}{'stream':>7}{'ms':>8}{'% copy':>8}{'max rel err':>12}")
    for threads, items, minb, sleep, streaming in CONFIGS:
        opts = (f"-DSCAN_THREADS={threads}", f"-DSCAN_BYTES={4 * items}", f"-DSCAN_MIN_BLOCKS={minb}",
                f"-DSCAN_MAX_SLEEP_NS={sleep}", f"-DSCAN_STREAMING={streaming}")
        tile = threads * items
        try:
            got = to_numpy(cumsum_with(opts, threads, tile, x)).astype(np.float64)
            err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
            ms = time_ms(lambda: cumsum_with(opts, threads, tile, x), args.repeats)
        except Exception as e:   # one configuration failing (registers, compile) must not stop the rest
            print(f"{opts}: {type(e).__name__}: {str(e)[:200]}")
            continue
        rows.append((ms, threads, items, minb, sleep, streaming, err))
        print(f"{threads:>8}{items:>6}{minb:>5}{sleep:>6}{streaming:>7}{ms:>8.3f}{100 * copy_ms / ms:>7.1f}%{err:>12.1e}",
              flush=True)
    rows.sort()
    print(f"\nlook-back cumsum of {n} float32 on {torch.cuda.get_device_name()} (median ms, L2 flushed)")
    print(f"copy {copy_ms:.3f} ms ({copy_gbs:.0f} GB/s); torch.cumsum {torch_ms:.3f} ms "
          f"({100 * copy_ms / torch_ms:.0f}% of copy)")
    print("fastest first:")
    for ms, threads, items, minb, sleep, streaming, err in rows[:20]:
        print(f"{threads:>8}{items:>6}{minb:>5}{sleep:>6}{streaming:>7}{ms:>8.3f}{100 * copy_ms / ms:>7.1f}%{err:>12.1e}")


if __name__ == "__main__":
    main()
