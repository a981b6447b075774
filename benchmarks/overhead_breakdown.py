"""Where the host time of one tiny cuda op goes: a diagnostic for work on per-op overhead.

``bench_overhead.py`` says how long ``a + b`` takes from Python; this script takes it apart, layer
by layer, in one run: allocation (ours, CuPy's, PyTorch's), the bare ``cuLaunchKernel``, our
launcher, the backend function, the Tensor op, and PyTorch's equivalents, then a cProfile of our
``a + b`` and ``a.sigmoid()``. Host loops of 20000 calls, median of 5; numbers vary by host, so
compare rows of one run only. Nothing is written; see bench_overhead.py for the JSON record.

    python benchmarks/overhead_breakdown.py
"""
import cProfile
import io
import pstats
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import minitorch  # noqa: E402
from minitorch.native import cuda as backend  # noqa: E402
from minitorch.native.cuda import launch  # noqa: E402
from minitorch.cuda import array, memory  # noqa: E402
from minitorch.cuda.compiler import kernel  # noqa: E402
from bench_overhead import loop_us  # noqa: E402  (this script's folder is on sys.path)


def us(fn, sync=lambda: None, n=20000):
    """Median over 5 loops of ``n`` calls, microseconds per call (``sync`` waits at each loop end)."""
    for _ in range(200):
        fn()
    return statistics.median([loop_us(fn, sync, n) for _ in range(5)])


def main():
    sync, tsync = cp.cuda.Device().synchronize, torch.cuda.synchronize
    a, b = minitorch.ones(1000, device="cuda"), minitorch.ones(1000, device="cuda")
    ta, tb = torch.ones(1000, device="cuda"), torch.ones(1000, device="cuda")
    tc = torch.empty_like(ta)
    f32 = np.dtype(np.float32)
    out = array.empty((1000,), f32, 0)
    fn = kernel("elementwise.cu", "add_f32", 0)
    args = (a._data, b._data, out, 1000)
    launcher = launch.launcher_for(fn, args)
    stream = cp.cuda.get_current_stream().ptr
    pool = memory.pool(0, cp)
    rows = [
        ("allocate + free 4000 bytes: our array.empty", us(lambda: array.empty((1000,), f32, 0))),
        ("  of which our pool's malloc + free", us(lambda: pool.malloc(4000, stream))),
        ("  CuPy: cupy.empty", us(lambda: cp.empty((1000,), dtype=f32))),
        ("  PyTorch: torch.empty", us(lambda: torch.empty(1000, device="cuda"))),
        ("bare cuLaunchKernel (CuPy's driver.launchKernel)",
         us(lambda: launch._launch_kernel(launcher.function, 1, 1, 1, 256, 1, 1, 0, stream, launcher.params, 0), sync)),
        ("our Launcher.run (pack + launch)", us(lambda: launcher.run(1, 1, 1, 256, 1, 1, 0, stream, args), sync)),
        ("our launch_stride (+ kernel lookup, grid)", us(lambda: launch.launch_stride(fn, 1000, 4, 0, args), sync)),
        ("backend binary('add')  (+ checks, allocation)", us(lambda: backend.binary("add", a._data, b._data), sync)),
        ("backend unary('sigmoid')", us(lambda: backend.unary("sigmoid", a._data), sync)),
        ("Tensor a + b  (+ promotion, autograd check, Tensor)", us(lambda: a + b, sync)),
        ("Tensor a.sigmoid()", us(lambda: a.sigmoid(), sync)),
        ("Tensor a.fill_(1.0)", us(lambda: a.fill_(1.0), sync)),
        ("PyTorch torch.add(ta, tb, out=tc)", us(lambda: torch.add(ta, tb, out=tc), tsync)),
        ("PyTorch ta + tb", us(lambda: ta + tb, tsync)),
        ("PyTorch ta.sigmoid()", us(lambda: ta.sigmoid(), tsync)),
        ("PyTorch ta.fill_(1.0)", us(lambda: ta.fill_(1.0), tsync)),
    ]
    print(f"{'host time per call':55s} {'us':>7s}")
    for name, t in rows:
        print(f"{name:55s} {t:7.2f}")
    for name, op in (("a + b", lambda: a + b), ("a.sigmoid()", lambda: a.sigmoid())):
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20000):
            op()
        sync()
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(20)
        print(f"\n---- cProfile of our {name} (20000 calls; the profiler inflates every Python call)\n{text.getvalue()}")


if __name__ == "__main__":
    main()
