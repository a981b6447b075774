# GENERATED from minitorch/utils/race.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Race a minitorch callable against its PyTorch twin, one way for both, and keep the result.

Every phase notebook ends with a race::

    from minitorch.utils.race import race
    result = race(phase="01", workload="fill", ours=lambda: a.fill_(1.0), theirs=lambda: t.fill_(1.0),
                  device=DEVICE, sizes={"n": n}, bytes=4 * n)
    result.plot()

How a race is timed (the same for both sides):

* ``warmup`` untimed runs of each side (kernel compilation, caching allocators, lazy init), then
  ``repeats`` timed runs, alternating ours/theirs so that clock or thermal drift hits both alike.
* One ``gc.collect()`` after the warm-up (it takes ~0.1 s with PyTorch loaded, too slow per run);
  the garbage collector stays on, as in real use. Before each timed run, a device-wide
  synchronize, untimed, so that neither side pays for the other's queued work.
* ``cuda``: each run is bracketed by two CUDA events on the current stream (CuPy's for ours,
  ``torch.cuda.Event(enable_timing=True)`` for theirs); the time is the GPU-timeline interval
  between them, so host launch overhead counts whenever it keeps the GPU waiting.
  ``cpu``: ``time.perf_counter`` around the call.
* A "run" is one call of the callable: an op, or a whole epoch; ``repeats=1`` is allowed.
* TF32 is switched off in PyTorch (``torch.backends.cuda.matmul.allow_tf32`` and
  ``torch.backends.cudnn.allow_tf32``), and left off, so that both sides do float32 arithmetic.
* Peak device memory per side: ``minitorch.cuda`` / ``torch.cuda`` ``max_memory_allocated`` after
  ``reset_peak_memory_stats`` before each timed run (bytes live tensors held, the inputs included),
  the maximum over the runs. On ``cpu`` it is ``None``: ``tracemalloc`` sees NumPy's buffers but not
  PyTorch's, so it would not compare like with like.

