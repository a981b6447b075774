"""The CPU parts of the attention evidence: benchmarks/bench_attention.py's and
bench_attention_memory.py's argument parsing, skip rule and run counts, and the phase 07 notebook
cells that show their saved JSON (on made-up results, and on none). The measurements themselves
need a GPU: the lead runs the two scripts on the H100."""
import json
import sys
import types
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_attention as A  # noqa: E402
import bench_attention_memory as M  # noqa: E402

NOTEBOOK = ROOT / "phases" / "07_transformer" / "07_transformer.ipynb"


def test_lengths_default_to_512_through_8192_and_parse():
    assert A.parse_args([]).lengths == [512, 1024, 2048, 4096, 8192]
    assert A.parse_args(["--quick"]).lengths == [512, 2048]
    assert A.parse_args(["--quick", "--lengths", "100", "8192"]).lengths == [100, 8192]
    assert M.parse_args([]).lengths == [512, 1024, 2048, 4096, 8192, 16384]
    for parse in (A.parse_args, M.parse_args):
        assert parse([]).memory_limit == 60.0
        with pytest.raises(SystemExit):
            parse(["--lengths", "0", "512"])


def test_naive_estimate_counts_six_float32_score_buffers_with_backward():
    assert A.naive_bytes(4, 8, 8192, backward=True) == 4 * 8 * 8192 ** 2 * 4 * 6
    assert A.naive_bytes(4, 8, 8192, backward=False) == 4 * 8 * 8192 ** 2 * 4 * 4


def test_only_score_paths_are_skipped_and_only_past_the_limit():
    # the bf16 sweep (B 4, H 8) runs everything up to 8192 under 60 GB (6 x 8.6 GB)...
    for name in ["ours_flash", "ours_decomposition", *A.TORCH_BACKENDS]:
        for L in A.LENGTHS:
            assert A.skip_reason(name, 4, 8, L, True, 60) is None
    # ...and at 16384 (206 GB) the two [L, L] paths only
    assert "skipped" in A.skip_reason("ours_decomposition", 4, 8, 16384, True, 60)
    assert "skipped" in A.skip_reason("torch_math", 4, 8, 16384, False, 60)
    assert A.skip_reason("ours_flash", 4, 8, 16384, True, 60) is None
    assert A.skip_reason("torch_mem_efficient", 4, 8, 16384, True, 1) is None
    assert A.skip_reason("torch_math", 4, 8, 8192, True, 50) is not None     # 51.5 GB > 50


def test_memory_script_runs_the_decomposition_to_16384_under_60_gb_and_skips_above():
    for L in M.LENGTHS:     # B 1, H 8: 51.5 GB at 16384
        assert all(M.skip_reason(name, L, 60) is None for name in M.CASES)
    skipped = {name for name in M.CASES if M.skip_reason(name, 32768, 60)}
    assert skipped == {"ours_decomposition", "torch_math"}
    assert {M.CASES[n][1] for n in ("torch_flash", "ours_flash_bf16")} == {"bfloat16"}   # torch flash: no float32


def test_run_counts_fit_the_budget_with_at_least_three_timed_runs():
    assert A.count_runs(0.05, 4, 20, (100, 200)) == (4, 20)      # fast: the caps
    assert A.count_runs(50, 4, 20, (100, 200)) == (2, 4)         # 100 / 50, 200 / 50
    assert A.count_runs(300, 4, 20, (100, 200)) == (0, 3)        # slow: no more warm-up, 3 timed runs
    assert A.count_runs(0.0, 4, 20, (100, 200)) == (4, 20)       # a 0 ms reading divides nothing by 0


def test_out_of_memory_errors_are_told_apart_from_refusals():
    assert A.is_out_of_memory(MemoryError("Out of memory allocating 8,589,934,592 bytes"))
    assert A.is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 8.00 GiB"))
    assert not A.is_out_of_memory(RuntimeError("No available kernel. Aborting execution."))


def test_time_case_records_skips_without_running():
    made = []
    entry = A.time_case("torch_math", lambda: made.append(1), 16384, True, 5, 20, 60)
    assert "skipped" in entry and not made


# ---------------------------------------------------------------------------------------------
# the notebook's cells on saved results

