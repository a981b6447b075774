"""One GPU check of issue 13's second pass (unique(dim=), mode's index, scatter(reduce=) and
scatter_reduce, mixed index tensors, view(), tied state_dict): the cuda tests, compute-sanitizer
on the new kernels, and timings against PyTorch.

    python benchmarks/check_api_gaps.py            # everything; a table last, JSON to $OUT if set
    python benchmarks/check_api_gaps.py --kernels  # only the kernel driver (what the sanitizer runs)

New kernels: sort.cu ``mode_rows_{f32,f64,i64,bool}`` (one thread per row, libstdc++'s introsort
in a scratch copy) and index.cu ``scatter_{mul,max,min}_{f32,f64,i64}`` (atomicCAS loops).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def drive_kernels():
    """Every new kernel on awkward inputs (sizes around the block, collisions, NaN, views)."""
    import minitorch as mt
    rng = np.random.default_rng(0)
    for n in (1, 16, 17, 33, 1000):           # mode: insertion-only rows, introsort, heap-sort fallback
        for dtype in ("float32", "float64", "int64", "bool"):
            x = rng.integers(0, 4, (5, n)).astype(dtype)
            mt.tensor(x, device="cuda").mode(1)
            mt.tensor(x, device="cuda").t().mode(0)
    killer = np.zeros(2048, np.int64)
    for i in range(1, 1025):
        if i % 2:
            killer[i - 1], killer[i] = i, 1024 + i
        killer[1024 + i - 1] = 2 * i
    mt.tensor(killer, device="cuda").mode(0)
    for dtype in ("float32", "float64", "int64"):
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                x = mt.tensor(rng.integers(1, 3, (7, 33)).astype(dtype), device="cuda")
                i = mt.tensor(rng.integers(0, 7, (50, 33)), device="cuda")          # heavy collisions
                s = mt.tensor(rng.integers(1, 3, (50, 33)).astype(dtype), device="cuda")
                x.scatter_reduce(0, i, s, reduce, include_self=include_self)
                x.t().scatter_reduce(1, i.t(), s.t(), reduce, include_self=include_self)
        x = mt.tensor(rng.standard_normal((3, 4, 5)).astype(np.float32), device="cuda")
        idx = mt.tensor([2, 0], device="cuda")
        x[idx, 1:3] = 1.0
        x[:, idx, mt.tensor([[1], [4]], device="cuda")] = mt.ones(2, 1, device="cuda")
        x.unique(dim=1, return_inverse=True, return_counts=True)
    mt.cuda.synchronize()
    print("kernels driven")


def _time(fn, sync, repeat=10):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    sync()
    return (time.perf_counter() - start) / repeat * 1e3


def timings():
    import torch
    import minitorch as mt
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(0)
    rows = []

    def both(name, ours, theirs):
        t_ours = _time(ours, mt.cuda.synchronize)
        t_theirs = _time(theirs, torch.cuda.synchronize if dev == "cuda" else (lambda: None))
        rows.append({"op": name, "ours_ms": round(t_ours, 3), f"torch_{dev}_ms": round(t_theirs, 3)})

    x = rng.integers(0, 50, (4096, 1000))
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    both("mode 4096 rows x 1000 (int64)", lambda: a.mode(1), lambda: b.mode(1))
    x = rng.standard_normal((1024,)).astype(np.float32)
    i = rng.integers(0, 1024, (1 << 24,))
    s = rng.uniform(0.999, 1.001, (1 << 24,)).astype(np.float32)
    a, ia, sa = (mt.tensor(v, device="cuda") for v in (x, i, s))
    b, ib, sb = (torch.tensor(v, device=dev) for v in (x, i, s))
    for reduce in ("sum", "prod", "amax"):
        both(f"scatter_reduce {reduce} 16M -> 1024 (f32)", lambda: a.scatter_reduce(0, ia, sa, reduce),
             lambda: b.scatter_reduce(0, ib, sb, reduce))
    x = rng.integers(0, 3, (100_000, 4))
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    both("unique dim=0, 100k x 4 (int64)", lambda: a.unique(dim=0), lambda: torch.unique(b, dim=0))
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    ia, ib = mt.tensor(rng.permutation(4096)[:2048], device="cuda"), torch.tensor(rng.permutation(4096)[:2048], device=dev)
    va, vb = mt.ones(2048, 512, device="cuda"), torch.ones(2048, 512, device=dev)

    def write_ours():
        a[ia, 256:768] = va

    def write_theirs():
        b[ib, 256:768] = vb
    both("x[idx, 256:768] = v, 2048 x 512 (f32)", write_ours, write_theirs)
    both("x[idx, 256:768] read", lambda: a[ia, 256:768], lambda: b[ib, 256:768])
    return rows


def main():
    if "--kernels" in sys.argv:
        drive_kernels()
        return
    env = dict(os.environ, PYTHONPATH=f"{ROOT}:{os.environ.get('PYTHONPATH', '')}")
    steps = []

    def run(name, cmd):
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        print(f"== {name}: exit {r.returncode}\n" + "\n".join(tail), flush=True)
        steps.append({"step": name, "exit": r.returncode, "tail": tail})

    pytest = [sys.executable, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:randomly", "-o", "addopts=-p no:cacheprovider"]
    run("cuda tests (test_api_gaps.py)", pytest + ["tests/test_api_gaps.py"])
    run("cuda tests (mode, unique, setitem, scatter in older files)",
        pytest + ["tests/test_ops_reduce_api.py", "tests/test_indexing.py", "tests/test_ops_shape_api.py",
                  "-k", "mode or unique or setitem or scatter or index_put"])
    for tool in ("memcheck", "racecheck"):
        run(f"compute-sanitizer {tool} (new kernels)",
            ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, __file__, "--kernels"])
    rows = timings()
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "check_api_gaps.json").write_text(json.dumps({"steps": steps, "timings": rows}, indent=1))
    print(f"\n{'step':58s} exit")
    for s in steps:
        print(f"{s['step']:58s} {s['exit']}")
    keys = list(rows[0])
    print(f"\n{keys[0]:42s} {keys[1]:>10s} {keys[2]:>14s}")
    for r in rows:
        print(f"{r[keys[0]]:42s} {r[keys[1]]:10.3f} {r[keys[2]]:14.3f}")


if __name__ == "__main__":
    main()
