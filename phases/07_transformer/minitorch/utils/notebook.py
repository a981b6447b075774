# GENERATED from minitorch/utils/notebook.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
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


# ----------------------------------------------------------------------------------------------
# phase 05: showing kernels, tables and saved benchmark files in a notebook

import json  # noqa: E402

RUNG_FILE = re.compile(r"^(\d\d)_(\w+)\.cu$")


def md_table(rows, headers):
    """A Markdown table (str) of ``rows`` (sequences of cells) under ``headers``; numbers right-aligned.

    Display it with ``IPython.display.Markdown(md_table(...))``. Floats print with 4 significant
    digits; ``None`` prints as ``-``; a ``|`` inside a cell is escaped.
    """
    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v).replace("|", "\\|")
    numeric = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) if rows else False
               for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def rung_files(folder):
    """{"01": Path(".../01_naive.cu"), ...}: the GEMM ladder's rung files in ``folder``, in order."""
    found = {}
    for path in sorted(Path(folder).glob("[0-9][0-9]_*.cu")):
        m = RUNG_FILE.match(path.name)
        if m:
            found[m.group(1)] = path
    return found


def cuda_parts(path):
    """Split a rung's ``.cu`` file for display.

    Returns a dict: ``header`` (the opening ``//`` comment, without the ``// phase:`` line and the
    ``//``), ``body`` (the rung's kernel body: the function declared ``void NAME(GEMM_PARAMS(T))``
    that its entry points call, from its ``template`` line to its closing brace; the whole file
    after the header if there is none), ``first_line`` (the body's line number in the file, from
    1) and ``name`` (NAME, or None).
    """
    lines = Path(path).read_text().splitlines()
    header = []
    for line in lines:
        if not line.startswith("//"):
            break
        if not re.match(r"^// (phase: \d\d|GENERATED from )", line):
            header.append(line[3:] if line.startswith("// ") else line[2:])
    start, end, name = len(header) + 1, len(lines), None
    signature = re.compile(r"\bvoid\s+(\w+)\s*\(\s*GEMM_PARAMS\(")
    for i, line in enumerate(lines):
        m = signature.search(line)
        if not m or line.rstrip().endswith("\\") or line.lstrip().startswith(("#", "//", "extern")):
            continue                                    # a macro (the entry points) or a comment
        depth, opened = 0, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if ";" in lines[j] and not opened:
                break                                   # a declaration, not the definition
            if opened and depth == 0:
                name, start, end = m.group(1), i, j + 1
                while start > 0 and lines[start - 1].lstrip().startswith(("template", "__device__", "__global__")):
                    start -= 1
                break
        if name:
            break
    return {"header": "\n".join(header).strip("\n"), "body": "\n".join(lines[start:end]),
            "first_line": start + 1, "name": name}


def newest(folder, *patterns):
    """The most recently modified file in ``folder`` matching any glob pattern, or None."""
    found = [p for pattern in patterns for p in Path(folder).glob(pattern) if p.is_file()]
    return max(found, key=lambda p: (p.stat().st_mtime, p.name)) if found else None


_RUNG_KEY = re.compile(r"^(\d\d_\w+|cublas\w*|torch\w*|pytorch\w*)$", re.I)
_SIZE_KEY = re.compile(r"^(\d+)(?:[x×](\d+)(?:[x×](\d+))?)?$")
_DTYPES = {"f32": "f32", "float32": "f32", "fp32": "f32", "tf32": "tf32", "bf16": "bf16", "bfloat16": "bf16",
           "f16": "f16", "fp16": "f16", "float16": "f16", "half": "f16", "f64": "f64", "float64": "f64", "fp64": "f64"}


