# GENERATED from minitorch/utils/course.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""``minitorch-course``: run phase notebooks with papermill and summarize their races against PyTorch;
make a learner's workspace for a phase and grade it.

    minitorch-course --list
    minitorch-course 01 03_backward --device cuda
    minitorch-course all --quick --param EPOCHS=1 --output out/ci
    minitorch-course start 03 --dir work
    minitorch-course check 03 --dir work
    minitorch-course 03 --device cuda --save-results
    minitorch-course doctor

``start NN`` copies phase NN's notebook and snapshot into ``<dir>/NN_name/`` (default ``work/`` at
the repo root) with the phase's exercises stubbed; ``check NN`` runs the phase's grading tests
(``tests/exercises/test_phase_NN.py``) against that workspace and prints a table and a score.

``doctor`` checks the GPU, the driver, the CUDA runtime against CuPy, an NVRTC compile and launch of
one of our kernels, free device memory and the Jupyter kernel, and prints each failure's fix.

A run never changes the checkout: its races go to ``<output>/results`` (``out/`` is git-ignored);
``--save-results`` (not with ``--quick``) then copies them into ``benchmarks/results/``, the committed
reference runs the notebooks discuss: the one documented way to update those.

Each notebook runs with its own folder as cwd (so ``import minitorch`` finds that phase's
snapshot) and with ``$MINITORCH_RESULTS_DIR`` pointing at ``<output>/results``, where its races save
their JSON. Parameters go into the notebook after its cell tagged ``parameters``. At the end
``<output>/summary.md`` and ``<output>/races.png`` summarize every race written during the run.
Exit status: 0 when every notebook ran, 1 when any failed, 2 for bad arguments.
"""
import argparse
import ast
import datetime
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .race import find_root, load_results, markdown_table, plot_results, reference_dir

PHASE_DIR = re.compile(r"^(\d\d)_(\w+)$")


@dataclass
class Failure:
    """A notebook that did not run through; ``cell`` is its 0-based index in the source notebook."""
    phase: str
    notebook: Path
    cell: int = None
    first_line: str = ""
    error: str = ""
    output: Path = None

    def __str__(self):
        where = f"cell index {self.cell} ({self.first_line!r})" if self.cell is not None else "outside any cell"
        saved = f" (executed notebook: {self.output})" if self.output else ""
        return f"phase {self.phase} FAILED in {self.notebook.name}, {where}: {self.error}{saved}"


# ----------------------------------------------------------------------------------------------
# finding phases

def find_phases(phases_dir):
    """``NN_name`` folders of ``phases_dir`` that hold a notebook, in phase order."""
    folders = [p for p in Path(phases_dir).iterdir() if p.is_dir() and PHASE_DIR.match(p.name)]
    return sorted((p for p in folders if notebooks(p)), key=lambda p: p.name)


def notebooks(phase):
    """The notebooks of one phase folder, by name (checkpoints and outputs are elsewhere)."""
    return sorted(Path(phase).glob("*.ipynb"))


def select(phases, selectors):
    """Phases picked by selectors ``all``, ``1``, ``01``, ``01_matrix`` or ``matrix``, in phase order.

    Raises:
        ValueError: naming a selector that matches no phase, and the phases there are.
    """
    if not selectors or "all" in selectors:
        return list(phases)
    picked = set()
    for sel in selectors:
        hits = [p for p in phases if _matches(p.name, sel)]
        if not hits:
            names = ", ".join(p.name for p in phases) or "none"
            raise ValueError(f"no phase matches '{sel}' (phases: {names})")
        picked.update(hits)
    return [p for p in phases if p in picked]


def _matches(name, sel):
    number, short = PHASE_DIR.match(name).groups()
    if sel.isdigit():
        return int(sel) == int(number)
    return sel in (name, short)


def parse_param(text):
    """``'N=4096'`` -> ``('N', 4096)``: the value as a Python literal when it is one, else a string."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got '{text}'")
    try:
        value = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        pass                    # a bare word such as cuda stays a string
    return name.strip(), value


# ----------------------------------------------------------------------------------------------
# running

def run_notebook(nb, output, parameters, kernel=None, cell_progress=False, timeout=None):
    """Execute ``nb`` into ``output`` with cwd = its folder; return None, or a :class:`Failure`."""
    import papermill as pm
    phase = nb.parent.name
    try:
        pm.execute_notebook(nb, output, parameters=parameters, cwd=nb.parent, kernel_name=kernel,
                            progress_bar=cell_progress, execution_timeout=timeout)
    except pm.PapermillExecutionError as e:
        cell = _source_cell(nb, e.cell_index, injected=bool(parameters))
        first = next((line for line in e.source.splitlines() if line.strip()), "")
        return Failure(phase, nb, cell, first.strip(), f"{e.ename}: {e.evalue}", output)
    except Exception as e:      # kernel died or would not start, unreadable notebook...
        return Failure(phase, nb, None, "", f"{type(e).__name__}: {e}", output)
    return None


