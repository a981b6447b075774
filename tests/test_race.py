"""The race harness on the CPU: structure, JSON, saving rules, TF32, summaries (timings are not compared)."""
import json
import sys
import time

import numpy as np
import pytest

import minitorch
from minitorch.utils import race as race_mod
from minitorch.utils.race import RaceResult, load_results, markdown_table, plot_results, race

torch = pytest.importorskip("torch")

REQUIRED = {"phase", "workload", "device", "sizes", "warmup", "repeats", "times", "ratio", "bytes", "flops",
            "metrics", "memory", "memory_note", "tf32", "env", "date"}
ENV_REQUIRED = {"gpu_name", "driver_version", "cuda_driver_version", "torch_version", "cupy_version",
                "numpy_version", "python_version", "host"}


@pytest.fixture
def results(tmp_path, monkeypatch):
    """Races save into a fresh folder; quick mode off."""
    monkeypatch.setenv("MINITORCH_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.delenv("MINITORCH_QUICK", raising=False)
    return tmp_path / "results"


def slow():
    time.sleep(0.003)       # at least 3 ms, whatever the machine


def fast():
    return np.zeros(4).sum()


def tiny_race(**kw):
    args = dict(ours=slow, theirs=fast, phase=2, workload="sleep vs sum", device="cpu", warmup=1,
                repeats=3, sizes={"n": 4}, verbose=False)
    return race(**{**args, **kw})


def test_race_structure(results):
    r = tiny_race()
    assert r.phase == "02" and r.device == "cpu" and r.repeats == 3
    for side in ("ours", "theirs"):
        t = r.times[side]
        assert len(t["all_ms"]) == 3
        assert t["median_ms"] > 0
        assert t["min_ms"] <= t["q1_ms"] <= t["median_ms"] <= t["q3_ms"] <= t["max_ms"]
        assert r.memory[side] is None        # not measured on cpu
    assert r.times["ours"]["min_ms"] >= 3     # the sleep really was timed
    assert r.ratio == pytest.approx(r.times["ours"]["median_ms"] / r.times["theirs"]["median_ms"])
    assert r.verdict.endswith("slower") and r.ratio > 1
    assert "minitorch" in r.table() and "x slower" in r.table()
    assert r.tf32["torch.backends.cuda.matmul.allow_tf32"] is False   # recorded; a cpu table does not print it


def test_verdict_wording():
    assert race_mod.verdict(1.5) == "1.50x slower"
    assert race_mod.verdict(0.5) == "2.00x faster"


def test_json_round_trip(results):
    r = tiny_race(bytes=4096, flops=1000)
    path = results / "02__sleep-vs-sum__cpu.json"
    assert path.is_file()
    data = json.loads(path.read_text())
    assert REQUIRED <= set(data) and ENV_REQUIRED <= set(data["env"])
    assert data["env"]["numpy_version"] == np.__version__ and data["env"]["torch_version"] == torch.__version__
    assert data["date"][:4].isdigit() and "T" in data["date"]
    assert RaceResult.from_json(path) == r
    assert RaceResult.from_json(r.to_json()) == r
    assert load_results(results) == [r]


def test_metrics_and_throughput(results):
    r = tiny_race(bytes=8e6, flops=2e6, metrics={"ours": {"accuracy": lambda: np.float32(0.5)},
                                                 "theirs": {"accuracy": 0.75}})
    assert r.metrics["ours"]["accuracy"] == 0.5 and isinstance(r.metrics["ours"]["accuracy"], float)
    for side in ("ours", "theirs"):
        ms = r.times[side]["median_ms"]
        assert r.metrics[side]["GB/s"] == pytest.approx(8e6 / (ms * 1e-3) / 1e9)
        assert r.metrics[side]["GFLOP/s"] == pytest.approx(2e6 / (ms * 1e-3) / 1e9)
    with pytest.raises(ValueError, match="ours"):
        tiny_race(metrics={"mine": {}})


def test_one_repeat_no_warmup(results):
    calls = []
    r = tiny_race(ours=lambda: calls.append(1), warmup=0, repeats=1)
    assert len(calls) == 1 and len(r.times["ours"]["all_ms"]) == 1
    assert r.times["ours"]["q1_ms"] == r.times["ours"]["median_ms"] == r.times["ours"]["q3_ms"]
    with pytest.raises(ValueError, match="repeats"):
        tiny_race(repeats=0)


def test_save_false_writes_nothing(results):
    tiny_race(save=False)
    assert not results.exists() or not any(results.iterdir())


def test_default_save_follows_quick_mode(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "phases" / "01_x").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "phases" / "01_x")      # like a notebook in its phase folder
    monkeypatch.delenv("MINITORCH_RESULTS_DIR", raising=False)
    monkeypatch.setenv("MINITORCH_QUICK", "1")
    tiny_race()
    assert not (tmp_path / "benchmarks").exists() and not (tmp_path / "out").exists()
    monkeypatch.delenv("MINITORCH_QUICK")
    tiny_race()
    # an interactive run saves into the git-ignored out/results, never into the committed results
    assert (tmp_path / "out" / "results" / "02__sleep-vs-sum__cpu.json").is_file()
    assert not (tmp_path / "benchmarks").exists()


