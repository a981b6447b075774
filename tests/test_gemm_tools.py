"""The CPU parts of the GEMM evidence scripts: tolerances, argument parsing, tables, the tuned-table
merge, shape classes, ncu CSV parsing (benchmarks/gemm_common.py, bench_gemm.py, ncu_gemm.py,
tools/tune_gemm.py). Nothing here needs a GPU; the GPU runs are tools/gpu_gemm.sh's."""
import ast
import datetime
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))
import bench_gemm  # noqa: E402
import gemm_common as C  # noqa: E402
import ncu_gemm  # noqa: E402
import tune_gemm  # noqa: E402


@dataclass(frozen=True)
class Rung:     # the fields of minitorch.native.cuda.gemm.Rung these scripts read
    file: str = "x.cu"
    dtypes: tuple = ("f32",)
    tensor_cores: bool = False
    options: tuple = ()


RUNGS = {"01_naive": Rung(dtypes=("f32", "f64")), "07_autotuned": Rung(options=("-DBM=64",)),
         "10_tf32_mma": Rung(tensor_cores=True), "11_half_mma": Rung(dtypes=("bf16", "f16"))}


def shape_class():
    """gemm.shape_class, lifted out of minitorch/native/cuda/gemm.py (whose imports need CuPy)."""
    path = ROOT / "minitorch" / "native" / "cuda" / "gemm.py"
    tree = ast.parse(path.read_text())
    names = ("SMALL_MAX", "MEDIUM_MAX", "SMALL", "MEDIUM")     # the class thresholds, however spelled

    def assigns_threshold(n):       # `SMALL = ...` or `SMALL, MEDIUM = ...`
        targets = [e for t in n.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
        return any(getattr(t, "id", "") in names for t in targets)
    keep = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name == "shape_class")
            or (isinstance(n, ast.Assign) and assigns_threshold(n))]
    scope = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), scope)
    return scope["shape_class"]


# ---- kinds, cases, tolerances ---------------------------------------------------------------------
def test_kinds_and_cases():
    assert C.kind_of(RUNGS["10_tf32_mma"], "f32") == "tf32"
    assert C.kind_of(RUNGS["01_naive"], "f32") == "fp32" and C.kind_of(RUNGS["01_naive"], "f64") == "fp64"
    cases = C.rung_cases(RUNGS, {"f32", "f64"})        # no half kernels in this build: skipped
    assert cases == [("01_naive", "f32", "fp32"), ("01_naive", "f64", "fp64"), ("07_autotuned", "f32", "fp32"),
                     ("10_tf32_mma", "f32", "tf32")]
    assert [c[0] for c in C.rung_cases(RUNGS, {"f32", "bf16", "f16"}, ["11", "01_naive", "99"])] == \
        ["01_naive", "11_half_mma", "11_half_mma"]


def _bf16(x):
    import ml_dtypes
    return x.astype(ml_dtypes.bfloat16).astype(np.float64)


def _tf32(x):
    x = np.ascontiguousarray(x, np.float32)
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)    # truncation


@pytest.mark.parametrize("k", [1, 33, 1000])
def test_tolerances_pass_honest_rounding_and_catch_a_missing_term(k):
    rng = np.random.default_rng(k)
    a32, b32 = rng.standard_normal((50, k)).astype(np.float32), rng.standard_normal((k, 40)).astype(np.float32)
    a, b = a32.astype(np.float64), b32.astype(np.float64)
    ref, scale = a @ b, np.abs(a) @ np.abs(b)

    def ok(got, kind):
        return (C.elementwise_error(got - ref, scale, kind).max() <= C.elementwise_tol(kind, k)
                and np.linalg.norm(got - ref) / np.linalg.norm(ref) <= C.norm_tol(kind, k))
    sequential = np.zeros((50, 40), np.float32)        # float32 accumulation, one k at a time
    for i in range(k):
        sequential += a32[:, i:i + 1] * b32[i:i + 1, :]
    assert ok(sequential.astype(np.float64), "fp32")
    assert ok(_tf32(a32) @ _tf32(b32), "tf32")
    ab, bb = _bf16(a), _bf16(b)
    ref, scale = ab @ bb, np.abs(ab) @ np.abs(bb)
    assert ok(_bf16(ref), "bf16")
    assert ok(ref.astype(np.float16).astype(np.float64), "f16")
    if k > 1:       # one k-term missing from every element: caught by every kind
        missing = ref - ab[:, -1:] * bb[-1:, :]
        for kind in ("fp32", "tf32", "bf16", "f16"):
            assert not ok(missing, kind), kind