def _source_cell(nb, index, injected):
    """papermill counts the cell it injected after the ``parameters`` cell; map back to the source."""
    import nbformat
    cells = nbformat.read(nb, as_version=4).cells
    tags = [c.metadata.get("tags", []) for c in cells]
    if not injected or any("injected-parameters" in t for t in tags):
        return index            # nothing inserted (an existing injected cell is replaced in place)
    params = next((i for i, t in enumerate(tags) if "parameters" in t), -1)
    return index - 1 if index > params + 1 else index


def summarize(output, since, statuses):
    """Write ``summary.md`` (phase statuses and races) and ``races.png``; return the Markdown."""
    races = load_results(output / "results", since=since)
    lines = [f"# Course run {datetime.date.today().isoformat()}", "",
             "| Phase | Notebook | Status | Seconds |", "|---|---|---|---:|"]
    lines += [f"| {nb.parent.name} | {nb.name} | {_status(f)} | {sec:.1f} |" for nb, f, sec in statuses]
    lines += ["", f"## Races ({len(races)})", "", markdown_table(races) if races else "No races recorded."]
    text = "\n".join(lines) + "\n"
    (output / "summary.md").write_text(text)
    plot_results(races).savefig(output / "races.png", dpi=120, bbox_inches="tight")   # nothing cut
    return text


def save_results(output, since, destination=None):
    """Copy the race JSON files written under ``<output>/results`` since ``since`` into ``destination``
    (default :func:`~minitorch.utils.race.reference_dir`, the committed ``benchmarks/results``);
    return the written paths."""
    import shutil
    destination = Path(destination or reference_dir())
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted((Path(output) / "results").glob("*__*__*.json")):
        if path.stat().st_mtime >= since:
            written.append(Path(shutil.copy2(path, destination / path.name)))
    return written


def _status(failure):
    if failure is None:
        return "ok"
    where = f" at cell index {failure.cell}" if failure.cell is not None else ""
    return f"FAILED{where}: {failure.error}".replace("|", "/").replace("\n", " ")


def main(argv=None):
    """Entry point of ``minitorch-course``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("start", "check"):
        return _exercise_command(argv)
    if argv and argv[0] == "doctor":
        from .doctor import main as doctor_main
        return doctor_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.save_results and args.quick:
        print("minitorch-course: --save-results records reference runs; it cannot be combined with --quick",
              file=sys.stderr)
        return 2
    root = find_root() or Path.cwd()
    phases_dir = Path(args.phases_dir or root / "phases")
    phases = find_phases(phases_dir) if phases_dir.is_dir() else []
    if args.list:
        for p in phases:
            print(f"{p.name}: " + ", ".join(nb.name for nb in notebooks(p)))
        return 0
    try:
        chosen = select(phases, args.phases)
    except ValueError as e:
        print(f"minitorch-course: {e}", file=sys.stderr)
        return 2
    if not chosen:
        print(f"minitorch-course: no phase notebooks under {phases_dir}", file=sys.stderr)
        return 2
    output = Path(args.output or root / "out" / f"course-{datetime.date.today().isoformat()}").resolve()
    since = int(time.time()) - 1        # file mtimes may be rounded down to the second
    statuses = _run_all(chosen, output, args)
    print(summarize(output, since, statuses))
    failures = [f for _, f, _ in statuses if f is not None]
    for f in failures:
        print(str(f), file=sys.stderr)
    if args.save_results:
        for path in save_results(output, since):
            print(f"saved into the checkout: {path}")
    print(f"executed notebooks, summary.md and races.png in {output}")
    return 1 if failures else 0


def _run_all(chosen, output, args):
    """Run the chosen phases' notebooks in order; return [(notebook, Failure or None, seconds)]."""
    from tqdm.auto import tqdm
    parameters = dict(args.param)
    if args.device is not None:
        parameters["DEVICE"] = args.device
    if args.quick:
        parameters["QUICK"] = True
    env = {"MINITORCH_RESULTS_DIR": str(output / "results")}
    if args.quick:
        env["MINITORCH_QUICK"] = "1"
    todo = [nb for phase in chosen for nb in notebooks(phase)]
    statuses, saved = [], {k: os.environ.get(k) for k in env}
    (output / "results").mkdir(parents=True, exist_ok=True)
    os.environ.update(env)                  # the kernel inherits our environment
    try:
        for nb in (bar := tqdm(todo, desc="notebooks", unit="nb")):
            bar.set_postfix_str(f"{nb.parent.name}/{nb.name}")
            t0 = time.perf_counter()
            (output / nb.parent.name).mkdir(exist_ok=True)
            failure = run_notebook(nb, output / nb.parent.name / nb.name, parameters, args.kernel,
                                   args.cell_progress, args.timeout)
            statuses.append((nb, failure, time.perf_counter() - t0))
            if failure is not None:
                tqdm.write(str(failure), file=sys.stderr)
                if args.fail_fast:
                    break
    finally:
        for k, v in saved.items():      # leave the caller's environment as it was
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return statuses


