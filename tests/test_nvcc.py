"""Every kernel file compiles with nvcc for Ampere (sm_80) and Hopper (sm_90) without register
spills. Runs wherever nvcc is on PATH; needs no GPU (compiling is not running).

This is the offline twin of what NVRTC does at run time (minitorch/cuda/compiler.py): the same
C++17, the same include directory. Spills - registers the compiler could not fit, moved to slow
local memory - are what silently make a kernel slow, so any non-zero count fails.
"""
import re
import shutil
import subprocess

import pytest

from minitorch.cuda.compiler import KERNEL_DIR

NVCC = shutil.which("nvcc")
FILES = sorted(KERNEL_DIR.glob("*.cu")) + sorted(KERNEL_DIR.glob("gemm/*.cu"))   # + the GEMM ladder (phase 05)
SPILLS = re.compile(r"ptxas info\s*: Function properties for (\S+)\s*\n\s*(\d+) bytes stack frame, "
                    r"(\d+) bytes spill stores, (\d+) bytes spill loads")

pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


def test_there_are_kernel_files():
    assert FILES, f"no .cu files in {KERNEL_DIR}"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_compiles_without_spills(path, arch, tmp_path):
    cmd = [NVCC, f"-arch={arch}", "-std=c++17", "-cubin", "-o", str(tmp_path / "out.cubin"),
           "--resource-usage", "-I", str(KERNEL_DIR), str(path)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"nvcc failed on {path.name} for {arch}:\n{log}"
    functions = SPILLS.findall(log)
    assert functions, f"no resource usage reported for {path.name}:\n{log}"
    spilling = [f"{name}: {stores} bytes spill stores, {loads} bytes spill loads"
                for name, _, stores, loads in functions if int(stores) or int(loads)]
    assert not spilling, f"{path.name} ({arch}) spills registers:\n" + "\n".join(spilling)
