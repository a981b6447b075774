"""Run the float32 flash kernels with dropout (rung 1b, minitorch/cuda/attention/01b_flash_fp32_tiled.cu)
forward and backward once on small, awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_flash_dropout.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_flash_dropout.py   # shared-memory races

Each should end with "0 errors" (racecheck: "0 hazards"). Shapes: lengths off the tiles (forward
128 x 64, backward 64 x 64), rows starting anywhere in a Philox block (S odd), causal and not, head
dims 32, 64, 128, dropout 0.2 and off (the same kernels with the keep bits unused). Then the same
kernels on strided heads, as a GPT hands them over: q, k, v [B, H, T, d] views of one [B, T, 3, H, d]
array, dO a transposed view of [B, T, H, d] (strides read and written through struct Heads; out,
dq, dk, dv land as [B, T, H, d]), B and H > 1, odd T.
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
#         BH  L    S    causal
SHAPES = [(2, 70, 33, False), (1, 130, 130, True), (1, 129, 65, True)]
for bh, L, S, causal in SHAPES:
    for d in (32, 64, 128):
        q = from_numpy(rng.standard_normal((bh, L, d)).astype(np.float32), 0)
        k, v = (from_numpy(rng.standard_normal((bh, S, d)).astype(np.float32), 0) for _ in range(2))
        g = from_numpy(rng.standard_normal((bh, L, d)).astype(np.float32), 0)
        for p in (0.2, 0.0):
            out, lse = NA.flash_attention(q, k, v, d ** -0.5, causal, seed=seed, p=p)
            NA.flash_attention_backward(q, k, v, out, lse, g, d ** -0.5, causal, seed=seed, p=p)
            print(f"BH {bh} L {L} S {S} d {d} causal {causal} p {p}: ran", flush=True)
#             B  H  T    causal
GPT_SHAPES = [(2, 3, 67, True), (1, 2, 130, False)]
for B, H, T, causal in GPT_SHAPES:
    for d in (32, 64, 128):
        x = from_numpy(rng.standard_normal((B, T, 3, H, d)).astype(np.float32), 0)
        q, k, v = (x[:, :, i].transpose(0, 2, 1, 3) for i in range(3))          # [B, H, T, d] views
        g = from_numpy(rng.standard_normal((B, T, H, d)).astype(np.float32), 0).transpose(0, 2, 1, 3)
        assert NA.rows_aligned(q) and not q.c_contiguous
        for p in (0.2, 0.0):
            out, lse = NA.flash_attention(q, k, v, d ** -0.5, causal, seed=seed, p=p)
            NA.flash_attention_backward(q, k, v, out, lse, g, d ** -0.5, causal, seed=seed, p=p)
            print(f"strided B {B} H {H} T {T} d {d} causal {causal} p {p}: ran", flush=True)
cp.cuda.runtime.deviceSynchronize()
print("done")
