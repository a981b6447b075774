"""Generate each phase's snapshot of ``minitorch/`` from the one source of truth.

    python tools/sync_phases.py            # write phases/NN_name/minitorch/
    python tools/sync_phases.py --check    # exit 1 if anything generated is stale (CI runs this)

Rules, for every file under ``minitorch/`` (``.py``, ``.cu``, ``.cuh``):

* Within its first five lines it declares the phase it enters: ``# phase: 02`` (``// phase: 02``
  in CUDA files). Snapshot N holds the files of phases <= N.
* Code a later phase adds to an existing file is fenced, each marker on a line of its own::

      # >>> phase 03
      ...lines phase 03 adds...
      # <<< phase 03

  Snapshot N keeps the lines of fences <= N (without the markers) and drops the others.

* Exercises (``# >>> exercise 03.2: title`` ... ``# <<< exercise``, see
  ``minitorch/utils/exercises.py``) are kept as they are in the snapshots; they must sit in code of
  the phase their id names, and ids are unique. ``--check`` reports fences that break these rules.

Data files (``.json``: the tuned tables the dispatchers read) cannot declare a phase in a comment:
:data:`DATA_PHASES` names the phase each one enters, and it is copied unchanged into snapshots of
that phase and later. A ``.json`` under ``minitorch/`` missing from it is an error.

A phase folder exists once its notebook does (``phases/NN_name/*.ipynb``). Each gets ``minitorch/``
(the snapshot); its kernels are the ``.cu`` files there (``minitorch/cuda/``), the ones that run.
"""
import argparse
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "minitorch"
PHASES = ROOT / "phases"
SUFFIXES = (".py", ".cu", ".cuh")
# data file (relative to minitorch/) -> the phase it enters: the GEMM autotuner's table (phase 05)
# and the conv dispatcher's (phase 06)
DATA_PHASES = {"cuda/gemm/tuned.json": 5, "cuda/conv/tuned.json": 6}
DECLARE = re.compile(r"^(?:#|//) phase: (\d\d)\s*$")
FENCE = re.compile(r"^\s*(?:#|//) (>>>|<<<) phase (\d\d)\s*$")


class PhaseError(ValueError):
    """A source file breaks the rules above; the message names file and line."""


EXERCISES_PY = ROOT / "minitorch" / "utils" / "exercises.py"
_exercises = []


def _exercises_module():
    """minitorch/utils/exercises.py, loaded by path once (importing minitorch itself is not needed)."""
    if not _exercises:
        spec = importlib.util.spec_from_file_location("_minitorch_exercises", EXERCISES_PY)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _exercises.append(module)
    return _exercises[0]


def check_exercises(path, text):
    """Raise PhaseError if an exercise fence of ``path`` is malformed or sits in code of another phase."""
    ex = _exercises_module()
    lines = text.splitlines()
    try:
        rel = path.relative_to(ROOT)
    except ValueError:
        rel = path
    try:
        found = ex.find_exercises(rel, lines)
    except ex.ExerciseError as e:
        raise PhaseError(str(e)) from None
    if not found:
        return found
    phase_of = dict(fences(path, lines))
    declared = declared_phase(path, lines)
    for e in found:
        inside = {phase_of[i] for i in range(e.open, e.close + 1)}
        if "marker" in inside or len(inside) > 1:
            raise PhaseError(f"{rel}:{e.open + 1}: exercise {e.id} crosses a phase fence")
        code_phase = inside.pop()
        if code_phase is None:
            code_phase = declared
        if code_phase != e.phase:
            raise PhaseError(f"{rel}:{e.open + 1}: exercise {e.id} sits in code of phase {code_phase:02d}; "
                             f"an exercise belongs to the phase of its code (rename it {code_phase:02d}.K)")
    return found


def declared_phase(path, lines):
    for line in lines[:5]:
        m = DECLARE.match(line)
        if m:
            return int(m.group(1))
    raise PhaseError(f"{path}:1: no '# phase: NN' (or '// phase: NN') line in the first five lines")


