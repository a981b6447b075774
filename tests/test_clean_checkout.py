"""A learner's run never changes the checkout (issue 17).

Runs phases 01 and 03 the way a learner does in JupyterLab: a fresh ``python3`` Jupyter kernel
(nbclient, as JupyterLab's kernel manager starts it), cwd = the phase folder, default parameters,
no ``MINITORCH_QUICK``; then ``minitorch-course all --quick`` as documented. After each,
``git status --porcelain`` must be what it was before (empty in CI's fresh checkout): every write
goes to the git-ignored ``out/``.

Marked ``clean_checkout``. Measured on a 2-core CPU shared with other jobs: 01 18 s, 03 77 s,
``all --quick`` 136-194 s, about 5 minutes in all. CI runs it; ``-m "not clean_checkout"`` leaves it
out of a local run.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.clean_checkout


def git_status():
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def learner_env(monkeypatch):
    """The environment of a learner's JupyterLab: none of CI's or the runner's switches."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("MINITORCH_QUICK", "MINITORCH_RESULTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    before = git_status()
    yield
    assert git_status() == before, "a run wrote into the checkout:\n" + git_status()


@pytest.mark.parametrize("notebook", ["01_matrix/01_matrix.ipynb", "03_backward/03_backward.ipynb"])
def test_notebook_run_like_jupyterlab_leaves_checkout_clean(notebook, learner_env):
    path = ROOT / "phases" / notebook
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    stderr = [o.text for c in nb.cells for o in c.get("outputs", [])
              if o.output_type == "stream" and o.name == "stderr" and "minitorch" in o.text.lower()]
    assert not stderr, stderr                                   # no warning of ours
    text = "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
    assert "| --- |" not in text and "|---|" not in text       # tables render, never printed as Markdown


def test_course_all_quick_leaves_checkout_clean(learner_env):
    done = subprocess.run([sys.executable, "-m", "minitorch.utils.course", "all", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
