# GENERATED from minitorch/utils/notebook.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""What every phase notebook does first and last: settle its parameters, and say what it skipped.

    session = start(DEVICE, QUICK)          # DEVICE "auto" -> cuda when a GPU is usable
    if session.needs_gpu("the race"):       # False on cpu: records and prints why it skipped
        ...
    session.report()                        # lists every skipped cell and the reason

and how a notebook shows things so that they read well live and in the saved notebook (JupyterLab,
papermill's output, a reopened file without a kernel):

    show_races("01_matrix", result)         # the committed reference run, then "your run" apart
    show_source(path, "void fill", "^}")    # a kernel source, highlighted, with its line numbers
    for x in progress(loader, desc="epoch 1"):   # a text bar on stdout: no widget to lose
        ...
"""
import os
import platform
import re
import shutil
import sys
from pathlib import Path

# NumPy's BLAS threads and PyTorch's OpenMP threads spin while they wait; racing the two on the
# same cores makes each steal the other's time. Passive waiting keeps CPU races fair. (It must be
# set before torch is imported, which is why it sits here, at the top of every notebook's setup.)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import minitorch  # noqa: E402


class Session:
    def __init__(self, device, quick):
        self.device, self.quick, self.skipped = device, quick, []

    def needs_gpu(self, what):
        """True on cuda; on cpu, record ``what`` as skipped (with the reason) and return False."""
        if self.device == "cuda":
            return True
        reason = gpu_missing_reason() or f"DEVICE is '{self.device}'"
        self.skipped.append((what, reason))
        print(f"skipped: {what} - needs a CUDA GPU ({reason})")
        return False

    def report(self):
        if not self.skipped:
            print(f"every cell ran on {self.device}")
            return
        print(f"{len(self.skipped)} part(s) skipped on {self.device}:")
        for what, reason in self.skipped:
            print(f"  - {what}: {reason}")


NO_GPU_HINT = ("this machine has no NVIDIA GPU or driver: the CPU cells still run; for the GPU parts read "
               "the H100 numbers in the text and in benchmarks/results/, or run on a machine with an "
               "NVIDIA GPU (then `minitorch-course doctor` says what else is missing)")


def gpu_missing_reason():
    """Why minitorch cannot use a GPU here, in the order a learner can act on it, or None.

    The GPU and its driver come first (``nvidia-smi`` on the PATH or ``/dev/nvidia0``): without
    them, installing CuPy would not help, and the message says what to do instead. Then CuPy.
    """
    if minitorch.cuda.is_available():
        return None
    if shutil.which("nvidia-smi") is None and not os.path.exists("/dev/nvidia0"):
        return NO_GPU_HINT
    return minitorch.cuda._probe()[1]


def start(device="auto", quick=None):
    """Resolve the notebook parameters and print where we run.

    Args:
        device: "auto" (cuda when available, else cpu), "cpu" or "cuda".
        quick: None reads the environment (MINITORCH_QUICK=1, set in CI); True runs small sizes.
    Raises:
        minitorch.cuda.CudaUnavailableError: if "cuda" is asked for and no GPU is usable.
    """
    if device == "auto":
        device = "cuda" if minitorch.cuda.is_available() else "cpu"
    if device == "cuda":
        minitorch.cuda.cupy_or_raise()
    if quick is None:
        quick = os.environ.get("MINITORCH_QUICK") == "1"
    where = minitorch.cuda.get_device_name() if device == "cuda" else platform.processor() or platform.machine()
    print(f"minitorch from {os.path.dirname(minitorch.__file__)}")
    print(f"device: {device} ({where}); quick mode: {quick}")
    if device == "cpu":
        print(f"cpu only: the GPU cells are skipped ({gpu_missing_reason() or 'DEVICE is cpu'})")
    return Session(device, quick)


# ----------------------------------------------------------------------------------------------
# showing things: rendered in JupyterLab, readable as text in a saved notebook or a terminal

def in_notebook():
    """True inside a Jupyter kernel (JupyterLab, papermill, nbclient), False in a terminal."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def show_markdown(text):
    """Render Markdown ``text`` in a notebook (``IPython.display.Markdown``); print it elsewhere."""
    if in_notebook():
        from IPython.display import Markdown, display
        display(Markdown(text))
    else:
        print(text)


def show_races(phase, *mine):
    """Show ``phase``'s committed reference races, and this run's results apart from them.

    The reference run (``benchmarks/results/``, what the notebook's prose discusses) is one table;
    ``mine`` (:class:`~minitorch.utils.race.RaceResult` objects of this session, None skipped) is a
    second table labelled "your run on this machine". The two are never mixed.
    """
    from .race import load_results, markdown_table, reference_dir
    saved = [r for r in load_results(reference_dir()) if r.phase == phase]
    mine = [r for r in mine if r is not None]
    gpus = sorted({r.env.get("gpu_name") or r.device for r in saved})
    parts = [f"**Reference run** (committed in `benchmarks/results/`; {', '.join(gpus) or 'none'}), the one the text discusses:",
             "", markdown_table(saved) if saved else "_no saved reference results for this phase yet_", ""]
    if mine:
        parts += ["**Your run on this machine** (kept in the git-ignored `out/results/`; it does not change the "
                  "reference above):", "", markdown_table(mine)]
    show_markdown("\n".join(parts))


class Source:
    """A source file excerpt shown highlighted with its line numbers.

    In a notebook it renders as HTML (Pygments, inline styles, so a saved notebook keeps the colours
    without a kernel or a stylesheet); as text (a terminal, ``str()``) it is the numbered lines.
    """

    def __init__(self, text, first_line=1, language="cuda", title=None):
        self.text, self.first_line, self.language, self.title = text, first_line, language, title

    def __str__(self):
        head = f"// {self.title}\n" if self.title else ""
        return head + numbered_lines(self.text, self.first_line)

    def __repr__(self):
        return str(self)

    def _repr_markdown_(self):
        head = f"`{self.title}`\n\n" if self.title else ""
        return f"{head}```{self.language}\n{numbered_lines(self.text, self.first_line)}\n```"

    def _repr_html_(self):
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import get_lexer_by_name
        except ImportError:
            return None                 # Jupyter falls back to the Markdown fenced block
        html = highlight(self.text, get_lexer_by_name(self.language),
                         HtmlFormatter(linenos="inline", linenostart=self.first_line, noclasses=True))
        head = f"<p><code>{self.title}</code></p>" if self.title else ""
        return head + html


def numbered_lines(text, first_line=1):
    """``text`` with its line number in front of each line."""
    lines = text.splitlines()
    width = len(str(first_line + len(lines)))
    return "\n".join(f"{first_line + i:>{width}}  {line}" for i, line in enumerate(lines))


def show_source(path, first=None, last=None, language="cuda"):
    """Show lines of ``path`` highlighted, with the file's own line numbers.

    Args:
        first: a regular expression; the excerpt starts at the first line matching it (default: line 1).
        last: a regular expression; the excerpt ends at the first line at or after ``first`` matching
            it (default: the end of the file).
    Returns:
        a :class:`Source` (displayed when it is a cell's value; ``display()`` it otherwise).
    Raises:
        ValueError: ``first`` or ``last`` matches no line (the file changed; the message says which).
    """
    path = Path(path)
    lines = path.read_text().splitlines()
    start, stop = 0, len(lines)
    if first is not None:
        start = next((i for i, line in enumerate(lines) if re.search(first, line)), None)
        if start is None:
            raise ValueError(f"no line of {path.name} matches {first!r}")
    if last is not None:
        stop = next((i + 1 for i in range(start, len(lines)) if re.search(last, lines[i])), None)
        if stop is None:
            raise ValueError(f"no line of {path.name} after line {start + 1} matches {last!r}")
    where = f"{path.name}, lines {start + 1}-{stop}" if (start, stop) != (0, len(lines)) else path.name
    return Source("\n".join(lines[start:stop]), start + 1, language, where)


def progress(*args, **kwargs):
    """A tqdm progress bar that survives saving and reopening a notebook.

    A text bar (``tqdm.std``) written to stdout: live it updates in place, and what stays in the
    saved notebook is its last state, the text summary (steps, time, rate, postfix). A widget bar
    (``tqdm.auto`` with ipywidgets) shows "Error displaying widget" once reopened without its
    state, and a bar on stderr would show as a warning. Takes tqdm's arguments; ``mininterval``
    defaults to 1 s and the width to 100 columns, to keep the saved output small.
    """
    from tqdm.std import tqdm
    kwargs.setdefault("file", sys.stdout)
    kwargs.setdefault("mininterval", 1)
    kwargs.setdefault("ncols", 100)
    kwargs.pop("dynamic_ncols", None)       # no terminal to measure in a notebook
    return tqdm(*args, **kwargs)
