"""Every kernel file compiles with nvcc for Ampere (sm_80) and Hopper (sm_90) without register
spills. Runs wherever nvcc is on PATH; needs no GPU (compiling is not running).

This is the offline twin of what NVRTC does at run time (minitorch/cuda/compiler.py): the same
C++17, the same include directories (the kernel folder, and the file's own folder, from which
gemm/*.cu reach "gemm.cuh" and, through it, "../common.cuh"). Spills - registers the compiler
could not fit, moved to slow local memory - are what silently make a kernel slow, so any
non-zero count fails.
"""
import json
import re
import shutil
import subprocess

import pytest

from minitorch.cuda.compiler import KERNEL_DIR

NVCC = shutil.which("nvcc")
FILES = sorted(KERNEL_DIR.rglob("*.cu"))     # gemm/NN_name.cu too: the GEMM ladder
SPILLS = re.compile(r"ptxas info\s*: Function properties for (\S+)\s*\n\s*(\d+) bytes stack frame, "
                    r"(\d+) bytes spill stores, (\d+) bytes spill loads")

pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


def test_there_are_kernel_files():
    assert FILES, f"no .cu files in {KERNEL_DIR}"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(KERNEL_DIR).as_posix())
def test_compiles_without_spills(path, arch, tmp_path):
    target = [f"-arch={arch}"]
    if arch == "sm_90" and "wgmma" in path.read_text():
        # wgmma exists only in the arch-specific Hopper target; nvcc 13.0's -arch=sm_90a shorthand
        # also runs a plain sm_90 pass, which rejects it: the -gencode form builds sm_90a alone
        arch, target = "sm_90a", ["-gencode=arch=compute_90a,code=sm_90a"]
    cmd = [NVCC, *target, "-std=c++17", "-cubin", "-o", str(tmp_path / "out.cubin"),
           "--resource-usage", "-I", str(KERNEL_DIR), "-I", str(path.parent), str(path)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"nvcc failed on {path.name} for {arch}:\n{log}"
    functions = SPILLS.findall(log)
    assert functions, f"no resource usage reported for {path.name}:\n{log}"
    spilling = [f"{name}: {stores} bytes spill stores, {loads} bytes spill loads"
                for name, _, stores, loads in functions if int(stores) or int(loads)]
    assert not spilling, f"{path.name} ({arch}) spills registers:\n" + "\n".join(spilling)


# Rung 09's register-lean body (LEAN=1) is compiled only with options (its default is the first
# body): its base configuration, two 128 x 128 blocks per SM at 128 registers, must not spill either;
# nor any rung 09 configuration tuned.json ships (what matmul runs: the big products' one-block
# tiles hold 128 accumulators a thread and the whole k-tile unrolled in at most 255 registers).
LEAN_09 = ("-DLEAN=1", "-DKUNROLL=8", "-DMIN_BLOCKS=2")
TUNED_09 = {f"{kind}_{cls}": tuple(entry["options"])
            for kinds in json.loads((KERNEL_DIR / "gemm" / "tuned.json").read_text()).values()
            for kind, classes in kinds.items() for cls, entry in classes.items() if entry["rung"] == "09_pipelined"}


@pytest.mark.parametrize("options", [LEAN_09, *TUNED_09.values()], ids=["lean", *TUNED_09])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_rung09_lean_compiles_without_spills(arch, options, tmp_path):
    path = KERNEL_DIR / "gemm" / "09_pipelined.cu"
    cmd = [NVCC, f"-arch={arch}", "-std=c++17", "-cubin", "-o", str(tmp_path / "out.cubin"), "--resource-usage",
           "-I", str(KERNEL_DIR), "-I", str(path.parent), *options, str(path)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"nvcc failed on {path.name} {options} for {arch}:\n{log}"
    functions = SPILLS.findall(log)
    assert len(functions) == 4, f"expected the four gemm_*_f32 entries:\n{log}"
    assert all(int(s) == 0 and int(l) == 0 for _, _, s, l in functions), f"{options} spills ({arch}):\n{log}"
