"""Split-K on the weight-gradient GEMMs of the char GPT (K = 16384 tokens): minitorch.matmul (which
splits K when few output tiles would leave SMs idle: gemm.slices_for, the wave rule) against the
same product without the split and against torch.mm (cuBLAS, TF32 off). Each checked against
float64 first; median CUDA-event ms, L2 flushed.

    python benchmarks/bench_split_k.py
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

import minitorch as mt  # noqa: E402
from gemm_common import time_ms  # noqa: E402
from minitorch.native.cuda import gemm as G  # noqa: E402
from minitorch.utils.race import environment  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
SHAPES = [(1536, 384, 16384), (384, 1536, 16384), (384, 384, 16384), (1152, 384, 16384), (65, 384, 16384)]


def main():
    rng = np.random.default_rng(0)
    env = environment("cuda", torch)
    print(f"# benchmarks/bench_split_k.py on {env['gpu_name']} (driver {env['driver_version']}, torch "
          f"{env['torch_version']}, cupy {env['cupy_version']}), {time.strftime('%Y-%m-%d %H:%M')} UTC, float32, "
          "TF32 off; median CUDA-event ms, L2 flushed")
    print(f"{'M x N x K (tn)':>22} {'slices':>6} {'split ms':>9} {'no split':>9} {'cuBLAS':>8} {'TFLOP/s split':>14} {'% cuBLAS':>9} {'rel err':>8}")
    for m, n, k in SHAPES:
        a, b = rng.standard_normal((k, m)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        A, B = mt.tensor(a, device="cuda").T, mt.tensor(b, device="cuda")      # a^T: layout 't'
        got = (A @ B).cpu().numpy()
        want = a.T.astype(np.float64) @ b
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        rung, options = G.choose(m, n, k, 1, "f32", G.arch_of(0))
        slices = G.slices_for(m, n, k, *G.choose(m, n, k, 1, "f32", G.arch_of(0), size_class="large"), G.sm_count(0))
        split_ms = time_ms(lambda: mt.matmul(A, B), 20)
        plain_ms = time_ms(lambda: G.gemm(A._data, B._data, None, rung, options), 20)
        ta, tb = torch.from_numpy(a).cuda().T, torch.from_numpy(b).cuda()
        torch_ms = time_ms(lambda: torch.mm(ta, tb), 20)
        tflops = 2 * m * n * k / split_ms / 1e9
        print(f"{f'{m} x {n} x {k}':>22} {slices:>6} {split_ms:>9.3f} {plain_ms:>9.3f} {torch_ms:>8.3f} {tflops:>14.1f} "
              f"{100 * torch_ms / split_ms:>8.0f}% {err:>8.1e}")


if __name__ == "__main__":
    main()