def fences(path, lines):
    """Yield (line index, phase) for each line, phase None outside fences; markers get 'marker'."""
    open_phase = None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if not m:
            yield i, open_phase
            continue
        kind, phase = m.group(1), int(m.group(2))
        if kind == ">>>":
            if open_phase is not None:
                raise PhaseError(f"{path}:{i + 1}: fence for phase {phase:02d} opened inside phase {open_phase:02d}")
            open_phase = phase
        else:
            if open_phase != phase:
                raise PhaseError(f"{path}:{i + 1}: '<<< phase {phase:02d}' closes no open fence of that phase")
            open_phase = None
        yield i, "marker"
    if open_phase is not None:
        raise PhaseError(f"{path}: fence for phase {open_phase:02d} is never closed")


def snapshot_text(path, text, phase):
    """The file as phase ``phase`` sees it, or None if the file enters later."""
    lines = text.splitlines()
    if declared_phase(path, lines) > phase:
        return None
    rel = path.relative_to(ROOT)
    comment = "#" if path.suffix == ".py" else "//"
    out = [f"{comment} GENERATED from {rel} by tools/sync_phases.py (phase {phase:02d} snapshot): "
           f"edit the source and re-run, not this file."]
    for i, fence_phase in fences(path, lines):
        if fence_phase is None or (fence_phase != "marker" and fence_phase <= phase):
            out.append(lines[i])
    return "\n".join(out) + "\n"


def phase_folders():
    """{phase number: folder} for every phases/NN_name/ holding a notebook."""
    found = {}
    for folder in sorted(PHASES.glob("[0-9][0-9]_*")):
        if any(folder.glob("*.ipynb")):
            found[int(folder.name[:2])] = folder
    return found


def sources():
    return sorted(p for p in SOURCE.rglob("*") if p.suffix in SUFFIXES and "__pycache__" not in p.parts)


def expected_files(phase, folder):
    """{path: text} that the snapshot of ``phase`` in ``folder`` must hold."""
    files = {}
    for path in sources():
        text = path.read_text()
        snap = snapshot_text(path, text, phase)
        if snap is None:
            continue
        files[folder / "minitorch" / path.relative_to(SOURCE)] = snap
    for name, first in DATA_PHASES.items():       # (main checked them: check_data_files)
        if phase >= first:
            files[folder / "minitorch" / name] = (SOURCE / name).read_text()
    return files


def check_data_files():
    """Raise PhaseError unless DATA_PHASES names exactly the .json files under minitorch/."""
    found = {p.relative_to(SOURCE).as_posix() for p in SOURCE.rglob("*.json") if "__pycache__" not in p.parts}
    if found != set(DATA_PHASES):
        raise PhaseError(f"tools/sync_phases.py DATA_PHASES names {sorted(DATA_PHASES)}, but minitorch/ holds "
                         f"the .json files {sorted(found)}: give each one the phase it enters")


def check_all_exercises():
    """Check every source's exercise fences, and that no id is used twice; return their ids."""
    seen = {}
    for path in sources():
        for e in check_exercises(path, path.read_text()):
            if e.id in seen:
                raise PhaseError(f"{e.file}:{e.open + 1}: exercise {e.id} is also in {seen[e.id]}")
            seen[e.id] = e.file
    return sorted(seen)


def generated_now(folder):
    # kernels/ held second copies of the .cu files in earlier versions: its files are stale now
    return {p for sub in ("minitorch", "kernels") for p in (folder / sub).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files and exit 1; write nothing")
    args = parser.parse_args(argv)
    try:
        check_all_exercises()
        check_data_files()
    except PhaseError as e:
        print(f"phase rules: {e}", file=sys.stderr)
        return 1
    stale = []
    for phase, folder in phase_folders().items():
        want = expected_files(phase, folder)
        have = generated_now(folder)
        for path, text in want.items():
            if not path.exists() or path.read_text() != text:
                stale.append(path)
                if not args.check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
        for path in sorted(have - set(want)):
            stale.append(path)
            if not args.check:
                path.unlink()
        old = folder / "kernels"
        if not args.check and old.is_dir() and not any(old.rglob("*")):
            old.rmdir()
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    if args.check and stale:
        print(f"{len(stale)} generated file(s) are stale: run python tools/sync_phases.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
