"""Phase 05: the tensor-core GEMM rungs (10_tf32_mma float32 through TF32, 11_half_mma bfloat16 and
float16) against a float64 reference, through ``minitorch.native.cuda.gemm.gemm``.

Inputs are small integers (-3..3, bias -8..8): their products and sums are exact in TF32, bf16,
fp16 and float32, so the accumulators hold the exact float64 result and the only error left is
the final rounding of C to bf16/fp16 (float32: none). Any fragment, swizzle or pipeline mistake
shows up as a wrong integer, far outside that bound. One test uses random normal data to check
the TF32 rounding itself (cvt.rna) against a NumPy emulation.
Cases: odd sizes (1, 7, 33, 127, 1000, non-square, not multiples of the 128 x 128 x BK tile),
sizes whose rows are 16-byte aligned (the cp.async 16-byte path) and not (the element path), all
four layouts (n/t for A and B, as transposed views), a view shifted by one element, batches with
broadcasting, with and without bias. Needs an sm_80+ GPU; rung 12 (12_wgmma, wgmma on sm_90a) runs
only on an sm_90 GPU (H100/H200) and is skipped elsewhere. Its TF32 has only layout 'nt'; gemm()
hands the other float32 layouts to rung 10, so those cases check the hand-over.
"""
import numpy as np
import pytest

import minitorch

pytestmark = pytest.mark.cuda
if not minitorch.cuda.is_available():
    pytest.skip("needs CuPy and a CUDA GPU", allow_module_level=True)

import cupy as cp  # noqa: E402
import ml_dtypes  # noqa: E402

from minitorch.cuda.array import from_numpy, to_numpy  # noqa: E402
from minitorch.native.cuda.gemm import gemm, rung_with, tuning_configs  # noqa: E402

if int(cp.cuda.Device().compute_capability) < 80:
    pytest.skip("tensor-core rungs need sm_80 or newer", allow_module_level=True)

SIZES = [(1, 1, 1), (7, 7, 7), (33, 1, 127), (1, 33, 7), (127, 33, 1000), (1000, 127, 33),
         (130, 257, 65),            # edges in every dimension
         (256, 128, 96),            # whole tiles, rows 16-byte aligned
         (136, 264, 72)]            # aligned rows (multiples of 8), edge tiles
LAYOUTS = ["nn", "nt", "tn", "tt"]
HALF = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}
UNIT = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}          # unit roundoff of C's type


def _operand(x, letter):
    """A DeviceArray holding ``x`` ([..., R, C]) with unit stride along C ('n') or along R ('t':
    the transposed view of a contiguous [..., C, R] array)."""
    if letter == "n":
        return from_numpy(x, 0)
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return from_numpy(np.ascontiguousarray(np.swapaxes(x, -1, -2)), 0).transpose(*axes)


def _ints(rng, shape, dtype, lo=-3, hi=3):
    return rng.integers(lo, hi + 1, shape).astype(dtype)


def _check(c, ref, unit):
    c = c.astype(np.float64)
    assert c.shape == ref.shape
    bad = ~(np.abs(c - ref) <= unit * np.abs(ref))        # NaN (an unwritten element) fails too
    assert not bad.any(), (f"{bad.sum()} of {bad.size} wrong, first at {np.argwhere(bad)[0]}: "
                           f"{c[tuple(np.argwhere(bad)[0])]} vs {ref[tuple(np.argwhere(bad)[0])]}")


SM90 = pytest.mark.skipif(int(cp.cuda.Device().compute_capability) != 90,
                          reason="rung 12 (wgmma) is built for sm_90a: H100/H200 only")
CASES = ([("10_tf32_mma", np.float32, 0.0), ("10_tf32_mma_wide", np.float32, 0.0)]
         + [("11_half_mma", HALF[s], UNIT[s]) for s in HALF]
         + [pytest.param("12_wgmma", HALF[s], UNIT[s], marks=SM90) for s in HALF]
         + [pytest.param("12_wgmma", np.float32, 0.0, marks=SM90)])
IDS = ["tf32", "tf32_wide", "bf16", "f16", "wgmma_bf16", "wgmma_f16", "wgmma_tf32"]


@pytest.mark.parametrize("rung,dtype,unit", CASES, ids=IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
def test_rung_matches_float64(rng, rung, dtype, unit, layout, mnk):
    m, n, k = mnk
    a, b = _ints(rng, (m, k), dtype), _ints(rng, (k, n), dtype)
    bias = _ints(rng, (n,), dtype, -8, 8)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), None, rung=rung)
    _check(to_numpy(out), ref, unit)
    out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), from_numpy(bias, 0), rung=rung)
    _check(to_numpy(out), ref + bias.astype(np.float64), unit)


