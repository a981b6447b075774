# GENERATED from minitorch/native/cuda/gemm.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 05
"""The GEMM ladder on ``DeviceArray``s: ``C = op(A) @ op(B) (+ bias)`` with any rung of
``minitorch/cuda/gemm/NN_name.cu``.

Each rung is one ``.cu`` file with the same entry points (``gemm_nn_f32`` ... ``gemm_tt_f32``,
arguments in ``gemm.cuh``); what differs is how its blocks share work, which this module records
in a :class:`Rung`: threads per block, the C tile a block computes, shared memory, the dtypes it
has, the oldest GPU it runs on. :func:`gemm` reads the layout letters off the strides, so a
transposed view (``W.T``, ``grad.T``) is multiplied where it lies.

Dispatch: :func:`matmul` and :func:`linear` (the backend functions the Tensor layer calls) ask
:func:`choose` for the rung of a product's (shape class, kind of arithmetic, GPU architecture):
first the tuned table ``minitorch/cuda/gemm/tuned.json`` that the autotuner writes, then a built-in
order (the highest rung that exists, runs on this GPU and has the dtype; rung 13 only through the
table); then shape rules: 64-wide tiles for products 64 or fewer wide (:func:`is_narrow`),
split-K for a few output tiles over a long K (:func:`split_k_slices`), and a tile per layout for
big float32 products (:func:`big_choice`). Rungs 12 and 13 (wgmma) are built
for the arch-specific target sm_90a, which CuPy's RawModule cannot ask NVRTC for: see
:func:`target_kernel`; it runs on sm_90 GPUs only (:func:`runs_on`).
"""
import functools
import itertools
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ...backends.cuda import matmul as _tf32_switch
from ...broadcast import broadcast_shape
from ...cuda import cupy_or_raise
from ...cuda.array import empty
from .launch import (SUFFIX, StructArg, broadcast_layout, broadcast_strides, cdiv, coalesce, cp, kernel, launch_2d,
                     sm_count)


@dataclass(frozen=True)
class Rung:
    """One rung: ``file`` under minitorch/cuda/, ``block`` threads (x, y), ``tile`` = (BM, BN) the
    rows and columns of C one block computes, ``dtypes`` the kernel suffixes it has, ``smem``
    dynamic shared memory in bytes (0: static only), ``arch`` the oldest compute capability,
    ``tensor_cores`` whether float32 inputs are rounded to TF32 (only with allow_tf32),
    ``options`` NVRTC options (compile-time tile sizes for the tuned rungs); ``target`` the
    arch-specific NVRTC target it is built for ("sm_90a": it runs on that GPU only, see
    :func:`target_kernel`), ``entries`` the kernel names it has when not every layout of every
    dtype (the other products go to rung ``fallback``). ``tma``: the kernels take their operands
    as TMA tensor maps (rung 13: gemm() launches it through :func:`_gemm_tma` and hands the products
    the copy engine cannot read, see :func:`tma_operands`, to ``fallback``); ``by_default``: the built-in
    order may pick it (False: only a tuned-table entry, or ``gemm(rung=...)``, runs it)."""
    file: str
    block: tuple
    tile: tuple
    dtypes: tuple = ("f32",)
    smem: int = 0
    arch: int = 70
    tensor_cores: bool = False
    options: tuple = field(default=())
    target: str = ""
    entries: tuple = ()
    fallback: str = ""
    tma: bool = False
    by_default: bool = True


RUNGS = {
    "01_naive": Rung("gemm/01_naive.cu", (16, 16), (16, 16), ("f32", "f64")),
    # 1-D blocks: thread t of a block owns row t // BN (or t // (BN / TN)) of the C tile; the
    # kernels read only threadIdx.x, so block must stay (threads, 1). Shared memory is static.
    "02_coalesced": Rung("gemm/02_coalesced.cu", (1024, 1), (32, 32)),
    "03_smem_tiling": Rung("gemm/03_smem_tiling.cu", (1024, 1), (32, 32)),
    "04_blocktile_1d": Rung("gemm/04_blocktile_1d.cu", (512, 1), (64, 64)),
    "05_blocktile_2d": Rung("gemm/05_blocktile_2d.cu", (256, 1), (128, 128), ("f32", "f64")),
    "06_vectorized": Rung("gemm/06_vectorized.cu", (256, 1), (128, 128)),
    # Tensor cores (sm_80+): 8 warps, 128 x 128 block tile, 3-stage cp.async pipeline.
    # (block, tile, smem and options are filled in from TUNED_DEFAULTS below: the tensor-core rungs
    # are tunable too)
    "10_tf32_mma": Rung("gemm/10_tf32_mma.cu", (256,), (128, 128), ("f32",), smem=110592, arch=80,
                        tensor_cores=True),
    # bf16/fp16 on tensor cores (sm_80+): ldmatrix from swizzled smem tiles, 3 stages. tensor_cores
    # stays False: it marks float32 rounded to TF32 (allow_tf32), and this rung has no float32.
    "11_half_mma": Rung("gemm/11_half_mma.cu", (256,), (128, 128), ("bf16", "f16"), smem=98304, arch=80),
    # wgmma (sm_90a only): 2 warpgroups, 128 x BN block tile from 128-byte-swizzled cp.async tiles.
    # bf16/f16 in all four layouts; float32 (TF32, K-major operands only) in 'nt' alone, the other
    # layouts run rung 10. Block, tile, smem and options come from TUNED_DEFAULTS below.
    "12_wgmma": Rung("gemm/12_wgmma.cu", (256,), (128, 256), ("bf16", "f16", "f32"), arch=90,
                     tensor_cores=True, target="sm_90a",
                     entries=tuple(f"gemm_{la}{lb}_{s}" for s in ("bf16", "f16") for la in "nt" for lb in "nt")
                     + ("gemm_nt_f32",),
                     fallback="10_tf32_mma"),
}


# ---- the tuned rungs (07-12): tile sizes are compile-time parameters --------------------------
# Each of these files reads its tile sizes from macros (-DBM=128 ...); the values below are the
# files' own defaults, written out so that Python always knows the block, tile and shared memory
# that go with a compiled kernel. rung_with(rung, config) makes the Rung of any configuration;
# tuning_configs(rung) lists the configurations tools/tune_gemm.py tries.
TUNED_DEFAULTS = {
    "07_autotuned": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
    "08_warptile": {"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 32, "WNITER": 2, "TM": 8, "TN": 4},
    "09_pipelined": {"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 32, "WNITER": 2, "TM": 8, "TN": 4,
                     "STAGES": 3,
                     # register-budget switches (09_pipelined.cu's header): KUNROLL 16 unrolls the
                     # whole k loop (BK <= 16), MIN_BLOCKS 0 = no __launch_bounds__, ELEM_COPY 0 =
                     # the 4-copies-per-group fallback for unaligned operands, LEAN 0 = the first
                     # body (1: the register-lean body, KUNROLL even: k steps per unrolled chunk)
                     "KUNROLL": 16, "MIN_BLOCKS": 0, "ELEM_COPY": 0, "LEAN": 0},
    # tensor-core rungs (the macros at the top of each file): block tile, warptile, pipeline depth,
    # and switches that are 0 (off) by default: FRAG_DB register double buffering of fragments,
    # KPERM permuted k for 8-byte fragment loads (TF32), CVT_SMEM round to TF32 once in smem, GROUP_M block rasterization (0 = off, else
    # m-tiles per group), MINB 1 = promise one block per SM (0: two on sm_90 when the smem fits)
    "10_tf32_mma": {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32, "STAGES": 3,
                    "FRAG_DB": 0, "KPERM": 0, "CVT_SMEM": 0, "GROUP_M": 0, "MINB": 0},
    "11_half_mma": {"BM": 128, "BN": 128, "BK": 64, "WM": 64, "WN": 32, "STAGES": 3,
                    "FRAG_DB": 0, "GROUP_M": 0, "MINB": 0},
    # rung 12: the wgmma's N (= the tile's BN; BM is 128, two warpgroups), pipeline depth,
    # rasterization, blocks per SM promised to the compiler (2: BN 128, STAGES 3, 128 registers)
    "12_wgmma": {"BN": 256, "STAGES": 4, "GROUP_M": 0, "MINB": 1},
    # rung 13 (TMA + warp specialization, persistent): the wgmma's N, stages, tile order groups
    "13_wgmma_tma": {"BN": 256, "STAGES": 4, "GROUP_M": 8},
}

# The values the autotuner tries for each parameter (tuning_configs keeps the valid combinations).
TUNING_SPACE = {
    "07_autotuned": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                     "TM": [4, 8, 16], "TN": [4, 8]},
    "08_warptile": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16],
                    "WM": [32, 64, 128], "WN": [32, 64], "WNITER": [1, 2, 4], "TM": [4, 8], "TN": [4]},
    "09_pipelined": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16],
                     "WM": [32, 64, 128], "WN": [32, 64], "WNITER": [1, 2, 4], "TM": [4, 8], "TN": [4],
                     "STAGES": [2, 3, 4],
                     "KUNROLL": [16, 1, 8, 4, 2], "MIN_BLOCKS": [0, 1, 2, 4], "ELEM_COPY": [0, 1],
                     "LEAN": [0, 1]},
    # (the 128 x 256 tile is the fixed rung 10_tf32_mma_wide; its variants, and 64 x 64 warptiles in
    # general, are at the edge of 255 registers: not compiled clean yet, so not in the space)
    "10_tf32_mma": {"BM": [128], "BN": [128], "BK": [32], "WM": [64], "WN": [32],
                    "STAGES": [3, 4], "FRAG_DB": [0, 1], "KPERM": [0, 1], "CVT_SMEM": [0, 1], "GROUP_M": [0, 8],
                    "MINB": [0, 1]},
    "11_half_mma": {"BM": [128], "BN": [128], "BK": [64], "WM": [64], "WN": [32],
                    "STAGES": [3, 4], "FRAG_DB": [0, 1], "GROUP_M": [0, 8], "MINB": [0, 1]},
    "12_wgmma": {"BN": [128, 256], "STAGES": [3, 4], "GROUP_M": [0, 8], "MINB": [1, 2]},
    "13_wgmma_tma": {"BN": [128, 256], "STAGES": [3, 4, 5, 6], "GROUP_M": [0, 8]},
}

# Accumulators (C elements) per thread worth trying: more do not fit in 255 registers without
# spilling (with nvcc 13, sm_80/sm_90; rung 09's pipeline state costs registers too); fewer than
# 32 leave too few FMAs per shared-memory read, and fewer than 128 threads too few warps to hide
# latency. Not validity rules: such configurations are correct, only not worth timing.
_ACCUMULATORS = {"07_autotuned": (16, 128), "08_warptile": (32, 128), "09_pipelined": (32, 64),
                 "10_tf32_mma": (32, 128), "11_half_mma": (32, 128), "12_wgmma": (64, 128),
                 "13_wgmma_tma": (32, 128)}