def test_parse_helpers():
    assert C.parse_list("128, 256,") == ["128", "256"] and C.parse_list("1,2", int) == [1, 2]
    assert C.parse_list(None) is None and C.parse_list("") is None
    assert C.parse_shape("64x128x784:nt") == (64, 128, 784, "nt") and C.parse_shape("7x8x9") == (7, 8, 9, "nn")
    for bad in ("64x128", "1x2x3:nx", "axbxc"):
        with pytest.raises(ValueError):
            C.parse_shape(bad)
    assert C.gflops(1000, 1000, 1000, 1.0) == pytest.approx(2000.0) and C.gflops(1, 1, 1, 0) is None
    assert C.geomean([1, 100, None]) == pytest.approx(10.0) and C.geomean([]) is None


def test_markdown_tables():
    rows = [dict(kind="fp32", rung="01_naive", shape="1024", ok=True, gflops=2000.0, torch_gflops=40000.0, pct=5.0),
            dict(kind="fp32", rung="01_naive", shape="8192", ok=None, skipped="naive above 4096"),
            dict(kind="fp32", rung="05_blocktile_2d", shape="1024", ok=False),
            dict(kind="fp32", rung="05_blocktile_2d", shape="8192", ok=True, gflops=30000.0, torch_gflops=50000.0, pct=60.0),
            dict(kind="bf16", rung="11_half_mma", shape="8192", ok=True, gflops=5e5, torch_gflops=7e5, pct=71.4)]
    text = C.markdown_tables(rows, ["1024", "8192", "64x128x784 nt"])
    assert "**fp32**" in text and "**bf16**" in text and "64x128x784" not in text
    lines = text.splitlines()
    assert "| 01_naive | 2000 (5%) | skip |" in lines
    assert "| 05_blocktile_2d | FAIL | 30000 (60%) |" in lines
    assert "| cuBLAS (torch) | 40000 | 50000 |" in lines
    assert "| 11_half_mma | 500000 (71%) |" in lines


def test_merge_tuned_new_wins_old_kept_inputs_untouched():
    old = {"sm_90": {"fp32": {"small": {"rung": "07", "options": [], "gflops": 1.0},
                              "large": {"rung": "08", "options": ["-DBM=128"], "gflops": 9.0}}},
           "sm_80": {"fp32": {"small": {"rung": "05", "options": [], "gflops": 2.0}}}}
    new = {"sm_90": {"fp32": {"large": {"rung": "09", "options": ["-DBK=16"], "gflops": 5.0}},
                     "bf16": {"large": {"rung": "11_half_mma", "options": [], "gflops": 7.0}}}}
    before = json.dumps(old, sort_keys=True)
    got = C.merge_tuned(old, new)
    assert got["sm_90"]["fp32"]["large"]["rung"] == "09"             # measured now: replaces a faster old one
    assert got["sm_90"]["fp32"]["small"]["rung"] == "07" and got["sm_80"] == old["sm_80"]
    assert got["sm_90"]["bf16"]["large"]["gflops"] == 7.0
    assert json.dumps(old, sort_keys=True) == before
    assert C.merge_tuned(None, new) == new


# ---- shape classes ---------------------------------------------------------------------------------
def test_shape_class_thresholds():
    cls = shape_class()
    assert cls(512, 512, 1) == "small" and cls(2 ** 9, 2 ** 9 + 1, 7) == "medium"       # 2**18 is small
    assert cls(2048, 2048, 1) == "medium" and cls(2048, 2049, 1) == "large"             # 2**22 is medium
    assert cls(64, 64, 10 ** 6, batch=64) == "small" and cls(64, 64, 1, batch=65) == "medium"
    assert cls(0, 5, 5) == "small"
    for name, shapes in tune_gemm.CLASS_SHAPES.items():
        assert all(cls(m, n, k, 1) == name for m, n, k, _ in shapes), name


