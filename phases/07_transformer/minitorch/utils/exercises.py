# GENERATED from minitorch/utils/exercises.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Exercises: the learner's part of the course, marked in the one source, stubbed in a workspace.

In ``minitorch/`` an exercise is a fenced block whose body is the reference solution: a line
``# >>> exercise 03.2: Linear backward``, optional ``# hint: ...`` lines, the body, and a line
``# <<< exercise`` (``//`` in ``.cu``/``.cuh`` files), each marker alone on its line. A fence sits
inside code of the phase its id names (a file of that phase, or a ``# >>> phase NN`` fence), inside
a function body, and holds the rest of that body or a part that nothing after it needs.

    make_workspace(phase_folder, dest)      # a learner's copy: phase NN's bodies become stubs
    grade(tests_file, workspace)            # run the grading tests: one Result per exercise
    checkpoint("03.2")                      # a notebook cell: stop here while 03.2 is a stub

This module imports nothing from minitorch at import time: ``tools/sync_phases.py`` loads it by
path to check the fences, and ``grade`` imports the workspace's own minitorch.
"""
import dataclasses
import importlib.util
import re
import shutil
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

SUFFIXES = (".py", ".cu", ".cuh")
OPEN = re.compile(r"^(\s*)(#|//) >>> exercise (\d\d)\.(\d+): (\S.*?)\s*$")
CLOSE = re.compile(r"^\s*(#|//) <<< exercise\s*$")
HINT = re.compile(r"^\s*(#|//) hint:(.*)$")
_PY_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_PY_CLASS = re.compile(r"^(\s*)class\s+(\w+)")
_C_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


class ExerciseError(ValueError):
    """A fence breaks the rules above; the message names file and line."""


class ExerciseNotDone(Exception):
    """Raised by :func:`checkpoint` while an exercise is still a stub. In Jupyter it prints its
    message alone, without a traceback (IPython calls ``_render_traceback_``)."""

    def _render_traceback_(self):
        return [f"\033[1;31m{line}\033[0m" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


@dataclasses.dataclass
class Exercise:
    """One fenced exercise. Lines are 0-based indexes into the file: ``open`` and ``close`` are the
    fence markers, ``body`` the first line after the hints (``body == close`` when empty)."""
    id: str
    title: str
    file: str           # path relative to the folder holding minitorch/, e.g. minitorch/nn/linear.py
    function: str
    open: int
    body: int
    close: int
    indent: str
    hints: list

    @property
    def phase(self):
        return int(self.id[:2])

    def where(self):
        return f"{self.file}, {self.function}"


def _function_name(lines, i, cuda):
    """The function the line ``i`` sits in: ``Class.method`` / ``function`` in Python, the
    nearest signature above in CUDA (a line at column 0 naming a function)."""
    if not cuda:
        # walk up: a line indented less than everything below it (down to the fence) encloses it
        limit, name = len(lines[i]) - len(lines[i].lstrip()), None
        for line in reversed(lines[:i]):
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            if indent >= limit:
                continue
            limit = indent
            m = _PY_DEF.match(line) if name is None else _PY_CLASS.match(line)
            if m and name is None:
                name = m.group(2)
            elif m:
                return f"{m.group(2)}.{name}"
            elif name is not None and _PY_DEF.match(line):
                return name                     # a function inside a function: the inner one
        return name or "?"
    for line in reversed(lines[:i]):
        if line[:1].strip() and not line.startswith(("//", "#", "}", "template", "{")):
            names = [n for n in _C_NAME.findall(line) if not n.startswith("__") and n not in ("if", "for", "while")]
            if names:
                return names[0]
    return "?"


def find_exercises(rel, lines):
    """The exercises of one file (``rel``: its path as learners see it, for messages).

    Raises:
        ExerciseError: a fence opened inside another, never closed, closed without opening, a
            malformed opening (``# >>> exercise`` without ``NN.K: title``) or an empty body.
    """
    cuda = not str(rel).endswith(".py")
    found, current = [], None
    for i, line in enumerate(lines):
        m = OPEN.match(line)
        if m:
            if current is not None:
                raise ExerciseError(f"{rel}:{i + 1}: exercise fence opened inside exercise {current.id}")
            body = i + 1
            hints = []
            while body < len(lines) and HINT.match(lines[body]):
                hints.append(HINT.match(lines[body]).group(2).strip())
                body += 1
            current = Exercise(f"{m.group(3)}.{m.group(4)}", m.group(5), str(rel), _function_name(lines, i, cuda),
                               i, body, None, m.group(1), hints)
            continue
        if re.match(r"^\s*(#|//) >>> exercise", line):
            raise ExerciseError(f"{rel}:{i + 1}: malformed exercise fence: expected '>>> exercise NN.K: title'")
        if CLOSE.match(line):
            if current is None:
                raise ExerciseError(f"{rel}:{i + 1}: '<<< exercise' closes no open exercise fence")
            current.close = i
            if not any(l.strip() for l in lines[current.body:i]):
                raise ExerciseError(f"{rel}:{current.open + 1}: exercise {current.id} has an empty body")
            found.append(current)
            current = None
    if current is not None:
        raise ExerciseError(f"{rel}:{current.open + 1}: exercise {current.id} is never closed")
    return found


def _files(root):
    """(relative path, absolute path) of every source file under ``root/minitorch``."""
    pkg = Path(root) / "minitorch"
    return sorted((p.relative_to(root).as_posix(), p) for p in pkg.rglob("*")
                  if p.suffix in SUFFIXES and "__pycache__" not in p.parts)


def exercises_in(root, phase=None):
    """Every exercise under ``root/minitorch`` (of ``phase`` only, when given), by id.

    Raises:
        ExerciseError: for a malformed fence, or an id used twice.
    """
    out = {}
    for rel, path in _files(root):
        for ex in find_exercises(rel, path.read_text().splitlines()):
            if ex.id in out:
                raise ExerciseError(f"{rel}:{ex.open + 1}: exercise {ex.id} is also in {out[ex.id].file}")
            if phase is None or ex.phase == phase:
                out[ex.id] = ex
    return dict(sorted(out.items(), key=lambda kv: (kv[1].phase, int(kv[0][3:]))))


# ----------------------------------------------------------------------------------------------
# stubs and workspaces

def stub(ex, section=None):
    """The lines that replace ``ex``'s body in a learner's copy."""
    see = f"see the notebook, section {section}" if section else "see the notebook"
    if ex.file.endswith(".py"):
        msg = f"exercise {ex.id} ({ex.file}, {ex.function}): {ex.title} \u2014 {see}"
        quoted = '"' + msg.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return [f"{ex.indent}raise NotImplementedError({quoted})"]
    return [f"{ex.indent}// TODO(exercise {ex.id}): {ex.title} \u2014 write the body of {ex.function} here "
            f"({see}), then delete this line."]


def is_stub(ex, lines):
    """True while the body of ``ex`` (in ``lines``, the file now) still holds the stub."""
    body = "\n".join(lines[ex.body:ex.close])
    return (f"NotImplementedError('exercise {ex.id} " in body or f'NotImplementedError("exercise {ex.id} ' in body
            or f"TODO(exercise {ex.id})" in body)


def sections(notebook):
    """{exercise id: title of the notebook section whose checkpoint cell names it}."""
    import nbformat
    nb = nbformat.read(notebook, as_version=4)
    found, heading = {}, None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    heading = line.lstrip("#").strip()
        elif "checkpoint(" in cell.source:
            for m in re.finditer(r"checkpoint\(([^)]*)\)", cell.source):
                for ex_id in re.findall(r"\d\d\.\d+", m.group(1)):
                    found.setdefault(ex_id, heading)
    return found


def rewrite(lines, exercises, keep_fences, replace):
    """``lines`` with each exercise's body replaced by ``replace(ex)`` (None: the body as it is),
    and its fence lines dropped unless ``keep_fences(ex)``."""
    out, by_open, i = [], {ex.open: ex for ex in exercises}, 0
    while i < len(lines):
        ex = by_open.get(i)
        if ex is None:
            out.append(lines[i])
            i += 1
            continue
        keep = keep_fences(ex)
        if keep:
            out.extend(lines[ex.open:ex.body])
        body = replace(ex)
        out.extend(lines[ex.body:ex.close] if body is None else body)
        if keep:
            out.append(lines[ex.close])
        i = ex.close + 1
    return out


_GENERATED = re.compile(r"^(#|//) GENERATED from ")


def make_workspace(phase_folder, dest, solved=(), overwrite=False):
    """Make a learner's workspace for one phase: its notebook and its snapshot of minitorch, with
    the phase's exercises stubbed (bodies replaced; fences, hints, signatures and docstrings kept)
    and the exercises of earlier phases solved (their fences removed).

    Args:
        phase_folder: ``phases/NN_name`` (a notebook and the generated ``minitorch/`` snapshot).
        dest: the workspace folder to create.
        solved: exercise ids of this phase to keep as their reference (CI fills them in one by one).
        overwrite: replace an existing ``dest``; otherwise it is an error (a learner's work is there).
    Returns:
        {id: Exercise} of the phase's exercises, as they stand in the workspace.
    Raises:
        FileExistsError: ``dest`` exists and ``overwrite`` is False.
    """
    phase_folder, dest = Path(phase_folder), Path(dest)
    phase = int(phase_folder.name[:2])
    if dest.exists():
        if not overwrite:
            raise FileExistsError(f"{dest} already exists (your work may be there); "
                                  f"pick another --dir, or pass --force to start it again")
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    titles = {}
    for nb in sorted(phase_folder.glob("*.ipynb")):
        _copy_notebook(nb, dest / nb.name)
        titles.update(sections(nb))
    shutil.copytree(phase_folder / "minitorch", dest / "minitorch",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    solved = set(solved)
    for rel, path in _files(dest):
        lines = path.read_text().splitlines()
        if lines and _GENERATED.match(lines[0]):
            # the snapshot's "GENERATED ... not this file" line is false here: this copy is the learner's
            comment = "//" if lines[0].startswith("//") else "#"
            lines[0] = f"{comment} Your workspace's copy of {rel}: edit it; `minitorch-course check` grades it."
            path.write_text("\n".join(lines) + "\n")
        found = find_exercises(rel, lines)
        if not found:
            continue
        mine = lambda ex: ex.phase == phase
        new = rewrite(lines, found, keep_fences=mine,
                      replace=lambda ex: stub(ex, titles.get(ex.id)) if mine(ex) and ex.id not in solved else None)
        path.write_text("\n".join(new) + "\n")
    return exercises_in(dest, phase)


def _copy_notebook(src, dst):
    """The phase notebook without its outputs: the learner's run fills them in."""
    import nbformat
    nb = nbformat.read(src, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, dst)


# ----------------------------------------------------------------------------------------------
# the notebook's checkpoints

def checkpoint(*ids):
    """Stop the notebook here while one of the exercises ``ids`` is still a stub.

    Looks in the minitorch that the notebook imported (the workspace's). In a phase folder, where
    every exercise is solved, it prints one line per exercise. A kernel's stub stops the notebook
    only where a GPU is usable (on the cpu the kernel never runs).

    Raises:
        ExerciseNotDone: naming the exercise, its file and function, and what to do next.
    """
    import minitorch
    root = Path(minitorch.__file__).resolve().parent.parent
    found = exercises_in(root)
    for ex_id in ids:
        ex = found.get(ex_id)
        if ex is None:
            raise KeyError(f"no exercise {ex_id} in {root / 'minitorch'}")
        if not is_stub(ex, (root / ex.file).read_text().splitlines()):
            print(f"exercise {ex.id} ({ex.where()}): {ex.title} - in place")
        elif not ex.file.endswith(".py") and not minitorch.cuda.is_available():
            # a kernel runs only on a GPU: without one the notebook goes on (on the cpu backend)
            print(f"exercise {ex.id} ({ex.where()}): {ex.title} - not written yet; it runs only on "
                  f"a GPU, so this notebook goes on without it")
        else:
            raise ExerciseNotDone(
                f"Exercise {ex.id} is not done yet: {ex.title}.\n"
                f"Write it in {ex.file} (function {ex.function}), between the '>>> exercise {ex.id}' "
                f"and '<<< exercise' lines{', where the hints are' if ex.hints else ''}.\n"
                f"Then re-run this cell, and grade your work with: minitorch-course check {ex.id[:2]}")


# ----------------------------------------------------------------------------------------------
# grading

def exercise(ex_id, cuda=False, needs=()):
    """Decorator tagging a grading test with the exercise it grades.

    Args:
        cuda: the test needs a GPU (skipped without one).
        needs: other exercises of the phase the test cannot avoid calling (the host side of a
            kernel's launch, say); keep it short. A failure then names them, and CI fills them in
            along with ``ex_id`` when it checks that the test passes with that exercise alone.
    Under pytest it also adds the marks ``exercise(ex_id)`` (and ``cuda``)."""
    def tag(fn):
        fn.exercise_id, fn.needs_cuda, fn.needs = ex_id, cuda, tuple(needs)
        if "pytest" in sys.modules:
            import pytest
            fn = pytest.mark.exercise(ex_id)(fn)
            if cuda:
                fn = pytest.mark.cuda(fn)
        return fn
    return tag


@dataclasses.dataclass
class Result:
    id: str
    title: str
    status: str         # "passed", "failed", "skipped" (a cuda exercise without a GPU)
    message: str = ""
    tests: int = 0
    needs: tuple = ()


def _sentence(test, exc):
    """The first failure of a test, in one line."""
    if isinstance(exc, NotImplementedError):
        return f"{test}: not done yet (NotImplementedError)"
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if not text:    # a bare assert: the failing line of the test itself
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name == test]
        text = f"assert failed: {frames[-1].line}" if frames else ""
    text = f"{type(exc).__name__}: {text}" if not isinstance(exc, AssertionError) else text
    return f"{test}: {text}"[:200]


@contextmanager
def imported_from(root):
    """Import ``minitorch`` from ``root`` inside the block; put the previous one back after it."""
    mine = lambda name: name == "minitorch" or name.startswith("minitorch.")
    saved_modules = {k: v for k, v in sys.modules.items() if mine(k)}
    saved_path = list(sys.path)
    for k in saved_modules:
        del sys.modules[k]
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        for k in [k for k in sys.modules if mine(k)]:
            del sys.modules[k]
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path


def grade(tests_file, workspace, phase=None, gpu=None):
    """Run the grading tests of ``tests_file`` against the minitorch in ``workspace``.

    Args:
        tests_file: a module of functions tagged with :func:`exercise`.
        workspace: the folder holding ``minitorch/`` (a workspace, or a phase folder).
        phase: the phase graded (default: from the file name ``test_phase_NN.py``).
        gpu: whether cuda tests run (default: when minitorch finds a usable GPU).
    Returns:
        [Result], one per exercise of the phase in ``workspace``, in order; an exercise with no
        test fails ("no grading test").
    """
    tests_file, workspace = Path(tests_file), Path(workspace)
    phase = int(re.search(r"(\d\d)", tests_file.stem).group(1)) if phase is None else phase
    found = exercises_in(workspace, phase)
    with imported_from(workspace):
        import minitorch
        if gpu is None:
            gpu = minitorch.cuda.is_available()
        spec = importlib.util.spec_from_file_location(f"_grading_{phase:02d}", tests_file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        tests = [f for f in vars(module).values() if callable(f) and hasattr(f, "exercise_id")]
        results = []
        for ex_id, ex in found.items():
            mine = [t for t in tests if t.exercise_id == ex_id]
            runnable = [t for t in mine if gpu or not t.needs_cuda]
            if not mine:
                results.append(Result(ex_id, ex.title, "failed", "no grading test", 0))
                continue
            if not runnable:
                results.append(Result(ex_id, ex.title, "skipped", "needs a CUDA GPU", 0))
                continue
            needs = tuple(sorted({n for t in mine for n in t.needs}))
            failure = None
            for t in runnable:
                try:
                    t()
                except Exception as exc:      # noqa: BLE001 - every failure is a result
                    failure = _sentence(t.__name__, exc)
                    break
            results.append(Result(ex_id, ex.title, "failed" if failure else "passed", failure or "",
                                  len(runnable), needs))
        status = {r.id: r.status for r in results}
        for r in results:
            missing = [n for n in r.needs if status.get(n) != "passed"]
            if r.status == "failed" and missing:
                r.message = f"needs {', '.join(missing)} first; {r.message}"
        unknown = sorted({t.exercise_id for t in tests} - set(found))
        for ex_id in unknown:
            results.append(Result(ex_id, "?", "failed", f"tests for exercise {ex_id}, which {workspace} does not have"))
    return results


def report(results):
    """The results as a table, a score line, and the exit status (0: every graded one passed)."""
    width = max([len(r.title) for r in results] + [8])
    lines = [f"{'exercise':8s}  {'title':{width}s}  result  first failure", "-" * (width + 40)]
    for r in results:
        lines.append(f"{r.id:8s}  {r.title:{width}s}  {r.status:6s}  {r.message}")
    graded = [r for r in results if r.status != "skipped"]
    passed = sum(r.status == "passed" for r in graded)
    score = f"score: {passed}/{len(graded)} exercises passed" + (f" ({100 * passed / len(graded):.0f}%)" if graded else "")
    skipped = len(results) - len(graded)
    if skipped:
        score += f"; {skipped} not graded here (need a CUDA GPU)"
    lines += ["", score]
    return "\n".join(lines), 0 if graded and passed == len(graded) else 1


def main(argv=None):
    """``python -m minitorch.utils.exercises TESTS_FILE`` from a workspace: what ``check`` runs."""
    import argparse
    p = argparse.ArgumentParser(description="Grade the minitorch in the current folder.")
    p.add_argument("tests_file")
    p.add_argument("--workspace", default=".")
    args = p.parse_args(argv)
    text, status = report(grade(args.tests_file, args.workspace))
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
