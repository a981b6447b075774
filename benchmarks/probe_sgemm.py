"""Probe rung 09's LEAN configurations (fp32 SIMT, two or four blocks per SM) against rung 09 as it
was tuned and cuBLAS SGEMM, in one run of at most ~120 s.

    python benchmarks/probe_sgemm.py [--configs N] [--sizes 1024,2048,4096,8192] [--budget-s 110]
                                     [--repeats 9] [--out DIR]

1. check: every LEAN configuration of gemm.tuning_configs("09_pipelined") (18), plus rung 09's
   default and the tuned table's fp32 entries, on odd shapes in all four layouts, with a bias,
   batched (broadcast), misaligned views (the element-copy body), against float64 (torch on the
   GPU); the output is poisoned with NaN first. A configuration that fails is not timed. Each
   LEAN configuration that passes is raced at 4096^2 (3 repeats) right away; compiling takes
   most of the time (~2-3 s a configuration), so they go most promising first (the tuner's prior)
   and none is started past 55% of --budget-s (the JSON says how many were reached).
2. time: CUDA events, L2 flushed before each repeat, median; TF32 OFF for torch (printed) at
   square sizes (nn) and the GPT shapes (forward nt, dX nn, dW tn). Timed: cuBLAS (torch.mm), the
   tuned table's large-class rung 09 (what dispatch runs today), rung 09's default, the
   --configs LEAN configurations fastest in the race and the fastest 64 x 64 one (for the smaller
   sizes); a row "best LEAN" takes the fastest of those per shape.
Prints one table (TFLOP/s and % of cuBLAS per shape, geometric mean over the square sizes) and
writes the JSON to $OUT (else --out, default benchmarks/results/) as probe_sgemm-<gpu>-<time>.json.
"""
import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))
import gemm_common as C  # noqa: E402
import tune_gemm  # noqa: E402

RUNG = "09_pipelined"
CHECKS = (  # (M, N, K, layout, bias, batch of a, batch of b, misaligned (a, b))
    *[(129, 65, 257, lay, True, (), (), (False, False)) for lay in C.LAYOUTS],
    *[(300, 260, 100, lay, False, (), (), (False, False)) for lay in C.LAYOUTS],
    *[(67, 45, 39, lay, True, (), (), (True, True)) for lay in C.LAYOUTS],
    (1, 7, 33, "nn", True, (), (), (False, False)),
    (33, 1, 7, "tn", False, (), (), (False, False)),
    (36, 40, 24, "tn", True, (3,), (3,), (False, False)),
    (36, 40, 24, "nt", False, (2, 1), (3,), (False, False)),
)
GPT = (("gpt fwd 16384x1536x384 nt", 16384, 1536, 384, "nt"),
       ("gpt dX 16384x384x1536 nn", 16384, 384, 1536, "nn"),
       ("gpt dW 1536x384x16384 tn", 1536, 384, 16384, "tn"))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", type=int, default=4, help="LEAN configurations timed on every shape (default 4)")
    p.add_argument("--sizes", default="1024,2048,4096,8192", help="square sizes (nn)")
    p.add_argument("--budget-s", type=float, default=110.0, help="stop timing new entries after this (default 110)")
    p.add_argument("--repeats", type=int, default=9, help="timed repeats per entry (default 9)")
    p.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "benchmarks" / "results"))
    args = p.parse_args(argv)
    args.sizes = C.parse_list(args.sizes, int)
    return args


def _misaligned(t):
    """The same values in a view that starts one element into a fresh buffer, rows padded by one:
    not 16-byte aligned, leading dimension odd (the element-copy body)."""
    import torch
    rows, cols = t.shape[-2:]
    base = torch.empty(*t.shape[:-2], rows * (cols + 1) + 1, device=t.device, dtype=t.dtype)
    view = base[..., 1:].reshape(*t.shape[:-2], rows, cols + 1)[..., :cols]
    view.copy_(t)
    return view