@pytest.mark.parametrize("rung,dtype,unit", CASES, ids=IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_rung_unaligned_views(rng, rung, dtype, unit, layout):
    """Operands that start one element after a 16-byte boundary take the element-by-element copies."""
    m, n, k = 72, 136, 80
    a, b = _ints(rng, (m, k), dtype), _ints(rng, (k, n), dtype)
    shifted = []
    for x, letter in zip((a, b), layout):
        stored = x if letter == "n" else np.ascontiguousarray(x.T)      # what lies in memory
        flat = from_numpy(np.concatenate([np.zeros(1, dtype), stored.ravel()]), 0)
        isz = stored.itemsize
        view = flat.as_strided(stored.shape, (stored.shape[1] * isz, isz), isz)   # one element in
        shifted.append(view if letter == "n" else view.T)
    out = gemm(shifted[0], shifted[1], None, rung=rung)
    _check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64), unit)


@pytest.mark.parametrize("rung,dtype,unit", CASES, ids=IDS)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
def test_rung_batched_broadcast(rng, rung, dtype, unit, layout):
    """[2, 1, M, K] @ [3, K, N] -> [2, 3, M, N]: A repeats over the 3, B over the 2."""
    m, n, k = 65, 40, 130
    a, b = _ints(rng, (2, 1, m, k), dtype), _ints(rng, (3, k, n), dtype)
    bias = _ints(rng, (n,), dtype, -8, 8)
    out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), from_numpy(bias, 0), rung=rung)
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    _check(to_numpy(out), ref, unit)


def _tf32(x):
    """cvt.rna.tf32.f32 in NumPy: keep 10 mantissa bits, rounding half away from zero."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("rung", ["10_tf32_mma", "10_tf32_mma_wide"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_tf32_rounding(rng, layout, rung):
    """Random normal data: C equals the float64 product of the TF32-rounded inputs up to float32
    accumulation error, and differs from the float32 product by about TF32's 2^-11."""
    m, n, k = 200, 150, 300
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = to_numpy(gemm(_operand(a, layout[0]), _operand(b, layout[1]), None, rung=rung))
    ref = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(out - ref) <= 1e-5 * scale)


def test_rungs_registered():
    from minitorch.native.cuda.gemm import RUNGS
    assert RUNGS["10_tf32_mma"].tensor_cores and RUNGS["10_tf32_mma"].dtypes == ("f32",)
    assert set(RUNGS["11_half_mma"].dtypes) == {"bf16", "f16"}
    for name in ("10_tf32_mma", "10_tf32_mma_wide", "11_half_mma"):
        assert RUNGS[name].arch == 80 and RUNGS[name].smem > 48 * 1024



# ---- compile-time options of the tensor-core rungs (gemm.TUNING_SPACE) ----------------------------
# Each new code path once, all four layouts, edge tiles in every dimension, a batch with bias; the
# defaults of the other options (rung_with fills them in). Spilling configurations are fine here:
# this checks what they compute, not how fast.
OPTION_CASES = [
    ("10_tf32_mma", {"CVT_SMEM": 1}), ("10_tf32_mma", {"KPERM": 1}), ("10_tf32_mma", {"FRAG_DB": 1, "MINB": 1}),
    ("10_tf32_mma", {"GROUP_M": 8}), ("10_tf32_mma", {"STAGES": 4, "KPERM": 1, "CVT_SMEM": 1, "FRAG_DB": 1}),
    ("10_tf32_mma", {"BN": 256, "WN": 64, "KPERM": 1, "CVT_SMEM": 1, "GROUP_M": 8}),
    ("10_tf32_mma", {"WN": 64, "FRAG_DB": 1, "GROUP_M": 8}),                        # 4 warps
    ("11_half_mma", {"FRAG_DB": 1, "MINB": 1}), ("11_half_mma", {"GROUP_M": 8, "STAGES": 4}),
    ("11_half_mma", {"BM": 256, "WN": 64, "FRAG_DB": 1}), ("11_half_mma", {"BN": 256, "WN": 64, "GROUP_M": 8}),
    ("11_half_mma", {"WN": 64, "FRAG_DB": 1}),                                      # 4 warps
]


