"""Exercises and their grading, for every phase: the reference passes every grading test, a fresh
workspace fails each exercise's tests, and filling in exercise k alone (with the exercises its
tests name in ``needs``) makes exactly those pass. Also the stubs, the notebook's checkpoints,
``minitorch-course start/check`` and the nvcc compile of a workspace's kernels."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minitorch.utils import exercises as ex
from minitorch.utils.course import main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import sync_phases  # noqa: E402

FOLDERS = sync_phases.phase_folders()
TESTS = ROOT / "tests" / "exercises"


def grading(phase):
    return TESTS / f"test_phase_{phase:02d}.py"


@pytest.mark.parametrize("phase", sorted(FOLDERS), ids=[f.name for f in FOLDERS.values()])
def test_each_phase_has_4_to_10_exercises_and_grading_tests(phase):
    found = ex.exercises_in(FOLDERS[phase], phase)
    assert 4 <= len(found) <= 10, f"phase {phase:02d} has {len(found)} exercises: {list(found)}"
    assert grading(phase).is_file(), f"no grading tests at {grading(phase)}"


@pytest.mark.parametrize("phase", sorted(FOLDERS), ids=[f.name for f in FOLDERS.values()])
def test_reference_passes_fresh_fails_and_each_exercise_alone_passes_alone(phase, tmp_path):
    reference = ex.grade(grading(phase), FOLDERS[phase])
    graded = [r for r in reference if r.status != "skipped"]
    assert graded, f"phase {phase:02d}: nothing graded on this machine"
    assert all(r.status == "passed" for r in graded), ex.report(reference)[0]

    fresh_dir = tmp_path / "fresh"
    ex.make_workspace(FOLDERS[phase], fresh_dir)
    fresh = ex.grade(grading(phase), fresh_dir)
    passing = [r.id for r in fresh if r.status == "passed"]
    assert not passing, f"exercises graded as done in a fresh workspace: {passing}\n" + ex.report(fresh)[0]

    for r in graded:
        filled = {r.id, *r.needs}
        work = tmp_path / f"only_{r.id}"
        ex.make_workspace(FOLDERS[phase], work, solved=filled)
        got = {x.id for x in ex.grade(grading(phase), work) if x.status == "passed"}
        runnable = {x.id for x in graded}
        assert got == filled & runnable, \
            f"with {sorted(filled)} filled in, the passing exercises are {sorted(got)}"
        shutil.rmtree(work)


PY_SOURCE = '''# phase: 03
class Op:
    @staticmethod
    def backward(ctx, grad):
        """The gradient."""
        a, = ctx.saved_tensors
        # >>> exercise 03.9: Op backward
        # hint: multiply
        out = grad * a
        return out
        # <<< exercise
'''
CU_SOURCE = '''// phase: 03
template <typename T>
__device__ void twice(const T* a, T* out, long long n) {
    // >>> exercise 03.9: twice
    // hint: one thread per element
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * a[i];
    // <<< exercise
}
'''


def test_stubs_keep_signature_docstring_and_hints():
    lines = PY_SOURCE.splitlines()
    (e,) = ex.find_exercises("minitorch/ops/op.py", lines)
    assert (e.id, e.title, e.function, e.hints) == ("03.9", "Op backward", "Op.backward", ["multiply"])
    out = ex.rewrite(lines, [e], lambda _: True, lambda x: ex.stub(x, "3b - Backward"))
    text = "\n".join(out)
    assert '"""The gradient."""' in text and "a, = ctx.saved_tensors" in text and "# hint: multiply" in text
    assert "grad * a" not in text
    assert ('raise NotImplementedError("exercise 03.9 (minitorch/ops/op.py, Op.backward): Op backward \u2014 '
            'see the notebook, section 3b - Backward")') in text
    assert ex.is_stub(ex.find_exercises("x.py", out)[0], out)
    assert not ex.is_stub(e, lines)
    cu = CU_SOURCE.splitlines()
    (c,) = ex.find_exercises("minitorch/cuda/twice.cu", cu)
    assert c.function == "twice"
    stubbed = ex.rewrite(cu, [c], lambda _: True, lambda x: ex.stub(x))
    assert any("// TODO(exercise 03.9): twice" in line for line in stubbed)
    assert not any("out[i]" in line for line in stubbed)


@pytest.mark.parametrize("text,problem", [
    ("# phase: 01\n# >>> exercise 01.1: a\nx = 1\n", "never closed"),
    ("# phase: 01\n# >>> exercise 01.1: a\n# >>> exercise 01.2: b\n", "inside exercise 01.1"),
    ("# phase: 01\n# <<< exercise\n", "closes no open"),
    ("# phase: 01\n# >>> exercise 1: a\nx = 1\n# <<< exercise\n", "malformed"),
    ("# phase: 01\n# >>> exercise 01.1: a\n# hint: b\n# <<< exercise\n", "empty body"),
    ("# phase: 01\n# >>> exercise 02.1: a\nx = 1\n# <<< exercise\n", "sits in code of phase 01"),
    ("# phase: 01\n# >>> phase 02\n# >>> exercise 01.1: a\nx = 1\n# <<< exercise\n# <<< phase 02\n", "sits in code of phase 02"),
    ("# phase: 01\n# >>> exercise 01.1: a\n# >>> phase 02\nx = 1\n# <<< phase 02\n# <<< exercise\n", "crosses a phase fence"),
])
def test_sync_phases_rejects_bad_exercise_fences(tmp_path, monkeypatch, text, problem):
    monkeypatch.setattr(sync_phases, "ROOT", tmp_path)
    src = tmp_path / "x.py"
    src.write_text(text)
    with pytest.raises(sync_phases.PhaseError, match=problem):
        sync_phases.check_exercises(src, text)


def test_checkpoint_stops_in_a_workspace_and_passes_in_the_phase_folder(tmp_path, capsys):
    folder = FOLDERS[3]
    with ex.imported_from(folder):
        from minitorch.utils.exercises import checkpoint
        checkpoint("03.1", "03.4")
    assert "exercise 03.4 (minitorch/autograd/engine.py, _topological_order)" in capsys.readouterr().out
    ex.make_workspace(folder, tmp_path / "w", solved={"03.1"})
    with ex.imported_from(tmp_path / "w"):
        from minitorch.utils.exercises import ExerciseNotDone, checkpoint
        checkpoint("03.1")
        with pytest.raises(ExerciseNotDone, match=r"Exercise 03.4 is not done yet: the topological sort\.\n"
                                                  r"Write it in minitorch/autograd/engine.py \(function _topological_order\)"):
            checkpoint("03.4")


def test_every_exercise_has_a_checkpoint_in_its_notebook():
    for phase, folder in FOLDERS.items():
        marked = {}
        for nb in folder.glob("*.ipynb"):
            marked.update(ex.sections(nb))
        missing = sorted(set(ex.exercises_in(folder, phase)) - set(marked))
        assert not missing, f"{folder.name}: no checkpoint(...) cell for {missing}"
        assert all(marked.values()), f"{folder.name}: a checkpoint before any section heading: {marked}"


def test_start_and_check_commands(tmp_path, capsys):
    work = tmp_path / "work"
    assert main(["start", "01", "--dir", str(work)]) == 0
    out = capsys.readouterr().out
    assert "01.1" in out and "minitorch-course check 01" in out
    ws = work / "01_matrix"
    assert (ws / "01_matrix.ipynb").is_file() and (ws / "minitorch" / "cuda" / "fill.cu").is_file()
    assert not (ws / "kernels").exists()                          # each kernel once: the one that runs
    assert "TODO(exercise 01.3)" in (ws / "minitorch" / "cuda" / "fill.cu").read_text()
    assert main(["start", "01", "--dir", str(work)]) == 1         # never overwrites a learner's work
    assert "already exists" in capsys.readouterr().err
    done = subprocess.run([sys.executable, "-m", "minitorch.utils.course", "check", "01", "--dir", str(work)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"01\.1\s+row-major strides\s+failed\s+test_contiguous_strides_are_numpys: not done yet",
                     done.stdout), done.stdout
    assert "score: 0/" in done.stdout
    ex.make_workspace(FOLDERS[1], ws, solved=set(ex.exercises_in(FOLDERS[1])), overwrite=True)
    done = subprocess.run([sys.executable, "-m", "minitorch.utils.course", "check", "01", "--dir", str(work)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "(100%)" in done.stdout, done.stdout + done.stderr


NVCC = shutil.which("nvcc")


def _stubbed_kernels(workspace):
    """The .cu files of a workspace holding a stub, or using a function stubbed in a header
    (compiling every kernel of every phase twice would take minutes)."""
    cuda = workspace / "minitorch" / "cuda"
    found = [e for e in ex.exercises_in(workspace).values() if not e.file.endswith(".py")]
    files = {workspace / e.file for e in found if e.file.endswith(".cu")}
    in_headers = [e.function for e in found if e.file.endswith(".cuh")]
    return sorted(files | {p for p in cuda.glob("*.cu") if any(re.search(rf"\b{f}\b", p.read_text()) for f in in_headers)})


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("phase", sorted(FOLDERS), ids=[f.name for f in FOLDERS.values()])
def test_workspace_kernels_compile(phase, tmp_path):
    from concurrent.futures import ThreadPoolExecutor
    ex.make_workspace(FOLDERS[phase], tmp_path / "w")
    files = _stubbed_kernels(tmp_path / "w")
    assert files, f"phase {phase:02d}: no kernel is stubbed in a fresh workspace"

    def compile_one(job):
        path, arch = job
        # -Xptxas -O0: this checks that stubs compile; the optimizing build of every kernel is
        # test_nvcc.py's (and takes minutes for softmax.cu and reduce.cu)
        run = subprocess.run([NVCC, f"-arch={arch}", "-std=c++17", "-cubin", "-Xptxas", "-O0", "-o", str(tmp_path / f"{path.stem}_{arch}.cubin"),
                              "-I", str(path.parent), str(path)], capture_output=True, text=True)
        return path.name, arch, run.returncode, run.stderr

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(compile_one, [(p, a) for p in files for a in ("sm_80", "sm_90")]))
    failed = [f"{name} ({arch}):\n{err}" for name, arch, rc, err in results if rc]
    assert not failed, "kernels that do not compile in a fresh workspace:\n" + "\n".join(failed)
