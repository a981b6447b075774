"""Run rung 1c (float32 flash attention on TF32 tensor cores, minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu)
forward and backward once on small, awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_flash_3xtf32.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_flash_3xtf32.py   # shared-memory races

Each should end with "0 errors" (racecheck: "0 hazards"). Shapes: lengths off the tiles (128 query
rows x 64 keys; backward 128 rows x 32 per step), causal and not, dropout 0.2 and off, the backward
both ways (one pass, deterministic), head dims given on the command line (default 64), then strided
[B, H, T, d] views of one [B, T, 3, H, d] array as a GPT hands them over.

    python benchmarks/sanitize_flash_3xtf32.py [d ...]
"""
import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minitorch.cuda.array import from_numpy  # noqa: E402
from minitorch.native.cuda import attention as NA  # noqa: E402

rng = np.random.default_rng(1)
seed = from_numpy(np.array([0x0123456789ABCDEF], dtype=np.uint64), 0)
dims = [int(a) for a in sys.argv[1:]] or [64]
assert all(NA._has_3xtf32(d, 0) for d in dims), "rung 1c does not run on this GPU"
#         BH  L    S   causal
SHAPES = [(2, 77, 45, False), (1, 130, 130, True)]
for d in dims:
    for bh, L, S, causal in SHAPES:
        q = from_numpy(rng.standard_normal((bh, L, d)).astype(np.float32), 0)
        k, v = (from_numpy(rng.standard_normal((bh, S, d)).astype(np.float32), 0) for _ in range(2))
        g = from_numpy(rng.standard_normal((bh, L, d)).astype(np.float32), 0)
        for p in (0.2, 0.0):
            out, lse = NA.flash_attention(q, k, v, d ** -0.5, causal, seed=seed, p=p)
            for deterministic in (False, True):          # the one-pass backward, then dK/dV and dQ
                NA.flash_attention_backward(q, k, v, out, lse, g, d ** -0.5, causal, seed=seed, p=p,
                                            deterministic=deterministic)
            print(f"BH {bh} L {L} S {S} d {d} causal {causal} p {p}: ran", flush=True)
    B, H, T = 2, 3, 67
    x = from_numpy(rng.standard_normal((B, T, 3, H, d)).astype(np.float32), 0)
    q, k, v = (x[:, :, i].transpose(0, 2, 1, 3) for i in range(3))          # [B, H, T, d] views
    g = from_numpy(rng.standard_normal((B, T, H, d)).astype(np.float32), 0).transpose(0, 2, 1, 3)
    assert NA.rows_aligned(q) and not q.c_contiguous
    out, lse = NA.flash_attention(q, k, v, d ** -0.5, True)
    NA.flash_attention_backward(q, k, v, out, lse, g, d ** -0.5, True)
    print(f"strided B {B} H {H} T {T} d {d} causal: ran", flush=True)
cp.cuda.runtime.deviceSynchronize()
print("done")