# ---- bench_gemm ------------------------------------------------------------------------------------
def test_bench_arguments():
    a = bench_gemm.parse_args([])
    assert a.sizes == list(bench_gemm.SQUARE) and len(a.shapes) == len(bench_gemm.COURSE)
    assert a.kinds == ["fp32", "tf32", "bf16", "f16"] and a.rungs is None and a.repeats == 20
    q = bench_gemm.parse_args(["--quick", "--rungs", "05,10_tf32_mma", "--shapes", "64x128x784:nt,7x8x9",
                               "--out", "/tmp/x", "--sizes", "256,4096"])
    assert q.sizes == [256, 4096] and q.rungs == ["05", "10_tf32_mma"] and q.repeats == 7
    assert q.shapes == [("64x128x784 nt", 64, 128, 784, "nt"), ("7x8x9 nn", 7, 8, 9, "nn")]
    assert [s[0] for s in bench_gemm.all_shapes(q)] == ["256", "4096", "64x128x784 nt", "7x8x9 nn"]
    assert bench_gemm.parse_args(["--shapes", "none"]).shapes == []
    assert len(bench_gemm.parse_args(["--quick"]).shapes) == len(bench_gemm.QUICK_COURSE)
    with pytest.raises(SystemExit):
        bench_gemm.parse_args(["--kinds", "fp8"])
    for label, m, n, k, lay in bench_gemm.COURSE:      # labels say M x N x K and the layout
        assert label.endswith(f"{m}x{n}x{k} {lay}")


def test_bench_paths_priority_summary():
    js, md = bench_gemm.out_paths("/r", "NVIDIA H100 80GB HBM3", datetime.datetime(2026, 11, 24, 8, 1, 2))
    assert js.name == "bench_gemm-nvidia-h100-80gb-hbm3-20261124-080102.json" and md.suffix == ".md"
    labels = ["128", "1024", "4096", "8192", "mlp fwd 64x128x784 nt"]
    assert sorted(labels, key=lambda s: bench_gemm.priority(s, labels)) == ["4096", "1024", "8192", "128",
                                                                            "mlp fwd 64x128x784 nt"]
    rows = [dict(kind="fp32", rung="a", shape="4096", pct=50.0, gflops=1.0),
            dict(kind="fp32", rung="b", shape="4096", pct=90.0, gflops=2.0),
            dict(kind="fp32", rung="b", shape="1024", pct=40.0, gflops=2.0),
            dict(kind="tf32", rung="t", shape="4096", pct=None)]
    s = bench_gemm.summarize(rows, [1024, 4096])
    assert s["fp32"]["best_at_4096"]["rung"] == "b" and "tf32" not in s
    assert s["fp32"]["geomean_pct_square"]["b"] == pytest.approx(60.0)


# ---- tune_gemm -------------------------------------------------------------------------------------
def test_tune_candidates_and_best():
    def configs(name):
        if name != "07_autotuned":
            raise KeyError(name)
        return [("-DBM=128",), ("-DBM=64",), ("-DBM=32",)]
    got = tune_gemm.candidates(RUNGS, {"f32", "f64", "bf16", "f16"}, configs, "fp32", seed=1)
    assert got[:2] == [("01_naive", (), False), ("07_autotuned", ("-DBM=64",), False)]
    assert sorted(got[2:]) == [("07_autotuned", ("-DBM=128",), True), ("07_autotuned", ("-DBM=32",), True)]
    assert tune_gemm.candidates(RUNGS, {"f32"}, None, "tf32") == [("10_tf32_mma", (), False)]
    assert tune_gemm.candidates(RUNGS, {"f32"}, configs, "bf16") == []
    scores = [dict(kind="fp32", rung="07", options=("-DBM=64",), ok=True, classes={"small": 10.0, "large": None}),
              dict(kind="fp32", rung="08", options=(), ok=True, classes={"small": 5.0, "large": 50.0}),
              dict(kind="fp32", rung="09", options=(), ok=False, classes={"small": 99.0}),
              dict(kind="bf16", rung="11", options=(), ok=True, classes={"medium": 7.0})]
    best = tune_gemm.best_entries(scores)
    assert best == {"fp32": {"small": {"rung": "07", "options": ["-DBM=64"], "gflops": 10.0},
                             "large": {"rung": "08", "options": [], "gflops": 50.0}},
                    "bf16": {"medium": {"rung": "11", "options": [], "gflops": 7.0}}}


def test_tune_write_table_merges(tmp_path):
    path = tmp_path / "tuned.json"
    tune_gemm.write_table(path, "sm_80", {"fp32": {"small": {"rung": "05", "options": [], "gflops": 1.0}}})
    merged = tune_gemm.write_table(path, "sm_90", {"fp32": {"large": {"rung": "08", "options": [], "gflops": 2.0}}})
    assert json.loads(path.read_text()) == merged and set(merged) == {"sm_80", "sm_90"}
    args = tune_gemm.parse_args(["--budget-s", "30", "--kinds", "fp32,bf16"])
    assert args.budget_s == 30 and args.kinds == ["fp32", "bf16"]
    with pytest.raises(SystemExit):
        tune_gemm.parse_args(["--kinds", "fp64"])