Results are JSON files named ``<phase>__<workload>__<device-slug>.json`` in :func:`results_dir` (the
git-ignored ``out/results``: a learner's run never changes the checkout; ``minitorch-course NN
--save-results`` copies a run's results into the committed :func:`reference_dir`);
:func:`load_results` reads them back and :func:`markdown_table` / :func:`plot_results` summarize them;
:func:`saved_table` is the table of one phase's committed results, as each notebook shows it.
"""
import datetime
import gc
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..device import as_device

SIDES = ("ours", "theirs")
LABELS = {"ours": "minitorch", "theirs": "PyTorch"}
TORCH_HINT = ("the race needs PyTorch as the opponent: pip install torch (CPU-only: pip install torch "
              "--index-url https://download.pytorch.org/whl/cpu), or pip install 'minitorch-cuda-course[dev]'")
_MIB = 2 ** 20


# ----------------------------------------------------------------------------------------------
# where results go

def find_root(start=None):
    """The nearest folder at or above ``start`` (default: the cwd) holding ``pyproject.toml``, or None."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return None


def results_dir():
    """Where races save: ``$MINITORCH_RESULTS_DIR``, else ``<repo root>/out/results`` (git-ignored).

    A learner's run never writes into the checkout: only an explicit command updates the committed
    reference results in :func:`reference_dir` (``minitorch-course NN --save-results``, or
    ``MINITORCH_RESULTS_DIR=benchmarks/results``). The repo root is found by walking up from the cwd
    to ``pyproject.toml`` (notebooks run inside ``phases/NN_name/``); outside any project it is
    ``./out/results``.
    """
    env = os.environ.get("MINITORCH_RESULTS_DIR")
    if env:
        return Path(env)
    return (find_root() or Path.cwd()) / "out" / "results"


def reference_dir():
    """``<repo root>/benchmarks/results``: the committed reference runs the notebooks' prose discusses."""
    return (find_root() or Path.cwd()) / "benchmarks" / "results"


def _default_save():
    # The course runner points MINITORCH_RESULTS_DIR at its output folder: always save there.
    # Otherwise an interactive run saves into the git-ignored out/results; quick/CI runs
    # (MINITORCH_QUICK=1) save nothing.
    if os.environ.get("MINITORCH_RESULTS_DIR"):
        return True
    return os.environ.get("MINITORCH_QUICK", "") not in ("1", "true", "True")


def slug(text):
    """``'NVIDIA H100 80GB HBM3'`` -> ``'nvidia-h100-80gb-hbm3'`` (safe in file names)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "unnamed"


# ----------------------------------------------------------------------------------------------
# the result

@dataclass
class RaceResult:
    """One race. Times in milliseconds, memory in bytes, ``bytes``/``flops`` per run.

    Attributes:
        phase: ``'01'``...; workload: a short name; device: ``'cpu'`` or ``'cuda:N'``.
        sizes: the problem sizes, e.g. ``{'n': 1 << 20}``.
        times: per side (``'ours'``/``'theirs'``): ``median_ms``, ``q1_ms``, ``q3_ms`` (the IQR),
            ``min_ms``, ``max_ms`` and ``all_ms`` (every timed run, in order).
        ratio: ours median / theirs median (> 1: minitorch is slower).
        metrics: per side, the caller's metrics plus ``GB/s`` and ``GFLOP/s`` derived from
            ``bytes``/``flops`` and the median time.
        memory: per side, peak device bytes (None on cpu); ``memory_note`` says how it was measured.
        tf32: PyTorch's TF32 flags as read back after the harness set them (all False).
        env: GPU name, driver, library versions, host...; date: ISO 8601, UTC.
    """
    phase: str
    workload: str
    device: str
    sizes: dict
    warmup: int
    repeats: int
    times: dict
    ratio: float
    bytes: float = None
    flops: float = None
    metrics: dict = field(default_factory=lambda: {"ours": {}, "theirs": {}})
    memory: dict = field(default_factory=lambda: {"ours": None, "theirs": None})
    memory_note: str = ""
    tf32: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    date: str = ""
    schema: int = 1

    @property
    def verdict(self):
        """``'1.23x slower'`` or ``'2.00x faster'``: minitorch relative to PyTorch."""
        return verdict(self.ratio)

    @property
    def device_slug(self):
        """``'cpu'``, or the GPU name made file-safe (``'nvidia-h100-80gb-hbm3'``)."""
        return "cpu" if self.device == "cpu" else slug(self.env.get("gpu_name") or self.device)

    @property
    def filename(self):
        return f"{slug(self.phase)}__{slug(self.workload)}__{self.device_slug}.json"

    # -- serialization ------------------------------------------------------------------------
    def to_dict(self):
        return asdict(self)

    def to_json(self, path=None):
        """The result as JSON text; also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=2, sort_keys=False, default=_jsonable)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text + "\n")
        return text

    @classmethod
    def from_dict(cls, d):
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})

    @classmethod
    def from_json(cls, text_or_path):
        """From JSON text, or from a path to a JSON file."""
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text()
        return cls.from_dict(json.loads(text))

    def save(self, folder=None):
        """Write ``<folder>/<phase>__<workload>__<device-slug>.json`` (folder: :func:`results_dir`)."""
        path = Path(folder or results_dir()) / self.filename
        self.to_json(path)
        return path

    # -- display --------------------------------------------------------------------------------
    def table(self):
        """A plain-text table: times, memory, metrics, the ratio and the TF32 settings."""
        rows = [("median (ms)", *(_fmt(self.times[s]["median_ms"]) for s in SIDES)),
                ("IQR (ms)", *(f"{_fmt(self.times[s]['q1_ms'])}-{_fmt(self.times[s]['q3_ms'])}" for s in SIDES)),
                ("min-max (ms)", *(f"{_fmt(self.times[s]['min_ms'])}-{_fmt(self.times[s]['max_ms'])}" for s in SIDES)),
                ("peak memory (MiB)", *(_mib(self.memory[s]) for s in SIDES))]
        rows += [(name, *(_fmt(self.metrics[s].get(name)) for s in SIDES)) for name in _metric_names(self)]
        width = max(len(r[0]) for r in rows)
        cols = [max(len(LABELS[s]), *(len(r[i + 1]) for r in rows)) for i, s in enumerate(SIDES)]
        line = lambda a, b, c: f"  {a:<{width}}  {b:>{cols[0]}}  {c:>{cols[1]}}"
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "-"
        where = self.device + (f" ({self.env['gpu_name']})" if self.env.get("gpu_name") else "")
        tf32 = ", ".join(f"{k}={v}" for k, v in self.tf32.items())
        return "\n".join(line_ for line_ in [
            f"race: phase {self.phase} / {self.workload} on {where}",
            f"  sizes: {sizes}; {self.warmup} warm-up + {self.repeats} timed runs per side",
            line("", LABELS["ours"], LABELS["theirs"]),
            *(line(*r) for r in rows),
            f"  => minitorch is {self.verdict} than PyTorch (ours/theirs = {self.ratio:.3g})",
            f"  TF32: {tf32}" if self.device != "cpu" else None,     # TF32 means something on a GPU only
            f"  memory: {self.memory_note}"] if line_ is not None)

    def markdown(self):
        """:meth:`table` as Markdown: a heading line, a table of both sides, the verdict."""
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "-"
        where = self.device + (f" ({self.env['gpu_name']})" if self.env.get("gpu_name") else "")
        rows = [("median (ms)", *(_fmt(self.times[s]["median_ms"]) for s in SIDES)),
                ("IQR (ms)", *(f"{_fmt(self.times[s]['q1_ms'])}-{_fmt(self.times[s]['q3_ms'])}" for s in SIDES)),
                ("min-max (ms)", *(f"{_fmt(self.times[s]['min_ms'])}-{_fmt(self.times[s]['max_ms'])}" for s in SIDES))]
        if self.device != "cpu":
            rows.append(("peak memory (MiB)", *(_mib(self.memory[s]) for s in SIDES)))
        rows += [(name, *(_fmt(self.metrics[s].get(name)) for s in SIDES)) for name in _metric_names(self)]
        lines = [f"**Your run on this machine**: phase {self.phase} / {self.workload} on {where}; sizes {sizes}; "
                 f"{self.warmup} warm-up + {self.repeats} timed runs per side", "",
                 f"| | {LABELS['ours']} | {LABELS['theirs']} |", "|---|---:|---:|"]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
        lines += ["", f"minitorch is **{self.verdict}** than PyTorch (ours/theirs = {self.ratio:.3g})"]
        if self.device != "cpu":
            lines[-1] += "; TF32 off in PyTorch (" + ", ".join(f"`{k}={v}`" for k, v in self.tf32.items()) + ")"
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def plot(self):
        """A bar chart of median time (IQR as error bars) and, on cuda, peak memory.

        Returns a ``matplotlib.figure.Figure`` built without pyplot, so library code never opens a
        window; a notebook displays it when it is a cell's value, ``fig.savefig(path)`` saves it.
        """
        from matplotlib.figure import Figure
        has_mem = all(self.memory.get(s) is not None for s in SIDES)
        fig = Figure(figsize=(7 if has_mem else 4, 3.2), layout="constrained")
        axes = fig.subplots(1, 2 if has_mem else 1, squeeze=False)[0]
        med = [self.times[s]["median_ms"] for s in SIDES]
        err = [[m - self.times[s]["q1_ms"] for m, s in zip(med, SIDES)],
               [self.times[s]["q3_ms"] - m for m, s in zip(med, SIDES)]]
        names, colors = [LABELS[s] for s in SIDES], ["C0", "C1"]
        axes[0].bar(names, med, yerr=err, capsize=4, color=colors)
        axes[0].set_ylabel("median time (ms), IQR bars")
        if has_mem:
            axes[1].bar(names, [self.memory[s] / _MIB for s in SIDES], color=colors)
            axes[1].set_ylabel("peak device memory (MiB)")
        fig.suptitle(f"{self.phase} {self.workload} ({self.device}): minitorch {self.verdict}", fontsize=10)
        return fig