@pytest.mark.parametrize("rung,config", OPTION_CASES, ids=lambda v: v if isinstance(v, str) else
                         ",".join(f"{k}={x}" for k, x in v.items()))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_rung_options(rng, rung, config, layout):
    dtypes = [np.float32] if rung.startswith("10") else [HALF["bf16"], HALF["f16"]]
    for dtype in dtypes:
        unit = 0.0 if dtype == np.float32 else UNIT["bf16" if dtype == HALF["bf16"] else "f16"]
        for m, n, k in [(130, 257, 65), (1000, 127, 33), (264, 136, 200), (7, 1, 9)]:
            a, b = _ints(rng, (m, k), dtype), _ints(rng, (k, n), dtype)
            bias = _ints(rng, (n,), dtype, -8, 8)
            out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), from_numpy(bias, 0), rung=rung,
                       config=config)
            _check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), unit)
        # batched, A broadcast over B's batch
        a, b = _ints(rng, (1, 65, 70), dtype), _ints(rng, (3, 70, 129), dtype)
        out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), None, rung=rung, config=config)
        _check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64), unit)


@pytest.mark.parametrize("config", [{"CVT_SMEM": 1}, {"KPERM": 1, "FRAG_DB": 1, "MINB": 1}])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_tf32_rounding_options(rng, layout, config):
    """The TF32 rounding is the same (cvt.rna once per element) whichever option reads the tiles."""
    m, n, k = 200, 150, 300
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = to_numpy(gemm(_operand(a, layout[0]), _operand(b, layout[1]), None, rung="10_tf32_mma", config=config))
    ref = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(out - ref) <= 1e-5 * scale)


# ---- rung 12 (wgmma): every configuration, sizes around its 128 x 256 x 64 tiles -----------------
WGMMA_SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (127, 127, 127), (1000, 1000, 1000),
               (129, 257, 65),          # one past a tile in every dimension
               (300, 520, 200),         # several tiles, N not a multiple of 128 or 256, K of 64
               (128, 256, 64),          # exactly one tile
               (64, 8, 1000),           # one warpgroup's rows, a narrow N, K through the whole ring
               (257, 129, 4096 + 8)]    # a long K: the stage ring wraps around many times


# (each configuration is one NVRTC module of ~10-20 s to build: the default and four others)
WGMMA_CONFIGS = [("bf16", c) for c in ({"BN": 128, "STAGES": 3, "MINB": 2}, {"BN": 128, "STAGES": 4},
                                       {"BN": 256, "STAGES": 3}, {"BN": 256, "STAGES": 4, "GROUP_M": 8})]
WGMMA_CONFIGS += [(s, {}) for s in ("bf16", "f16", "f32")]


def test_wgmma_configs_are_tunable():
    """The configurations tested below are ones the tuner may pick."""
    tunable = set(tuning_configs("12_wgmma"))
    assert all(rung_with("12_wgmma", c).options in tunable for _, c in WGMMA_CONFIGS)


@SM90
@pytest.mark.parametrize("suffix,config", WGMMA_CONFIGS,
                         ids=lambda v: "-".join(f"{k}{x}" for k, x in v.items()) or "default" if isinstance(v, dict) else v)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_wgmma_configs(rng, suffix, layout, config):
    """Rung 12's configurations, every layout, the sizes above, with bias; integers, so the
    float64 reference is exact up to the rounding of C."""
    dtype, unit = (np.float32, 0.0) if suffix == "f32" else (HALF[suffix], UNIT[suffix])
    for m, n, k in WGMMA_SIZES:
        a, b = _ints(rng, (m, k), dtype), _ints(rng, (k, n), dtype)
        bias = _ints(rng, (n,), dtype, -8, 8)
        out = gemm(_operand(a, layout[0]), _operand(b, layout[1]), from_numpy(bias, 0), rung="12_wgmma",
                   config=config)
        _check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), unit)


@SM90
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("suffix", ["bf16", "f16"])
def test_wgmma_random_data(rng, suffix, layout):
    """Random normal data: the normwise error against float64 stays at the level of float32
    accumulation plus one rounding of C (a wrong swizzle or descriptor gives errors of order 1)."""
    dtype = HALF[suffix]
    m, n, k = 515, 700, 1000
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    out = to_numpy(gemm(_operand(a, layout[0]), _operand(b, layout[1]), None, rung="12_wgmma")).astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(out - ref) <= 2 * UNIT[suffix] * np.linalg.norm(ref)


@SM90
def test_wgmma_registered():
    spec = rung_with("12_wgmma", {})
    assert spec.target == "sm_90a" and spec.tile == (128, 256) and spec.block == (256,)
    assert spec.smem == 4 * (128 + 256) * 128 + 1024