def sweep(dtype):
    rows = []
    for d in (64, 128):
        for L in (512, 8192):
            row = {"L": L, "d": d, "causal": False, "pass": "fwd"}
            row["ours_flash"] = {"ms": 1.0, "TFLOPs": 100.0}
            row["ours_decomposition"] = {"skipped": "skipped: about 70 GB"} if L == 8192 else {"ms": 2, "TFLOPs": 20.0}
            row["torch_flash"] = {"unsupported": "No available kernel."} if dtype == "float32" else {"ms": 1, "TFLOPs": 200.0}
            row["torch_math"] = {"skipped": "out of memory: CUDA out of memory"}
            rows.append(row)
    return {"dtype": dtype, "date": "2026-11-24T20:00:00", "batch": 4, "heads": 8, "timing": "CUDA events",
            "env": {"gpu_name": "NVIDIA H100 80GB HBM3", "torch_version": "2.11"}, "rows": rows}


def memory_run():
    lengths = [512, 1024, 2048, 4096, 8192, 16384]
    rows = []
    for L in lengths:
        for name, (library, dtype, path) in M.CASES.items():
            row = {"L": L, "case": name, "library": library, "dtype": dtype, "path": path}
            if path in ("decomposition", "math"):
                row.update({"skipped": "out of memory"} if L == 16384 and path == "math" else {"peak_bytes": 40 * L * L})
            else:
                row["peak_bytes"] = 3000 * L
            rows.append(row)
    return {"env": {"gpu_name": "NVIDIA H100 80GB HBM3", "torch_version": "2.11"}, "date": "2026-11-24T20:00:00",
            "batch": 1, "heads": 8, "head_dim": 64, "causal": False, "lengths": lengths, "memory_limit_gb": 60.0,
            "cases": {n: {"library": c[0], "dtype": c[1], "path": c[2]} for n, c in M.CASES.items()}, "rows": rows}


def run_cells(folder, monkeypatch):
    """Run the notebook's cells that read bench_attention*.json, with benchmarks/results = folder."""
    nbformat = pytest.importorskip("nbformat")        # not on the GPU machine
    import numpy as np
    from matplotlib import pyplot as plt

    from minitorch.utils import race
    from minitorch.utils.notebook import md_table, show_markdown
    matplotlib.use("Agg")
    monkeypatch.setattr(race, "reference_dir", lambda: folder)
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    mine = [c for c in cells if "def attention_sweeps" in c or "bench_attention_memory-" in c
            or c.startswith('show_sweeps("bfloat16"')]
    assert len(mine) == 3, "the notebook lost one of the cells showing the attention benchmarks"
    namespace = {"json": json, "np": np, "plt": plt, "md_table": md_table, "show_markdown": show_markdown}
    for source in mine:
        exec(source, namespace)
    plt.close("all")


