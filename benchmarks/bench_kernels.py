"""Check and time the phase-02/03/04 kernels of the cuda backend on a GPU.

    python benchmarks/bench_kernels.py [--out DIR] [--quick]

First every backend function is checked against a float64 NumPy reference on fresh random data
of sizes that are not multiples of any tile or block. Then, each next to its ceiling or rival:

* elementwise add of 64M float32 (GB/s, 3 x 4 bytes per element) next to the device-to-device
  copy bandwidth (cudaMemcpyAsync, read + write bytes) and torch.add;
* transpose, naive vs shared-memory tiled vs torch ``.t().contiguous()`` (GB/s);
* naive matmul at 256 ... 4096 vs torch.mm with TF32 off (TFLOP/s);
* sum of 64M float32 vs torch.sum (GB/s, and as a fraction of the copy bandwidth);
* phase 04: max, argmax of rows of 4096, var, std of rows over 64M float32 vs torch (GB/s read,
  fraction of the copy bandwidth);
* Python overhead per call on tiny inputs (microseconds; host-side, kernels queued).

Times are medians of CUDA-event timings after a warm-up; L2 (50 MB on an H100) is flushed by
writing a 256 MB buffer before every timed run. A compact table goes to stdout and one JSON file
per run to --out (default benchmarks/results). torch is optional: without it its columns are
left empty.
"""
import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import cupy as cp
except ImportError:
    sys.exit("bench_kernels.py needs CuPy and a CUDA GPU")

try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

from minitorch import dtypes  # noqa: E402
from minitorch.native import cuda as B  # noqa: E402
from minitorch.cuda import compiler  # noqa: E402
from minitorch.cuda.array import from_cuda_array as D  # noqa: E402
from minitorch.utils.race import disable_tf32, environment  # noqa: E402

# The cuda backend takes and returns DeviceArrays: inputs are built with CuPy and wrapped with D()
# (zero-copy, done before any timing); results are read through cp.asarray(result), a zero-copy view.
MB = 1 << 20
from gemm_common import flush_l2, time_ms as time_cupy  # noqa: E402 - one L2 flush and one CUDA-event timer


def time_torch(fn, repeats, warmup=3, flush=True):
    """Median milliseconds of fn() on torch's current stream, by torch's CUDA events."""
    if torch is None:
        return None
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        if flush:
            torch.cuda.synchronize()
            flush_l2()
            cp.cuda.get_current_stream().synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


# ---- correctness --------------------------------------------------------------------------------
def host(result):
    """A backend result (a DeviceArray, or a CuPy array) copied to a NumPy array."""
    return cp.asnumpy(cp.asarray(result))


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))