def check(G, options, gen):
    """(ok, worst normwise relative error, first failing case or None) of rung 09 ``options``."""
    worst = 0.0
    for m, n, k, lay, bias, ba, bb, mis in CHECKS:
        a, _, bv = C.operands(m, n, k, lay, "f32", batch=ba, bias=bias, gen=gen)
        b = C.operands(m, n, k, lay, "f32", batch=bb, gen=gen)[1]       # its own batch shape
        if mis[0]:
            a = _misaligned(a.transpose(-1, -2)).transpose(-1, -2) if lay[0] == "t" else _misaligned(a)
        if mis[1]:
            b = _misaligned(b.transpose(-1, -2)).transpose(-1, -2) if lay[1] == "t" else _misaligned(b)
        try:
            with C.poisoned():
                out = G.gemm(C.wrap(a), C.wrap(b), C.wrap(bv) if bv is not None else None, rung=RUNG,
                             options=options)
            ok, rel, _ = C.check_torch(C.to_torch(out), a, b, bv, "fp32")
        except Exception as e:       # NVRTC rejects it, a launch fails, ...
            return False, float("nan"), f"{(m, n, k, lay, ba, bb, mis)}: {type(e).__name__}: {str(e)[:200]}"
        worst = max(worst, rel)
        if not ok:
            return False, rel, f"{(m, n, k, lay, ba, bb, mis)}: wrong (normwise {rel:.2e})"
    return True, worst, None


def label(options):
    """A short name of a rung 09 configuration: the parameters that differ from the defaults."""
    import minitorch.native.cuda.gemm as G
    c = G.config_of(RUNG, options)
    d = G.TUNED_DEFAULTS[RUNG]
    return "09 " + (" ".join(f"{k}={v}" for k, v in c.items() if v != d[k]) or "default")