def test_notebook_cells_say_how_to_make_missing_results(tmp_path, monkeypatch, capsys):
    run_cells(tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "python benchmarks/bench_attention_memory.py" in out
    assert "python benchmarks/bench_attention.py --dtype bfloat16" in out
    assert "python benchmarks/bench_attention.py`" in out


def test_notebook_cells_show_sweeps_and_memory_slopes(tmp_path, monkeypatch, capsys):
    (tmp_path / "bench_attention-gpu.json").write_text(json.dumps(sweep("float32")))
    (tmp_path / "bench_attention-bfloat16-gpu.json").write_text(json.dumps(sweep("bfloat16")))
    (tmp_path / "bench_attention_memory-gpu.json").write_text(json.dumps(memory_run()))
    run_cells(tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "No saved" not in out
    lines = out.splitlines()
    flash = next(line for line in lines if line.startswith("| ours_flash "))
    decomposition = next(line for line in lines if line.startswith("| ours_decomposition "))
    math = next(line for line in lines if line.startswith("| torch_math "))
    assert "| 1 |" in flash and "| 2 |" in decomposition          # the measured slopes
    assert math.rstrip(" |").endswith("skipped")                    # 16384 not run
    bf16 = [line for line in lines if "0.50x" in line]               # ours 100 / torch flash 200
    assert len(bf16) == 4 and all("skipped" in line for line in bf16)
    assert sum("n/a" in line and "1.00x" not in line for line in lines) == 4   # the float32 sweep: torch flash refuses


# ---------------------------------------------------------------------------------------------
# the scripts' main loops, with the GPU work replaced by stand-ins

@pytest.fixture
def no_gpu_work(monkeypatch):
    """Both scripts' mains as on a GPU, but every measurement a stand-in: returns the calls made."""
    import torch
    calls = []
    monkeypatch.setattr(A.minitorch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    for module in (A, M):
        monkeypatch.setattr(module, "environment", lambda device, torch: {"gpu_name": "Fake GPU 80GB"})
    for module in (A, M):
        monkeypatch.setattr(module, "empty_caches", lambda: None)
        monkeypatch.setattr(module, "gc", types.SimpleNamespace(collect=lambda: 0))    # ~0.5 s each here
    monkeypatch.setattr(A, "correctness", lambda d, causal: {"flash": 0.0, "decomposition": 0.0})
    monkeypatch.setattr(A, "time_once", lambda fn: (fn(), 2.0)[1])

    def stand_in(*args):       # ours(flash, L, d, causal, backward) or theirs(backend, L, ...)
        calls.append(args)
        if args[0] == A.TORCH_BACKENDS["torch_flash"] and A.DTYPE == "float32":
            raise RuntimeError("No available kernel. Aborting execution.")
        return lambda: None
    monkeypatch.setattr(A, "ours", stand_in)
    monkeypatch.setattr(A, "theirs", stand_in)

    def peak(*args):           # peak_ours(flash, dtype, L, causal) or peak_torch(path, dtype, L, causal)
        calls.append(args)
        if args[-2] == 1024 and args[0] == "math":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")
        return 1000 * args[-2]
    monkeypatch.setattr(M, "peak_ours", peak)
    monkeypatch.setattr(M, "peak_torch", peak)
    return calls


def test_bench_main_writes_every_case_skipped_or_timed(tmp_path, monkeypatch, no_gpu_work, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_attention.py", "--out", str(tmp_path), "--dtype", "bfloat16",
                                      "--lengths", "512", "4096", "--memory-limit", "10"])
    A.main()
    record = json.loads((tmp_path / "bench_attention-bfloat16-fake-gpu-80gb.json").read_text())
    assert record["lengths"] == [512, 4096] and len(record["rows"]) == 2 * 2 * 2 * 2
    for row in record["rows"]:
        for name in ["ours_flash", *A.TORCH_BACKENDS]:
            if name in A.NAIVE and row["L"] == 4096:   # B 4, H 8: 8.6 GB forward, 12.9 GB with backward
                assert ("skipped" in row[name]) == (row["pass"] == "fwd+bwd"), row
            if "ms" in row[name]:
                assert row[name]["ms"] == 2.0 and row[name]["TFLOPs"] == A.flops(row["L"], row["d"], row["causal"],
                                                                               row["pass"] == "fwd+bwd") / 2.0 / 1e9
    timed_naive = [args for args in no_gpu_work if args[0] is False and args[1] == 4096]
    assert timed_naive and all(args[4] is False for args in timed_naive)   # at 4096: forward only
    assert "wrote" in capsys.readouterr().out


def test_bench_main_records_refusals_as_unsupported(tmp_path, monkeypatch, no_gpu_work):
    monkeypatch.setattr(sys, "argv", ["bench_attention.py", "--out", str(tmp_path), "--lengths", "512"])
    A.main()
    record = json.loads((tmp_path / "bench_attention-fake-gpu-80gb.json").read_text())
    assert all(row["torch_flash"] == {"unsupported": "No available kernel. Aborting execution."} for row in record["rows"])


def test_memory_main_writes_a_point_per_case_and_length(tmp_path, monkeypatch, no_gpu_work, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_attention_memory.py", "--out", str(tmp_path), "--lengths", "512", "1024",
                                      "65536"])
    M.main()
    record = json.loads((tmp_path / "bench_attention_memory-fake-gpu-80gb.json").read_text())
    points = {(r["case"], r["L"]): r for r in record["rows"]}
    assert len(points) == 3 * len(M.CASES)
    assert points["ours_flash", 1024]["peak_bytes"] == 1024 * 1000
    assert points["torch_math", 1024]["skipped"].startswith("out of memory")
    assert "skipped: about" in points["ours_decomposition", 65536]["skipped"]
    assert points["ours_flash", 65536]["peak_bytes"] == 65536 * 1000
    assert "skip" in capsys.readouterr().out