_MIN_THREADS = 128
# Rung 09: 4-byte copies a thread issues per k-tile in the worst layout ('nt': both operands along
# k), (BM + BN) * BK / NUM_THREADS; past 16 some layouts spill registers (seen at 24: BM=64,
# BN=128, BK=16, 128 threads, 4 stages; and at 20: BM=64, BN=256, BK=16, WNITER=2, 4 stages).
_MAX_COPIES = 16
# Rung 08: accumulators plus the floats a thread stages in registers per k-tile, TM*TN*WMITER*
# WNITER + (BM + BN) * BK / NUM_THREADS; past 160 they spill (seen at 168: BM=256, BN=64, BK=16,
# WM = WN = 64, 128 threads, on sm_80).
_MAX_LIVE = 160
_SWITCHES = {"MIN_BLOCKS", "ELEM_COPY", "LEAN"}     # parameters for which 0 is a value (off)
# Configurations of the tensor-core rungs that spill registers with nvcc 13 for sm_80 or sm_90
# (tools/compile_gemm_configs.py compiles every one and prints this set): tuning_configs skips them.
_SPILLING = frozenset({
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=0', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=0', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=1')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=0', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=8', '-DMINB=1')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=1', '-DCVT_SMEM=0', '-DGROUP_M=0', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=128', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=1', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=256', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=0', '-DGROUP_M=8', '-DMINB=0')),
    ('10_tf32_mma', ('-DBM=128', '-DBN=256', '-DBK=32', '-DWM=64', '-DWN=64', '-DSTAGES=3', '-DFRAG_DB=0', '-DKPERM=0', '-DCVT_SMEM=1', '-DGROUP_M=0', '-DMINB=0')),
    ('11_half_mma', ('-DBM=128', '-DBN=128', '-DBK=64', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=0', '-DGROUP_M=8', '-DMINB=0')),
    ('11_half_mma', ('-DBM=128', '-DBN=128', '-DBK=64', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DGROUP_M=0', '-DMINB=0')),
    ('11_half_mma', ('-DBM=128', '-DBN=128', '-DBK=64', '-DWM=64', '-DWN=32', '-DSTAGES=3', '-DFRAG_DB=1', '-DGROUP_M=8', '-DMINB=0')),
    ('12_wgmma', ('-DBN=128', '-DSTAGES=3', '-DGROUP_M=8', '-DMINB=2')),          # sm_90a
})
STATIC_SMEM = 48 * 1024      # shared memory a block may declare statically (rungs 07, 08)
MAX_SMEM = 227 * 1024        # the most dynamic shared memory any GPU gives one block (sm_90)

# file and oldest GPU here; block, tile, smem and options are filled in from the defaults below
RUNGS.update({
    "07_autotuned": Rung("gemm/07_autotuned.cu", (), ()),
    "08_warptile": Rung("gemm/08_warptile.cu", (), ()),
    "09_pipelined": Rung("gemm/09_pipelined.cu", (), (), arch=80),    # cp.async
    # rung 12's wgmma fed by TMA copies (sm_90a only), a producer warpgroup and two consumers, a
    # persistent grid. Not in the built-in order yet (by_default=False): a tuned.json entry
    # {"rung": "13_wgmma_tma", "options": [...]} for sm_90 turns it on for that (kind, size class).
    # Products TMA cannot read (tma_operands) and TF32 outside 'nt' go to rung 12.
    "13_wgmma_tma": Rung("gemm/13_wgmma_tma.cu", (), (), ("bf16", "f16", "f32"), arch=90, tensor_cores=True,
                         target="sm_90a",
                         entries=tuple(f"gemm_{la}{lb}_{s}" for s in ("bf16", "f16") for la in "nt" for lb in "nt")
                         + ("gemm_nt_f32",),
                         fallback="12_wgmma", tma=True, by_default=False),
})
TENSOR_CORE_TUNED = ("10_tf32_mma", "11_half_mma")
SM_SMEM = 228 * 1024         # shared memory of one sm_90 SM: two blocks fit if 2 * (smem + 1 KB) do (1 KB reserved each)


def _tc_smem(rung, c):
    """Dynamic shared memory bytes of tensor-core rung configuration ``c`` (the files' SMEM_BYTES)."""
    bm, bn, bk, stages = c["BM"], c["BN"], c["BK"], c["STAGES"]
    if rung == "10_tf32_mma":
        kperm = c["KPERM"]
        kpad, mpad, npad = bk + (8 if kperm else 4), bm + (4 if kperm else 8), bn + (4 if kperm else 8)
        return stages * (max(bm * kpad, bk * mpad) + max(bn * kpad, bk * npad)) * 4
    return stages * (bm + bn) * bk * 2


def _tc_geometry(rung, c, need):
    """_geometry for the tensor-core rungs (10, 11): their static_asserts and mma.cuh's load_tile."""
    if any(not isinstance(v, int) or v < 0 for v in c.values()):
        raise ValueError(f"{rung}: every parameter must be a non-negative int, got {c}")
    bm, bn, bk, wm, wn, stages = c["BM"], c["BN"], c["BK"], c["WM"], c["WN"], c["STAGES"]
    if min(bm, bn, bk, wm, wn) <= 0:
        raise ValueError(f"{rung}: BM, BN, BK, WM, WN must be positive, got {c}")
    half = rung == "11_half_mma"
    vec = 8 if half else 4                                # elements per 16-byte chunk
    need(bm % wm == 0 and bn % wn == 0, "WM divides BM and WN divides BN")
    need(wm % 16 == 0 and wn % (16 if half else 8) == 0,
         "WM a multiple of 16, WN of " + ("16 (ldmatrix.x4: two n8 tiles)" if half else "8"))
    threads = 32 * (bm // wm) * (bn // wn) if wm and wn else 0
    need(64 <= threads <= 256, "2 to 8 warps")      # the files allow 16; 8 is as many as we tune
    need(2 <= stages <= 4, "STAGES from 2 to 4")
    for flag in ("FRAG_DB", "KPERM", "CVT_SMEM", "MINB"):
        if flag in c:
            need(c[flag] in (0, 1), f"{flag} 0 or 1")
    if half:
        need(bk == 64, "BK = 64 (the swizzle of K-major rows)")
        need(bm in (64, 128, 256) and bn in (64, 128, 256), "BM, BN of 64, 128 or 256 (swizzled rows)")
    else:
        need(bk % 8 == 0 and bm % 4 == 0 and bn % 4 == 0, "BK a multiple of 8, BM and BN of 4")
        need(not c.get("FRAG_DB") or bk % 16 == 0, "BK a multiple of 16 with FRAG_DB (k8 steps in pairs)")
    # load_tile: every (rows x cols) tile of either layout splits evenly into 16-byte chunks
    if threads > 0:
        for rows, cols in ((bm, bk), (bk, bm), (bn, bk), (bk, bn)):
            cpr = cols // vec
            need(cols % vec == 0 and cpr > 0 and threads % cpr == 0 and rows % (threads // cpr) == 0,
                 f"a {rows} x {cols} tile splits evenly over {threads} threads in 16-byte chunks")
    smem = _tc_smem(rung, c)
    need(smem <= MAX_SMEM, "dynamic shared memory <= 227 KB")
    return threads, smem


def _wgmma_geometry(c, need):
    """_geometry for rung 12 (12_wgmma.cu's static_asserts): 256 threads, a 128 x BN tile, STAGES
    buffers of (128 + BN) rows of 128 bytes, plus 1 KB to align them to 1024 bytes."""
    bn, stages, group, minb = c["BN"], c["STAGES"], c["GROUP_M"], c["MINB"]
    need(bn in (128, 256), "BN 128 or 256")
    need(stages in (3, 4), "STAGES 3 or 4")
    need(isinstance(group, int) and group >= 0, "GROUP_M >= 0")
    smem = stages * (128 + bn) * 128 + 1024
    need(smem <= MAX_SMEM, "dynamic shared memory <= 227 KB")
    need(minb == 1 or (minb == 2 and bn == 128 and 2 * (smem + 1024) <= SM_SMEM),
         "MINB 1, or 2 with BN = 128 and two blocks' shared memory in one SM (STAGES 3)")
    return 256, (128, bn), smem


def _tma_geometry(c, need):
    """_geometry for rung 13 (13_wgmma_tma.cu's static_asserts): 384 threads (a producer and two
    consumer warpgroups), a 128 x BN tile, STAGES buffers of (128 + BN) rows of 128 bytes plus 1 KB
    to align them; 1 KB more of static shared memory (the mbarriers, padded) must fit too."""
    bn, stages, group = c["BN"], c["STAGES"], c["GROUP_M"]
    need(bn in (128, 256), "BN 128 or 256")
    need(isinstance(stages, int) and stages >= 2, "STAGES >= 2")
    need(isinstance(group, int) and group >= 0, "GROUP_M >= 0")
    smem = stages * (128 + bn) * 128 + 1024
    need(smem + 1024 <= MAX_SMEM, "STAGES * (128 + BN) * 128 + 2 KB <= 227 KB")
    return 384, (128, bn), smem


def _smem_09(c):
    """Dynamic shared memory bytes of a rung 09 configuration (09_pipelined.cu's SMEM_BYTES): per
    stage a k-major tile of each operand."""
    return c["STAGES"] * c["BK"] * (c["BM"] + 4 + c["BN"] + 4) * 4


def _lean_rules(c, threads, need):
    """Rung 09's LEAN = 1 rules (09_pipelined.cu: LEAN_CHUNK and LeanCopier's static_asserts)."""
    bk, unroll = c["BK"], c.get("KUNROLL", 16)
    need(unroll >= 2 and unroll % 2 == 0 and (unroll >= bk or bk % unroll == 0),
         "LEAN: KUNROLL even, at least 2, dividing BK (or at least BK)")
    if threads >= 32 and threads % bk == 0:
        need(all(r % (threads // bk) == 0 and r // (threads // bk) <= 32 for r in (c["BM"], c["BN"])),
             "LEAN: at most 32 copies along k per thread")
    need(all(threads % r == 0 and bk % (threads // r) == 0 for r in (c["BM"], c["BN"]) if threads >= 32),
         "LEAN: BM and BN divide NUM_THREADS and BK is a multiple of NUM_THREADS / BM, / BN (element copies)")


def _geometry(rung, c):
    """(threads per block, (BM, BN), dynamic shared memory bytes) of configuration ``c`` (a full
    dict) of tuned rung ``rung``, after checking the rules the file's static_asserts check.
    Raises ValueError naming every broken rule."""
    broken = []

    def need(ok, rule):
        if not ok:
            broken.append(rule)

    if rung in ("12_wgmma", "13_wgmma_tma"):
        threads, tile, smem = (_wgmma_geometry if rung == "12_wgmma" else _tma_geometry)(c, need)
        if broken:
            raise ValueError(f"{rung}: invalid configuration {c}: needs " + "; ".join(broken))
        return threads, tile, smem
    if rung in TENSOR_CORE_TUNED:
        threads, smem = _tc_geometry(rung, c, need)
        if "NUM_THREADS" in c:
            need(c["NUM_THREADS"] == threads, f"NUM_THREADS equal to the derived {threads}")
        if broken:
            raise ValueError(f"{rung}: invalid configuration {c}: needs " + "; ".join(broken))
        return threads, (c["BM"], c["BN"]), smem
    bm, bn, bk, tm, tn = c["BM"], c["BN"], c["BK"], c["TM"], c["TN"]
    if any(not isinstance(v, int) or v < (0 if k in _SWITCHES else 1) for k, v in c.items()):
        raise ValueError(f"{rung}: every parameter must be a positive int ({', '.join(sorted(_SWITCHES))}: "
                         f"0 or more), got {c}")
    need(bk % 4 == 0 and bm % 4 == 0 and bn % 4 == 0, "BM, BN, BK multiples of 4 (float4 loads)")
    need(tm % 4 == 0 and tn % 4 == 0, "TM, TN multiples of 4 (float4 shared-memory reads)")
    smem = 0
    if rung == "07_autotuned":
        need(bm % tm == 0 and bn % tn == 0, "TM divides BM and TN divides BN")
        threads = (bm // tm) * (bn // tn)
        need(bk * (bm + 4 + bn + 4) * 4 <= STATIC_SMEM, "BK * (BM+4 + BN+4) * 4 <= 48 KB")
    else:
        wm, wn, wniter = c["WM"], c["WN"], c["WNITER"]
        need(bm % wm == 0 and bn % wn == 0, "WM divides BM and WN divides BN")
        threads = 32 * (bm // wm) * (bn // wn)
        per_sub = 32 * tm * tn * wniter
        wmiter = (wm * wn) // per_sub
        need(wmiter >= 1 and (wm * wn) % per_sub == 0, "WM*WN a multiple of 32*TM*TN*WNITER")
        if wmiter >= 1:
            need(wm % wmiter == 0 and wn % wniter == 0, "WMITER divides WM and WNITER divides WN")
            wsubm, wsubn = wm // wmiter, wn // wniter
            need(wsubm % tm == 0 and wsubn % tn == 0 and (wsubm // tm) * (wsubn // tn) == 32,
                 "the 32 lanes tile a WSUBM x WSUBN sub-tile exactly")
        if rung == "08_warptile":
            need(bk * (bm + 4 + bn + 4) * 4 <= STATIC_SMEM, "BK * (BM+4 + BN+4) * 4 <= 48 KB")
        else:
            stages = c["STAGES"]
            need(2 <= stages <= 8, "STAGES from 2 to 8")
            need(c.get("KUNROLL", 16) >= 1 and c.get("MIN_BLOCKS", 0) >= 0 and c.get("ELEM_COPY", 0) in (0, 1)
                 and c.get("LEAN", 0) in (0, 1), "KUNROLL >= 1, MIN_BLOCKS >= 0, ELEM_COPY 0 or 1, LEAN 0 or 1")
            if c.get("LEAN", 0):
                _lean_rules(c, threads, need)
            if c.get("ELEM_COPY", 0) and threads >= 32:
                # the element copies of an unaligned operand cover each tile exactly
                need(all(threads % r == 0 and bk % (threads // r) == 0 if threads >= r else r % threads == 0
                         for r in (bm, bn)),
                     "ELEM_COPY: BM, BN dividing NUM_THREADS (and BK a multiple of NUM_THREADS / BM, / BN) "
                     "or multiples of it")
            smem = _smem_09(c)
            need(smem <= MAX_SMEM, "STAGES * BK * (BM+4 + BN+4) * 4 <= 227 KB")
            # copy_tile: the block's copies cover each tile exactly, both ways (both layouts of
            # an operand are compiled into one module)
            need(threads >= 32, "at least one warp")
            if threads >= 32:
                need(threads % bk == 0 and all(r % (threads // bk) == 0 for r in (bm, bn)),
                     "NUM_THREADS % BK == 0 and BM, BN multiples of NUM_THREADS / BK")
                need(all(threads % (r // 4) == 0 and bk % (threads // (r // 4)) == 0
                         for r in (bm, bn) if threads >= r // 4) and threads >= max(bm, bn) // 4,
                     "NUM_THREADS a multiple of BM/4 and BN/4, and BK of NUM_THREADS / (BM/4), / (BN/4)")
    need(threads % 32 == 0 and threads <= 256, "NUM_THREADS a multiple of 32, at most 256")
    if "NUM_THREADS" in c:
        need(c["NUM_THREADS"] == threads, f"NUM_THREADS equal to the derived {threads}")
    if broken:
        raise ValueError(f"{rung}: invalid configuration {c}: needs " + "; ".join(broken))
    return threads, (bm, bn), smem


def config_of(rung, options):
    """The configuration dict of NVRTC ``options`` ("-DBM=64", ...) for tuned rung ``rung``,
    filled in with the rung's defaults. Raises ValueError for an option that is not -DNAME=int
    of one of the rung's parameters (or NUM_THREADS)."""
    config = dict(TUNED_DEFAULTS[rung])
    for opt in options:
        name, eq, value = opt[2:].partition("=") if opt.startswith("-D") else ("", "", "")
        if not eq or not (name in config or name == "NUM_THREADS") or not value.lstrip("-").isdigit():
            raise ValueError(f"{rung}: option {opt!r} is not -DNAME=int with NAME one of "
                             f"{', '.join(TUNED_DEFAULTS[rung])}")
        config[name] = int(value)
    return config


def options_of(rung, config):
    """The NVRTC options of ``config`` (a dict, may be partial) for tuned rung ``rung``: one
    -DNAME=value per parameter, in the rung's parameter order (one module per distinct tuple)."""
    full = {**TUNED_DEFAULTS[rung], **config}
    return tuple(f"-D{k}={full[k]}" for k in TUNED_DEFAULTS[rung])


@functools.lru_cache(maxsize=None)
def _rung_with(rung, items):
    config = dict(items)
    threads, tile, smem = _geometry(rung, config)
    return replace(RUNGS[rung], block=(threads,), tile=tile, smem=smem, options=options_of(rung, config))


def rung_with(rung, config):
    """The :class:`Rung` of tuned rung ``rung`` ("07_autotuned", "08_warptile", "09_pipelined",
    "10_tf32_mma", "11_half_mma", "12_wgmma", "13_wgmma_tma")
    compiled with ``config``: a dict of parameters ({"BM": 64, "BK": 16, ...}; missing ones keep
    the defaults of :data:`TUNED_DEFAULTS`) or a tuple of NVRTC options ("-DBM=64", ...). Its
    block, tile, dynamic shared memory and options all follow the configuration.

    Raises:
        KeyError: ``rung`` is not a tuned rung.
        ValueError: an unknown parameter, or a configuration the kernel rejects (the rules of its
            static_asserts, each broken one named).
    """
    if rung not in TUNED_DEFAULTS:
        raise KeyError(f"{rung!r} is not a tuned rung: one of {', '.join(TUNED_DEFAULTS)}")
    if isinstance(config, (tuple, list)):
        config = config_of(rung, config)
    unknown = set(config) - set(TUNED_DEFAULTS[rung]) - {"NUM_THREADS"}
    if unknown:
        raise ValueError(f"{rung}: unknown parameters {sorted(unknown)}; it has {', '.join(TUNED_DEFAULTS[rung])}")
    full = {**TUNED_DEFAULTS[rung], **config}
    return _rung_with(rung, tuple(sorted(full.items())))




@functools.lru_cache(maxsize=None)
def _spec_of(rung, options):
    """``rung_with(rung, options)``, remembered: parsing the options and checking the geometry
    took ~30 us of host time per GEMM, paid on every matmul of a training step."""
    return rung_with(rung, config_of(rung, options))


def _switches_worth(rung, config, threads, smem):
    """Whether rung 09's register switches (KUNROLL, MIN_BLOCKS, ELEM_COPY, LEAN) are worth timing
    with this configuration: with LEAN = 0 either all at their defaults (16, 0, 0), or the
    combination that fits two 256-thread blocks per SM (KUNROLL 1, MIN_BLOCKS 2, ELEM_COPY 1: at
    most 128 registers a thread, checked spill-free by tools/gemm_spills.py) where two blocks'
    shared memory fits an SM and the blocktile is at most 128 x 128; with LEAN = 1 the
    configurations of :func:`_lean_worth`. Other combinations are valid, only not worth the
    tuner's time (they change no occupancy, or spill)."""
    if rung != "09_pipelined":
        return True
    switches = (config.get("KUNROLL", 16), config.get("MIN_BLOCKS", 0), config.get("ELEM_COPY", 0))
    if config.get("LEAN", 0):
        return _lean_worth(config, threads, smem)
    if switches == (16, 0, 0):
        return True
    return (switches == (1, 2, 1) and threads == 256 and 2 * (smem + 1024) <= SM_SMEM
            and config["BM"] <= 128 and config["BN"] <= 128)    # 64 x 256 tiles spilled at 128 registers


def _switches_may_be_worth(config):
    """A quick necessary condition of _switches_worth for rung 09 that needs no geometry: the
    switch combinations it can accept (LEAN = 0: (KUNROLL, MIN_BLOCKS, ELEM_COPY) = (16, 0, 0) or
    (1, 2, 1); LEAN = 1: ELEM_COPY 0, KUNROLL 4 or 8, MIN_BLOCKS 1, 2 or 4)."""
    switches = (config.get("KUNROLL", 16), config.get("MIN_BLOCKS", 0), config.get("ELEM_COPY", 0))
    if config.get("LEAN", 0):
        return switches[2] == 0 and switches[0] in (4, 8) and switches[1] in (1, 2, 4)
    return switches in ((16, 0, 0), (1, 2, 1))


def _lean_worth(config, threads, smem):
    """Whether a LEAN = 1 configuration of rung 09 is worth timing: __launch_bounds__ for 128
    registers a thread (MIN_BLOCKS * NUM_THREADS = 512: two 256-thread or four 128-thread blocks
    per SM) with that many blocks' shared memory fitting an SM, a chunk of KUNROLL <= BK k steps
    (a larger KUNROLL is the same kernel as KUNROLL = BK), and ELEM_COPY at 0 (the lean body
    ignores it)."""
    blocks = config.get("MIN_BLOCKS", 0)
    if config.get("ELEM_COPY", 0) == 0 and blocks == 1 and threads == 256:
        # one 256-thread block per SM with 128 x 256 or 256 x 128 blocktiles (128 accumulators a
        # thread, 6 float4 reads per 128 FMAs; 225-237 registers, no spills): BK 8, 3 stages
        return (config.get("KUNROLL", 16) == 4 and config["BK"] == 8 and config["STAGES"] == 3
                and config["WNITER"] == 2 and sorted((config["BM"], config["BN"])) == [128, 256])
    if not (config.get("ELEM_COPY", 0) == 0 and blocks * threads == 512 and blocks * (smem + 1024) <= SM_SMEM):
        return False
    # A fully unrolled tile spills at 128 registers (nvcc 13): chunks of half a tile. Thread tiles
    # as two sub-tiles across (WNITER = 2): float4 fragment reads of neighbouring lanes are
    # neighbouring 16-byte words (no bank conflicts). 128 x 128 x 16 blocktiles in 256 threads
    # with 2 or 3 stages, and 64 x 64 (32 accumulators) in 128 threads with 3. (tools/gemm_spills.py,
    # sm_90: 128 x 128 x 8, 4 stages, and 64 x 128, 128 x 64 in 128 threads spill at 128 registers.)
    return (config.get("KUNROLL", 16) == config["BK"] // 2 and config["WNITER"] == 2
            and (threads == 256 and config["BM"] == config["BN"] == 128 and config["BK"] == 16
                 and config["STAGES"] <= 3
                 or threads == 128 and config["BM"] == config["BN"] == 64 and config["STAGES"] == 3))


# Configurations that tools/gemm_spills.py found spilling registers (nvcc 13, sm_80 or sm_90):
# valid, but never offered to the tuner. All are rung 09 with KUNROLL=1 MIN_BLOCKS=2 ELEM_COPY=1
# (128 registers), all on sm_90 (sm_80 ignores MIN_BLOCKS and spilled none); listed as
# (BM, BN, BK, WM, WN, WNITER, TM, TN, STAGES). Checked 2026-11-24: the other 44 spill nothing.
_SPILL_KEYS = ("BM", "BN", "BK", "WM", "WN", "WNITER", "TM", "TN", "STAGES")
_SPILLING_09 = frozenset(options_of("09_pipelined", {**dict(zip(_SPILL_KEYS, v)), "KUNROLL": 1, "MIN_BLOCKS": 2,
                                                  "ELEM_COPY": 1}) for v in [
    (64, 128, 16, 32, 32, 2, 4, 4, 3), (64, 128, 16, 32, 32, 2, 4, 4, 4), (128, 128, 8, 32, 64, 2, 4, 4, 2),
    (128, 128, 8, 32, 64, 2, 4, 4, 3), (128, 128, 8, 32, 64, 2, 8, 4, 2), (128, 128, 8, 32, 64, 2, 8, 4, 3),
    (128, 128, 8, 32, 64, 4, 4, 4, 2), (128, 128, 8, 32, 64, 4, 4, 4, 3), (128, 128, 8, 64, 32, 2, 4, 4, 3),
    (128, 128, 8, 64, 32, 2, 8, 4, 3), (128, 128, 8, 64, 32, 4, 4, 4, 2), (128, 128, 8, 64, 32, 4, 4, 4, 3),
    (128, 128, 16, 32, 64, 1, 4, 4, 2), (128, 128, 16, 32, 64, 1, 4, 4, 3),
    (128, 128, 16, 32, 64, 1, 4, 4, 4), (128, 128, 16, 32, 64, 1, 8, 4, 2),
    (128, 128, 16, 32, 64, 1, 8, 4, 3), (128, 128, 16, 32, 64, 1, 8, 4, 4),
    (128, 128, 16, 32, 64, 2, 4, 4, 4), (128, 128, 16, 32, 64, 2, 8, 4, 4),
    (128, 128, 16, 32, 64, 4, 4, 4, 2), (128, 128, 16, 32, 64, 4, 4, 4, 3),
    (128, 128, 16, 32, 64, 4, 4, 4, 4), (128, 128, 16, 64, 32, 1, 4, 4, 2),
    (128, 128, 16, 64, 32, 1, 4, 4, 3), (128, 128, 16, 64, 32, 1, 4, 4, 4),
    (128, 128, 16, 64, 32, 1, 8, 4, 2), (128, 128, 16, 64, 32, 1, 8, 4, 3),
    (128, 128, 16, 64, 32, 1, 8, 4, 4), (128, 128, 16, 64, 32, 2, 4, 4, 4),
    (128, 128, 16, 64, 32, 2, 8, 4, 4), (128, 128, 16, 64, 32, 4, 4, 4, 2),
    (128, 128, 16, 64, 32, 4, 4, 4, 3), (128, 128, 16, 64, 32, 4, 4, 4, 4),
])


def tuning_configs(rung, max_smem=MAX_SMEM):
    """Yield the NVRTC option tuples ("-DBM=..", "-DBN=..", ...) of every configuration of tuned
    rung ``rung`` in :data:`TUNING_SPACE` that the kernel accepts, that has at least 128 threads
    and keeps _ACCUMULATORS[rung] (low, high) accumulators a thread (more spill registers; for
    rung 09 at most _MAX_COPIES copies a thread per k-tile, for rung 08 at most _MAX_LIVE
    accumulators + staged floats) and needs at most
    ``max_smem`` bytes of dynamic shared memory (the device's opt-in limit, e.g.
    cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]). Each tuple is accepted by
    ``gemm(..., rung=rung, options=...)`` and by :func:`rung_with`.

    Raises:
        KeyError: ``rung`` is not a tuned rung.
    """
    space = TUNING_SPACE[rung]
    names = list(space)
    for values in itertools.product(*(space[n] for n in names)):
        config = dict(zip(names, values))
        if rung == "09_pipelined" and not _switches_may_be_worth(config):
            continue            # cheap first cut (rung_with on all ~155k combinations takes ~20 s)
        try:
            spec = rung_with(rung, config)
        except ValueError:
            continue
        threads = spec.block[0]
        bm, bn = spec.tile
        low, high = _ACCUMULATORS[rung]
        if rung == "09_pipelined" and config.get("LEAN") and config.get("MIN_BLOCKS") == 1:
            high = 128          # the lean body fits 128 accumulators in one block per SM
        if not low <= bm * bn // threads <= high or threads < _MIN_THREADS or spec.smem > max_smem:
            continue
        staged = (bm + bn) * config.get("BK", 0) // threads     # floats a tile, per thread
        if rung == "09_pipelined" and staged > _MAX_COPIES:
            continue
        if rung == "08_warptile" and bm * bn // threads + staged > _MAX_LIVE:
            continue
        if not _switches_worth(rung, config, threads, spec.smem) or spec.options in _SPILLING_09:
            continue
        if rung in TENSOR_CORE_TUNED and threads != 256:
            continue        # 4 warps of 64 x 64 warptiles spill (nvcc 13); 8 warps it is
        if rung in TENSOR_CORE_TUNED and config.get("MINB"):
            # MINB=1 is for FRAG_DB=1 and GROUP_M > 0 (they need more than the 128 registers a thread
            # has when two 256-thread blocks share an SM, and spill there); without them it only
            # lowers occupancy, and where one block per SM is all that fits it changes nothing
            if not (config.get("FRAG_DB") or config.get("GROUP_M")) or 2 * (spec.smem + 1024) > SM_SMEM:
                continue
        if (rung, spec.options) in _SPILLING:
            continue
        yield spec.options


for _name in TUNED_DEFAULTS:
    RUNGS[_name] = rung_with(_name, {})
# Rung 10 with a 128 x 256 block tile (64 x 64 warptiles: fewer smem bytes per mma, one block per SM).
RUNGS["10_tf32_mma_wide"] = rung_with("10_tf32_mma", {"BN": 256, "WN": 64})


def layout_of(shape2, strides2, itemsize):
    """('n' or 't', leading dimension in elements) for a matrix of ``shape2`` (rows, cols) and byte
    ``strides2``, or None when it is not one of the two BLAS layouts (the caller copies it first).

    'n': unit stride along the columns, rows ``ld >= cols`` apart (``x``, ``grad``); 't': unit
    stride along the rows, columns ``ld >= rows`` apart (``W.T``, ``x.transpose(-1, -2)``). A
    dimension of size 1 counts as unit-stride: its stride is never followed. None for views
    whose rows overlap (an expanded ``[N] -> [M, N]`` has row stride 0, from ``mean``/``sum``
    backward), negative strides or no unit stride at all: no kernel is asked to read those.
    """
    # >>> exercise 05.2: reading the layout letters off the strides
    # hint: strides2 are in bytes: divide by itemsize. Try 'n' first: a matrix both layouts fit is 'n'
    # hint: a single row (rows == 1) has no row stride to follow: as 'n' its ld is max(cols, 1), the
    # hint: smallest a kernel accepts; a single column (cols == 1) as 't' likewise gets max(rows, 1)
    rows, cols = shape2
    s_row, s_col = (s // itemsize for s in strides2)
    if (s_col == 1 or cols == 1) and (rows == 1 or s_row >= max(cols, 1)):
        return "n", s_row if rows > 1 else max(cols, 1)
    if (s_row == 1 or rows == 1) and (cols == 1 or s_col >= max(rows, 1)):
        return "t", s_col if cols > 1 else max(rows, 1)
    return None
    # <<< exercise


# id(kernel) -> kernel, for kernels whose dynamic shared memory limit gemm() has raised (by id: a
# kernel object need not be hashable; kept here so that no other kernel can ever reuse its id)
_smem_raised = {}


def gemm(a, b, bias=None, rung="01_naive", options=None, config=None, plan_key=None, out=None):
    """``a @ b (+ bias)`` with rung ``rung`` (a key of :data:`RUNGS`).

    Shapes: ``a`` [..., M, K], ``b`` [..., K, N] with broadcast batch dimensions, ``bias`` [N] or
    None; returns a new contiguous [..., M, N] array of the same dtype. Both operands share a dtype
    the rung has; each may be any view whose rows or columns are unit-stride (others are copied).
    ``options`` replaces the rung's NVRTC options (the autotuner's tile sizes). For a tuned rung
    (07-12) the launch follows them: ``options=("-DBM=64", ...)`` or ``config={"BM": 64, ...}``
    (parameters not given keep their defaults) give the block, tile and shared memory of that
    configuration (:func:`rung_with`).

    A rung with ``entries`` (12_wgmma: TF32 only in layout 'nt') hands the products it has no
    kernel for to its ``fallback`` rung; rung 13 (13_wgmma_tma) also those the TMA copy engine
    cannot read (:func:`tma_operands`).

    ``plan_key``: when given (by :func:`_mm`), a product that runs as one launch on the operands
    as they are (no copy, no TMA map, nothing empty) files its launch under that key in
    :data:`_plans`. ``out``: a contiguous [..., M, N] array of the result's dtype to write into
    instead of a new one (split-K's slices of one buffer, :func:`_split_k`; K must not be 0).

    Raises:
        KeyError: unknown rung.  TypeError: dtypes differ or the rung has none for them.
        ValueError: operands not 2-D or more, inner sizes or batch shapes that do not match, a
            bias that is not [N]; for a tuned rung, an invalid configuration; an arch-specific
            rung (12_wgmma: sm_90a) on another GPU.
    """
    spec = RUNGS[rung]
    if rung in TUNED_DEFAULTS and options is not None and config is None:
        spec = _spec_of(rung, tuple(options))     # matmul's every call: one cached lookup
        options = None                  # spec.options now holds them, in canonical order
    elif rung in TUNED_DEFAULTS and config is not None:
        merged = config_of(rung, options) if options is not None else dict(TUNED_DEFAULTS[rung])
        spec = rung_with(rung, {**merged, **config})
        options = None
    elif config is not None:
        raise ValueError(f"gemm: rung {rung} has no compile-time configuration")
    if a.dtype != b.dtype or SUFFIX.get(a.dtype) not in spec.dtypes:
        raise TypeError(f"gemm rung {rung} takes two arrays of one of {spec.dtypes}, got {a.dtype} and {b.dtype}")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"gemm takes operands of 2 or more dimensions, got shapes {a.shape} and {b.shape}")
    (m, k), (kb, n) = a.shape[-2:], b.shape[-2:]
    if k != kb:
        raise ValueError(f"gemm: inner sizes differ: {a.shape} @ {b.shape}")
    if bias is not None and (bias.shape != (n,) or bias.dtype != a.dtype):
        raise ValueError(f"gemm: bias must be [{n}] of {a.dtype}, got {bias.shape} of {bias.dtype}")
    from .elementwise import contiguous
    isz = a.itemsize
    copied = False                   # (a plan is filed only for operands read where they lie)
    if bias is not None and n > 1 and bias.strides != (isz,):
        bias, copied = contiguous(bias), True   # the kernels read bias[n]: a strided or expanded one is copied
    la = layout_of(a.shape[-2:], a.strides[-2:], isz)
    if la is None:
        a, copied = contiguous(a), True
        la = layout_of(a.shape[-2:], a.strides[-2:], isz)
    lb = layout_of(b.shape[-2:], b.strides[-2:], isz)
    if lb is None:
        b, copied = contiguous(b), True
        lb = layout_of(b.shape[-2:], b.strides[-2:], isz)
    batch_shape, batch, layout = broadcast_layout(((a.shape[:-2], a.strides[:-2], isz),
                                                   (b.shape[:-2], b.strides[:-2], isz)))
    idx = a.device_id
    if spec.tma:                     # rung 13: the operands go to the kernel as TMA tensor maps
        _check_target(rung, spec, idx)
        if a.ndim == b.ndim == 2 and (la[0], lb[0]) != ("n", "t") and f"gemm_{la[0]}{lb[0]}_{SUFFIX[a.dtype]}" \
                not in spec.entries:
            a, b, la, lb = _k_major(a, b, la, lb)
        maps = tma_operands(a, b, la, lb, batch_shape, spec)
        if maps is None:
            return gemm(a, b, bias, spec.fallback, out=out)     # what the copy engine cannot read: rung 12
        return _gemm_tma(spec, f"gemm_{la[0]}{lb[0]}_{SUFFIX[a.dtype]}", maps, bias, batch_shape, a.dtype,
                         (m, n, k), idx, out)
    if out is None:
        out = empty(batch_shape + (m, n), a.dtype, idx)
    elif out.shape != batch_shape + (m, n) or out.dtype != a.dtype or not out.c_contiguous:
        raise ValueError(f"gemm: out must be contiguous {batch_shape + (m, n)} of {a.dtype}, got {out.shape} of "
                         f"{out.dtype}{'' if out.c_contiguous else ', not contiguous'}")
    if batch == 0 or m == 0 or n == 0:
        return out
    if k == 0:                       # an empty sum: zeros (plus the bias), no kernel needed
        from .creation import fill_
        fill_(out, 0)
        if bias is not None:
            from .elementwise import binary
            out = binary("add", out, bias)
        return out
    name = f"gemm_{la[0]}{lb[0]}_{SUFFIX[a.dtype]}"
    if spec.entries and name not in spec.entries:
        return gemm(a, b, bias, spec.fallback, plan_key=plan_key if not copied else None, out=out)  # (rung 12: TF32 'nn')
    options = spec.options if options is None else tuple(options)
    if spec.target:
        _check_target(rung, spec, idx)
    bm, bn = spec.tile
    plan = Plan(out.shape, (spec.file, name, options, spec.target), (cdiv(n, bn), cdiv(m, bm), batch),
                spec.block, spec.smem, (m, n, k, la[1], lb[1], batch, layout))
    if plan_key is not None and not copied:
        _file_plan(plan_key, plan)
    return run_plan(plan, a, b, bias, out)


# ---- launch plans: a repeated product skips the dispatch ------------------------------------------
# A training step multiplies the same shapes at every step, and everything gemm() works out before
# its launch - the rung (choose: the tuned table, the shape rules, split-K), the layout letters and
# leading dimensions, the batch Layout, the kernel, the grid - follows from the operands' shapes,
# strides, dtype, GPU and its architecture, the bias's layout and the switches (allow_tf32,
# SHAPE_RULES): about 20 us of Python per product on an H100 host. _mm files that outcome under
# those keys the first time (a Plan) and later only allocates the output and launches; a split
# product files its decision (a SplitPlan) and its two GEMMs' Plans. Not filed: products whose
# operands had to be copied, and rung 13 (its tensor maps hold the operands' addresses). reload_tuned() forgets the plans (the table or RUNGS changed); so does a
# full dictionary (a model with ever new shapes). A plan names its kernel rather than holding it:
# kernel() (one dictionary lookup) then still notices a .cu file edited in a notebook.
@dataclass(frozen=True)
class Plan:
    """One GEMM launch, all but its arrays: ``out_shape``, the kernel's ``(file, name, options,
    target)`` (target "" for compiler.kernel's build), ``grid``, ``block``, ``smem`` bytes, and the
    kernel's scalar arguments ``sizes`` (m, n, k, lda, ldb, batch, Layout)."""
    out_shape: tuple
    kernel: tuple
    grid: tuple
    block: tuple
    smem: int
    sizes: tuple


@dataclass(frozen=True)
class SplitPlan:
    """A product that split-K runs (:func:`_split_k`): how many ``slices`` and the configuration
    (``rung``, ``options``) of its launches, whose own Plans are filed under the product's key
    plus "slices" / "rest"."""
    slices: int
    rung: str
    options: tuple


_plans = {}           # _mm's key (see there) -> Plan or SplitPlan
_MAX_PLANS = 4096


def _file_plan(key, plan):
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
    _plans[key] = plan


def run_plan(plan, a, b, bias, out=None):
    """Launch ``plan`` on ``a``, ``b``, ``bias`` (as the plan was made for) into ``out`` (default:
    a new array of the plan's shape); returns ``out``."""
    idx = a.device_id
    file, name, options, target = plan.kernel
    fn = target_kernel(file, name, idx, options, target) if target else kernel(file, name, idx, options)
    _allow_smem(fn, plan.smem, idx)
    if out is None:
        out = empty(plan.out_shape, a.dtype, idx)
    launch_2d(fn, plan.grid, plan.block, (a, b, out, bias) + plan.sizes, idx, plan.smem)
    return out


def _check_target(rung, spec, idx):
    """Raise ValueError unless GPU ``idx`` is the one arch-specific rung ``rung`` (``spec``) is built for."""
    if _target_arch(spec.target) != arch_of(idx):
        raise ValueError(f"gemm rung {rung} is built for {spec.target} and runs only on sm_"
                         f"{_target_arch(spec.target)} GPUs; GPU {idx} is sm_{arch_of(idx)}")


def _allow_smem(fn, smem, idx):
    """Let kernel ``fn`` of GPU ``idx`` launch with ``smem`` bytes of dynamic shared memory."""
    if smem > STATIC_SMEM and id(fn) not in _smem_raised:
        # Past 48 KB a kernel must opt in to more dynamic shared memory, once per kernel
        # (cudaFuncSetAttribute(MaxDynamicSharedMemorySize)); the launch fails otherwise.
        with cp.cuda.Device(idx):
            fn.max_dynamic_shared_size_bytes = smem
        _smem_raised[id(fn)] = fn    # keeps fn alive, so its id is never reused by another kernel


# ---- rung 13: the operands as TMA tensor maps ---------------------------------------------------------
# The copy engine (TMA) copies a tile ("box") of an operand described by a tensor map: 128 opaque
# bytes that the driver encodes on the host (cuTensorMapEncodeTiled) from the base address, the
# sizes and byte strides of up to 5 dimensions, the box, the shared-memory swizzle and what to
# write past the edges (zeros). CuPy does not wrap that call: it is made here through ctypes on
# libcuda. The kernel takes each map by value (a 128-byte __grid_constant__ parameter: a StructArg
# over a 64-byte aligned NumPy buffer, which the launch copies into the kernel's parameters).
TMA_DTYPE = {"bf16": 9, "f16": 6, "f32": 7}     # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, _FLOAT16, _FLOAT32
_SWIZZLE_128B, _L2_PROMOTION_256B = 3, 3       # CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B
TENSOR_MAP = np.dtype([("opaque", np.uint64, (16,))])    # cuda.h's CUtensorMap
_INT32 = 2 ** 31                               # the copy coordinates are 32-bit signed


@functools.lru_cache(maxsize=None)
def _encode_tiled():
    """libcuda's ``cuTensorMapEncodeTiled`` (CUDA 12.0+) as a ctypes function returning the CUresult."""
    import ctypes
    fn = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled
    u64s, u32s = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64s, u64s, u32s, u32s,
                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


@functools.lru_cache(maxsize=4096)
def tensor_map(address, suffix, dims, strides, box):
    """The tensor map of a 3-D array of dtype ``suffix`` ('bf16', 'f16', 'f32') at device
    ``address``: ``dims`` its sizes innermost first, ``strides`` the byte strides of dimensions 1
    and 2 (dimension 0 is unit-stride), ``box`` the sizes of the tile one copy writes to shared
    memory, in the 128-byte swizzle, zeros where the box reaches past ``dims``. A StructArg of
    128 bytes, 64-byte aligned. Cached: the map is a function of exactly these arguments, and a
    training loop multiplies the same shapes at the same pool addresses again and again.

    Raises:
        RuntimeError: the driver rejected the description (its CUresult is named).
    """
    import ctypes
    raw = np.zeros(TENSOR_MAP.itemsize + 64, np.uint8)
    start = -raw.ctypes.data % 64                  # the driver wants the map 64-byte aligned
    arr = raw[start:start + TENSOR_MAP.itemsize].view(TENSOR_MAP)
    status = _encode_tiled()(arr.ctypes.data, TMA_DTYPE[suffix], 3, address, (ctypes.c_uint64 * 3)(*dims),
                             (ctypes.c_uint64 * 2)(*strides), (ctypes.c_uint32 * 3)(*box),
                             (ctypes.c_uint32 * 3)(1, 1, 1), 0, _SWIZZLE_128B, _L2_PROMOTION_256B, 0)
    if status != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled returned CUresult {status} for a {suffix} tensor at "
                           f"{address:#x}: sizes {dims}, byte strides {strides}, box {box}")
    arr.flags.writeable = False
    return StructArg(arr)


def _k_major(a, b, la, lb):
    """``a`` [M, K] and ``b`` [K, N] with K innermost in memory (layouts 'n' and 't'), each copied by
    the tiled transpose (transpose.cu) if it is not: (a, b, la, lb).

    TF32 wgmma reads both operands K-major (its transpose bits exist for 16-bit types only), so
    rung 13 has TF32 kernels for 'nt' alone. One transpose of an operand moves 2 x its bytes at
    copy bandwidth: at 4096^2 about 50 us, against about 0.35 ms for the product on rung 13 and
    1.4 ms on rung 10, the TF32 rung that would take it otherwise (benchmarks/bench_gemm.py)."""
    from .matrix import transpose2d
    (m, k), n = a.shape, b.shape[1]
    isz = a.itemsize
    if la[0] != "n":                 # a 't' A: its transpose [K, M] is row-major; transposing that gives A, K-major
        a = transpose2d(a.as_strided((k, m), (a.strides[1], a.strides[0])))
    if lb[0] != "t":                 # an 'n' B: its transpose [N, K] contiguous is B with K innermost
        bt = transpose2d(b)
        b = bt.as_strided((k, n), (isz, bt.strides[0]))
    return a, b, layout_of(a.shape, a.strides, isz), layout_of(b.shape, b.strides, isz)


def tma_operands(a, b, la, lb, batch_shape, spec):
    """The kernel arguments (map_a, map_b, a_batched, b_batched) of rung 13 (``spec``) for
    ``a @ b`` with layouts ``la``, ``lb`` (layout_of's (letter, ld)) and broadcast batch shape
    ``batch_shape``, or None when the copy engine cannot read the operands where they lie: gemm()
    then hands the product to rung 12. TMA needs
      - base addresses and row strides (the ld of each operand) that are multiples of 16 bytes:
        e.g. bf16 rows of a multiple of 8 elements (an odd K of an 'n' A fails, an odd M of a 't' A);
      - batch dimensions that coalesce into one evenly strided dimension (or none) for both
        operands, each batch stride 0 (broadcast) or a multiple of 16 bytes, at least one whole matrix;
      - M, N, K and the number of C tiles below 2**31 (the copies' 32-bit coordinates);
    and the rung needs a kernel for the layout (TF32 only 'nt').
    """
    suffix, isz = SUFFIX[a.dtype], a.itemsize
    if f"gemm_{la[0]}{lb[0]}_{suffix}" not in spec.entries:
        return None
    (m, k), n = a.shape[-2:], b.shape[-1]
    batch = math.prod(batch_shape)
    bm, bn = spec.tile
    if not (0 < m < _INT32 and 0 < n < _INT32 and 0 < k < _INT32 and 0 < batch
            and cdiv(m, bm) * cdiv(n, bn) * batch < _INT32):
        return None
    if (a.ptr | b.ptr | la[1] * isz | lb[1] * isz) % 16:
        return None
    sizes, (sa, sb) = coalesce(batch_shape, (broadcast_strides(a.shape[:-2], a.strides[:-2], isz, batch_shape),
                                             broadcast_strides(b.shape[:-2], b.strides[:-2], isz, batch_shape)))
    if len(sizes) > 1:
        return None
    bk = 128 // isz                              # elements in 128 bytes: the tile's k depth
    # (inner size, outer size, box) of each operand as stored: K-major = k innermost
    a_dims = (k, m, (bk, bm)) if la[0] == "n" else (m, k, (64, bk))
    b_dims = (k, n, (bk, bn)) if lb[0] == "t" else (n, k, (64, bk))
    args = []
    for x, (inner, outer, box), ld, strides in ((a, a_dims, la[1], sa), (b, b_dims, lb[1], sb)):
        stride = strides[0] if sizes else 0      # elements from one batch to the next; 0: broadcast
        if stride and (stride * isz % 16 or stride < ld * outer):
            return None
        # an unbatched operand is one matrix: a batch dimension of size 1 (its stride is never followed)
        dims = (inner, outer, sizes[0] if stride else 1)
        byte_strides = (ld * isz, (stride or ld * outer) * isz)
        args.append((tensor_map(x.ptr, suffix, dims, byte_strides, box + (1,)), int(stride != 0)))
    (map_a, a_batched), (map_b, b_batched) = args
    return map_a, map_b, a_batched, b_batched


def _gemm_tma(spec, name, maps, bias, batch_shape, dtype, mnk, idx, out=None):
    """Launch rung 13's kernel ``name`` on ``maps`` (tma_operands) into ``out`` (default: a new
    [*batch_shape, M, N] array): a persistent grid of one 384-thread block per SM (fewer when there
    are fewer C tiles), block i computing tiles i, i + gridDim.x, ... (13_wgmma_tma.cu)."""
    m, n, k = mnk
    batch = math.prod(batch_shape)
    if out is None:
        out = empty(tuple(batch_shape) + (m, n), dtype, idx)
    fn = target_kernel(spec.file, name, idx, spec.options, spec.target)
    _allow_smem(fn, spec.smem, idx)
    bm, bn = spec.tile
    map_a, map_b, a_batched, b_batched = maps
    blocks = min(cdiv(m, bm) * cdiv(n, bn) * batch, sm_count(idx))
    launch_2d(fn, (blocks,), spec.block, (map_a, map_b, out, bias, m, n, k, batch, a_batched, b_batched),
              idx, spec.smem)
    return out


# ---- arch-specific builds (sm_90a) ------------------------------------------------------------------
# CuPy's RawModule appends its own -arch=sm_<major><minor> to every NVRTC compile, and there is no
# way to ask it for the arch-specific target sm_90a, the only one with wgmma. So the rungs with a
# Rung.target are compiled here: the same source text as compiler.kernel (includes pasted in),
# the same options, NVRTC's -arch=<target>; the cubin is written to a file (named by the hash of
# what went in) and loaded with cupy.RawModule(path=...), which gives the same RawKernel objects.
_target_kernels = {}     # (file, name, device, options, target) -> RawKernel
_target_modules = {}     # (file, options, target, device) -> RawModule


def _target_arch(target):
    """The compute capability an arch-specific target runs on: 90 for 'sm_90a'."""
    return int("".join(ch for ch in target if ch.isdigit()))


def _nvrtc_options(options):
    """``options`` plus what CuPy adds to a RawModule's NVRTC compile (the include directories of
    the CUDA headers, cuda_bf16.h...), through CuPy's own helper where it has one."""
    try:
        return tuple(cp._core.core.assemble_cupy_compiler_options(tuple(options)))
    except (AttributeError, TypeError):      # an older CuPy: the CUDA toolkit's include directory
        cuda_path = cp.cuda.get_cuda_path()
        found = cuda_path and (Path(cuda_path) / "include").is_dir()
        return tuple(options) + ((f"-I{Path(cuda_path) / 'include'}",) if found else ())


def target_kernel(file, name, device, options, target):
    """The kernel ``name`` of ``minitorch/cuda/<file>`` built by NVRTC for ``target`` ('sm_90a')
    on GPU ``device``, compiled once per (file, options, target, device).

    Raises:
        KernelCompileError: NVRTC rejected the file (its log follows).
    """
    key = (file, name, device, options, target)
    fn = _target_kernels.get(key)
    if fn is not None:
        return fn
    mkey = (file, options, target, device)
    module = _target_modules.get(mkey)
    if module is None:
        import hashlib
        import os
        import tempfile
        from cupy_backends.cuda.libs import nvrtc

        from ...cuda import compiler
        text, _ = compiler.source(compiler.KERNEL_DIR / file)
        opts = _nvrtc_options(compiler.OPTIONS + tuple(options)) + (f"-arch={target}",)
        digest = hashlib.sha1("\0".join((text,) + opts + (str(nvrtc.getVersion()),)).encode()).hexdigest()
        path = Path(tempfile.gettempdir()) / f"minitorch-{os.getuid()}" / f"{target}-{digest}.cubin"
        if not path.is_file():
            prog = nvrtc.createProgram(text, file, (), ())
            try:
                try:
                    nvrtc.compileProgram(prog, opts)
                except nvrtc.NVRTCError as e:
                    raise compiler.KernelCompileError(
                        f"{file}: NVRTC could not compile the kernel file for {target} ({e}).\n"
                        + nvrtc.getProgramLog(prog)) from None
                cubin = nvrtc.getCUBIN(prog)
            finally:
                nvrtc.destroyProgram(prog)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(cubin)
            tmp.replace(path)             # atomic: a concurrent reader sees all of it or nothing
        with cp.cuda.Device(device):
            module = _target_modules[mkey] = cp.RawModule(path=str(path))
    with cp.cuda.Device(device):
        fn = _target_kernels[key] = module.get_function(name)
    return fn


# ---- dispatch: which rung for which product ----------------------------------------------------------
TUNED_JSON = Path(__file__).resolve().parents[2] / "cuda" / "gemm" / "tuned.json"
SMALL, MEDIUM = 2 ** 18, 2 ** 22      # elements of C (all batches): the autotuner's classes too
KINDS = {"f32": "fp32", "f64": "fp64", "bf16": "bf16", "f16": "f16"}   # table key per dtype suffix
# float64 is the correctness dtype (gradcheck): 05 is the last rung with simple f64 entry points; the
# later ones are built around 4-byte elements (float4 loads, shared-memory and register budgets)
F64_ORDER = ("05_blocktile_2d", "01_naive")


def shape_class(m, n, k, batch=1):
    """'small', 'medium' or 'large': the size class of a product with ``batch`` C matrices of
    ``m`` x ``n`` (``k`` does not enter: the class says how many blocks fill the GPU).
    ``m * n * batch <= 2**18`` is small (a few waves of blocks on an H100 at best), ``<= 2**22``
    medium, beyond that large. The autotuner (benchmarks) files its results under the same classes.
    """
    # >>> exercise 05.5: the dispatch size class
    # hint: SMALL and MEDIUM (above) are the limits, in elements of C over all batches
    c = m * n * batch
    return "small" if c <= SMALL else "medium" if c <= MEDIUM else "large"
    # <<< exercise


_tuned = None


def tuned_table():
    """The autotuner's table ``{"sm_90": {kind: {class: {"rung", "options", "gflops"}}}}``, read
    from ``minitorch/cuda/gemm/tuned.json`` on first use ({} when the file is missing)."""
    global _tuned
    if _tuned is None:
        try:
            _tuned = json.loads(TUNED_JSON.read_text())
        except FileNotFoundError:
            _tuned = {}
    return _tuned


def _usable(name, suffix, arch, tensor_cores_ok):
    """Whether rung ``name`` exists, has entry points for ``suffix``, runs on compute capability
    ``arch`` and (for float32) uses tensor cores only when ``tensor_cores_ok``."""
    spec = RUNGS.get(name)
    return (spec is not None and suffix in spec.dtypes and runs_on(spec, arch)
            and (suffix != "f32" or tensor_cores_ok or not spec.tensor_cores))


def runs_on(spec, arch):
    """Whether the kernels of Rung ``spec`` run on a GPU of compute capability ``arch`` (90):
    ``spec.arch`` or newer, and exactly the target's GPU for an arch-specific build (sm_90a)."""
    return spec.arch <= arch and (not spec.target or _target_arch(spec.target) == arch)


def _default(suffix, arch, tf32):
    """The built-in choice: the highest-numbered usable rung (rung names start with their number)
    among those with ``by_default`` (rung 13 runs only where the tuned table names it).
    float32 prefers a TF32 rung when ``tf32``, else only rungs without tensor cores; float64
    follows F64_ORDER first."""
    ranked = sorted(RUNGS, reverse=True)
    if suffix == "f64":
        ranked = [r for r in F64_ORDER if r in RUNGS] + ranked
    if suffix == "f32":
        tc = [r for r in ranked if RUNGS[r].tensor_cores]
        ranked = (tc if tf32 else []) + [r for r in ranked if not RUNGS[r].tensor_cores]
    for name in ranked:
        if RUNGS[name].by_default and _usable(name, suffix, arch, tf32):
            return name
    raise TypeError(f"no GEMM rung has {suffix} entry points for sm_{arch}")


@functools.lru_cache(maxsize=4096)
def _choose(cls, suffix, arch, tf32):
    kind = "tf32" if suffix == "f32" and tf32 else KINDS.get(suffix, suffix)
    entry = tuned_table().get(f"sm_{arch}", {}).get(kind, {}).get(cls)
    # a tuned entry is taken only if it is still valid here: the rung may have been renamed or
    # removed since the table was written, and the table must never override allow_tf32
    if entry and _usable(entry.get("rung"), suffix, arch, tf32):
        name = entry["rung"]
        # options choose the launch geometry only for tuned rungs (rung_with); a fixed rung keeps its own
        options = tuple(entry.get("options") or ()) if name in TUNED_DEFAULTS else RUNGS[name].options
        return name, options
    name = _default(suffix, arch, tf32)
    return name, RUNGS[name].options


def choose(m, n, k, batch, dtype_suffix, arch, allow_tf32=None, size_class=None):
    """The rung and NVRTC options for ``batch`` products ``[m, k] @ [k, n]`` of dtype
    ``dtype_suffix`` ('f32', 'f64', 'bf16', 'f16') on a GPU of compute capability ``arch`` (90
    for an H100): ``(rung name, options tuple)``.

    The tuned table's entry for (``sm_<arch>``, kind, :func:`shape_class`) wins when it names a
    usable rung; the kind is 'tf32' for float32 when ``allow_tf32`` (default: the switch
    ``minitorch.backends.cuda.matmul.allow_tf32``), else 'fp32', and 'bf16'/'f16' for half
    dtypes. Otherwise the built-in order: the highest rung without tensor cores for float32
    (with them first when TF32 is allowed), 05_blocktile_2d (else 01) for float64, the half
    rung for bf16/f16. Never a rung missing from RUNGS, above ``arch``, or using tensor cores on
    float32 unless TF32 is allowed. Then the narrow rule (:func:`is_narrow`): a product whose
    ``m`` or ``n`` is at most 64 while that choice tiles it 128 wide takes the small class's
    choice instead, when that one's tile is 64 wide there. ``size_class``: look this class up
    instead of :func:`shape_class`'s (split-K runs its slices with the large class's choice).

    Raises:
        TypeError: no rung has the dtype on this architecture.
    """
    if allow_tf32 is None:
        allow_tf32 = _tf32_switch.allow_tf32
    arch, tf32 = int(arch), bool(allow_tf32)
    name, options = _choose(size_class or shape_class(m, n, k, batch), dtype_suffix, arch, tf32)
    if SHAPE_RULES and min(m, n) <= NARROW and is_narrow(m, n, tile_of(name, options)):
        # the narrow rule: the small class's configuration, when its tile fits the narrow side
        small = _choose("small", dtype_suffix, arch, tf32)
        if not is_narrow(m, n, tile_of(*small)):
            return small
    return name, options


def reload_tuned():
    """Forget the loaded table and the cached choices and plans (after the autotuner rewrote
    tuned.json, or a test replaced RUNGS)."""
    global _tuned
    _tuned = None
    _plans.clear()
    _choose.cache_clear()
    _spec_of.cache_clear()
    tile_of.cache_clear()
    resident_blocks.cache_clear()
    few_tiles_plan.cache_clear()


@functools.lru_cache(maxsize=None)
def arch_of(index):
    """Compute capability of GPU ``index`` as an int (90 for sm_90)."""
    return int(cupy_or_raise().cuda.Device(index).compute_capability)


def _mm(a, b, bias):
    """gemm() with the rung :func:`choose` picks; ``a`` [..., M, K], ``b`` [..., K, N]; a single
    product with few output tiles and a long K is split (:func:`split_k_slices`), its slices run
    with the large class's choice; with a shorter K, :func:`few_tiles_plan` may split it too, or
    give it the large configuration. A product seen before replays its Plan or SplitPlan (see
    above) instead of choosing again."""
    arch = arch_of(a.device_id)
    key = (a.shape, a.strides, b.shape, b.strides, a.dtype, b.dtype, a.device_id, arch,
           None if bias is None else (bias.shape, bias.strides, bias.dtype),
           _tf32_switch.allow_tf32, SHAPE_RULES)
    plan = _plans.get(key)
    if plan is not None:
        if isinstance(plan, SplitPlan):
            return _split_k(a, b, bias, plan.slices, plan.rung, plan.options, plan_key=key)
        return run_plan(plan, a, b, bias)
    (m, k), n = a.shape[-2:], b.shape[-1]
    batch = math.prod(broadcast_shape(a.shape[:-2], b.shape[:-2]))
    suffix = SUFFIX.get(a.dtype)
    if suffix is None or a.dtype != b.dtype:
        raise TypeError(f"cuda matmul takes two arrays of one floating dtype, got {a.dtype} and {b.dtype}")
    rung, options = choose(m, n, k, batch, suffix, arch)
    if a.ndim == b.ndim == 2 and suffix in SPLIT_K_DTYPES and k >= SPLIT_K_MIN_K:
        if not SHAPE_RULES:
            slices = _power_of_two_slices(m, n, k, sm_count(a.device_id))
            if slices > 1:
                return _split_planned(key, a, b, bias, slices, *choose(m, n, k // slices, slices, suffix, arch))
        else:
            split = choose(m, n, k, 1, suffix, arch, size_class="large")
            slices = slices_for(m, n, k, *split, sm_count(a.device_id))
            if slices > 1:
                return _split_planned(key, a, b, bias, slices, *split)
    elif SHAPE_RULES and a.ndim == b.ndim == 2 and suffix in SPLIT_K_DTYPES:
        large = choose(m, n, k, 1, suffix, arch, size_class="large")
        (rung, options), slices = few_tiles_plan(m, n, k, (rung, options), large, sm_count(a.device_id))
        if slices > 1:
            return _split_planned(key, a, b, bias, slices, rung, options)
    if is_big(m, n, k, suffix, rung):
        rung, options = big_choice(arch, layout_letters(a, b), rung, options)
    return gemm(a, b, bias, rung, options, plan_key=key)


# ---- big float32 products: a tile per layout -------------------------------------------------------
# Rung 09 keeps both tiles k-major in shared memory, so an operand contiguous along k (an 'n' A, a
# 't' B) is copied into them 4 bytes at a time, the other 16 bytes at a time (its header). A product
# at least BIG_MIN in every dimension fills the GPU with one block per SM of a tile twice as big as
# the large class's (128 accumulators a thread), and then the layout decides which tile is best:
# the tuned table's fp32 entry "big_<layout>" (else "big"). The rule behind the H100's entries: the
# operand copied 4 bytes at a time gets the tile's short side, and the pipeline enough stages for
# those copies to land. % of cuBLAS in the same layout at 4096^2 / 8192^2 (TF32 off, 2026-11-25,
# benchmarks/results/logs/s11-probe_layouts_candidates.log): 'nn' with 128 x 256 x 16 and 4 stages
# 89.8 / 91.9 (90.5 / 92.3 in an earlier run); with 256 x 128 x 16 and 5 stages nt 86.8 / 87.9,
# tn 94.2 / 92.5, tt 96.1 / 95.8; the large class's two-block 128 x 128 tile 83-88 in every layout.
# Operands are read where they lie: no transpose is materialized (transposing an 'n' A first, then
# 'tn', was 1-2 points faster at 4096^2 and was what this dispatcher did before; see
# benchmarks/results/notes_simt_fp32.md). The rule is rung 09's alone: tensor-core products keep
# their size class's choice.
BIG_MIN = 2048


def is_big(m, n, k, suffix, rung):
    """Whether _mm runs an [m, k] @ [k, n] float32 product (per batch) that ``rung`` would run with
    the tuned table's big configuration for its layout (:func:`big_choice`): rung 09 chosen and m,
    n, k all at least BIG_MIN."""
    return SHAPE_RULES and suffix == "f32" and rung == "09_pipelined" and min(m, n, k) >= BIG_MIN


def layout_letters(a, b):
    """The layout ('nn', 'nt', 'tn' or 'tt') gemm() runs ``a`` @ ``b`` in: each operand's letter
    (:func:`layout_of`), 'n' for one gemm() copies first (no BLAS layout)."""
    isz = a.itemsize
    la = layout_of(a.shape[-2:], a.strides[-2:], isz) or ("n",)
    lb = layout_of(b.shape[-2:], b.strides[-2:], isz) or ("n",)
    return la[0] + lb[0]


def big_choice(arch, layout, rung, options):
    """(rung, options) for a big float32 product in ``layout``: the tuned table's fp32 entry
    "big_<layout>" for ``sm_<arch>``, else its "big" entry, when it names rung 09; else ``rung``,
    ``options`` (the large class's choice)."""
    table = tuned_table().get(f"sm_{arch}", {}).get("fp32", {})
    entry = table.get(f"big_{layout}") or table.get("big") or {}
    if entry.get("rung") == "09_pipelined" and entry.get("options"):
        return "09_pipelined", tuple(entry["options"])
    return rung, options


def _split_planned(key, a, b, bias, slices, rung, options):
    """:func:`_split_k`, its decision filed under ``key`` as a :class:`SplitPlan` first."""
    _file_plan(key, SplitPlan(slices, rung, tuple(options)))
    return _split_k(a, b, bias, slices, rung, options, plan_key=key)


# ---- shape rules: the tile's width and split-K by waves -------------------------------------------
# Two rules on top of the size class, for the shapes a GPT trains (fp32 on an H100, TF32 off; the
# numbers behind them: benchmarks/bench_gpt_gemms.py, which times every GEMM of one training step
# with these rules on and off). SHAPE_RULES = False turns both off, read at every call (for that
# benchmark; not an API).
SHAPE_RULES = True
NARROW = 64                   # a product this narrow (per batch) wastes half of a 128-wide tile


def is_narrow(m, n, tile):
    """Whether a ``tile`` (BM, BN) is at least twice too wide for an ``m`` x ``n`` product (per
    batch): ``m <= 64 < BM`` or ``n <= 64 < BN``.

    Attention without FlashAttention multiplies 384 batches (64 sequences x 6 heads) of 256 x 64
    outputs (P @ V and three of its gradients: head dim 64). Counted over all batches that is a
    "large" product (6.3 M elements of C), whose configuration tiles C by 128 x 128: every block
    computes 64 columns that do not exist. A 64-wide tile wastes nothing and gives twice the blocks.
    """
    bm, bn = tile
    return m <= NARROW < bm or n <= NARROW < bn


@functools.lru_cache(maxsize=None)
def tile_of(rung, options):
    """The C tile (BM, BN) that ``rung`` compiled with ``options`` (a tuple) computes per block."""
    return _spec_of(rung, tuple(options)).tile if rung in TUNED_DEFAULTS else RUNGS[rung].tile


@functools.lru_cache(maxsize=None)
def resident_blocks(rung, options):
    """Blocks per SM a configuration promises: rung 09's MIN_BLOCKS (its __launch_bounds__: ptxas
    fits that many blocks' registers in an SM; the tuned large fp32 configuration has 2 blocks of
    256 threads, the small one 4 of 128), 1 for a configuration that promises nothing (the tuned
    medium one: 155-181 registers a thread for 256 threads, so one block per SM indeed)."""
    if rung not in TUNED_DEFAULTS:
        return 1
    return config_of(rung, options).get("MIN_BLOCKS", 0) or 1


# ---- split-K: few output tiles, a long inner dimension --------------------------------------------
# A weight gradient x^T @ dy (the GPT's MLP: 1536 x 384 outputs, K = 16384 tokens) has 36 output
# tiles of 128 x 128 for 132 SMs: most of the GPU idles while each tile walks all of K. Cutting K
# into S slices gives S x as many blocks; each slice's product is one batch of a strided-batched
# GEMM (views, no copies) into an [S, M, N] float32 scratch, which one reduction sums.
# The slices run the large class's configuration (then the narrow rule): split-K makes about as
# many blocks as the GPU holds, the regime that configuration is tuned for (on the H100: 128 x 128
# tiles, two blocks per SM, 41 TFLOP/s on the tuner's large shapes; the medium class's 64 x 128
# tiles take 155-181 registers, one block per SM, 28 TFLOP/s).
#
# How many slices: the GPU runs blocks in waves of SMs x (blocks per SM) at a time, and a wave
# takes as long as its slowest block, so tiles * S blocks should fill their waves. Before, S was
# a power of two with (128 x 128 tiles) * S <= 2 * SMs, and the slices ran the configuration of
# their own size class: 1536 x 384 got S = 4, run with the medium class's 64 x 128 tiles, 288
# blocks for 132 SMs holding one each: three waves, the last of 24 blocks (~22 TFLOP/s against
# cuBLAS's 49.7, benchmarks/results/bench_split_k-*.txt). Now every S counts, with the tiles and
# blocks per SM of the configuration that runs the slices: 36 tiles of 128 x 128 on 264 slots
# take S = 7 (252 blocks, one wave). The slices have one length, whole k-tiles, so an S that does
# not divide K leaves a short rest of K, run as one more (small) GEMM after them; the rule counts
# its time too.
SPLIT_K_DTYPES = ("f32", "f64")   # half partial sums would be rounded to half before the sum
SPLIT_K_MIN_K = 4096          # shorter inner dimensions are not worth the extra pass
SPLIT_K_MIN_SLICE = 512       # each slice walks at least 512 of K (16 k-tiles of 32)...
SPLIT_K_MAX = 32              # ...and at most 32 slices: the scratch is S x M x N floats
SPLIT_K_ALIGN = 32            # slice length: whole k-tiles (BK 8, 16 or 32), 16-byte aligned starts
SPLIT_K_SLACK = 0.05          # the fewest slices within 5% of the best S's time


def split_k_time(tiles, k, slots, slices):
    """The time of a product of ``tiles`` output tiles cut into ``slices`` K slices, in k steps
    of one block (a block's time is proportional to the K it walks): the waves of ``tiles *
    slices`` blocks on ``slots`` resident blocks (SMs x blocks per SM), each as long as a slice
    (:func:`split_k_length`), then the waves of the rest's ``tiles`` blocks, as long as the rest.
    Unsplit (``slices`` 1): the waves of ``tiles`` blocks walking all of ``k``."""
    if slices == 1:
        return cdiv(tiles, slots) * k
    length = split_k_length(k, slices)
    return cdiv(tiles * slices, slots) * length + cdiv(tiles, slots) * (k - slices * length)


@functools.lru_cache(maxsize=4096)      # tens of us of Python for a long K, asked at every matmul
def split_k_slices(tiles, k, slots):
    """How many slices S to cut an inner dimension of ``k`` into, for a product of ``tiles``
    output tiles on a GPU with ``slots`` resident blocks (SMs x blocks per SM of its
    configuration): 1 (no split) when ``k < SPLIT_K_MIN_K``; else, among S = 1 ..
    min(SPLIT_K_MAX, k // SPLIT_K_MIN_SLICE), the fewest slices whose :func:`split_k_time` is
    within SPLIT_K_SLACK of the best S's: every slice adds M x N partial sums to write and read
    back (not in the time), so more slices must buy more than a few percent.

    E.g. on an H100 (132 SMs, 2 blocks of 128 x 128 each: 264 slots), K = 16384: 36 tiles (1536 x
    384) -> 7 (252 blocks, one wave of 2336 k steps, a rest of 32); 9 tiles (384 x 384) -> 28;
    1024 tiles (4096 x 4096) -> 1.
    """
    if k < SPLIT_K_MIN_K or tiles <= 0:
        return 1
    times = {s: split_k_time(tiles, k, slots, s) for s in range(1, min(SPLIT_K_MAX, k // SPLIT_K_MIN_SLICE) + 1)}
    best = min(times.values())
    return min(s for s, t in times.items() if t <= (1 + SPLIT_K_SLACK) * best)


def slices_for(m, n, k, rung, options, sms):
    """:func:`split_k_slices` for one [m, k] @ [k, n] run by ``rung`` with ``options`` on a GPU
    of ``sms`` SMs: its tiles (:func:`tile_of`) and slots (SMs x :func:`resident_blocks`)."""
    bm, bn = tile_of(rung, options)
    return split_k_slices(cdiv(m, bm) * cdiv(n, bn), k, sms * resident_blocks(rung, options))


def split_k_length(k, slices):
    """The common length of ``slices`` slices of an inner dimension of ``k``: k // slices rounded
    down to a multiple of SPLIT_K_ALIGN (whole k-tiles, and every slice starts 16-byte aligned
    when the operand does). The rest, ``k - slices * length`` (< slices * SPLIT_K_ALIGN), is one
    more, short, product. Raises ValueError when the length would be 0."""
    length = k // slices // SPLIT_K_ALIGN * SPLIT_K_ALIGN
    if length <= 0:
        raise ValueError(f"split-K: {slices} slices of k = {k} would be shorter than {SPLIT_K_ALIGN}")
    return length


# ---- few tiles, short K: one block per SM ---------------------------------------------------------
# A single product whose inner dimension is under SPLIT_K_MIN_K can still leave most SMs idle: 512 x
# 512 has 64 tiles of 64 x 64 (the small class) for 132 SMs, 768 x 768 has 72 of the medium class's
# 64 x 128, and 2048 x 2048 runs the medium class's 64 x 128 tiles, which take 155-181 registers
# (one block per SM), where the large class's 128 x 128 tiles fill a whole wave of two blocks per SM.
# Measured on the H100 (fp32, TF32 off, 2026-11-25, % of cuBLAS): 256^3 73% -> 91% (small tiles, 4
# slices), 384^3 71% -> 95% (small, 3), 512^3 67% -> 82% (small, 2), 768^3 68% -> 91% (large, 3),
# 2048^3 63% -> 83% (large, unsplit), 2048 x 1024 x 2048 67% -> 81% (large, unsplit).
# What the measurements say: a block that shares its SM with another runs at about half speed, so
# a partly filled second wave costs nearly a whole block's time again (768^3 as 144 blocks of 128 x
# 128 in 4 slices: 72%, as 108 blocks in 3 slices: 91%); and a slice count that leaves a rest of K
# costs one more GEMM launch, ruinous at these sizes (256^3 in 3 slices: 13%).
FEW_TILES_MIN_K = 256         # shorter K: a split's extra reduction launch costs more than it saves
FEW_TILES_MIN_SLICE = 64      # each slice walks at least 64 of K (4 k-tiles of 16)
FEW_TILES_MAX = 8             # at most 8 slices (each adds M x N partial sums to the reduction)


@functools.lru_cache(maxsize=4096)      # asked at every small matmul: a step's few shapes repeat
def few_tiles_plan(m, n, k, chosen, large, sms):
    """``((rung, options), slices)`` for a single [m, k] @ [k, n] with ``k < SPLIT_K_MIN_K``:
    ``chosen`` is :func:`choose`'s configuration for the product, ``large`` the large class's.

    - At least one full wave of the large configuration's tiles (``tiles >= sms``): the large
      configuration, unsplit (the medium class's tiles would run one block per SM).
    - Else every (configuration, S) of ``chosen`` and ``large`` whose blocks (tiles x S) fit one
      per SM: unsplit, or S slices of equal length (``k`` divisible by ``S * SPLIT_K_ALIGN``, no
      rest to run as another GEMM), each at least FEW_TILES_MIN_SLICE long, S <= FEW_TILES_MAX,
      K >= FEW_TILES_MIN_K; ``large`` is left out when it is narrow for the product
      (:func:`is_narrow`). The most blocks win; a tie goes to fewer slices, then to ``chosen``.
      Nothing fits: ``chosen``, unsplit.

    E.g. on an H100 (132 SMs) with tiles of 64 x 64 small and 128 x 128 large (the table of
    tests/test_dispatch.py): 512^3 -> small, 2 slices (128 blocks); 768^3 -> large, 3 slices (108);
    2048^3 -> large, unsplit (256 tiles); 128^3 -> as chosen.
    """
    def tiles(config):
        bm, bn = tile_of(*config)
        return cdiv(m, bm) * cdiv(n, bn)

    narrow = is_narrow(m, n, tile_of(*large))
    if not narrow and tiles(large) >= sms:
        return large, 1
    plans = []
    for rank, config in enumerate([chosen] if narrow or large == chosen else [chosen, large]):
        for s in range(1, FEW_TILES_MAX + 1):
            whole = s == 1 or (k >= FEW_TILES_MIN_K and k % (s * SPLIT_K_ALIGN) == 0 and k // s >= FEW_TILES_MIN_SLICE)
            if whole and tiles(config) * s <= sms:
                plans.append((tiles(config) * s, -s, -rank, config, s))
    if not plans:
        return chosen, 1
    *_, config, slices = max(plans, key=lambda p: p[:3])
    return config, slices


def _power_of_two_slices(m, n, k, sms):
    """The split rule before the wave rule (SHAPE_RULES = False, for the benchmark's "before"):
    the largest power of two, at most 16, that divides k, keeps every slice at least 1024 long
    and makes at most two 128 x 128 tiles' blocks per SM, when k >= SPLIT_K_MIN_K and there are
    fewer such tiles than SMs."""
    tiles = cdiv(m, 128) * cdiv(n, 128)
    if k < SPLIT_K_MIN_K or tiles >= sms:
        return 1
    slices = 1
    while (slices * 2 <= 16 and k % (slices * 2) == 0 and k // (slices * 2) >= 1024
           and tiles * slices * 2 <= 2 * sms):
        slices *= 2
    return slices


def _split_k(a, b, bias, slices, rung, options, plan_key=None):
    """``a @ b (+ bias)`` for 2-D ``a`` [M, K], ``b`` [K, N] as the sum over ``slices`` K slices
    of :func:`split_k_length` each, one strided-batched GEMM of views, plus the short rest of K (if
    any) as one more GEMM that carries the bias in its epilogue (the same launch cannot: its slices
    would read past K). Both write into one [slices (+ 1 for the rest), M, N] float buffer, summed
    by one reduction. ``rung``, ``options``: the configuration of every launch; ``plan_key``: the
    product's key in :data:`_plans`, under which (plus "slices" / "rest") the two GEMMs file their
    Plans."""
    from .reduce import sum as reduce_sum
    (m, k), n = a.shape, b.shape[1]
    length = split_k_length(k, slices)
    done = slices * length
    rest = done < k
    parts = empty((slices + rest, m, n), a.dtype, a.device_id)    # each slice's product, then the rest's
    (sa_m, sa_k), (sb_k, sb_n) = a.strides, b.strides
    a_s = a.as_strided((slices, m, length), (length * sa_k, sa_m, sa_k))
    b_s = b.as_strided((slices, length, n), (length * sb_k, sb_k, sb_n))
    _planned_gemm(plan_key, "slices", a_s, b_s, None, rung, options, parts[:slices])
    if rest:
        _planned_gemm(plan_key, "rest", a[:, done:], b[done:, :], bias, rung, options, parts[slices])
    out = reduce_sum(parts, (0,))
    if bias is None or rest:
        return out
    from .elementwise import binary
    return binary("add", out, bias)      # no rest to carry the bias


def _planned_gemm(plan_key, part, a, b, bias, rung, options, out):
    """gemm() for one ``part`` of a split product into ``out``, replaying its Plan filed under
    ``plan_key + (part,)`` if there is one (``plan_key`` None: no plans)."""
    key = None if plan_key is None else plan_key + (part,)
    plan = _plans.get(key) if key is not None else None
    if plan is not None:
        return run_plan(plan, a, b, bias, out)
    return gemm(a, b, bias, rung, options, plan_key=key, out=out)


def matmul(a, b, bias=None):
    """``a @ b (+ bias)`` with the fastest usable rung of the ladder (see :func:`choose`).

    ``a`` [..., M, K] and ``b`` [..., K, N] with broadcast batch dimensions, as ``np.matmul``
    (1-D operands too: a [K] is one row, b [K] one column, and that dimension is dropped from the
    result); ``bias`` [N] or None, added in the GEMM's epilogue. Both one dtype a rung has
    (float32, float64; bf16/f16 with the half rung). Any strides: transposed views go to the
    kernel as layout 't', nothing is copied unless neither dimension of a matrix is unit-stride.
    A batched ``a`` times a 2-D ``b`` (``x @ W.T`` with x [B, T, K]) is one GEMM of B*T rows when
    ``a``'s batches lie one after the other in memory.

    Returns a new contiguous array of the broadcast shape.

    Raises:
        TypeError: dtypes differ or no rung has them.  ValueError: 0-d operands, inner sizes that
            differ, batch shapes that do not broadcast, a bias that is not [N].
    """
    if a.ndim == b.ndim == 2:
        # the commonest product (every Linear, forward and backward): no 1-D operand to lift, no
        # batch dimensions to broadcast or fold; the out shape is the plan's [M, N]
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")
        return _mm(a, b, bias)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    a2 = a.as_strided((1,) + a.shape, (a.itemsize * a.shape[0],) + a.strides) if a.ndim == 1 else a
    b2 = b.as_strided(b.shape + (1,), b.strides + (b.itemsize,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")
    out_shape = (broadcast_shape(a2.shape[:-2], b2.shape[:-2]) + ((a2.shape[-2],) if a.ndim > 1 else ())
                 + ((b2.shape[-1],) if b.ndim > 1 else ()))
    if b2.ndim == 2 and a2.ndim > 2:
        # [B, T, K] @ [K, N]: when a's batches lie row after row in memory they are more rows of
        # one matrix: one GEMM of B*T rows (one launch, a bigger grid, the shape class it really is)
        a2 = _fold_rows(a2) or a2
    out = _mm(a2, b2, bias)
    return out if out.shape == out_shape else out.reshape(out_shape)    # (a reshape costs ~1 us)


def _fold_rows(a):
    """``a`` [..., M, K] as one [prod(...) * M, K] matrix view, or None when its batch and row
    dimensions are not one evenly strided run of rows (or the view is not a BLAS layout)."""
    row, inner = None, 1           # row: byte stride of the merged row dimension
    for size, stride in zip(reversed(a.shape[:-1]), reversed(a.strides[:-1])):
        if size == 1:
            continue
        if row is None:            # the innermost dimension that moves: its stride is the row's
            row = stride
        elif stride != row * inner:
            return None
        inner *= size
    if row is None:                # a single row: any stride will do
        row = a.itemsize * max(a.shape[-1], 1)
    view = a.as_strided((math.prod(a.shape[:-1]), a.shape[-1]), (row, a.strides[-1]))
    return view if layout_of(view.shape, view.strides, a.itemsize) is not None else None


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` (``nn.Linear``): one GEMM in layout 'nt' (``weight`` read where
    it lies, transposed by its strides) with the bias added in the epilogue.

    Shapes: ``x`` [..., in], ``weight`` [out, in], ``bias`` [out] or None -> [..., out]; one dtype.

    Raises:
        as :func:`matmul`.
    """
    return matmul(x, weight.T, bias)