# ----------------------------------------------------------------------------------------------
# exercises: start a workspace, check it

def _exercise_command(argv):
    """``start NN`` / ``check NN``; returns the exit status."""
    p = argparse.ArgumentParser(prog=f"minitorch-course {argv[0]}", description={
        "start": "Make a workspace for one phase: its notebook and kernels, the phase's exercises stubbed.",
        "check": "Grade a workspace: run the phase's grading tests, print a table and a score."}[argv[0]])
    p.add_argument("phase", help="1, 01, 01_matrix or matrix")
    p.add_argument("--dir", help="folder of the workspaces (default: work/ at the repo root)")
    p.add_argument("--phases-dir", help="folder holding the NN_name phase folders (default: phases/ at the repo root)")
    if argv[0] == "start":
        p.add_argument("--force", action="store_true", help="replace an existing workspace (its edits are lost)")
    args = p.parse_args(argv[1:])
    root = find_root() or find_root(Path(__file__).resolve().parent) or Path.cwd()
    phases_dir = Path(args.phases_dir or root / "phases")
    try:
        (phase,) = select(find_phases(phases_dir) if phases_dir.is_dir() else [], [args.phase])
    except ValueError as e:
        print(f"minitorch-course: {e}", file=sys.stderr)
        return 2
    workspace = Path(args.dir or root / "work") / phase.name
    if argv[0] == "start":
        return start_workspace(phase, workspace, args.force)
    tests = root / "tests" / "exercises" / f"test_phase_{phase.name[:2]}.py"
    return check_workspace(workspace, tests)


def start_workspace(phase, workspace, force=False):
    """Make ``workspace`` for the phase folder ``phase``; print what to do next."""
    from .exercises import make_workspace
    try:
        found = make_workspace(phase, workspace, overwrite=force)
    except FileExistsError as e:
        print(f"minitorch-course: {e}", file=sys.stderr)
        return 1
    print(f"workspace for phase {phase.name}: {workspace}")
    print(f"{len(found)} exercise(s) to write:")
    for ex in found.values():
        print(f"  {ex.id}  {ex.title:40s} {ex.where()}")
    nb = next(workspace.glob("*.ipynb"), None)
    print(f"\nnext: jupyter lab {nb} - run the cells; each stops at the exercise you have not written yet.")
    print(f"then: minitorch-course check {phase.name[:2]}" + (f" --dir {workspace.parent}" if workspace.parent != (find_root() or find_root(Path(__file__).resolve().parent) or Path.cwd()) / "work" else ""))
    return 0


def check_workspace(workspace, tests):
    """Grade ``workspace`` with the grading tests in ``tests``, in a fresh Python whose
    ``minitorch`` is the workspace's; print the table and the score; return 0 when all pass."""
    import subprocess
    if not (workspace / "minitorch").is_dir():
        print(f"minitorch-course: no workspace at {workspace}; make one with: minitorch-course start "
              f"{workspace.name[:2]}", file=sys.stderr)
        return 2
    if not tests.is_file():
        print(f"minitorch-course: no grading tests at {tests}", file=sys.stderr)
        return 2
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(workspace.resolve()), os.environ.get("PYTHONPATH", "")]))
    print(f"grading {workspace} with {tests.name}")
    done = subprocess.run([sys.executable, "-m", "minitorch.utils.exercises", str(tests.resolve()),
                           "--workspace", str(workspace.resolve())], cwd=workspace, env=env)
    return done.returncode


def _parser():
    p = argparse.ArgumentParser(
        prog="minitorch-course", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run phase notebooks with papermill and summarize their races against PyTorch.",
        epilog="examples:\n" + __doc__.split("\n\n")[1])
    p.add_argument("phases", nargs="*", default=["all"], help="all (default), 1, 01, 01_matrix or matrix")
    p.add_argument("--list", action="store_true", help="list the phases and their notebooks, run nothing")
    p.add_argument("--device", help="DEVICE parameter, e.g. cuda or cpu (default: the notebook's own)")
    p.add_argument("--quick", action="store_true", help="QUICK=True: CI-sized runs")
    p.add_argument("--save-results", action="store_true",
                   help="after the run, copy its races into benchmarks/results/ (the committed reference runs); "
                        "without it nothing in the checkout changes")
    p.add_argument("--param", "-p", action="append", type=parse_param, default=[], metavar="NAME=VALUE",
                   help="any other notebook parameter (a Python literal, else a string); repeatable")
    p.add_argument("--output", "-o", help="folder for executed notebooks and the summary "
                                          "(default: out/course-<date>/ at the repo root)")
    p.add_argument("--phases-dir", help="folder holding the NN_name phase folders (default: phases/ at the repo root)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failing notebook")
    p.add_argument("--kernel", help="Jupyter kernel name (default: the notebook's kernelspec)")
    p.add_argument("--timeout", type=float, help="seconds allowed per cell (default: no limit)")
    p.add_argument("--cell-progress", action="store_true", help="also show papermill's per-cell progress bar")
    return p


if __name__ == "__main__":
    sys.exit(main())
