"""The course runner on two tiny notebooks: one races and saves, one fails in its 3rd cell."""
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")     # the dev extra; absent where only the runtime is installed

from minitorch.utils import course
from minitorch.utils.course import Failure, main, parse_param, select

ROOT = Path(__file__).resolve().parents[1]

RACE_CELLS = [
    'DEVICE = "cuda"\nQUICK = False\nN = 3',
    "import numpy as np, torch\nfrom minitorch.utils.race import race",
    'a = np.ones(N); t = torch.ones(N)\n'
    'result = race(ours=lambda: a + a, theirs=lambda: t + t, phase="01", workload="tiny-add", '
    'device=DEVICE, warmup=0, repeats=2, sizes={"n": N})',
]
FAIL_CELLS = ["x = 1", "y = x + 1", 'raise ValueError("boom in the third cell")', "print('never runs')"]


def notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.cells[0].metadata["tags"] = ["parameters"]
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)


@pytest.fixture
def phases(tmp_path, monkeypatch):
    notebook(tmp_path / "phases" / "01_alpha" / "alpha.ipynb", RACE_CELLS)
    notebook(tmp_path / "phases" / "02_beta" / "beta.ipynb", FAIL_CELLS)
    (tmp_path / "phases" / "03_empty").mkdir()            # no notebook: not a phase yet
    # the kernels run in the phase folders, which hold no minitorch snapshot here
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv("MINITORCH_RESULTS_DIR", raising=False)
    monkeypatch.delenv("MINITORCH_QUICK", raising=False)
    return tmp_path / "phases"


def test_runs_phases_summarizes_races_and_reports_failure(phases, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["all", "--phases-dir", str(phases), "--output", str(out), "--device", "cpu", "--quick",
                 "--param", "N=7", "--kernel", "python3"])
    err = capsys.readouterr().err
    assert code == 1
    assert "phase 02_beta FAILED" in err and "cell index 2 " in err and "boom in the third cell" in err
    assert "ValueError" in err

    executed = nbformat.read(out / "01_alpha" / "alpha.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    assert 'DEVICE = "cpu"' in injected[0].source and "QUICK = True" in injected[0].source
    assert "N = 7" in injected[0].source
    assert (out / "02_beta" / "beta.ipynb").is_file()      # failed notebooks are kept, with the error

    assert (out / "results" / "01__tiny-add__cpu.json").is_file()
    summary = (out / "summary.md").read_text()
    assert "tiny-add" in summary and "n=7" in summary and "FAILED" in summary
    assert (out / "races.png").stat().st_size > 0
    assert "MINITORCH_RESULTS_DIR" not in os.environ        # the caller's environment is restored


def test_list_and_selectors(phases, capsys):
    assert main(["--list", "--phases-dir", str(phases)]) == 0
    listed = capsys.readouterr().out
    assert "01_alpha: alpha.ipynb" in listed and "03_empty" not in listed
    found = course.find_phases(phases)
    names = lambda sel: [p.name for p in select(found, sel)]
    assert names(["all"]) == ["01_alpha", "02_beta"]
    assert names(["2", "01"]) == names(["alpha", "02_beta"]) == ["01_alpha", "02_beta"]
    with pytest.raises(ValueError, match="no phase matches '7'"):
        select(found, ["7"])
    assert main(["07", "--phases-dir", str(phases)]) == 2


def test_fail_fast_stops_at_first_failure(phases, tmp_path, monkeypatch):
    ran = []

    def fake_run(nb, *args):
        ran.append(nb.parent.name)
        return Failure(nb.parent.name, nb, 0, "x = 1", "RuntimeError: nope")

    monkeypatch.setattr(course, "run_notebook", fake_run)
    assert main(["all", "--fail-fast", "--phases-dir", str(phases), "--output", str(tmp_path / "o")]) == 1
    assert ran == ["01_alpha"]


def test_parse_param():
    assert parse_param("N=4096") == ("N", 4096)
    assert parse_param("LR=1e-3") == ("LR", 1e-3)
    assert parse_param("SHAPE=(2, 3)") == ("SHAPE", (2, 3))
    assert parse_param("DEVICE=cuda") == ("DEVICE", "cuda")
    with pytest.raises(Exception, match="NAME=VALUE"):
        parse_param("nothing")
