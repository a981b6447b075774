"""Every rung of the GEMM ladder (minitorch/native/cuda/gemm.py RUNGS), every dtype it has, against
a float64 NumPy reference on fresh random data.

What is covered, for each (rung, dtype):
* sizes built from {1, 7, 33, 127, 1000} and non-square course shapes (129x65x257, 1000x7x33,
  64x784x128, 256x1536x384), written M x N x K; eight of them in all four layouts nn/nt/tn/tt,
  the rest in one layout each (rotating); bias None or [N] alternating;
* batches: [3, M, K] @ [3, K, N] in every layout, broadcast [2, 1, M, K] @ [3, K, N], a batched
  A with a 2-D B and the reverse, and 65539 batches (more than gridDim.z's 65535: the z loop);
* operands that are not 16-byte aligned (a view starting at element 1) with odd leading
  dimensions, which the vectorized rungs must load with their scalar fallback;
* empty edges: M, N or K = 0 (K = 0 gives zeros, or the bias), and zero batches.
A 't' operand is the transposed view of a contiguous array, so the kernel really reads that
layout. Every allocation is poisoned with 0xFF bytes (NaN), so an output element a kernel never
writes fails. Tolerances (benchmarks/gemm_common.py): per element, |C - C_ref| <= tol * (|A| @ |B|
+ |bias|) (+ 2**-24 for float16's subnormals) with tol from the rounding-error bound of each kind (fp32, tf32 for rungs with
``tensor_cores``, bf16, f16, fp64), and per matrix ||C - C_ref|| / ||C_ref|| within 3e-6 sqrt(K)
(fp32), 5e-3 (tf32), 8e-3 (bf16), 4e-3 (f16), 1e-12 (fp64).
Rungs with a tuning space (07-09) are also run with a sample of their configurations and with the
ones the tuned table (minitorch/cuda/gemm/tuned.json) ships.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("poisoned_allocator")]
if not minitorch.cuda.is_available():
    pytest.skip("needs CuPy and a CUDA GPU", allow_module_level=True)

from minitorch.cuda import array as A  # noqa: E402
from minitorch.native.cuda import gemm as G  # noqa: E402
from minitorch.native.cuda.launch import SUFFIX  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gemm_common as C  # noqa: E402

# rungs this GPU runs (12_wgmma is built for sm_90a: sm_90 GPUs only)
CASES = [c for c in C.rung_cases(G.RUNGS, set(SUFFIX.values())) if G.runs_on(G.RUNGS[c[0]], G.arch_of(0))]
DTYPE = {s: dt for dt, s in SUFFIX.items()}


@pytest.fixture(autouse=True)
def tf32_allowed(monkeypatch):
    """A rung named explicitly runs as it is; allow_tf32 (for dispatch) is set in case a rung asks."""
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", True)


# ---- building operands and checking ---------------------------------------------------------------
def operand(rng, rows, cols, letter, dtype, batch=(), misaligned=False):
    """(DeviceArray view, its float64 values) of a logical [*batch, rows, cols] operand: 'n' stored
    as written, 't' the transposed view of a contiguous [*batch, cols, rows] array. ``misaligned``:
    the stored rows are a slice [1 : 1 + width] of rows of an odd length (width + 2 or + 3), so the
    view starts one element past a 256-byte aligned address and its leading dimension is odd: no
    row can be read with 16-byte vector loads. ``misaligned="pad"``: the stored rows are the first
    ``width`` elements of rows padded to a multiple of 4 (one to four more): aligned, the leading
    dimension a multiple of 4, so 16-byte copies are allowed, yet a row's last 16-byte group may
    hold fewer than 4 of its elements (the partial copies at a tile's edge)."""
    r, c = (cols, rows) if letter == "t" else (rows, cols)
    pad = 4 - c % 4 if misaligned == "pad" else (2 if c % 2 else 3) if misaligned else 0
    base = rng.standard_normal(tuple(batch) + (r, c + pad)).astype(dtype)
    dev = A.from_numpy(base, 0)
    if misaligned == "pad":
        dev, base = dev[..., :c], base[..., :c]
    elif misaligned:
        dev, base = dev[..., 1:1 + c], base[..., 1:1 + c]
    if letter == "t":
        axes = tuple(range(len(batch))) + (len(batch) + 1, len(batch))
        dev, base = dev.transpose(axes), base.transpose(axes)
    return dev, base.astype(np.float64)


def run_case(rng, rung, suffix, kind, m, n, k, layout="nn", bias=False, batch_a=(), batch_b=(),
             misaligned=(False, False), options=None):
    dtype = DTYPE[suffix]
    da, a = operand(rng, m, k, layout[0], dtype, batch_a, misaligned[0])
    db, b = operand(rng, k, n, layout[1], dtype, batch_b, misaligned[1])
    dbias, bvec = None, None
    if bias:
        bvec = rng.standard_normal(n).astype(dtype)
        dbias, bvec = A.from_numpy(bvec, 0), bvec.astype(np.float64)
    out = G.gemm(da, db, dbias, rung=rung, options=options)
    got = A.to_numpy(out)
    ref = np.matmul(a, b)
    scale = np.matmul(np.abs(a), np.abs(b))
    if bias:
        ref, scale = ref + bvec, scale + np.abs(bvec)
    where = f"{rung} {suffix} {m}x{n}x{k} {layout} bias={bias} batch={batch_a}/{batch_b} misaligned={misaligned}"
    assert out.dtype == dtype and out.c_contiguous, where
    assert got.shape == ref.shape, f"{where}: shape {got.shape}, expected {ref.shape}"
    got = got.astype(np.float64)
    bad = ~np.isfinite(got)
    assert not bad.any(), f"{where}: {bad.sum()} elements not finite (never written?), first at {np.argwhere(bad)[0]}"
    if ref.size == 0:
        return
    if k == 0:      # an empty sum: exactly zero, plus the bias
        np.testing.assert_array_equal(got, ref.astype(dtype).astype(np.float64), err_msg=where)
        return
    err = C.elementwise_error(got - ref, scale, kind)
    tol = C.elementwise_tol(kind, k)
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= tol, (f"{where}: element {worst} off by {err.max():.2e} x (|A||B|+|bias|) > {tol:.1e}: "
                              f"got {got[worst]!r}, want {ref[worst]!r}; {(err > tol).sum()} elements out")
    rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert rel <= C.norm_tol(kind, k), f"{where}: relative error {rel:.2e} > {C.norm_tol(kind, k):.1e}"


# ---- the grid --------------------------------------------------------------------------------------
ALL_LAYOUTS = [(7, 7, 7), (33, 33, 33), (127, 127, 127), (1, 7, 33), (129, 65, 257), (1000, 127, 33),
               (64, 784, 128), (33, 7, 1000)]
ONE_LAYOUT = [(1, 1, 1), (7, 1, 127), (33, 127, 1), (127, 33, 7), (1000, 1, 7), (1, 1000, 33),
              (127, 1000, 127), (1000, 1000, 1000), (1000, 7, 33), (256, 1536, 384), (65, 129, 1000)]
SIZES = ([(s, lay, (i + j) % 2 == 1) for i, s in enumerate(ALL_LAYOUTS) for j, lay in enumerate(C.LAYOUTS)]
         + [(s, C.LAYOUTS[i % 4], i % 2 == 0) for i, s in enumerate(ONE_LAYOUT)])
BATCHED = [  # (m, n, k, layout, bias, batch of A, batch of B)
    *[(33, 65, 47, lay, lay == "nt", (3,), (3,)) for lay in C.LAYOUTS],
    (127, 129, 65, "nn", True, (5,), (5,)),
    (17, 33, 45, "nn", False, (2, 1), (3,)),
    (17, 33, 45, "tt", True, (2, 1), (3,)),
    (31, 9, 70, "nt", True, (4,), ()),
    (31, 9, 70, "tn", False, (), (3,)),
    (2, 3, 5, "nt", True, (65539,), (65539,)),
]
MISALIGNED = [  # (m, n, k, layout, which operands)
    *[(67, 45, 39, lay, (True, True)) for lay in C.LAYOUTS],
    (33, 129, 65, "nn", (True, False)),
    (1000, 127, 129, "nt", (False, True)),
]
EMPTY = [(0, 5, 7, False, ()), (5, 0, 7, True, ()), (5, 7, 0, True, ()), (5, 7, 0, False, ()), (5, 7, 3, False, (0,))]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("size,layout,bias", SIZES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_sizes_and_layouts(case, size, layout, bias, rng):
    run_case(rng, *case, *size, layout, bias)


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("m,n,k,layout,bias,ba,bb", BATCHED)
def test_batched(case, m, n, k, layout, bias, ba, bb, rng):
    run_case(rng, *case, m, n, k, layout, bias, ba, bb)


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("m,n,k,layout,which", MISALIGNED)
def test_misaligned(case, m, n, k, layout, which, rng):
    run_case(rng, *case, m, n, k, layout, True, misaligned=which)


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("m,n,k,bias,batch", EMPTY)
def test_empty(case, m, n, k, bias, batch, rng):
    run_case(rng, *case, m, n, k, "nt", bias, batch, batch)


# ---- tuned configurations ------------------------------------------------------------------------
def _configs():
    """(rung, config) pairs: up to 6 of each tunable rung's valid configurations, spread over its
    list, plus every configuration the shipped tuned table names."""
    out = []
    tuning = getattr(G, "tuning_configs", None)
    for name in G.RUNGS if tuning else ():
        if not any(c[0] == name for c in CASES):
            continue                # not for this GPU
        try:
            configs = list(tuning(name))
        except (KeyError, ValueError, TypeError):
            continue
        step = max(1, len(configs) // 6)
        out += [(name, tuple(c)) for c in configs[::step][:6]]
    table = Path(minitorch.__file__).resolve().parent / "cuda" / "gemm" / "tuned.json"
    if table.is_file():
        for kinds in json.loads(table.read_text()).values():
            for classes in kinds.values():
                for e in classes.values():
                    if e.get("rung") in G.RUNGS and e.get("options") and any(c[0] == e["rung"] for c in CASES):
                        out.append((e["rung"], tuple(e["options"])))
    return list(dict.fromkeys(out))


CONFIGS = _configs()


@pytest.mark.parametrize("rung,config", CONFIGS, ids=lambda v: ",".join(v) if isinstance(v, tuple) else v)
@pytest.mark.parametrize("m,n,k,layout,bias,ba,bb,mis", [
    (129, 65, 257, "nt", True, (), (), (False, False)),
    (67, 131, 45, "tn", False, (2,), (2,), (True, True)),
])
def test_tuning_configs(rung, config, m, n, k, layout, bias, ba, bb, mis, rng):
    for suffix in G.RUNGS[rung].dtypes:
        if suffix in DTYPE:
            run_case(rng, rung, suffix, C.kind_of(G.RUNGS[rung], suffix), m, n, k, layout, bias, ba, bb, mis,
                     options=config)


def test_there_are_rungs():
    assert CASES, "no GEMM rungs registered"


# ---- rung 09's register switches ---------------------------------------------------------------------
# ELEM_COPY=1 splits the kernel into two bodies chosen once per launch (16-byte copies when every
# operand copied along its contiguous dimension is aligned, with leading dimensions and batch
# strides multiples of 4; else 4-byte element copies), KUNROLL unrolls the k loop partly,
# MIN_BLOCKS adds __launch_bounds__. These configurations reach each copy path: 256 threads with
# two copies per thread and k-row (BM = BN = 128), 128 threads with BK = 8, 32 threads (a tile row
# takes several passes of the block), a 256-row tile (one pass), a partial unroll.
SWITCH_CONFIGS = [
    {"KUNROLL": 1, "MIN_BLOCKS": 2, "ELEM_COPY": 1},
    {"BM": 64, "BN": 64, "BK": 8, "WM": 32, "WN": 32, "WNITER": 1, "TM": 8, "TN": 4, "STAGES": 3,
     "KUNROLL": 1, "MIN_BLOCKS": 0, "ELEM_COPY": 1},
    {"BM": 64, "BN": 64, "BK": 16, "WM": 64, "WN": 64, "WNITER": 2, "TM": 8, "TN": 4, "STAGES": 2,
     "KUNROLL": 1, "MIN_BLOCKS": 0, "ELEM_COPY": 1},
    {"BM": 256, "BN": 64, "WM": 64, "WN": 32, "WNITER": 2, "TM": 8, "TN": 4, "KUNROLL": 1, "MIN_BLOCKS": 2,
     "ELEM_COPY": 1},
    {"KUNROLL": 2, "ELEM_COPY": 1},
    # LEAN=1 (the register-lean body): KUNROLL is the unrolled chunk of k steps; 256 threads with
    # 128 x 128 tiles (BK 16 and 8, both thread arrangements), 128 threads (64 x 128, 64 x 64), a
    # chunk of 2 (eight chunk iterations per tile) with 4 stages, 128 x 256 (128 accumulators a
    # thread, one block per SM). (BK = 8 and 64 x 128 in 128
    # threads spill at 128 registers, so not tuned: here without launch bounds, for their copy
    # mappings.)
    {"KUNROLL": 8, "MIN_BLOCKS": 2, "LEAN": 1},
    {"BK": 8, "WM": 32, "WN": 64, "TM": 4, "STAGES": 2, "KUNROLL": 4, "MIN_BLOCKS": 0, "LEAN": 1},
    {"BM": 64, "BN": 128, "BK": 8, "WM": 32, "WN": 64, "TM": 4, "KUNROLL": 4, "MIN_BLOCKS": 0, "LEAN": 1},
    {"BM": 64, "BN": 64, "BK": 16, "WM": 32, "WN": 32, "TM": 4, "KUNROLL": 8, "MIN_BLOCKS": 4, "LEAN": 1},
    {"STAGES": 4, "KUNROLL": 2, "MIN_BLOCKS": 2, "LEAN": 1},
    {"BM": 128, "BN": 256, "BK": 8, "WM": 64, "WN": 64, "TM": 8, "KUNROLL": 4, "MIN_BLOCKS": 1, "LEAN": 1},
    # 128 x 256 x 16 in one block per SM (the tile of tuned.json's big_nn; LEAN's copies: 24 element
    # copies a thread per k-tile in 'nt'), chunks of 8.
    {"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "WNITER": 2, "TM": 8, "TN": 4, "STAGES": 3,
     "KUNROLL": 8, "MIN_BLOCKS": 1, "LEAN": 1},
]
# and every rung 09 configuration tuned.json ships: what matmul runs (big products: 4 and 5 stages)
SWITCH_CONFIGS += [G.config_of("09_pipelined", entry["options"]) for kinds in G.tuned_table().values()
                   for entry in kinds.get("fp32", {}).values() if entry["rung"] == "09_pipelined"]
SWITCH_CASES = [
    # sizes multiples of 4 (16-byte copies allowed) but not of the tiles: the aligned body, edges
    *[(132, 100, 68, lay, True, (), (), (False, False)) for lay in C.LAYOUTS],
    # odd leading dimensions, views one element in: the element-copy body
    *[(67, 45, 39, lay, lay in ("nn", "tt"), (), (), (True, True)) for lay in C.LAYOUTS],
    (36, 40, 24, "tn", True, (3,), (3,), (False, False)),          # batches, aligned strides
    (36, 40, 24, "nn", False, (2, 1), (3,), (False, False)),       # broadcast (stride 0)
    (36, 40, 24, "tn", True, (), (), (True, False)),                # one operand unaligned
    # several row tiles, K not of BK: interior tiles (LEAN's unguarded copies) and edge tiles
    *[(300, 260, 100, lay, lay == "nt", (), (), (False, False)) for lay in C.LAYOUTS],
    (256, 256, 64, "nn", False, (), (), (False, False)),           # whole tiles only
    # aligned rows padded to a multiple of 4 with K, M, N not of 4: partial 16-byte copies at the
    # edges of M, N (the 16-byte copies along them)
    *[(37, 45, 30, lay, lay == "tn", (), (), ("pad", "pad")) for lay in C.LAYOUTS],
    (130, 258, 18, "nt", True, (2,), (2,), ("pad", "pad")),         # batched, several k-tiles
    # tiny products: K < BK, K = 1, single rows and columns
    (1, 1, 1, "nn", True, (), (), (False, False)),
    (7, 5, 3, "nt", False, (), (), (False, False)),
    (33, 1, 9, "tt", True, (), (), (False, False)),
    (1, 300, 2, "tn", False, (), (), (False, False)),
    (5, 7, 4, "nt", False, (), (), (False, False)),
]


@pytest.mark.skipif("09_pipelined" not in G.RUNGS, reason="no rung 09")
@pytest.mark.parametrize("config", SWITCH_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("m,n,k,layout,bias,ba,bb,mis", SWITCH_CASES)
def test_rung09_switches(config, m, n, k, layout, bias, ba, bb, mis, rng):
    options = G.rung_with("09_pipelined", config).options
    run_case(rng, "09_pipelined", "f32", "fp32", m, n, k, layout, bias, ba, bb, mis, options=options)


# ---- the dispatcher's large and big fp32 configurations --------------------------------------------
def _through_the_dispatcher(rng, m, n, k, layout):
    """gemm.matmul on an m x n x k float32 product in ``layout`` with a bias, TF32 off, against
    float64 (elementwise error bound of an fp32 product of length k)."""
    da, a = operand(rng, m, k, layout[0], np.float32)
    db, b = operand(rng, k, n, layout[1], np.float32)
    bvec = rng.standard_normal(n).astype(np.float32)
    got = A.to_numpy(G.matmul(da, db, A.from_numpy(bvec, 0))).astype(np.float64)
    err = C.elementwise_error(got - (a @ b + bvec), np.abs(a) @ np.abs(b) + np.abs(bvec), "fp32")
    assert np.isfinite(got).all() and err.max() <= C.elementwise_tol("fp32", k), (G.choose(m, n, k, 1, "f32", G.arch_of(0)),
                                                                                  err.max())


@pytest.fixture
def fp32_dispatch(monkeypatch):
    """The dispatcher with TF32 off (the module's fixture allows it) and no plans left from other tests."""
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", False)
    G.reload_tuned()
    yield
    G.reload_tuned()


@pytest.mark.parametrize("layout", C.LAYOUTS)
def test_large_class_through_the_dispatcher(layout, rng, fp32_dispatch):
    """A "large" float32 product (C over 2**22 elements) that is no multiple of any tile, K not of
    BK: whatever configuration tuned.json names for the large class, in every layout."""
    m, n, k = 2049, 2051, 67
    assert G.shape_class(m, n, k) == "large" and not G.is_big(m, n, k, "f32", "09_pipelined")
    _through_the_dispatcher(rng, m, n, k, layout)


@pytest.mark.parametrize("layout", C.LAYOUTS)
def test_big_products_through_the_dispatcher(layout, rng, monkeypatch, fp32_dispatch):
    """A float32 product at least BIG_MIN (lowered to 256) in every dimension, no multiple of any
    tile, K not of BK: it runs where it lies with the table's big configuration for its layout."""
    monkeypatch.setattr(G, "BIG_MIN", 256)
    m, n, k = 300, 260, 270
    assert G.is_big(m, n, k, "f32", G.choose(m, n, k, 1, "f32", G.arch_of(0))[0])
    _through_the_dispatcher(rng, m, n, k, layout)
