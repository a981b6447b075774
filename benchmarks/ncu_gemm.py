"""Profile GEMM rungs with Nsight Compute (ncu) and keep the few numbers the notebook explains.

    python benchmarks/ncu_gemm.py [--rungs 05_blocktile_2d,08_warptile] [--size 4096] [--out DIR]

For each rung (default: rung 05 and the best fp32 rung of the tuned table, else the highest
fp32 rung present): one ``ncu`` run over one launch of its nn kernel at size x size x size (the
launch after a warm-up one), with the sections SpeedOfLight, Occupancy, MemoryWorkloadAnalysis,
WarpStateStats and the shared-memory bank-conflict counters
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum`` (with the wavefronts they cost).
Clocks are left as they are (``--clock-control none``: we never change the card's settings).

Writes to --out (default benchmarks/results/ncu): ``<rung>.ncu-rep`` (open it in Nsight Compute),
``<rung>.csv`` (every raw metric), and ``ncu_gemm.json``: per rung, duration, SM and memory
throughput (% of peak), DRAM bytes, achieved occupancy, bank conflicts (loads, stores) and the
top warp-stall reasons (cycles a warp waits per issued instruction). Run on a GPU machine with ncu.

``--target RUNG`` (used by the script itself under ncu): run that rung twice and exit.
"""
import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import gemm_common as C  # noqa: E402

SECTIONS = ("SpeedOfLight", "Occupancy", "MemoryWorkloadAnalysis", "WarpStateStats", "LaunchStats")
METRICS = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           "dram__bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
           "gpu__time_duration.sum")
KEEP = {  # our name -> raw metric
    "duration_us": "gpu__time_duration.sum",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_throughput_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_bytes": "dram__bytes.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "registers_per_thread": "launch__registers_per_thread",
    "smem_per_block": "launch__shared_mem_per_block",
    "bank_conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "bank_conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smem_wavefronts_ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smem_wavefronts_st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


def parse_raw_csv(text):
    """ncu ``--csv --page raw`` text -> list of {metric: value} (one per profiled kernel), numbers
    as floats where they parse (ncu writes '1,234.5'), the units row dropped."""
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):] if '"ID"' in text else text)))
    if len(rows) < 2:
        return []
    head, out = rows[0], []
    for r in rows[1:]:
        if len(r) != len(head) or (r and r[0] == ""):      # the units row has an empty ID
            continue
        d = {}
        for h, v in zip(head, r):
            try:
                d[h] = float(v.replace(",", ""))
            except ValueError:
                d[h] = v
        out.append(d)
    return out


def summary(raw):
    """The numbers the notebook shows, from one kernel's raw metrics: KEEP's, and the six largest
    warp-stall reasons (cycles per issued instruction)."""
    s = {name: raw.get(metric) for name, metric in KEEP.items()}
    if isinstance(s["duration_us"], float):
        s["duration_us"] /= 1000.0         # --print-units base: nanoseconds
    stalls = {m.group(1): v for k, v in raw.items() if (m := STALL.match(k)) and isinstance(v, float)}
    s["top_stalls_per_issue"] = dict(sorted(stalls.items(), key=lambda kv: -kv[1])[:6])
    s["kernel"] = raw.get("Kernel Name")
    return s


def default_rungs(rungs, table, arch):
    """Rung 05 (if present) and the tuned table's large fp32 choice, else the highest fp32 rung."""
    names = [r for r, spec in rungs.items() if "f32" in spec.dtypes and not getattr(spec, "tensor_cores", False)]
    picks = [r for r in names if r.startswith("05_")][:1]
    best = (table.get(arch, {}).get("fp32", {}).get("large") or {}).get("rung")
    if best not in rungs:
        best = names[-1] if names else None
    if best and best not in picks:
        picks.append(best)
    return picks


def target(rung, size):
    """Run rung's nn kernel twice at size^3 (the first compiles and warms up)."""
    import numpy as np
    import cupy as cp
    from minitorch.cuda import array as A
    from minitorch.native.cuda import gemm as G
    C.allow_named_rungs()
    rng = np.random.default_rng(0)
    spec = G.RUNGS[rung]
    dtype = {"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(spec.dtypes[0])
    if dtype is None:                        # bf16: NumPy's through ml_dtypes
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    a = A.from_numpy(rng.standard_normal((size, size), dtype=np.float32).astype(dtype), 0)
    b = A.from_numpy(rng.standard_normal((size, size), dtype=np.float32).astype(dtype), 0)
    for _ in range(2):
        G.gemm(a, b, None, rung=rung)
    cp.cuda.Device().synchronize()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rungs", help="comma-separated rung names (default: 05 and the best fp32)")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ncu"))
    p.add_argument("--target", help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=int, default=150, help="seconds per ncu run")
    args = p.parse_args(argv)
    if args.target:
        target(args.target, args.size)
        return 0
    ncu = shutil.which("ncu")
    if ncu is None:
        sys.exit("ncu is not on PATH")
    from minitorch.native.cuda import gemm as G
    table_path = ROOT / "minitorch" / "cuda" / "gemm" / "tuned.json"
    table = json.loads(table_path.read_text()) if table_path.is_file() else {}
    rungs = C.parse_list(args.rungs) or default_rungs(G.RUNGS, table, C.arch_name())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"size": args.size, "gpu_arch": C.arch_name(), "rungs": {}}
    for rung in rungs:
        rep = out / f"{rung}.ncu-rep"
        cmd = [ncu, "--clock-control", "none", "-k", "regex:^gemm_", "--launch-skip", "1", "--launch-count", "1",
               *sum((["--section", s] for s in SECTIONS), []), "--metrics", ",".join(METRICS), "-f", "-o", str(out / rung),
               sys.executable, str(Path(__file__).resolve()), "--target", rung, "--size", str(args.size)]
        print(" ".join(cmd), flush=True)
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            log = run.stdout + run.stderr
            if run.returncode != 0 or not rep.exists():
                results["rungs"][rung] = {"error": log[-2000:]}
                print(log[-2000:], flush=True)
                continue
            text = subprocess.run([ncu, "--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"], capture_output=True,
                                  text=True, timeout=120).stdout
        except subprocess.TimeoutExpired:
            results["rungs"][rung] = {"error": f"ncu took over {args.timeout} s"}
            continue
        (out / f"{rung}.csv").write_text(text)
        kernels = parse_raw_csv(text)
        results["rungs"][rung] = summary(kernels[-1]) if kernels else {"error": "no kernel in the ncu report"}
        print(rung, json.dumps(results["rungs"][rung], indent=1), flush=True)
    (out / "ncu_gemm.json").write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {out / 'ncu_gemm.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
