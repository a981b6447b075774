"""Run the fused attention softmax (minitorch/cuda/attention_softmax.cu: scale, causal cut, additive
mask, softmax and dropout in one kernel each way) once on small, awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_attention_softmax.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_attention_softmax.py   # shared-memory races

Each should end with "0 errors" (racecheck: "0 hazards"). Shapes: row lengths below, at and above a
warp's and a Philox block's width (1, 31, 33, 257, 1000), a broadcast float mask and none, causal and
not, dropout 0.2 and off, float32 and float64 (the kernel's two accumulators).
"""
import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minitorch.cuda.array import from_numpy  # noqa: E402
from minitorch.native.cuda import attention_softmax as NS  # noqa: E402

rng = np.random.default_rng(1)
seed = from_numpy(np.array([0x0123456789ABCDEF], dtype=np.uint64), 0)
#         batches  L    S
SHAPES = [(3, 5, 1), (2, 7, 31), (1, 33, 33), (2, 9, 257), (1, 3, 1000)]
for dtype in (np.float32, np.float64):
    for batches, L, S in SHAPES:
        s = from_numpy(rng.standard_normal((batches * L, S)).astype(dtype), 0)
        g = from_numpy(rng.standard_normal((batches * L, S)).astype(dtype), 0)
        mask = from_numpy(rng.standard_normal((1, L, S)).astype(dtype), 0)
        for causal, m, p in ((False, None, 0.0), (True, None, 0.2), (False, mask, 0.2), (True, mask, 0.0)):
            y, lse = NS.attention_softmax(s, L, 0.5, causal, m, seed, p)
            NS.attention_softmax_backward(s, lse, g, L, 0.5, causal, m, seed, p)
            print(f"{np.dtype(dtype).name} rows {batches * L} S {S} causal {causal} mask {m is not None} p {p}: ran",
                  flush=True)
cp.cuda.runtime.deviceSynchronize()
print("done")
