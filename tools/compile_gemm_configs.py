# phase: 05
"""Compile every tuning configuration of the tensor-core GEMM rungs with nvcc, for sm_80 and
sm_90, and report register spills (no GPU needed; needs nvcc on PATH, not CuPy).

    python tools/compile_gemm_configs.py [--rungs 10_tf32_mma,11_half_mma] [--jobs 2] [--all]

Each configuration of ``gemm.tuning_configs(rung)`` (with ``--all``: also those already listed
in gemm._SPILLING) is compiled as NVRTC would compile it (same -D options, C++17) with
``--resource-usage``; a configuration whose kernels spill (any bytes of spill stores or loads) or
fail to compile is printed, and the set to paste into gemm._SPILLING is printed last.
"""
import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "minitorch" / "cuda"
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
REGS = re.compile(r"Used (\d+) registers")


def load_gemm():
    """minitorch/native/cuda/gemm.py without CuPy: the launch layer and arrays are stubbed (only
    the configuration functions are used)."""
    sys.path.insert(0, str(ROOT))
    import minitorch  # noqa: F401
    pkg = types.ModuleType("minitorch.native.cuda")
    pkg.__path__ = [str(ROOT / "minitorch" / "native" / "cuda")]
    sys.modules["minitorch.native.cuda"] = pkg
    launch = types.ModuleType("minitorch.native.cuda.launch")
    for name in ("SUFFIX", "StructArg", "broadcast_layout", "broadcast_strides", "cdiv", "coalesce", "cp", "kernel",
                 "launch_2d", "sm_count"):
        setattr(launch, name, None)
    sys.modules["minitorch.native.cuda.launch"] = launch
    array = types.ModuleType("minitorch.cuda.array")
    array.empty = None
    sys.modules["minitorch.cuda.array"] = array
    spec = importlib.util.spec_from_file_location("minitorch.native.cuda.gemm", pkg.__path__[0] + "/gemm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compile_one(nvcc, path, arch, options):
    """(ok, max registers, spill bytes, log) of ``path`` compiled for ``arch`` with ``options``."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, f"-arch={arch}", "-std=c++17", "-cubin", "-o", f"{tmp}/out.cubin", "--resource-usage",
               "-I", str(KERNELS), "-I", str(path.parent), *options, str(path)]
        run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    spills = sum(int(a) + int(b) for a, b in SPILLS.findall(log))
    regs = max((int(r) for r in REGS.findall(log)), default=0)
    return run.returncode == 0 and bool(SPILLS.findall(log)), regs, spills, log


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rungs", default="10_tf32_mma,11_half_mma")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--all", action="store_true", help="also the configurations listed in _SPILLING")
    args = p.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("nvcc is not on PATH")
    G = load_gemm()
    spilling_before = G._SPILLING
    if args.all:
        G._SPILLING = frozenset()
    jobs = []
    for rung in args.rungs.split(","):
        path = KERNELS / G.RUNGS[rung].file
        for options in G.tuning_configs(rung):
            for arch in ("sm_80", "sm_90"):
                jobs.append((rung, tuple(options), arch, path))
    print(f"{len(jobs)} compilations", flush=True)
    bad = set()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda j: (j, compile_one(nvcc, j[3], j[2], j[1])), jobs)
        for (rung, options, arch, _), (ok, regs, spills, log) in results:
            flag = "" if ok and not spills else ("  SPILLS" if ok else "  FAILED")
            print(f"{rung} {arch} {' '.join(o[2:] for o in options)}: {regs} regs, {spills} spill bytes{flag}",
                  flush=True)
            if not ok:
                print(log[-2000:])
            if flag:
                bad.add((rung, options))
    print(f"\n{len(bad)} configurations spill or fail; _SPILLING = frozenset({{")
    for rung, options in sorted(bad | (set(spilling_before) if not args.all else set())):
        print(f"    ({rung!r}, {options!r}),")
    print("})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
