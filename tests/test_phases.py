"""Generated phase snapshots: fresh, importable on their own, and built by the fence rules."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import sync_phases  # noqa: E402

FOLDERS = sync_phases.phase_folders()


def test_snapshots_are_fresh():
    assert sync_phases.main(["--check"]) == 0, "run: python tools/sync_phases.py"


@pytest.mark.parametrize("phase", sorted(FOLDERS), ids=[f.name for f in FOLDERS.values()])
def test_snapshot_imports_on_its_own(phase):
    folder = FOLDERS[phase]
    code = ("import minitorch, pathlib, sys; "
            "assert pathlib.Path(minitorch.__file__).parent == pathlib.Path.cwd() / 'minitorch', minitorch.__file__; "
            "t = minitorch.ones(2, 3); print(t.shape)")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_fences_keep_earlier_phases_and_drop_later_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(sync_phases, "ROOT", tmp_path)
    src = tmp_path / "minitorch" / "x.py"
    src.parent.mkdir()
    src.write_text("# phase: 02\na = 1\n# >>> phase 03\nb = 2\n# <<< phase 03\n# >>> phase 02\nc = 3\n# <<< phase 02\n")
    text = src.read_text()
    assert sync_phases.snapshot_text(src, text, 1) is None
    assert sync_phases.snapshot_text(src, text, 2).splitlines()[1:] == ["# phase: 02", "a = 1", "c = 3"]
    assert sync_phases.snapshot_text(src, text, 3).splitlines()[1:] == ["# phase: 02", "a = 1", "b = 2", "c = 3"]
    assert "GENERATED from minitorch/x.py" in sync_phases.snapshot_text(src, text, 3).splitlines()[0]


@pytest.mark.parametrize("text,problem", [
    ("a = 1\n", "no '# phase: NN'"),
    ("# phase: 01\n# >>> phase 02\n", "never closed"),
    ("# phase: 01\n# >>> phase 02\n# >>> phase 03\n", "opened inside"),
    ("# phase: 01\n# <<< phase 02\n", "closes no open fence"),
])
def test_malformed_sources_are_reported_with_file_and_line(tmp_path, monkeypatch, text, problem):
    monkeypatch.setattr(sync_phases, "ROOT", tmp_path)
    src = tmp_path / "bad.py"
    src.write_text(text)
    with pytest.raises(sync_phases.PhaseError, match=problem):
        sync_phases.snapshot_text(src, text, 5)
