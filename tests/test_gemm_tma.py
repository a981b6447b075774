"""Phase 05: rung 13 of the GEMM ladder (13_wgmma_tma: TMA copies on mbarriers, a producer and two
consumer warpgroups, a persistent grid; sm_90a only) against a float64 reference, through
``minitorch.native.cuda.gemm.gemm``. Needs an sm_90 GPU (H100/H200); skipped elsewhere.

Each case checks that rung 13 itself ran (not its fallback, rung 12): its operands are views of
padded buffers, so every row starts 16 bytes after the one before whatever M, N, K are, which is
what TMA needs; sizes that are not multiples of the tile then exercise the copy engine's zero fill
(k past K, rows past M and N). Integer data (-3..3, bias -8..8) makes the float32 accumulators
exact: the only error left is the rounding of C, so a wrong descriptor, swizzle, mbarrier phase or
tile order gives wrong integers. Sizes with more C tiles than the H100's 132 SMs make blocks of the
persistent grid compute several tiles, and K up to 1000 (16 k tiles of 64) runs each stage ring
round several times. Outputs come from the poisoned allocator (NaN bytes): an unwritten element fails.
"""
import numpy as np
import pytest

import minitorch

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("poisoned_allocator")]
if not minitorch.cuda.is_available():
    pytest.skip("needs CuPy and a CUDA GPU", allow_module_level=True)

import cupy as cp  # noqa: E402
import ml_dtypes  # noqa: E402

from minitorch.cuda.array import from_numpy, to_numpy  # noqa: E402
from minitorch.native.cuda import gemm as G  # noqa: E402

if int(cp.cuda.Device().compute_capability) != 90:
    pytest.skip("rung 13 (wgmma + TMA) is built for sm_90a: H100/H200 only", allow_module_level=True)

RUNG = "13_wgmma_tma"
DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}
UNIT = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 0.0}     # unit roundoff of C's type
LAYOUTS = {"bf16": ["nn", "nt", "tn", "tt"], "f16": ["nn", "nt", "tn", "tt"], "f32": ["nt"]}
CASES = [(s, lay) for s in DTYPES for lay in LAYOUTS[s]]
SIZES = [(1, 1, 1), (7, 7, 7), (129, 257, 65), (128, 256, 64), (300, 520, 200), (1000, 1000, 1000),
         (2000, 2056, 72)]          # 16 x 9 = 144 C tiles of 128 x 256: more than 132 SMs


@pytest.fixture
def tma_runs(monkeypatch):
    """Counts the launches of rung 13 itself (gemm() hands what TMA cannot read to rung 12)."""
    calls = []
    real = G._gemm_tma

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(G, "_gemm_tma", spy)
    return calls


def operand(x, letter):
    """A DeviceArray view holding ``x`` ([..., R, C]) for layout ``letter``: 'n' rows of C along
    memory, 't' the transposed view of a [..., C, R] array. The stored rows are padded to a
    multiple of 16 bytes (the view is a slice of a wider buffer), as TMA needs."""
    stored = np.swapaxes(x, -1, -2) if letter == "t" else x
    width = stored.shape[-1]
    pad = -width % (16 // stored.itemsize)
    buf = np.zeros(stored.shape[:-1] + (width + pad,), stored.dtype)
    buf[..., :width] = stored
    view = from_numpy(buf, 0)[..., :width]
    if letter == "t":
        axes = list(range(view.ndim))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        view = view.transpose(*axes)
    return view


def ints(rng, shape, dtype, lo=-3, hi=3):
    return rng.integers(lo, hi + 1, shape).astype(dtype)


def check(c, ref, unit):
    c = c.astype(np.float64)
    assert c.shape == ref.shape
    bad = ~(np.abs(c - ref) <= unit * np.abs(ref))        # NaN (an unwritten element) fails too
    if bad.any():
        first = tuple(np.argwhere(bad)[0])
        rows, cols = np.unique(np.argwhere(bad)[:, -2]), np.unique(np.argwhere(bad)[:, -1])
        raise AssertionError(f"{bad.sum()} of {bad.size} wrong ({len(rows)} rows, {len(cols)} columns), first at "
                             f"{first}: {c[first]} vs {ref[first]}")


@pytest.mark.parametrize("suffix,layout", CASES, ids=[f"{s}-{lay}" for s, lay in CASES])
@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
def test_rung13_matches_float64(rng, tma_runs, suffix, layout, mnk):
    m, n, k = mnk
    dtype = DTYPES[suffix]
    a, b = ints(rng, (m, k), dtype), ints(rng, (k, n), dtype)
    bias = ints(rng, (n,), dtype, -8, 8)
    use_bias = (m + n + k) % 2 == 1
    out = G.gemm(operand(a, layout[0]), operand(b, layout[1]), from_numpy(bias, 0) if use_bias else None, rung=RUNG)
    if min(m, n, k) > 1:        # (a 1 x 1 matrix has no layout: gemm() reads both as 'n')
        assert tma_runs == [f"gemm_{layout}_{suffix}"], "rung 13 did not run (handed to rung 12?)"
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bias.astype(np.float64) if use_bias else 0)
    check(to_numpy(out), ref, UNIT[suffix])


