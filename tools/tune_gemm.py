"""Search the GEMM rungs' tile configurations on this GPU and write the tuned table.

    python tools/tune_gemm.py [--budget-s 200] [--kinds fp32,tf32,bf16,f16] [--rungs 07,08,09]
                              [--out minitorch/cuda/gemm/tuned.json] [--log tune_log.json]

The table that dispatch (minitorch/native/cuda/gemm.py) reads, per GPU architecture, kind of
arithmetic and shape class:

    {"sm_90": {"fp32": {"small":  {"rung": "08_warptile", "options": ["-DBM=64", ...], "gflops": 21000.0},
                        "medium": {...}, "large": {...}},
               "tf32": {...}, "bf16": {...}, "f16": {...}}}

Shape classes are gemm.shape_class's (output elements M*N*batch: small <= 2**18, medium <= 2**22,
large above); each class is measured on two representative shapes (CLASS_SHAPES, M x N x K and
layout) and a candidate's score is the geometric mean of its GFLOP/s over them.

Candidates per kind: every rung of that kind with its own options (so kinds with no tunable rung,
tf32 and bf16/f16, get their best fixed rung), and every valid configuration
(gemm.tuning_configs) of the rungs with a tuning space (07-11), the rung's default first, the rest
ordered by a prior (``prior``: what earlier H100 runs showed; the most promising for large and
for small/medium products in turn, ties in a seeded random order), since the budget covers only
part of the space. Each candidate is first checked against float64 on an odd shape with a
bias (output poisoned with NaN); a wrong or failing one is dropped. Timing: CUDA events, median,
L2 flushed before each repeat (benchmarks/gemm_common.py). A candidate far behind the best so far
on a class's first shape is not timed on the second. The search stops starting new candidates
when --budget-s is spent (default 200 s; with compilation about 1-3 s per configuration), and
says so. The result is merged into --out: entries measured now replace the same (arch, kind,
class), others are kept.
"""
import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import gemm_common as C  # noqa: E402

TABLE = ROOT / "minitorch" / "cuda" / "gemm" / "tuned.json"
TUNED_KINDS = ("fp32", "tf32", "bf16", "f16")
CLASSES = ("small", "medium", "large")
CLASS_SHAPES = {   # (M, N, K, layout): a square one and one this course trains
    "small": ((256, 256, 256, "nn"), (64, 128, 784, "nt")),            # MNIST MLP forward
    "medium": ((1024, 1024, 1024, "nn"), (2048, 1536, 384, "nt")),     # a GPT forward of 2048 tokens
    "large": ((4096, 4096, 4096, "nn"), (16384, 1536, 384, "nt")),     # GPT forward, 16384 tokens
}
CHECK_SHAPE = (129, 65, 257, "nt")
BEHIND = 0.3       # a candidate under this fraction of the best GFLOP/s so far skips the class's second shape


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget-s", type=float, default=200.0, help="seconds of searching (default 200)")
    p.add_argument("--kinds", help=f"comma-separated kinds among {TUNED_KINDS} (default: all)")
    p.add_argument("--rungs", help="comma-separated rung names or numbers (default: all)")
    p.add_argument("--out", default=str(TABLE), help="the tuned table to merge into (default: the package's)")
    p.add_argument("--log", help="also write every candidate's numbers to this JSON file")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats per shape (default 7)")
    p.add_argument("--seed", type=int, default=0, help="order of the configurations tried (default 0)")
    args = p.parse_args(argv)
    args.kinds = C.parse_list(args.kinds) or list(TUNED_KINDS)
    bad = set(args.kinds) - set(TUNED_KINDS)
    if bad:
        p.error(f"unknown kinds {sorted(bad)}; choose from {TUNED_KINDS}")
    args.rungs = C.parse_list(args.rungs)
    return args


def _params(options):
    """{NAME: int} of "-DNAME=int" options (others ignored)."""
    out = {}
    for opt in options:
        name, eq, value = opt[2:].partition("=") if opt.startswith("-D") else ("", "", "")
        if eq and value.lstrip("-").isdigit():
            out[name] = int(value)
    return out