def checks(rng):
    """(name, passed, detail) for each function, on fresh random data at awkward sizes."""
    out = []

    def record(name, ok, detail):
        out.append((name, bool(ok), detail))

    h = host
    a32 = rng.standard_normal(1_000_003).astype(np.float32)
    b32 = rng.standard_normal(1_000_003).astype(np.float32)
    ga, gb = cp.asarray(a32), cp.asarray(b32)
    da, db = D(ga), D(gb)
    for op, ref in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("maximum", np.maximum)):
        e = rel_err(h(B.binary(op, da, db)), ref(a32.astype(np.float64), b32.astype(np.float64)))
        record(f"binary {op} f32 n=1000003", e < 1e-7, f"rel err {e:.1e}")
    x = rng.standard_normal((37, 1, 53)).astype(np.float32)
    y = rng.standard_normal((29, 1)).astype(np.float32)
    e = rel_err(h(B.binary("div", D(cp.asarray(x)), D(cp.asarray(y)))), x.astype(np.float64) / y)
    record("binary div broadcast (37,1,53)/(29,1)", e < 1e-6, f"rel err {e:.1e}")
    got = h(B.binary("lt", da, db))
    record("binary lt -> bool", np.array_equal(got, a32 < b32), "exact")
    e = rel_err(h(B.binary_scalar("sub", D(ga[::3]), 2.5, True)), 2.5 - a32[::3].astype(np.float64))
    record("binary_scalar 2.5 - a[::3]", e < 1e-7, f"rel err {e:.1e}")
    for op, ref in (("exp", np.exp), ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v)))):
        e = rel_err(h(B.unary(op, da)), ref(a32.astype(np.float64)))
        record(f"unary {op} f32", e < 1e-6, f"rel err {e:.1e}")
    c = rng.random((41, 1)) < 0.5
    got = h(B.where(D(cp.asarray(c)), D(ga[:41 * 7].reshape(41, 7)), D(gb[:7])))
    record("where broadcast", np.array_equal(got, np.where(c, a32[:287].reshape(41, 7), b32[:7])), "exact")
    m = rng.standard_normal((333, 517))
    got = h(B.cast(D(cp.asarray(m).T), dtypes.float32))
    record("cast f64 view -> f32", np.array_equal(got, m.T.astype(np.float32)), "exact")
    for fn in ("transpose2d", "transpose2d_naive"):
        got = h(getattr(B, fn)(D(cp.asarray(m))))
        record(f"{fn} 333x517", np.array_equal(got, m.T), "exact")
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-13)):
        p, q = rng.standard_normal((257, 263)).astype(dt), rng.standard_normal((263, 255)).astype(dt)
        e = rel_err(h(B.matmul(D(cp.asarray(p)), D(cp.asarray(q)))), p.astype(np.float64) @ q.astype(np.float64))
        record(f"matmul {np.dtype(dt).name} 257x263x255", e < tol, f"rel err {e:.1e}")
    big = rng.standard_normal(10_000_019).astype(np.float32)
    got = float(h(B.sum(D(cp.asarray(big)), (0,))))
    ref, mag = float(np.sum(big, dtype=np.float64)), float(np.sum(np.abs(big), dtype=np.float64))
    record("sum f32 n=10000019", abs(got - ref) <= 1e-6 * mag, f"err/sum|x| {abs(got - ref) / mag:.1e}")
    t = rng.standard_normal((513, 3, 259))
    got = h(B.sum(D(cp.asarray(t)), (0, 2), True, 0.5))
    e = rel_err(got, 0.5 * t.sum(axis=(0, 2), keepdims=True))
    record("sum f64 dims (0,2) keepdim scale", e < 1e-13, f"rel err {e:.1e}")
    g, yv = rng.standard_normal(100_003), np.tanh(rng.standard_normal(100_003))
    e = rel_err(h(B.unary_backward("tanh", D(cp.asarray(g)), D(cp.asarray(yv)))), g * (1 - yv * yv))
    record("unary_backward tanh f64", e < 1e-14, f"rel err {e:.1e}")
    pr = rng.standard_normal(100_003).astype(np.float32)
    gr = rng.standard_normal(100_003).astype(np.float32)
    bf = rng.standard_normal(100_003).astype(np.float32)
    gp, gbuf = cp.asarray(pr), cp.asarray(bf)
    B.sgd_step(D(gp), D(cp.asarray(gr)), D(gbuf), 0.1, 0.9, 0.0, 0.01, True, False, False)
    g2 = gr + np.float32(0.01) * pr
    bf2 = bf * np.float32(0.9) + np.float32(1.0) * g2
    pr2 = pr - np.float32(0.1) * (g2 + np.float32(0.9) * bf2)
    record("sgd_step nesterov+wd f32", np.array_equal(h(gp), pr2) and np.array_equal(h(gbuf), bf2), "bit-exact")
    return out


# ---- timings ------------------------------------------------------------------------------------
def bench_add(n, repeats):
    rows = []
    src, dst = cp.empty(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
    src.fill(1)
    stream = cp.cuda.get_current_stream().ptr

    def copy():
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                    cp.cuda.runtime.memcpyDeviceToDevice, stream)
    t_copy = time_cupy(copy, repeats)
    copy_gbs = 2 * src.nbytes / t_copy / 1e6
    rows.append(dict(name="d2d copy (memcpyAsync)", size=n, ms=t_copy, gbs=copy_gbs))

    a, b = cp.random.standard_normal(n, dtype=cp.float32), cp.random.standard_normal(n, dtype=cp.float32)
    da, db = D(a), D(b)
    da_rows, db_row = D(a.reshape(-1, 1024)), D(b[:1024])
    t_ours = time_cupy(lambda: B.binary("add", da, db), repeats)
    rows.append(dict(name="add f32 (ours)", size=n, ms=t_ours, gbs=12 * n / t_ours / 1e6,
                     of_copy=(12 * n / t_ours / 1e6) / copy_gbs))
    t_bc = time_cupy(lambda: B.binary("add", da_rows, db_row), repeats)
    rows.append(dict(name="add f32 broadcast row (ours)", size=n, ms=t_bc, gbs=8 * n / t_bc / 1e6))
    if torch is not None:
        ta, tb = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        t_t = time_torch(lambda: torch.add(ta, tb), repeats)
        rows.append(dict(name="add f32 (torch)", size=n, ms=t_t, gbs=12 * n / t_t / 1e6,
                         of_copy=(12 * n / t_t / 1e6) / copy_gbs))
        del ta, tb
    return rows