@pytest.mark.parametrize("layout", ["nn", "tn", "tt"])
@pytest.mark.parametrize("mnk", [(129, 257, 64), (300, 520, 200), (1000, 1000, 1000), (2000, 2056, 72)],
                         ids=lambda s: "x".join(map(str, s)))
def test_rung13_tf32_other_layouts_run_on_a_k_major_copy(rng, tma_runs, layout, mnk):
    """TF32 wgmma reads both operands K-major, so rung 13 has TF32 kernels for 'nt' alone: gemm()
    transposes a 't' A or an 'n' B once (transpose.cu) and runs the 'nt' kernel on the copies."""
    m, n, k = mnk
    a, b = ints(rng, (m, k), np.float32), ints(rng, (k, n), np.float32)
    bias = ints(rng, (n,), np.float32, -8, 8)
    out = G.gemm(operand(a, layout[0]), operand(b, layout[1]), from_numpy(bias, 0), rung=RUNG)
    assert tma_runs == ["gemm_nt_f32"], "rung 13 did not run on the K-major copies"
    check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), 0.0)


CONFIGS = [{"BN": 128, "STAGES": 6, "GROUP_M": 0}, {"BN": 128, "STAGES": 3, "GROUP_M": 8},
           {"BN": 256, "STAGES": 3, "GROUP_M": 0}, {"BN": 256, "STAGES": 2, "GROUP_M": 8}]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
@pytest.mark.parametrize("suffix,layout", [("bf16", "nt"), ("f16", "tn"), ("f32", "nt")])
def test_rung13_configurations(rng, tma_runs, config, suffix, layout):
    """Other tile widths, stage counts (2: the ring wraps every other k tile) and tile orders."""
    dtype = DTYPES[suffix]
    for m, n, k in ((129, 257, 65), (1100, 1500, 520)):
        a, b = ints(rng, (m, k), dtype), ints(rng, (k, n), dtype)
        bias = ints(rng, (n,), dtype, -8, 8)
        out = G.gemm(operand(a, layout[0]), operand(b, layout[1]), from_numpy(bias, 0), rung=RUNG, config=config)
        check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), UNIT[suffix])
    assert len(tma_runs) == 2


@pytest.mark.parametrize("suffix,layout", [("bf16", "nn"), ("bf16", "tt"), ("f16", "nt"), ("f32", "nt")])
def test_rung13_batched(rng, tma_runs, suffix, layout):
    """Strided batches (the tensor maps' third dimension), and a 2-D operand broadcast over them."""
    dtype = DTYPES[suffix]
    m, n, k = 200, 136, 100
    a, b = ints(rng, (3, m, k), dtype), ints(rng, (3, k, n), dtype)
    out = G.gemm(operand(a, layout[0]), operand(b, layout[1]), None, rung=RUNG)
    check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64), UNIT[suffix])
    b2 = ints(rng, (k, n), dtype)
    out = G.gemm(operand(a, layout[0]), operand(b2, layout[1]), None, rung=RUNG)
    check(to_numpy(out), a.astype(np.float64) @ b2.astype(np.float64), UNIT[suffix])
    a2 = ints(rng, (m, k), dtype)
    out = G.gemm(operand(a2, layout[0]), operand(b, layout[1]), None, rung=RUNG)
    check(to_numpy(out), a2.astype(np.float64) @ b.astype(np.float64), UNIT[suffix])
    assert len(tma_runs) == 3


@pytest.mark.parametrize("suffix", ["bf16", "f16"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_rung13_random_data(rng, tma_runs, suffix, layout):
    """Random normal data: normwise error at the level of float32 accumulation plus one rounding of C."""
    dtype = DTYPES[suffix]
    m, n, k = 515, 704, 1000
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    out = to_numpy(G.gemm(operand(a, layout[0]), operand(b, layout[1]), None, rung=RUNG)).astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(out - ref) <= 2 * UNIT[suffix] * np.linalg.norm(ref)
    assert tma_runs


def test_rung13_hands_unaligned_operands_to_rung_12(rng, tma_runs):
    """Rows of 65 bf16 (130 bytes, not a multiple of 16): TMA cannot read them, rung 12 does."""
    a, b = ints(rng, (129, 65), ml_dtypes.bfloat16), ints(rng, (65, 257), ml_dtypes.bfloat16)
    out = G.gemm(from_numpy(a, 0), from_numpy(np.ascontiguousarray(b.T), 0).T, None, rung=RUNG)
    check(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64), UNIT["bf16"])
    assert tma_runs == []


def test_tensor_map_is_64_byte_aligned_and_cached(rng):
    x = from_numpy(np.zeros((64, 64), np.float16), 0)
    args = (x.ptr, "f16", (64, 64, 1), (128, 128 * 64), (64, 64, 1))
    tm = G.tensor_map(*args)
    assert tm.address % 64 == 0 and tm.array.nbytes == 128 and tm.array.view(np.uint64).any()
    assert G.tensor_map(*args) is tm
    with pytest.raises(RuntimeError, match="cuTensorMapEncodeTiled"):
        G.tensor_map(x.ptr, "f16", (64, 64, 1), (100, 128 * 64), (64, 64, 1))     # stride not a multiple of 16