# ----------------------------------------------------------------------------------------------
# the race

def race(ours, theirs, *, phase, workload, device=None, warmup=3, repeats=20, sizes=None, bytes=None,
         flops=None, metrics=None, save=None, results_dir=None, verbose=True):
    """Time ``ours()`` (minitorch) against ``theirs()`` (PyTorch) the same way; return a :class:`RaceResult`.

    Args:
        ours, theirs: callables taking no arguments; one call is one timed run (an op, or a whole
            multi-step workload such as an epoch). Their return values are ignored.
        phase: ``'01'`` or ``1``; workload: a short name (both go into the file name).
        device: ``'cpu'``, ``'cuda'`` or ``'cuda:N'``: how to time (CUDA events or perf_counter)
            and whose memory to watch. Default: ``'cuda'`` if both minitorch and PyTorch see a GPU,
            else ``'cpu'``. The callables must already work on that device.
        warmup: untimed runs per side (>= 0). repeats: timed runs per side (>= 1).
        sizes: problem sizes to record, e.g. ``{'n': 4096, 'dtype': 'float32'}``.
        bytes, flops: bytes moved / floating-point operations per run, for ``GB/s`` and ``GFLOP/s``.
        metrics: ``{'ours': {...}, 'theirs': {...}}`` of numbers (accuracy, loss, MAE...); a value
            may be a no-argument callable, called once after the timed runs (e.g. final accuracy).
        save: write the JSON (True), or not (False). Default None: save if ``$MINITORCH_RESULTS_DIR``
            is set or ``$MINITORCH_QUICK`` is not ``1``. Either way it goes to :func:`results_dir`
            (the git-ignored ``out/results``), never into the committed ``benchmarks/results``.
        results_dir: folder for the JSON (default :func:`results_dir`).
        verbose: show :meth:`RaceResult.table` (and where the JSON went): a rendered Markdown table
            in a notebook (:meth:`RaceResult.markdown`), plain text elsewhere.

    Raises:
        ImportError: PyTorch is not installed (the message says how to install it).
        minitorch.cuda.CudaUnavailableError / RuntimeError: ``cuda`` asked for, but minitorch or
            PyTorch cannot see a GPU.
        ValueError: ``repeats < 1`` or ``warmup < 0``.
    """
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got repeats={repeats}, warmup={warmup}")
    torch = _import_torch()
    tf32 = disable_tf32(torch)
    device = _pick_device(device, torch)
    timers = {"ours": _Side("ours", device, torch), "theirs": _Side("theirs", device, torch)}
    fns = {"ours": ours, "theirs": theirs}
    for side in SIDES:
        for _ in range(warmup):
            fns[side]()
        timers[side].sync()
    gc.collect()
    runs = {s: [] for s in SIDES}
    for _ in range(repeats):
        for side in SIDES:          # alternate, so that drift affects both sides alike
            runs[side].append(timers[side].time(fns[side]))
    times = {s: summarize(runs[s]) for s in SIDES}
    result = RaceResult(
        phase=_phase(phase), workload=str(workload), device=device, sizes=dict(sizes or {}),
        warmup=warmup, repeats=repeats, times=times,
        ratio=times["ours"]["median_ms"] / times["theirs"]["median_ms"] if times["theirs"]["median_ms"] else float("inf"),
        bytes=bytes, flops=flops, metrics=_metrics(metrics, times, bytes, flops),
        memory={s: timers[s].peak for s in SIDES}, memory_note=timers["ours"].memory_note,
        tf32=tf32, env=environment(device, torch),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    if save is None:
        save = _default_save()
    path = result.save(results_dir) if save else None
    if verbose:
        _show(result, path)
    return result


def _show(result, path):
    """A rendered table in a Jupyter kernel (text survives too: Markdown is stored as text), else text."""
    where = f"saved: {path} (git-ignored; the committed reference runs are in benchmarks/results)" if path else "not saved"
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
        in_kernel = get_ipython() is not None and "IPKernelApp" in get_ipython().config
    except ImportError:
        in_kernel = False
    if in_kernel:
        display(Markdown(result.markdown() + f"\n\n{where}"))
    else:
        print(result.table() + f"\n  {where}")


class _Side:
    """Times runs of one side and tracks its peak memory; one method per device type."""

    def __init__(self, side, device, torch):
        self.side, self.device, self.torch, self.peak = side, device, torch, None
        self.cuda = device != "cpu"
        self.index = as_device(device).index
        if self.cuda and side == "ours":
            from .. import cuda as mcuda
            self.cupy = mcuda.cupy_or_raise()
            self.lib = mcuda                # whose peak-memory counters this side reads
        elif self.cuda:
            self.lib = torch.cuda
        self.memory_note = ("peak bytes held by live tensors (max_memory_allocated after reset_peak_memory_stats)"
                            " over the timed runs, inputs included" if self.cuda else
                            "not measured on cpu (tracemalloc would see NumPy's buffers but not PyTorch's)")

    def sync(self):
        # cudaDeviceSynchronize waits for the whole device, CuPy's and PyTorch's work alike
        if self.cuda:
            self.torch.cuda.synchronize(self.index)

    def time(self, fn):
        """Run ``fn`` once; return milliseconds."""
        self.sync()
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        self._reset_peak()
        if self.side == "ours":
            cp = self.cupy
            with cp.cuda.Device(self.index):
                stream = cp.cuda.get_current_stream()
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record(stream)
                fn()
                end.record(stream)
                end.synchronize()
                ms = cp.cuda.get_elapsed_time(start, end)
        else:
            tc = self.torch.cuda
            with tc.device(self.index):
                start, end = tc.Event(enable_timing=True), tc.Event(enable_timing=True)
                start.record()          # on torch's current stream
                fn()
                end.record()
                end.synchronize()
                ms = start.elapsed_time(end)
        self._read_peak()
        return float(ms)

    def _reset_peak(self):
        self.lib.reset_peak_memory_stats(self.index)

    def _read_peak(self):
        self.peak = max(self.peak or 0, int(self.lib.max_memory_allocated(self.index)))


def summarize(ms):
    """``median_ms``, ``q1_ms``, ``q3_ms``, ``min_ms``, ``max_ms``, ``all_ms`` of run times in ms."""
    q1, q3 = np.percentile(ms, [25, 75])
    return {"median_ms": float(statistics.median(ms)), "q1_ms": float(q1), "q3_ms": float(q3),
            "min_ms": float(min(ms)), "max_ms": float(max(ms)), "all_ms": [float(x) for x in ms]}


def verdict(ratio):
    """ours/theirs time ratio as words: ``1.5 -> '1.50x slower'``, ``0.5 -> '2.00x faster'``."""
    if ratio >= 1:
        return f"{ratio:.2f}x slower"
    return f"{1 / ratio:.2f}x faster" if ratio > 0 else "infinitely faster"


def disable_tf32(torch):
    """Switch TF32 off in PyTorch (matmul and cuDNN); return the flags as read back."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return {"torch.backends.cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "torch.backends.cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32)}


def environment(device, torch=None):
    """What the numbers depend on: GPU name, driver, library versions, host, CPU threads."""
    import minitorch
    cupy = _cupy_or_none()
    env = {"gpu_name": None, "driver_version": None, "cuda_driver_version": None,
           "minitorch_version": getattr(minitorch, "__version__", None),
           "torch_version": getattr(torch, "__version__", None),
           "cupy_version": getattr(cupy, "__version__", None), "numpy_version": np.__version__,
           "python_version": platform.python_version(), "host": socket.gethostname(),
           "platform": platform.platform(), "cpu": platform.processor() or platform.machine(),
           "torch_threads": torch.get_num_threads() if torch is not None else None}
    if device != "cpu":
        index = as_device(device).index
        if torch is not None:
            env["gpu_name"] = torch.cuda.get_device_name(index)
        elif cupy is not None:
            env["gpu_name"] = minitorch.cuda.get_device_name(index)
        env["driver_version"] = _nvidia_smi_driver()
        if cupy is not None:
            v = cupy.cuda.runtime.driverGetVersion()     # e.g. 12040 -> '12.4'
            env["cuda_driver_version"] = f"{v // 1000}.{v % 1000 // 10}"
    return env


# ----------------------------------------------------------------------------------------------
# summaries

def load_results(path=None, since=None):
    """Every race saved in folder ``path`` (default :func:`results_dir`), or the one file ``path``.

    Args:
        since: keep only files modified at or after this POSIX time (seconds), e.g. the start
            of a course run.

    Returns a list of :class:`RaceResult` sorted by phase, workload and device; a missing folder
    gives an empty list.
    """
    path = Path(path or results_dir())
    files = [path] if path.is_file() else sorted(path.glob("*__*__*.json")) if path.is_dir() else []
    if since is not None:
        files = [f for f in files if f.stat().st_mtime >= since]
    # races are named <phase>__<workload>__<device>.json; other benchmark files there are skipped
    dicts = [json.loads(f.read_text()) for f in files]
    results = [RaceResult.from_dict(d) for d in dicts if "schema" in d]
    return sorted(results, key=lambda r: (r.phase, r.workload, r.device_slug))


def markdown_table(results):
    """A Markdown table of races: times (ms), the ratio in words, peak memory (MiB) and metrics."""
    head = ("| Phase | Workload | Device | Sizes | minitorch (ms) | PyTorch (ms) | minitorch vs PyTorch "
            "| Peak MiB (ours / theirs) | Metrics (ours / theirs) |\n|---|---|---|---|---:|---:|---|---|---|")
    rows = []
    for r in results:
        dev = r.env.get("gpu_name") or r.device
        sizes = ", ".join(f"{k}={v}" for k, v in r.sizes.items())
        metrics = "; ".join(f"{n}: {_fmt(r.metrics['ours'].get(n))} / {_fmt(r.metrics['theirs'].get(n))}"
                            for n in _metric_names(r))
        cells = [r.phase, r.workload, dev, sizes, _fmt(r.times["ours"]["median_ms"]),
                 _fmt(r.times["theirs"]["median_ms"]), r.verdict,
                 f"{_mib(r.memory['ours'])} / {_mib(r.memory['theirs'])}", metrics]
        rows.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join([head, *rows]) + "\n"


def saved_table(phase):
    """The Markdown table (:func:`markdown_table`) of ``phase``'s races committed under
    :func:`reference_dir` (``<repo root>/benchmarks/results``), or ``'no saved GPU results yet'``.

    Show it rendered with ``minitorch.utils.notebook.show_races(phase, result)``, which also shows
    this run's result as its own table."""
    root = find_root()
    saved = [r for r in load_results(reference_dir()) if r.phase == phase] if root else []
    return markdown_table(saved) if saved else "no saved GPU results yet"


def plot_results(results):
    """One horizontal bar per race: minitorch time / PyTorch time, log scale, 1 marked. Returns a Figure."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter
    # labels on two lines and a wide figure: long workload names must not squeeze the bars
    fig = Figure(figsize=(9, 1.2 + 0.55 * max(len(results), 1)), layout="constrained")
    ax = fig.subplots()
    if not results:
        ax.text(0.5, 0.5, "no races recorded", ha="center", va="center")
        ax.set_axis_off()
        return fig
    names = [f"{r.phase} {r.workload}\n({r.device_slug})" for r in results]
    ratios = [r.ratio for r in results]
    # bars grow from 1 (a tie) towards the ratio, so slower points right and faster left
    ax.barh(names, [x - 1 for x in ratios], left=1, color=["C3" if x > 1 else "C2" for x in ratios])
    for y, r in enumerate(results):     # the words sit on the empty side of the tie line
        ax.annotate(r.verdict, (1, y), xytext=(-4 if r.ratio >= 1 else 4, 0), textcoords="offset points",
                    ha="right" if r.ratio >= 1 else "left", va="center", fontsize=8)
    ax.axvline(1, color="k", lw=1)
    ax.set_xscale("log")
    span = max(max(ratios), 1 / min(ratios), 2) * 1.1        # symmetric around 1
    ax.set_xlim(1 / span, span)
    ticks = [m * 10.0 ** e for e in range(-4, 5) for m in (1, 2, 5)]
    ax.set_xticks([t for t in ticks if 1 / span <= t <= span])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.invert_yaxis()           # phase 01 on top
    ax.set_xlabel("minitorch time / PyTorch time\n(< 1: minitorch faster)")
    return fig


# ----------------------------------------------------------------------------------------------
# helpers

def _import_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"{TORCH_HINT} ({e})") from e
    return torch


def _cupy_or_none():
    from .. import cuda
    return cuda._probe()[0]


def _pick_device(device, torch):
    from .. import cuda
    if device is None:
        return "cuda:0" if cuda.is_available() and torch.cuda.is_available() else "cpu"
    device = str(as_device(device))
    if device != "cpu":
        cuda.cupy_or_raise()         # says what is missing on our side
        if not torch.cuda.is_available():
            raise RuntimeError(f"race on {device}: this PyTorch ({torch.__version__}) sees no GPU; "
                               "install a CUDA build of torch, or race on device='cpu'")
    return device


def _phase(phase):
    return f"{phase:02d}" if isinstance(phase, int) else str(phase)


def _metrics(metrics, times, nbytes, flops):
    """Evaluate callable metrics, add GB/s and GFLOP/s from the median time, make JSON-safe."""
    metrics = metrics or {}
    unknown = set(metrics) - set(SIDES)
    if unknown:
        raise ValueError(f"metrics keys must be 'ours'/'theirs', got {sorted(unknown)}")
    out = {}
    for side in SIDES:
        m = {k: (v() if callable(v) else v) for k, v in metrics.get(side, {}).items()}
        seconds = times[side]["median_ms"] * 1e-3
        if nbytes is not None and seconds > 0:
            m["GB/s"] = nbytes / seconds / 1e9
        if flops is not None and seconds > 0:
            m["GFLOP/s"] = flops / seconds / 1e9
        out[side] = {k: _jsonable(v) for k, v in m.items()}
    return out


def _jsonable(v):
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:   # NumPy scalars, 0-d tensors of any library
        return v.item()
    if isinstance(v, (str, int, float, bool, type(None), list, dict)):
        return v
    return str(v)


def _metric_names(result):
    names = list(result.metrics.get("ours", {}))
    return names + [n for n in result.metrics.get("theirs", {}) if n not in names]


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _mib(nbytes):
    return "-" if nbytes is None else f"{nbytes / _MIB:.1f}"


def _nvidia_smi_driver():
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None
