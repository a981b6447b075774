"""Every compile-time configuration of 02_flash_mma.cu that the attention ladder times (the steps of
``minitorch.native.cuda.attention.LADDER`` and the tile sizes of ``TILE_CHOICES``) compiles with nvcc
for sm_80 and sm_90 without register spills, and its SASS runs the tensor cores (HMMA) when a
disassembler (cuobjdump) is on PATH. tests/test_nvcc.py checks the default configuration only.
Needs nvcc, no GPU; slow (one full compile per configuration and architecture)."""
import shutil
import subprocess

import pytest

from minitorch.cuda.compiler import KERNEL_DIR
from test_nvcc import NVCC, SPILLS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")]

PATH = KERNEL_DIR / "attention" / "02_flash_mma.cu"
# the ladder's steps run 128 x 64 tiles (attention.LADDER); the file's defaults are the tuned kernel
LADDER = {"baseline": "-DSWIZZLE=0 -DDOUBLE_BUFFER=0 -DEXP2_FMA=0 -DBQ=128 -DBKV=64",
          "swizzle": "-DSWIZZLE=1 -DDOUBLE_BUFFER=0 -DEXP2_FMA=0 -DBQ=128 -DBKV=64",
          "double_buffer": "-DSWIZZLE=1 -DDOUBLE_BUFFER=1 -DEXP2_FMA=0 -DBQ=128 -DBKV=64",
          "tuned (defaults)": ""}
TILES = [(64, 32), (64, 64), (64, 128), (128, 64), (128, 128)]
ONEPASS_KEYS = (64, 128)      # the one-pass backward's keys per block (attention.ONEPASS_CHOICES); the default
#                               picks one per head dimension
CASES = dict(LADDER, **{f"tiles_{bq}x{bkv}": f"-DBQ={bq} -DBKV={bkv}" for bq, bkv in TILES},
             **{f"onepass_keys_{n}": f"-DONEPASS_KEYS={n}" for n in ONEPASS_KEYS})


def test_cases_follow_the_python_ladder():
    pytest.importorskip("cupy")
    from minitorch.native.cuda import attention as NA
    assert [tuple(t) for t in NA.TILE_CHOICES] == TILES, "keep this test's tiles equal to TILE_CHOICES"
    assert tuple(NA.ONEPASS_CHOICES) == ONEPASS_KEYS, "keep this test's one-pass keys equal to ONEPASS_CHOICES"


# the ladder's steps on both architectures; the other tile sizes on sm_90 only (the same code: one
# architecture shows their register counts, and CI's time stays short)
ARCH_CASES = [(name, arch) for name in LADDER for arch in ("sm_80", "sm_90")] + \
             [(name, "sm_90") for name in CASES if name not in LADDER]


@pytest.mark.parametrize("name,arch", ARCH_CASES)
def test_configuration_compiles_without_spills(name, arch, tmp_path):
    cubin = tmp_path / "out.cubin"
    cmd = [NVCC, f"-arch={arch}", "-std=c++17", "-cubin", "-o", str(cubin), "--resource-usage",
           *CASES[name].split(), "-I", str(KERNEL_DIR), "-I", str(PATH.parent), str(PATH)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"nvcc failed on 02_flash_mma.cu {name} for {arch}:\n{log}"
    spilling = [f"{f}: {s} bytes spill stores" for f, _, s, l_ in SPILLS.findall(log) if int(s) or int(l_)]
    assert not spilling, f"02_flash_mma.cu {name} ({arch}) spills registers:\n" + "\n".join(spilling)
    if shutil.which("cuobjdump"):
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        assert "HMMA.16816.F32" in sass, f"02_flash_mma.cu {name} ({arch}): no HMMA in the SASS"


WGMMA_PATH = KERNEL_DIR / "attention" / "03_flash_wgmma.cu"


WGMMA_CONFIGS = [(bkv, pipe, nwg, 0) for bkv in (64, 128) for pipe in (0, 1) for nwg in (2, 3)
                 if not (nwg == 3 and bkv == 128 and pipe)] + [(bkv, pipe, 2, 1) for bkv in (64, 128) for pipe in (0, 1)]


@pytest.mark.parametrize("bkv,pipeline,nwg,tma", WGMMA_CONFIGS)
def test_wgmma_rung_compiles_without_spills(bkv, pipeline, nwg, tma, tmp_path):
    """Rung 3 (03_flash_wgmma.cu, the forward on wgmma) in each configuration, for the arch-specific
    target sm_90a only (the -gencode form: -arch=sm_90a would also run a plain sm_90 pass, which has
    no wgmma and meets the file's #error); its SASS runs the warpgroup tensor-core instruction."""
    cubin = tmp_path / "out.cubin"
    cmd = [NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", "-o", str(cubin),
           "--resource-usage", f"-DBKV={bkv}", f"-DPIPELINE={pipeline}", f"-DNWG={nwg}", f"-DTMA={tma}", "-I", str(KERNEL_DIR), str(WGMMA_PATH)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"nvcc failed on 03_flash_wgmma.cu BKV={bkv} PIPELINE={pipeline} NWG={nwg} TMA={tma}:\n{log}"
    kind = "flash_wgmma_tma_fwd" if tma else "flash_wgmma_fwd"
    assert f"{kind}_f16_d64" in log and (f"{kind}_bf16_d128" in log) == (nwg == 2), (
        f"entry points: {kind}, d64 always, d128 with 2 warpgroups only:\n{log}")
    spilling = [f"{f}: {s} bytes spill stores" for f, _, s, l_ in SPILLS.findall(log) if int(s) or int(l_)]
    assert not spilling, f"03_flash_wgmma.cu BKV={bkv} PIPELINE={pipeline} NWG={nwg} TMA={tma} spills registers:\n" + "\n".join(spilling)
    assert "serialized" not in log, f"ptxas serialized the wgmmas (a register the async mma uses is touched):\n{log}"
    if shutil.which("cuobjdump"):
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        assert "HGMMA" in sass, f"03_flash_wgmma.cu BKV={bkv} PIPELINE={pipeline} NWG={nwg} TMA={tma}: no HGMMA in the SASS"
