"""Run the bfloat16 flash backward of rung 02 (minitorch/cuda/attention/02_flash_mma.cu) once on small,
awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_flash_mma_bwd.py   # out-of-bounds
    compute-sanitizer --tool racecheck python benchmarks/sanitize_flash_mma_bwd.py   # shared-memory races

Each should end with "0 errors" (racecheck: "0 hazards"). Shapes: lengths off every tile (64 keys per
block, query tiles of 32 or 64), several query tiles per block (the double-buffered stages and the
rotated walk), causal with S > L (key tiles no query sees) and with L > S, head dims 32, 64, 128,
64 and 128 keys per block (config ONEPASS_KEYS). ``--deterministic`` also runs the two-kernel path;
``--quick`` one shape, d 64 and 128.
"""
import argparse
import sys
from pathlib import Path

import cupy as cp
import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minitorch.cuda.array import from_numpy  # noqa: E402
from minitorch.native.cuda import attention as NA  # noqa: E402

#         BH  L    S    causal
SHAPES = [(2, 131, 150, False), (1, 33, 129, True), (1, 150, 97, True)]

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--deterministic", action="store_true", help="also run the two-kernel (deterministic) backward")
p.add_argument("--quick", action="store_true", help="the first shape only, d 64 and 128")
args = p.parse_args()
rng = np.random.default_rng(1)
dev = lambda x: from_numpy(x.astype(ml_dtypes.bfloat16), 0)     # noqa: E731
for bh, L, S, causal in SHAPES[:1] if args.quick else SHAPES:
    for d in (64, 128) if args.quick else (32, 64, 128):
        q, g = (dev(rng.standard_normal((bh, L, d))) for _ in range(2))
        k, v = (dev(rng.standard_normal((bh, S, d))) for _ in range(2))
        out, lse = NA.flash_attention_mma(q, k, v, d ** -0.5, causal)
        for keys in NA.ONEPASS_CHOICES:
            NA.flash_attention_mma_backward(q, k, v, out, lse, g, d ** -0.5, causal, False, {"ONEPASS_KEYS": keys})
            print(f"BH {bh} L {L} S {S} d {d} causal {causal} one-pass keys {keys}: ran", flush=True)
        if args.deterministic:
            NA.flash_attention_mma_backward(q, k, v, out, lse, g, d ** -0.5, causal, True)
            print(f"BH {bh} L {L} S {S} d {d} causal {causal} deterministic: ran", flush=True)
cp.cuda.runtime.deviceSynchronize()
print("done")