def bench_transpose(n, repeats):
    rows = []
    x = cp.random.standard_normal((n, n + 1), dtype=cp.float32)    # not square, not a tile multiple
    nbytes = 2 * x.nbytes
    dx = D(x)
    for name, fn in (("transpose naive (ours)", B.transpose2d_naive), ("transpose tiled (ours)", B.transpose2d)):
        t = time_cupy(lambda: fn(dx), repeats)
        rows.append(dict(name=name, size=f"{n}x{n + 1}", ms=t, gbs=nbytes / t / 1e6))
    if torch is not None:
        tx = torch.randn(n, n + 1, device="cuda")
        t = time_torch(lambda: tx.t().contiguous(), repeats)
        rows.append(dict(name="transpose (torch .t().contiguous())", size=f"{n}x{n + 1}", ms=t, gbs=nbytes / t / 1e6))
    return rows


def bench_matmul(sizes, repeats):
    rows = []
    if torch is not None:
        print(", ".join(f"{flag} = {value}" for flag, value in disable_tf32(torch).items()))
    for n in sizes:
        a = cp.random.standard_normal((n, n), dtype=cp.float32)
        b = cp.random.standard_normal((n, n), dtype=cp.float32)
        da, db = D(a), D(b)
        reps = max(3, repeats // (1 + n // 1024))
        t = time_cupy(lambda: B.matmul(da, db), reps, warmup=1, flush=False)
        row = dict(name="matmul naive f32 (ours)", size=n, ms=t, tflops=2 * n ** 3 / t / 1e9)
        if torch is not None:
            ta, tb = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
            tt = time_torch(lambda: torch.mm(ta, tb), reps, flush=False)
            row.update(torch_ms=tt, torch_tflops=2 * n ** 3 / tt / 1e9)
        rows.append(row)
    return rows


def bench_sum(n, repeats):
    rows = []
    x = cp.random.standard_normal(n, dtype=cp.float32)
    dx = D(x)
    t = time_cupy(lambda: B.sum(dx, (0,)), repeats)
    rows.append(dict(name="sum f32 all (ours)", size=n, ms=t, gbs=4 * n / t / 1e6))
    dx2 = D(x.reshape(-1, 4096))
    t = time_cupy(lambda: B.sum(dx2, (1,)), repeats)
    rows.append(dict(name="sum f32 rows of 4096 (ours)", size=n, ms=t, gbs=4 * n / t / 1e6))
    if torch is not None:
        tx = torch.randn(n, device="cuda")
        t = time_torch(lambda: torch.sum(tx), repeats)
        rows.append(dict(name="sum f32 all (torch)", size=n, ms=t, gbs=4 * n / t / 1e6))
        tx2 = tx.reshape(-1, 4096)
        t = time_torch(lambda: torch.sum(tx2, 1), repeats)
        rows.append(dict(name="sum f32 rows of 4096 (torch)", size=n, ms=t, gbs=4 * n / t / 1e6))
    return rows


def checks_phase04(rng):
    """(name, passed, detail) for the phase-04 kernels: max/argmax, var, the vectorised sum, gather."""
    out = []
    h = host
    x = rng.standard_normal(10_000_019).astype(np.float32)
    gx = cp.asarray(x)
    v, i = B.extreme(D(gx), (0,), False, True)
    out.append(("max/argmax f32 n=10000019", float(h(v)) == x.max() and int(h(i)) == int(np.argmax(x)), "exact"))
    var, _ = B.var_mean(D(gx[3:]), (0,), 1, False, False)
    ref = x[3:].astype(np.float64).var(ddof=1)
    out.append(("var f32 n=10000016 (misaligned)", bool(abs(float(h(var)) - ref) <= 1e-5 * ref),
                f"rel err {abs(float(h(var)) - ref) / ref:.1e}"))
    m = rng.standard_normal((1001, 4099)).astype(np.float32)
    got = h(B.sum(D(cp.asarray(m)[:, 1:]), (1,)))
    e = rel_err(got, m[:, 1:].astype(np.float64).sum(axis=1))
    out.append(("sum f32 rows (1001, 4098) misaligned", bool(e < 1e-6), f"rel err {e:.1e}"))
    idx = rng.integers(-1001, 1001, 5000)
    got = h(B.take(D(cp.asarray(m)), 0, D(cp.asarray(idx))))
    out.append(("take f32 rows of (1001, 4099)", np.array_equal(got, m[idx]), "exact"))
    mask = rng.random((333, 517)) < 0.3
    out.append(("nonzero 333x517", np.array_equal(h(B.nonzero(D(cp.asarray(mask)))), np.argwhere(mask)), "exact"))
    return out


def bench_reductions(n, repeats, copy_gbs):
    """Phase 04: max, argmax of rows, var and std over n float32 (GB/s read), next to torch."""
    rows = []
    x = cp.random.standard_normal(n, dtype=cp.float32)
    dx, dx2 = D(x), D(x.reshape(-1, 4096))
    cases = (("max f32 all", lambda: B.extreme(dx, (0,), False, True)),
             ("argmax f32 rows of 4096", lambda: B.extreme(dx2, (1,), False, True)),
             ("var f32 all", lambda: B.var_mean(dx, (0,), 1, False, False)),
             ("std f32 rows of 4096", lambda: B.var_mean(dx2, (1,), 1, False, True)))
    for name, fn in cases:
        t = time_cupy(fn, repeats)
        gbs = 4 * n / t / 1e6
        rows.append(dict(name=f"{name} (ours)", size=n, ms=t, gbs=gbs, of_copy=gbs / copy_gbs))
    if torch is not None:
        tx = torch.randn(n, device="cuda")
        tx2 = tx.reshape(-1, 4096)
        for name, fn in (("max f32 all", lambda: torch.max(tx)), ("argmax f32 rows of 4096", lambda: tx2.argmax(1)),
                         ("var f32 all", lambda: torch.var(tx)), ("std f32 rows of 4096", lambda: tx2.std(1))):
            t = time_torch(fn, repeats)
            gbs = 4 * n / t / 1e6
            rows.append(dict(name=f"{name} (torch)", size=n, ms=t, gbs=gbs, of_copy=gbs / copy_gbs))
    return rows


def bench_overhead(calls, rounds=5):
    """Host microseconds per call for tiny inputs: the Python cost of one op (kernels queue).

    Ours and torch's alternate, round after round, and each gets the median of its rounds: the
    host is a shared virtual machine whose speed drifts, and alternating keeps the comparison fair.
    """
    a, b = D(cp.ones(1000, dtype=cp.float32)), D(cp.ones(1000, dtype=cp.float32))     # wrapped once, untimed
    m, v = D(cp.ones((100, 10), dtype=cp.float32)), D(cp.ones(10, dtype=cp.float32))
    ours = {"add 1K contiguous": lambda: B.binary("add", a, b),
            "add (100,10)+(10,) broadcast": lambda: B.binary("add", m, v),
            "mul scalar 1K": lambda: B.binary_scalar("mul", a, 2.0),
            "relu 1K": lambda: B.unary("relu", a),
            "sum 1K": lambda: B.sum(a, (0,))}
    theirs = {}
    if torch is not None:
        ta, tb = torch.ones(1000, device="cuda"), torch.ones(1000, device="cuda")
        tm, tv = torch.ones(100, 10, device="cuda"), torch.ones(10, device="cuda")
        theirs = {"add 1K contiguous": lambda: torch.add(ta, tb),
                  "add (100,10)+(10,) broadcast": lambda: torch.add(tm, tv),
                  "mul scalar 1K": lambda: torch.mul(ta, 2.0),
                  "relu 1K": lambda: torch.relu(ta),
                  "sum 1K": lambda: torch.sum(ta)}

    def per_call(fn):
        cp.cuda.Device().synchronize()
        if torch is not None:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls * 1e6

    rows = []
    for name, fn in ours.items():
        other = theirs.get(name)
        for f in (fn, other):
            if f is not None:
                for _ in range(200):
                    f()
        mine, torchs = [], []
        for _ in range(rounds):
            mine.append(per_call(fn))
            if other is not None:
                torchs.append(per_call(other))
        rows.append(dict(name=f"overhead {name}", us_per_call=statistics.median(mine),
                         torch_us_per_call=statistics.median(torchs) if torchs else None))
    cp.cuda.Device().synchronize()
    return rows


def compile_times():
    """Seconds to build each kernel module (NVRTC, or CuPy's on-disk cache if it has it)."""
    rows = []
    for file, name in (("elementwise.cu", "add_f32"), ("copy.cu", "cast_f32_f64"), ("transpose.cu", "transpose_f32"),
                       ("matmul.cu", "matmul_naive_f32"), ("reduce.cu", "sum_blocks_f32"), ("sgd.cu", "sgd_step_f32")):
        t0 = time.perf_counter()
        compiler.kernel(file, name)
        rows.append(dict(name=f"load {file}", seconds=time.perf_counter() - t0))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"),
                        help="folder for the JSON result file")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    args = parser.parse_args()

    info = dict(environment("cuda", torch), cuda_runtime=cp.cuda.runtime.runtimeGetVersion(),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), quick=args.quick)
    print(" ".join(f"{k}={v}" for k, v in info.items()))

    results = dict(compile=compile_times())
    rng = np.random.default_rng(int(time.time()))
    results["checks"] = [dict(name=n, passed=ok, detail=d) for n, ok, d in checks(rng) + checks_phase04(rng)]

    repeats = 10 if args.quick else 30
    n_stream = (16 if args.quick else 64) * MB          # elements: 64M float32 = 256 MB
    results["add"] = bench_add(n_stream, repeats)
    results["transpose"] = bench_transpose(2048 if args.quick else 8192, repeats)
    results["matmul"] = bench_matmul([256, 512, 1024] if args.quick else [256, 512, 1024, 2048, 4096], repeats)
    results["sum"] = bench_sum(n_stream, repeats)
    copy_gbs = results["add"][0]["gbs"]                 # the d2d copy: the ceiling to compare with
    for r in results["sum"]:
        r["of_copy"] = r["gbs"] / copy_gbs
    results["reduce"] = bench_reductions(n_stream, repeats, copy_gbs)
    results["overhead"] = bench_overhead(1000 if args.quick else 5000)

    # ---- the table ----
    print("\ncorrectness (float64 references, fresh random data, non-tile sizes)")
    for c in results["checks"]:
        print(f"  {'ok  ' if c['passed'] else 'FAIL'} {c['name']:<42} {c['detail']}")
    print("\nkernel module load (s)")
    for r in results["compile"]:
        print(f"  {r['name']:<28} {r['seconds']:8.2f}")
    print("\ntimings (median of CUDA-event times, L2 flushed)")
    print(f"  {'':<40} {'size':>12} {'ms':>9} {'GB/s':>8} {'TFLOP/s':>8} {'vs copy':>8}")
    for section in ("add", "transpose", "sum", "reduce"):
        for r in results[section]:
            of = f"{r['of_copy']:.0%}" if "of_copy" in r else ""
            print(f"  {r['name']:<40} {str(r['size']):>12} {r['ms']:9.3f} {r['gbs']:8.0f} {'':>8} {of:>8}")
    for r in results["matmul"]:
        print(f"  {r['name']:<40} {r['size']:>12} {r['ms']:9.3f} {'':>8} {r['tflops']:8.2f}")
        if "torch_ms" in r:
            print(f"  {'matmul f32 torch.mm (TF32 off)':<40} {r['size']:>12} {r['torch_ms']:9.3f} {'':>8} "
                  f"{r['torch_tflops']:8.2f}")
    print("\nPython overhead per call (host µs, median of alternating rounds)")
    print(f"  {'':<42} {'ours':>7} {'torch':>7}")
    for r in results["overhead"]:
        theirs = "" if r["torch_us_per_call"] is None else f"{r['torch_us_per_call']:7.2f}"
        print(f"  {r['name']:<42} {r['us_per_call']:7.2f} {theirs:>7}")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"bench_kernels-{stamp}.json"
    path.write_text(json.dumps(dict(info=info, results=results), indent=1, default=float))
    print(f"\nwrote {path}")
    failed = [c["name"] for c in results["checks"] if not c["passed"]]
    if failed:
        print("FAILED checks: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
