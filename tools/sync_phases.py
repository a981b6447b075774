"""Generate each phase's snapshot of ``minitorch/`` from the one source of truth.

    python tools/sync_phases.py            # write phases/NN_name/minitorch/ and kernels/
    python tools/sync_phases.py --check    # exit 1 if anything generated is stale (CI runs this)

Rules, for every file under ``minitorch/`` (``.py``, ``.cu``, ``.cuh``):

* Within its first five lines it declares the phase it enters: ``# phase: 02`` (``// phase: 02``
  in CUDA files). Snapshot N holds the files of phases <= N.
* Code a later phase adds to an existing file is fenced, each marker on a line of its own::

      # >>> phase 03
      ...lines phase 03 adds...
      # <<< phase 03

  Snapshot N keeps the lines of fences <= N (without the markers) and drops the others.

A phase folder exists once its notebook does (``phases/NN_name/*.ipynb``). Each gets
``minitorch/`` (the snapshot) and ``kernels/`` (the ``.cu`` files that phase introduces or extends).
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "minitorch"
PHASES = ROOT / "phases"
SUFFIXES = (".py", ".cu", ".cuh")
DECLARE = re.compile(r"^(?:#|//) phase: (\d\d)\s*$")
FENCE = re.compile(r"^\s*(?:#|//) (>>>|<<<) phase (\d\d)\s*$")


class PhaseError(ValueError):
    """A source file breaks the rules above; the message names file and line."""


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


def touches_phase(path, text, phase):
    """True if the file enters in ``phase`` or has a fence of ``phase``: that phase's kernels."""
    lines = text.splitlines()
    return declared_phase(path, lines) == phase or any(
        (m := FENCE.match(line)) and int(m.group(2)) == phase for line in lines)


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
        if path.suffix in (".cu", ".cuh") and touches_phase(path, text, phase):
            files[folder / "kernels" / path.name] = snap
    return files


def generated_now(folder):
    return {p for sub in ("minitorch", "kernels") for p in (folder / sub).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files and exit 1; write nothing")
    args = parser.parse_args(argv)
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
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    if args.check and stale:
        print(f"{len(stale)} generated file(s) are stale: run python tools/sync_phases.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