def prior(rung, options, target):
    """How promising configuration ``options`` of tuned rung ``rung`` is for ``target`` ('large',
    or 'small' for the small and medium classes), higher first: what the H100 tuning log
    (94 candidates, 2026-11-24) and the register reports say. Large products: 64 accumulators a
    thread (32 starve the FMA pipes, 128 spill or run one warp group per SM), 128 x 128
    blocktiles, thread tiles of 4 columns (07 with TN=8 has shared-memory bank conflicts), the
    cp.async pipeline of 09 with BK 16 and 3 stages, 09 with the switches that fit two 256-thread
    blocks per SM (KUNROLL=1, MIN_BLOCKS=2, ELEM_COPY=1: 128 registers, no spills), and first of
    all 09's register-lean body (LEAN=1: two blocks per SM with the k loop unrolled by chunks and
    double-buffered fragments; not yet measured when this order was written, so all 18 of its
    configurations come first: --rungs 09 --kinds fp32 with a 150 s budget times every one).
    Small and medium ones: small blocktiles (64 x 64 gives the most blocks), 16-32 accumulators,
    deep k slices for 07, LEAN's 128-thread configurations first. Only an order: every
    configuration stays in the search."""
    c = _params(options)
    bm, bn, bk = c.get("BM", 128), c.get("BN", 128), c.get("BK", 8)
    if rung.startswith("07"):
        threads = (bm // max(c.get("TM", 8), 1)) * (bn // max(c.get("TN", 8), 1))
    else:
        threads = 32 * (bm // max(c.get("WM", 64), 1)) * (bn // max(c.get("WN", 32), 1))
    acc = bm * bn // max(threads, 1)
    area = bm * bn
    shape = (min(bm, bn), max(bm, bn))
    two_blocks = (c.get("KUNROLL"), c.get("MIN_BLOCKS"), c.get("ELEM_COPY")) == (1, 2, 1)
    lean = c.get("LEAN") == 1
    score = 0.0
    if target == "large":
        score += 20.0 if lean else 0.0
        score += {"09": 3.0, "08": 1.0, "07": 1.5}.get(rung[:2], 0.0)
        score += 4.0 if two_blocks else 0.0
        score += {64: 2.0, 128: 1.0, 32: 0.5}.get(acc, 0.0)
        score += {(128, 128): 2.0, (128, 256): 1.2, (64, 128): 1.0, (64, 256): 0.6}.get(shape, 0.0)
        score += 0.5 if c.get("TN", 4) == 4 else 0.0
        if rung.startswith("09"):
            score += (0.5 if bk == 16 else 0.0) + {3: 0.5, 4: 0.3}.get(c.get("STAGES"), 0.0)
    else:
        score += 20.0 if lean and threads == 128 else 10.0 if lean else 0.0
        score += {"09": 2.0, "07": 2.0, "08": 1.0}.get(rung[:2], 0.0)
        score += 1.0 if two_blocks else 0.0
        score += {64 * 64: 2.0, 64 * 128: 1.2, 128 * 64: 1.2, 128 * 128: 0.5}.get(area, 0.0)
        score += 1.0 if acc <= 32 else 0.0
        score += 0.5 if c.get("TN", 4) == 4 else 0.0
        score += 0.5 if rung.startswith("07") and bk == 32 else 0.0
        if rung.startswith("09"):
            score += {3: 0.3, 2: 0.2}.get(c.get("STAGES"), 0.0)
    return score


def _by_prior(tuned):
    """``tuned`` [(rung, options, True)] in search order: the most promising for large products
    and for small/medium ones taken in turn (the budget then covers both ends), each list sorted
    by :func:`prior` (stable: ties keep the seeded order)."""
    large = sorted(tuned, key=lambda t: -prior(t[0], t[1], "large"))
    small = sorted(tuned, key=lambda t: -prior(t[0], t[1], "small"))
    out, seen = [], set()
    for pair in zip(large, small):
        for t in pair:
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def candidates(rungs, suffixes, tuning_configs, kind, only=None, seed=0):
    """[(rung, options tuple, tunable)] for ``kind``: each rung of that kind with its own options,
    then the tunable rungs' configurations (a rung's own options are not repeated), shuffled with
    ``seed`` and then ordered by :func:`prior` (the most promising for large and for small/medium
    products in turn), so that a search cut short by its budget has tried the likely winners.
    ``tuning_configs``: gemm.tuning_configs or None; a rung for which it raises
    KeyError/ValueError/TypeError has no tuning space."""
    fixed, tuned = [], []
    for name, suffix, k in C.rung_cases(rungs, suffixes, only):
        if k != kind:
            continue
        own = tuple(rungs[name].options)
        fixed.append((name, own, False))
        if tuning_configs is None:
            continue
        try:
            configs = [tuple(c) for c in tuning_configs(name)]
        except (KeyError, ValueError, TypeError):
            continue
        tuned += [(name, c, True) for c in configs if c != own]
    random.Random(seed).shuffle(tuned)
    return fixed + _by_prior(tuned)


def best_entries(scores):
    """{kind: {class: {"rung", "options", "gflops"}}} from ``scores``: a list of dicts with 'kind',
    'rung', 'options', 'ok' and 'classes' ({class: GFLOP/s or None}), keeping per (kind, class)
    the highest GFLOP/s among the correct candidates."""
    out = {}
    for s in scores:
        if not s.get("ok"):
            continue
        for cls, g in (s.get("classes") or {}).items():
            if g is None:
                continue
            best = out.setdefault(s["kind"], {}).get(cls)
            if best is None or g > best["gflops"]:
                out[s["kind"]][cls] = {"rung": s["rung"], "options": list(s["options"]), "gflops": round(g, 1)}
    return out


def write_table(path, arch, entries):
    """Merge {kind: {class: entry}} for ``arch`` into the JSON file ``path`` (created if missing);
    returns the merged table."""
    path = Path(path)
    existing = json.loads(path.read_text()) if path.is_file() else {}
    merged = C.merge_tuned(existing, {arch: entries})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    return merged


def main(argv=None):
    args = parse_args(argv)
    torch, cp, G, SUFFIX = C.cuda_modules()
    from minitorch.native.cuda.gemm import shape_class
    for cls, shapes in CLASS_SHAPES.items():
        assert all(shape_class(m, n, k, 1) == cls for m, n, k, _ in shapes), (cls, shapes)
    start = time.time()
    deadline = start + args.budget_s
    arch = C.arch_name()
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    tuning = getattr(G, "tuning_configs", None)
    scores, stopped = [], None
    best_at = {}                         # (kind, shape) -> best GFLOP/s so far
    # every kind's fixed rungs first (few), then the
    # configurations of the tunable rungs: a spent budget cuts the search, never a whole kind
    queue, tunables = [], []
    for kind in args.kinds:
        here = {name: spec for name, spec in G.RUNGS.items() if G.runs_on(spec, int(arch[3:]))}   # 12: sm_90 only
        cands = candidates(here, set(SUFFIX.values()), tuning, kind, args.rungs, args.seed)
        print(f"{kind}: {len(cands)} candidates", flush=True)
        queue += [(kind, c) for c in cands if not c[2]]
        tunables += [(kind, c) for c in cands if c[2]]
    queue += tunables
    data = {}                            # (kind, shape) -> operands: fresh random data, made once
    for i, (kind, (rung, options, tunable)) in enumerate(queue):
        if time.time() > deadline:
            stopped = f"budget of {args.budget_s:.0f} s spent after {i} of {len(queue)} candidates"
            print(stopped, flush=True)
            break
        suffix = C.KIND_SUFFIX[kind]
        row = dict(kind=kind, rung=rung, options=list(options), tunable=tunable, classes={})
        scores.append(row)
        m, n, k, lay = CHECK_SHAPE
        a, b, bias = C.operands(m, n, k, lay, suffix, bias=True, gen=gen)
        try:
            with C.poisoned():
                out = G.gemm(C.wrap(a), C.wrap(b), C.wrap(bias), rung=rung, options=options)
            row["ok"], row["rel_err"], _ = C.check_torch(C.to_torch(out), a, b, bias, kind)
        except Exception as e:       # NVRTC rejects it, too much shared memory, ...
            row.update(ok=False, error=f"{type(e).__name__}: {str(e)[:300]}")
        if not row["ok"]:
            print(f"  {rung} {options}: {'FAILS the check' if 'error' not in row else row['error'][:160]}", flush=True)
            continue
        for cls in CLASSES:
            if rung.startswith("01_") and cls == "large":
                row["classes"][cls] = None           # seconds per call; never the best
                continue
            got = []
            for m, n, k, lay in CLASS_SHAPES[cls]:
                key = (m, n, k, lay)
                if (kind, key) not in data:
                    data[(kind, key)] = C.operands(m, n, k, lay, suffix, gen=gen)[:2]
                a, b = data[(kind, key)]
                da, db = C.wrap(a), C.wrap(b)
                try:
                    ms = C.time_ms(lambda: G.gemm(da, db, None, rung=rung, options=options), args.repeats, warmup=2)
                except Exception as e:
                    row.update(ok=False, error=f"{type(e).__name__}: {str(e)[:300]}")
                    break
                g = C.gflops(m, n, k, ms)
                got.append(g)
                bk = (kind, key)
                behind = best_at.get(bk) and g < BEHIND * best_at[bk]
                best_at[bk] = max(best_at.get(bk) or 0, g)
                if behind:
                    break
            if not row["ok"]:
                break
            row["classes"][cls] = C.geomean(got) if len(got) == len(CLASS_SHAPES[cls]) else None
        print(f"  {kind} {rung} {' '.join(options) or '(own options)'}: "
              + ", ".join(f"{c} {g:.0f}" if g else f"{c} -" for c, g in row["classes"].items()), flush=True)
    data.clear()
    torch.cuda.empty_cache()
    entries = best_entries(scores)
    merged = write_table(args.out, arch, entries)
    print(json.dumps({arch: merged.get(arch, {})}, indent=1))
    if args.log:
        Path(args.log).write_text(json.dumps({"arch": arch, "stopped": stopped, "seconds": time.time() - start,
                                              "class_shapes": CLASS_SHAPES, "candidates": scores}, indent=1, default=str))
    print(f"tune_gemm: {len(scores)} candidates in {time.time() - start:.0f} s"
          + (f"; {stopped}" if stopped else "") + f"; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