def test_cpu_table_has_no_tf32_line_and_markdown_renders(results):
    r = tiny_race()
    assert "TF32" not in r.table() and "TF32" not in r.markdown()
    assert r.markdown().count("\n|") >= 4 and "Your run on this machine" in r.markdown()


def test_tf32_off_after_race(results):
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    r = tiny_race()
    assert torch.backends.cuda.matmul.allow_tf32 is False and torch.backends.cudnn.allow_tf32 is False
    assert r.tf32 == {"torch.backends.cuda.matmul.allow_tf32": False, "torch.backends.cudnn.allow_tf32": False}


def test_markdown_table_and_plots(results):
    tiny_race()
    tiny_race(phase="01", workload="the other one", ours=fast, theirs=slow)
    loaded = load_results()
    assert [r.phase for r in loaded] == ["01", "02"]
    md = markdown_table(loaded)
    assert "sleep vs sum" in md and "the other one" in md and "x faster" in md and "x slower" in md
    assert md.count("\n") == 2 + 2
    assert len(loaded[0].plot().axes) == 1           # no memory on cpu: one panel
    assert len(plot_results(loaded).axes) == 1
    assert load_results(results / "missing") == []


def test_without_torch_says_how_to_install(results, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)        # makes `import torch` fail
    with pytest.raises(ImportError, match="pip install torch"):
        tiny_race()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="checks the error raised without a GPU")
def test_cuda_without_gpu_is_a_clear_error(results):
    with pytest.raises(minitorch.cuda.CudaUnavailableError, match="cuda was asked for"):
        tiny_race(device="cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not (minitorch.cuda.is_available() and torch.cuda.is_available()),
                    reason="needs CuPy, a GPU and a CUDA build of PyTorch")
def test_cuda_race_times_with_events_and_tracks_memory(results):
    n = 1 << 20
    a = minitorch.zeros(n, device="cuda")
    t = torch.zeros(n, device="cuda")
    r = race(ours=lambda: minitorch.ones(n, device="cuda"), theirs=lambda: torch.ones(n, device="cuda"),
             phase="01", workload="ones", device="cuda", repeats=5, bytes=4 * n, verbose=False)
    assert r.device == "cuda:0" and r.env["gpu_name"]
    assert all(r.times[s]["median_ms"] > 0 for s in ("ours", "theirs"))
    assert r.memory["ours"] >= 2 * 4 * n and r.memory["theirs"] >= 2 * 4 * n   # input + output
    assert r.device_slug != "cpu" and len(r.plot().axes) == 2
    del a, t
