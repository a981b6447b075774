"""Compile tuned GEMM configurations with nvcc and report the ones that spill registers.

    python tools/gemm_spills.py [--rungs 09] [--archs sm_80,sm_90] [--where KUNROLL=1,MIN_BLOCKS=2] [-j 2]

tests/test_nvcc.py compiles each .cu with its default sizes only; the autotuner compiles every
configuration of minitorch.native.cuda.gemm.tuning_configs. This script does that offline (no
GPU needed): each configuration, every entry point, for each architecture, with
`nvcc -cubin --resource-usage`, and prints the option tuples whose kernels spill (local-memory
stores or loads) or fail to compile. Those go into gemm.py's _SPILLING (never offered to the
tuner), or the tuning space is narrowed. --where keeps only configurations with those values.
It reads gemm.py's tuning logic without importing CuPy.
"""
import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEMM_PY = ROOT / "minitorch" / "native" / "cuda" / "gemm.py"
KERNELS = ROOT / "minitorch" / "cuda"
SPILLS = re.compile(r"ptxas info\s*: Function properties for (\S+)\s*\n\s*(\d+) bytes stack frame, "
                    r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def load_gemm():
    """gemm.py's module-level definitions (RUNGS, TUNING_SPACE, tuning_configs, ...) without its
    relative imports (which need CuPy); the names those imports gave are None."""
    tree = ast.parse(GEMM_PY.read_text())
    body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and n.level > 0)]
    scope = {"__name__": "gemm_offline", "__file__": str(GEMM_PY)}
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.level > 0:
            scope.update({a.asname or a.name: None for a in n.names})
    sys.modules.setdefault("gemm_offline", types.ModuleType("gemm_offline"))   # dataclasses looks it up
    exec(compile(ast.Module(body=body, type_ignores=[]), str(GEMM_PY), "exec"), scope)
    return types.SimpleNamespace(**scope)


def spills(nvcc, path, arch, options, tmp):
    """[(function, stores, loads)] that spill, or [("nvcc failed", log)]."""
    cmd = [nvcc, f"-arch={arch}", "-std=c++17", "-cubin", "-o", str(Path(tmp) / f"{abs(hash(options))}_{arch}.cubin"),
           "--resource-usage", "-I", str(KERNELS), "-I", str(path.parent), *options, str(path)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    if run.returncode != 0:
        return [("nvcc failed", log[-400:], "")]
    return [(f, s, l) for f, _, s, l in SPILLS.findall(log) if int(s) or int(l)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rungs", default="07,08,09", help="comma-separated rung names or numbers")
    p.add_argument("--archs", default="sm_80,sm_90")
    p.add_argument("--where", default="", help="NAME=value,... : only configurations with these values")
    p.add_argument("-j", type=int, default=2, help="parallel nvcc runs")
    args = p.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        p.error("nvcc is not on PATH")
    G = load_gemm()
    wanted = [r.strip() for r in args.rungs.split(",") if r.strip()]
    where = dict(kv.split("=") for kv in args.where.split(",") if kv)
    jobs = []
    for rung in G.TUNING_SPACE:
        if not any(rung == w or rung.startswith(w + "_") for w in wanted):
            continue
        for options in G.tuning_configs(rung):
            config = G.config_of(rung, options)
            if all(str(config.get(k)) == v for k, v in where.items()):
                jobs += [(rung, options, arch) for arch in args.archs.split(",")]
    print(f"{len(jobs)} compilations", flush=True)
    bad = {}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.j) as pool:
        futures = [(job, pool.submit(spills, nvcc, KERNELS / G.RUNGS[job[0]].file, job[2], job[1], tmp))
                   for job in jobs]
        for i, ((rung, options, arch), fut) in enumerate(futures):
            found = fut.result()
            if found:
                bad.setdefault((rung, options), []).append((arch, found))
                print(f"SPILLS {rung} {' '.join(options)} {arch}: {found}", flush=True)
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(jobs)} done, {len(bad)} spilling", flush=True)
    print(f"{len(bad)} spilling configurations of {len(jobs) // max(1, len(args.archs.split(',')))}")
    for rung, options in bad:
        print(repr(options) + ",")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