def main(argv=None):
    args = parse_args(argv)
    start = time.time()
    torch, cp, G, _ = C.cuda_modules()
    tf32 = C.set_torch_tf32(torch, False)
    gen = torch.Generator(device="cuda").manual_seed(0)
    arch = C.arch_name()
    lean = [c for c in G.tuning_configs(RUNG) if G.config_of(RUNG, c).get("LEAN")]
    table = G.tuned_table().get(arch, {}).get("fp32", {})
    tuned = {cls: tuple(e["options"]) for cls, e in table.items() if e.get("rung") == RUNG}
    tuned_large = G.rung_with(RUNG, tuned["large"]).options if "large" in tuned else None
    default = G.RUNGS[RUNG].options
    print(f"GPU {torch.cuda.get_device_name()} ({arch}); torch {torch.__version__}; TF32 {tf32}", flush=True)

    data = {}

    def operands(m, n, k, lay):
        if (m, n, k, lay) not in data:
            data.clear()                 # one shape's operands at a time (8192^2: 768 MB)
            a, b, _ = C.operands(m, n, k, lay, "f32", gen=gen)
            data[(m, n, k, lay)] = (a, b, C.wrap(a), C.wrap(b))
        return data[(m, n, k, lay)]

    def timed(entry, m, n, k, lay, repeats):
        a, b, da, db = operands(m, n, k, lay)
        if entry == "cublas":
            fn = lambda: torch.mm(a, b)      # noqa: E731
        else:
            fn = lambda: G.gemm(da, db, None, rung=RUNG, options=entry)   # noqa: E731
        return C.gflops(m, n, k, C.time_ms(fn, repeats, warmup=2)) / 1000.0

    # 1. correctness of every configuration that may be timed or dispatched, and for the LEAN ones
    # a quick race at 4096^2 (3 repeats) that picks those timed everywhere. Compiling dominates
    # (~2-3 s a configuration): the most promising for large products (the tuner's prior) go first,
    # and past 55% of the budget no new configuration is started.
    lean.sort(key=lambda o: -tune_gemm.prior(RUNG, o, "large"))
    everything = list(dict.fromkeys([default] + [G.rung_with(RUNG, o).options for o in tuned.values()] + lean))
    checks, race = {}, {}
    for options in everything:
        if time.time() - start > args.budget_s * 0.55:
            print(f"checks stopped after {len(checks)} of {len(everything)} configurations (budget)", flush=True)
            break
        ok, rel, why = check(G, options, gen)
        checks[options] = dict(ok=ok, rel_err=rel, failure=why)
        if not ok:
            print(f"FAIL {label(options)}: {why}", flush=True)
        elif options in lean:
            race[options] = timed(options, 4096, 4096, 4096, "nn", 3)
    print(f"checked {len(checks)} configurations in {time.time() - start:.0f} s: "
          f"{sum(v['ok'] for v in checks.values())} pass", flush=True)
    best = sorted(race, key=race.get, reverse=True)[:args.configs]
    print("race at 4096^2 (TFLOP/s): " + ", ".join(f"{label(o)} {race[o]:.1f}" for o in best), flush=True)

    entries = [("cuBLAS", "cublas")]
    if tuned_large and checks.get(tuned_large, {}).get("ok"):
        entries.append(("09 tuned.json large", tuned_large))
    if checks.get(default, {}).get("ok") and default != tuned_large:
        entries.append(("09 default", default))
    small_tiles = [o for o in race if G.rung_with(RUNG, o).tile == (64, 64)]   # for 1024^2 and such
    best += [o for o in sorted(small_tiles, key=race.get, reverse=True)[:1] if o not in best]
    entries += [(label(o), o) for o in best]
    shapes = [(f"{s}^2 nn", s, s, s, "nn") for s in args.sizes] + list(GPT)
    results = {name: {} for name, _ in entries}
    stopped = None
    for sname, m, n, k, lay in shapes:
        for name, entry in entries:
            if time.time() - start > args.budget_s:
                stopped = f"budget of {args.budget_s:.0f} s spent at {sname}, {name}"
                break
            results[name][sname] = timed(entry, m, n, k, lay, args.repeats)
        if stopped:
            print(stopped, flush=True)
            break
    data.clear()

    # the table: TFLOP/s and % of cuBLAS; geometric mean of the ratio over the square sizes; a last
    # row "best LEAN" takes, per shape, the fastest LEAN entry (what per-class tuning could reach)
    lean_rows = [name for name, e in entries if e in best]
    if lean_rows:
        results["best LEAN"] = {c: max(results[n][c] for n in lean_rows if c in results[n])
                                for c in {c for n in lean_rows for c in results[n]}}
        entries.append(("best LEAN", None))
    cub = results["cuBLAS"]
    cols = [s[0] for s in shapes]
    squares = [s[0] for s in shapes if s[0].endswith("nn") and "^2" in s[0]]
    lines = ["| entry | " + " | ".join(cols) + " | geomean % (squares) |",
             "|---" * (len(cols) + 2) + "|"]
    summary = {}
    for name, _ in entries:
        cells, ratios = [], []
        for c in cols:
            t = results[name].get(c)
            if t is None or c not in cub:
                cells.append("-")
                continue
            pct = 100.0 * t / cub[c]
            cells.append(f"{t:.1f} ({pct:.0f}%)" if name != "cuBLAS" else f"{t:.1f}")
            if c in squares:
                ratios.append(t / cub[c])
        gm = 100.0 * C.geomean(ratios) if len(ratios) == len(squares) and ratios else None
        summary[name] = gm
        lines.append(f"| {name} | " + " | ".join(cells) + (f" | {gm:.1f} |" if gm else " | - |"))
    print("\nTFLOP/s (% of cuBLAS SGEMM, TF32 off), CUDA events, L2 flushed, median of "
          f"{args.repeats}:\n" + "\n".join(lines), flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    path = out / f"probe_sgemm-{gpu}-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({
        "gpu": torch.cuda.get_device_name(), "arch": arch, "torch": torch.__version__, "tf32": tf32,
        "seconds": time.time() - start, "stopped": stopped, "repeats": args.repeats,
        "checks": [{"options": list(o), "label": label(o), **v} for o, v in checks.items()],
        "race_4096_tflops": [{"options": list(o), "label": label(o), "tflops": v} for o, v in race.items()],
        "entries": [{"name": n, "options": list(e) if isinstance(e, tuple) else e} for n, e in entries],
        "tflops": results, "geomean_pct_of_cublas_squares": summary,
    }, indent=1))
    print(f"wrote {path} ({time.time() - start:.0f} s)")
    return 0 if all(v["ok"] for v in checks.values()) and len(checks) == len(everything) else 1


if __name__ == "__main__":
    sys.exit(main())
