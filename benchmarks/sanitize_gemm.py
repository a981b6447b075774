"""Run every GEMM rung, dtype and layout once on small odd inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_gemm.py    # out-of-bounds reads/writes
    compute-sanitizer --tool racecheck python benchmarks/sanitize_gemm.py    # shared-memory races
    compute-sanitizer --tool synccheck python benchmarks/sanitize_gemm.py    # barrier misuse

Each should end with "0 errors" (racecheck: "0 hazards"). Per (rung, dtype): the four layouts at
67x45x39 (M x N x K, none a multiple of any tile) with a bias, a batch of 3 in nt, a broadcast
batch [2, 1, M, K] @ [3, K, N], operands starting one element past an aligned address with odd
leading dimensions (the scalar fallback of vectorized loads), and a 1x1x1. Rungs with a tuning
space also run --configs of their configurations (spread over the list), and every configuration
tuned.json ships for them (what matmul runs) in the four layouts at 300x260x200 too (several tiles
each way, more k-tiles than pipeline stages). The results are checked
against float64 NumPy too (a sanitizer-clean kernel can still be wrong); exit status 1 if any is
wrong. Uses no torch (its start-up under the sanitizer is slow). ``--rungs 05,08`` limits the rungs.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import gemm_common as C  # noqa: E402


def operand(rng, rows, cols, letter, dtype, batch=(), misaligned=False):
    """(DeviceArray view, float64 values) of a logical [*batch, rows, cols] operand ('t': the
    transposed view of a contiguous array; misaligned: rows sliced [1 : 1 + width] out of rows
    of odd length)."""
    from minitorch.cuda import array as A
    r, c = (cols, rows) if letter == "t" else (rows, cols)
    pad = (2 if c % 2 else 3) if misaligned else 0
    base = rng.standard_normal(tuple(batch) + (r, c + pad)).astype(dtype)
    dev = A.from_numpy(base, 0)
    if misaligned:
        dev, base = dev[..., 1:1 + c], base[..., 1:1 + c]
    if letter == "t":
        axes = tuple(range(len(batch))) + (len(batch) + 1, len(batch))
        dev, base = dev.transpose(axes), base.transpose(axes)
    return dev, base.astype(np.float64)


def run(rng, G, rung, suffix, kind, m, n, k, layout, bias, batch_a=(), batch_b=(), misaligned=False, options=None):
    """One call; returns None when right, else a line saying what is wrong."""
    from minitorch.cuda import array as A
    dtype = C.numpy_dtype(suffix)
    da, a = operand(rng, m, k, layout[0], dtype, batch_a, misaligned)
    db, b = operand(rng, k, n, layout[1], dtype, batch_b, misaligned)
    dbias = bvec = None
    if bias:
        bvec = rng.standard_normal(n).astype(dtype)
        dbias, bvec = A.from_numpy(bvec, 0), bvec.astype(np.float64)
    got = A.to_numpy(G.gemm(da, db, dbias, rung=rung, options=options)).astype(np.float64)
    ref, scale = np.matmul(a, b), np.matmul(np.abs(a), np.abs(b))
    if bias:
        ref, scale = ref + bvec, scale + np.abs(bvec)
    what = f"{rung} {suffix} {m}x{n}x{k} {layout} batch {batch_a}/{batch_b} misaligned={misaligned} options={options}"
    if got.shape != ref.shape or not np.isfinite(got).all():
        return f"WRONG {what}: shape {got.shape} or non-finite elements"
    err = float(C.elementwise_error(got - ref, scale, kind).max()) if ref.size else 0.0
    if err > C.elementwise_tol(kind, k):
        return f"WRONG {what}: worst element off by {err:.2e} x |A||B| > {C.elementwise_tol(kind, k):.1e}"
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rungs", help="comma-separated rung names or numbers (default: all)")
    p.add_argument("--configs", type=int, default=2, help="tuning configurations per tunable rung (default 2)")
    args = p.parse_args(argv)
    import cupy as cp
    from minitorch.native.cuda import gemm as G
    from minitorch.native.cuda.launch import SUFFIX
    C.allow_named_rungs()
    rng = np.random.default_rng(5)
    wrong, calls = [], 0
    arch = int(cp.cuda.Device().compute_capability)
    cases = [c for c in C.rung_cases(G.RUNGS, set(SUFFIX.values()), C.parse_list(args.rungs))
             if G.runs_on(G.RUNGS[c[0]], arch)]        # (12_wgmma: sm_90 only)
    for rung, suffix, kind in cases:
        jobs = [(67, 45, 39, lay, True, (), (), False) for lay in C.LAYOUTS]
        jobs += [(67, 45, 39, "nt", False, (3,), (3,), False),
                 (19, 37, 23, "tn", True, (2, 1), (3,), False),
                 (67, 45, 39, "nn", True, (), (), True),
                 (45, 67, 39, "tt", False, (2,), (2,), True),
                 (1, 1, 1, "nn", True, (), (), False)]
        for job in jobs:
            calls += 1
            bad = run(rng, G, rung, suffix, kind, *job)
            if bad:
                wrong.append(bad)
                print(bad, flush=True)
        cp.cuda.Device().synchronize()
        print(f"{rung} {suffix}: {len(jobs)} calls done", flush=True)
    tuning = getattr(G, "tuning_configs", None)
    shipped = {(entry["rung"], tuple(entry["options"])) for kinds in G.tuned_table().values()
               for classes in kinds.values() for entry in classes.values()}
    for rung in dict.fromkeys(c[0] for c in cases) if tuning else ():
        try:
            configs = list(tuning(rung))
        except (KeyError, ValueError, TypeError):
            continue
        step = max(1, len(configs) // max(args.configs, 1))
        jobs = [(tuple(cfg), [(67, 45, 39, "nt", True, (2,), (2,), True)]) for cfg in configs[::step][:args.configs]]
        jobs += [(options, [(67, 45, 39, "nt", True, (2,), (2,), True)]
                  + [(300, 260, 200, lay, True, (), (), False) for lay in C.LAYOUTS])
                 for name, options in sorted(shipped) if name == rung]
        for options, shapes in jobs:
            for suffix in G.RUNGS[rung].dtypes:
                for shape in shapes if suffix in SUFFIX.values() else ():
                    calls += 1
                    bad = run(rng, G, rung, suffix, C.kind_of(G.RUNGS[rung], suffix), *shape, options=options)
                    if bad:
                        wrong.append(bad)
                        print(bad, flush=True)
            print(f"{rung} config {options} done", flush=True)
    cp.cuda.Device().synchronize()
    print(f"sanitize_gemm: {calls} calls over {len(cases)} (rung, dtype) pairs, {len(wrong)} wrong results")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