def _size(value):
    """(M, N, K) from 1024, '1024', '64x784x128', [64, 784, 128] or {'M':..,'N':..,'K':..}; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (value, value, value)
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(isinstance(v, int) for v in value):
        return tuple(value)
    if isinstance(value, str):
        m = _SIZE_KEY.match(value.strip())
        if m:
            a, b, c = m.groups()
            return (int(a), int(b or a), int(c or b or a)) if c or not b else None
    return None


def _pick(d, *tests):
    for key, value in d.items():
        k = str(key).lower()
        if any(t(k) for t in tests) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def gemm_records(data):
    """Rows of a bench_gemm JSON, whatever its nesting: a list of dicts with ``rung``, ``dtype``,
    ``layout``, ``M``, ``N``, ``K``, ``gflops``, ``cublas_gflops``, ``pct_cublas``, ``correct``.

    A record is any dict holding a GFLOP/s number (a key containing ``gflop``) with a rung and a
    size; those and the dtype come from its own keys (``rung``/``kernel``/``name``,
    ``M``/``N``/``K`` or ``m``/``n``/``k``/``size``/``shape``, ``dtype``/``kind``: benchmarks/
    bench_gemm.py's rows) or from the keys of the dicts that hold it (``{"01_naive": {"1024": {...}}}``).
    cuBLAS rows (rung ``cublas``/``torch...``) fill ``cublas_gflops`` of the rungs of the same size
    and dtype when those lack it.
    """
    out = []

    def walk(node, ctx):
        if isinstance(node, list):
            for item in node:
                walk(item, ctx)
            return
        if not isinstance(node, dict):
            return
        ctx = dict(ctx)
        for key in ("rung", "kernel", "name", "impl", "variant"):
            if isinstance(node.get(key), str):
                ctx["rung"] = node[key]
                break
        for key in ("dtype", "precision", "mode", "kind"):       # the later keys are the more specific
            if isinstance(node.get(key), str) and node[key].lower() in _DTYPES:
                ctx["dtype"] = _DTYPES[node[key].lower()]
        if isinstance(node.get("layout"), str):
            ctx["layout"] = node["layout"]
        mnk = [node.get(k, node.get(k.lower())) for k in ("M", "N", "K")]
        if all(isinstance(v, int) for v in mnk):
            ctx["size"] = tuple(mnk)
        else:
            for key in ("size", "shape", "mnk"):
                if key in node and _size(node[key]):
                    ctx["size"] = _size(node[key])
                    break
        gflops = _pick(node, lambda k: "gflop" in k and "cublas" not in k and "torch" not in k and "ref" not in k)
        if gflops is not None and "rung" in ctx and "size" in ctx:     # (summaries have no size: skipped)
            pct = _pick(node, lambda k: "cublas" in k and ("%" in k or "pct" in k or "percent" in k),
                        lambda k: k in ("pct", "percent", "% of cublas", "pct_of_cublas", "vs_cublas_pct"))
            ratio = _pick(node, lambda k: k in ("ratio", "of_cublas", "vs_cublas", "fraction_of_cublas"))
            correct = next((bool(node[k]) for k in ("correct", "passed", "ok", "valid") if k in node), None)
            out.append({"rung": ctx["rung"], "dtype": ctx.get("dtype", "f32"), "layout": ctx.get("layout", "nn"),
                        "M": ctx.get("size", (None,) * 3)[0], "N": ctx.get("size", (None,) * 3)[1],
                        "K": ctx.get("size", (None,) * 3)[2], "gflops": gflops,
                        "cublas_gflops": _pick(node, lambda k: "gflop" in k and ("cublas" in k or "torch" in k or "ref" in k)),
                        "pct_cublas": pct if pct is not None else (100 * ratio if ratio is not None and ratio <= 5 else None),
                        "correct": correct})
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                sub = dict(ctx)
                k = str(key)
                if _RUNG_KEY.match(k):
                    sub["rung"] = k
                elif k.lower() in _DTYPES:
                    sub["dtype"] = _DTYPES[k.lower()]
                elif _size(k):
                    sub["size"] = _size(k)
                elif k in ("nn", "nt", "tn", "tt"):
                    sub["layout"] = k
                walk(value, sub)

    walk(data, {})
    cublas = {(r["dtype"], r["layout"], r["M"], r["N"], r["K"]): r["gflops"] for r in out
              if re.match(r"^(cublas|torch|pytorch)", r["rung"], re.I)}
    for r in out:
        key = (r["dtype"], r["layout"], r["M"], r["N"], r["K"])
        if r["cublas_gflops"] is None:
            r["cublas_gflops"] = cublas.get(key)
        if r["pct_cublas"] is None and r["cublas_gflops"]:
            r["pct_cublas"] = 100 * r["gflops"] / r["cublas_gflops"]
    return out


def load_gemm_results(folder):
    """The newest ``bench_gemm*.json`` in ``folder``: ``(pandas.DataFrame of gemm_records, info dict,
    path)``, or ``(None, {}, None)`` when there is none. ``info`` is the file's ``info``/``env``/
    ``meta`` dict (GPU name, versions), plus its ``date`` and ``torch_tf32*`` settings."""
    import pandas as pd
    path = newest(folder, "bench_gemm*.json")
    if path is None:
        return None, {}, None
    data = json.loads(path.read_text())
    info = {}
    if isinstance(data, dict):
        info = dict(next((data[k] for k in ("info", "env", "meta", "environment") if isinstance(data.get(k), dict)), {}))
        info.setdefault("date", data.get("date"))
        info.update({k: v for k, v in data.items() if k.startswith("torch_tf32")})   # the TF32 settings of the run
    rows = gemm_records(data)
    return (pd.DataFrame(rows) if rows else None), info, path


def load_ncu_results(folder):
    """The newest saved Nsight Compute findings under ``folder`` (or its ``ncu/`` subfolder) as a
    DataFrame, one row per rung, one column per metric, and the file's path; ``(None, None)``
    when there are none.

    ``ncu_gemm*.json``: benchmarks/ncu_gemm.py's ``{"rungs": {rung: {metric: value, ...,
    "top_stalls_per_issue": {reason: value}}}}`` (stalls become columns ``stall: <reason>``), or a
    list of flat dicts. ``ncu_gemm*.csv``: ``ncu --csv`` output, long (one row per metric) or wide.
    """
    import io
    import pandas as pd
    folder = Path(folder)
    path = newest(folder, "ncu_gemm*.json", "ncu/ncu_gemm*.json") or newest(folder, "ncu_gemm*.csv", "ncu/ncu_gemm*.csv")
    if path is None:
        return None, None
    if path.suffix == ".csv":
        text = path.read_text()
        start = text.find('"ID"') if '"ID"' in text else 0        # ncu prints its own lines first
        return ncu_table(pd.read_csv(io.StringIO(text[start:]), thousands=",")), path
    data = json.loads(path.read_text())
    if isinstance(data, dict):
        data = next((data[k] for k in ("rungs", "results", "kernels") if k in data), data)
    if isinstance(data, dict):
        data = [{"rung": k, **v} for k, v in data.items() if isinstance(v, dict)]
    rows = []
    for row in data:
        flat = {}
        for key, value in row.items():
            if isinstance(value, dict):                 # top_stalls_per_issue: {reason: cycles per issue}
                flat.update({f"stall: {k}": v for k, v in value.items()})
            else:
                flat[key] = value
        rows.append(flat)
    return pd.DataFrame(rows), path


def ncu_table(frame):
    """``ncu --csv`` long output (one row per metric) -> one row per kernel, one column per metric."""
    if "Metric Name" not in frame.columns:
        return frame
    name = "Kernel Name" if "Kernel Name" in frame.columns else frame.columns[0]
    values = frame["Metric Value"]
    if values.dtype == object:
        values = values.astype(str).str.replace(",", "").astype(float, errors="ignore")
    wide = frame.assign(**{"Metric Value": values}).pivot_table(index=name, columns="Metric Name",
                                                                 values="Metric Value", aggfunc="first")
    return wide.reset_index().rename(columns={name: "kernel"})