# ---- ncu_gemm --------------------------------------------------------------------------------------
def test_ncu_csv_and_summary():
    text = ('==PROF== noise\n"ID","Kernel Name","gpu__time_duration.sum","sm__warps_active.avg.pct_of_peak_sustained_active",'
            '"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",'
            '"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",'
            '"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"\n'
            '"","","usecond","%","","ratio","ratio"\n'
            '"0","gemm_nn_f32","1,234.5","61.2","4096","3.5","0.7"\n')
    rows = ncu_gemm.parse_raw_csv(text)
    assert len(rows) == 1 and rows[0]["gpu__time_duration.sum"] == 1234.5
    s = ncu_gemm.summary(rows[0])
    assert s["duration_us"] == 1.2345 and s["achieved_occupancy_pct"] == 61.2 and s["bank_conflicts_ld"] == 4096
    assert list(s["top_stalls_per_issue"]) == ["long_scoreboard", "barrier"] and s["kernel"] == "gemm_nn_f32"
    assert ncu_gemm.parse_raw_csv("") == []
    rungs = {"01_naive": Rung(), "05_blocktile_2d": Rung(), "08_warptile": Rung(), "10_tf32_mma": Rung(tensor_cores=True)}
    assert ncu_gemm.default_rungs(rungs, {}, "sm_90") == ["05_blocktile_2d", "08_warptile"]
    table = {"sm_90": {"fp32": {"large": {"rung": "05_blocktile_2d"}}}}
    assert ncu_gemm.default_rungs(rungs, table, "sm_90") == ["05_blocktile_2d"]
    assert ncu_gemm.default_rungs({"01_naive": Rung()}, {}, "sm_90") == ["01_naive"]


def test_bench_load_tuned(tmp_path):
    path = tmp_path / "tuned.json"
    assert bench_gemm.load_tuned(path, "sm_90") == {}
    path.write_text(json.dumps({"sm_90": {"bf16": {"large": {"rung": "11_half_mma", "options": [], "gflops": 1.0}}}}))
    assert bench_gemm.load_tuned(path, "sm_90")["bf16"]["large"]["rung"] == "11_half_mma"
    assert bench_gemm.load_tuned(path, "sm_80") == {}


def test_gpu_script_is_valid_bash():
    import shutil
    import subprocess
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    run = subprocess.run([bash, "-n", str(ROOT / "tools" / "gpu_gemm.sh")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_lean_tuning_space():
    """Rung 09's LEAN configurations (gemm.py, read without CuPy): 128 registers a thread for two
    256-thread or four 128-thread blocks (or one block of 128 accumulators a thread), chunks of
    half a tile, every one listed before the rest by the tuner's prior; invalid LEAN settings are
    refused with the rule named."""
    import gemm_spills
    G = gemm_spills.load_gemm()
    lean = [c for c in G.tuning_configs("09_pipelined") if "-DLEAN=1" in c]
    assert len(lean) == 18
    for options in lean:
        c = G.config_of("09_pipelined", options)
        spec = G.rung_with("09_pipelined", options)
        threads, (bm, bn) = spec.block[0], spec.tile
        assert c["ELEM_COPY"] == 0 and c["KUNROLL"] == c["BK"] // 2
        assert threads * c["MIN_BLOCKS"] == 512 or (c["MIN_BLOCKS"] == 1 and bm * bn // threads == 128)
    with pytest.raises(ValueError, match="KUNROLL even"):
        G.rung_with("09_pipelined", {"LEAN": 1, "KUNROLL": 3})
    with pytest.raises(ValueError, match="LEAN 0 or 1"):
        G.rung_with("09_pipelined", {"LEAN": 2})
    assert G.rung_with("09_pipelined", {}).options[-1] == "-DLEAN=0"     # the default
    tuned = [("09_pipelined", tuple(c), True) for c in G.tuning_configs("09_pipelined")]
    order = tune_gemm._by_prior(tuned)
    assert {o for _, o, _ in order[:len(lean)]} == set(lean)


def test_write_record_names_the_file_by_benchmark_and_gpu(tmp_path):
    record = {"env": {"gpu_name": "NVIDIA H100 80GB HBM3"}, "results": [1, 2]}
    path = C.write_record(record, tmp_path / "new", "bench_x")
    assert path == tmp_path / "new" / "bench_x-nvidia-h100-80gb-hbm3.json"
    assert json.loads(path.read_text()) == record
