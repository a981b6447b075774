"""minitorch.utils.notebook's display helpers: tables, sources, bars, the CPU-only message (issue 17)."""
import json
import re

import pytest

from minitorch.utils import notebook
from minitorch.utils.race import RaceResult


def result(phase, device="cpu", ratio=2.0, gpu=None):
    times = {s: {"median_ms": m, "q1_ms": m, "q3_ms": m, "min_ms": m, "max_ms": m, "all_ms": [m]}
             for s, m in (("ours", 2.0 * ratio), ("theirs", 2.0))}
    return RaceResult(phase=phase, workload="w", device=device, sizes={"n": 1}, warmup=0, repeats=1,
                      times=times, ratio=ratio, env={"gpu_name": gpu}, tf32={"torch.backends.cuda.matmul.allow_tf32": False})


def test_show_races_keeps_reference_and_your_run_apart(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("")
    ref = tmp_path / "benchmarks" / "results"
    ref.mkdir(parents=True)
    gpu = result("01_x", "cuda:0", 1.52, "NVIDIA H100 80GB HBM3")
    gpu.to_json(ref / gpu.filename)
    monkeypatch.chdir(tmp_path)
    notebook.show_races("01_x", result("01_x", ratio=2.34), None)
    out = capsys.readouterr().out
    reference, mine = out.split("**Your run on this machine**")
    assert "1.52x slower" in reference and "2.34x slower" not in reference
    assert "2.34x slower" in mine and "1.52x slower" not in mine
    assert not (tmp_path / "out").exists()              # showing writes nothing


def test_show_source_numbers_lines_and_renders_html(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text("// phase: 01\n// a kernel\ntemplate <typename T>\n__device__ void f(T* x) {\n    x[0] = 1;\n}\n// after\n")
    src = notebook.show_source(cu, r"^template", r"^}")
    assert src.first_line == 3 and str(src).splitlines()[1].startswith("3  template")
    assert str(src).splitlines()[-1].startswith("6  }")
    html = src._repr_html_()
    pytest.importorskip("pygments")
    assert "<span" in html and "style=" in html         # inline styles: survive a reopened notebook
    assert src._repr_markdown_().count("```") == 2
    with pytest.raises(ValueError, match="no line of k.cu matches"):
        notebook.show_source(cu, r"^nothing here")


def test_progress_is_a_text_bar_on_stdout(capsys):
    for _ in notebook.progress(range(3), desc="epochs", dynamic_ncols=True):
        pass
    out = capsys.readouterr()
    assert "epochs: 100%" in out.out and "3/3" in out.out and out.err == ""


def test_cpu_message_names_the_missing_gpu_before_cupy(monkeypatch):
    monkeypatch.setattr(notebook.minitorch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(notebook.shutil, "which", lambda name: None)
    monkeypatch.setattr(notebook.os.path, "exists", lambda path: False)
    reason = notebook.gpu_missing_reason()
    assert "no NVIDIA GPU" in reason and "install CuPy" not in reason
    monkeypatch.setattr(notebook.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    assert notebook.gpu_missing_reason() == notebook.minitorch.cuda._probe()[1]
