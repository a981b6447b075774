# GENERATED from minitorch/cuda/compiler.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Run-time compilation of our ``.cu`` files with NVRTC, through ``cupy.RawModule``.

``kernel("fill.cu", "fill_f32")`` returns a launchable ``cupy.RawKernel``. Modules are cached per
(file, source text, options, GPU architecture): the first launch compiles (tens of milliseconds),
later ones reuse it. In Jupyter, edited ``.cu`` files are noticed before each cell runs, so editing
a kernel and re-running a cell picks up the change.

Quoted includes (``#include "common.cuh"``) are pasted in here, each under a ``#line`` directive,
so that NVRTC's errors name the real file and line and CuPy's on-disk cache (keyed by the source
text) can never serve a binary built from an older header.
"""
import re
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent
OPTIONS = ("-std=c++17", "-lineinfo")   # -lineinfo: compute-sanitizer reports .cu lines, no cost

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*(//.*)?$')      # a trailing // comment allowed
_ERROR_LINE = re.compile(r'^(.*?)\((\d+)\): (error|warning)', re.M)

_modules = {}       # (path, arch, options) -> (mtimes, RawModule)
_kernels = {}       # (file, name, device[, options]) -> RawKernel


class KernelCompileError(RuntimeError):
    """NVRTC rejected a ``.cu`` file; the message starts with ``file:line: error ...``."""


def source(path, _seen=None):
    """The text NVRTC compiles: ``path`` with quoted includes pasted in, and the files it read."""
    path = Path(path)
    seen = set() if _seen is None else _seen
    seen.add(path)
    out = [f'#line 1 "{path}"']
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = _INCLUDE.match(line)
        if m:
            header = (path.parent / m.group(1)).resolve()
            if header not in seen:               # each header once, like #pragma once
                out.append(source(header, seen)[0])
            out.append(f'#line {lineno + 1} "{path}"')
        else:
            out.append(line)
    return "\n".join(out), seen


def _compile(path, cupy, options=()):
    text, files = source(path)
    try:
        module = cupy.RawModule(code=text, options=OPTIONS + tuple(options))
        module.compile()      # compile now, so errors surface here and not at first launch
    except cupy.cuda.compiler.CompileException as e:
        log = str(e)
        where = _ERROR_LINE.search(log)
        head = f"{where.group(1)}:{where.group(2)}: " if where else f"{path}: "
        raise KernelCompileError(head + "NVRTC could not compile the kernel file.\n" + log) from None
    return module, {f: f.stat().st_mtime_ns for f in files}


def kernel(file, name, device=None, options=()):
    """The kernel ``name`` (an ``extern "C" __global__`` function) from ``minitorch/cuda/<file>``,
    for GPU ``device`` (default: the current one). ``options``: extra NVRTC options as a tuple of
    strings, e.g. ``("-DBM=128", "-DBN=64")`` to set a kernel's compile-time tile sizes; each
    distinct tuple is its own module.

    Ops call this on every launch and pass the device they already know: then a hit is one
    dictionary lookup (~0.1 us), with no CuPy calls.

    Raises:
        KernelCompileError: if NVRTC rejects the file (names file and line).
        AttributeError: if the file has no kernel of that name.
    """
    if device is not None:
        found = _kernels.get((file, name, device, options) if options else (file, name, device))
        if found is not None:
            return found
    from . import cupy_or_raise
    cupy = cupy_or_raise()
    dev = cupy.cuda.runtime.getDevice() if device is None else device
    key = (file, name, dev, options) if options else (file, name, dev)
    found = _kernels.get(key)
    if found is not None:
        return found
    path = KERNEL_DIR / file
    arch = cupy.cuda.Device(dev).compute_capability
    options = options + dtype_options(file, name)    # one module per dtype (end of this file)
    entry = _modules.get((path, arch, options))
    if entry is None:
        module, mtimes = _compile(path, cupy, options)
        _modules[(path, arch, options)] = entry = (mtimes, module)
    found = _kernels[key] = entry[1].get_function(name)
    return found


def forget_edited():
    """Drop compiled modules whose ``.cu``/``.cuh`` files changed on disk since they were built."""
    stale = [key for key, (mtimes, _) in _modules.items()
             if any(not f.exists() or f.stat().st_mtime_ns != t for f, t in mtimes.items())]
    for key in stale:
        del _modules[key]
    if stale:
        _kernels.clear()


def _watch_in_ipython():
    """In Jupyter/IPython, check for edited kernels before each cell (no cost per launch)."""
    try:
        ip = get_ipython()  # noqa: F821 - defined only inside IPython
    except NameError:
        return
    ip.events.register("pre_run_cell", lambda *_: forget_edited())


_watch_in_ipython()


# ---- one module per dtype ---------------------------------------------------------------------
# Compiled whole, a file that stamps out every op for every dtype keeps NVRTC busy for up to a
# minute (elementwise.cu) before its first kernel runs, though a notebook mostly computes in
# float32. The files listed here are compiled once per dtype instead, when a kernel of that dtype
# is first asked for: add_f32 compiles elementwise.cu with -DMT_DTYPE_f32, and the MT_IF_<suffix>
# guards of common.cuh keep only the kernels whose names end in _f32 (and those whose names end
# in no dtype, which every module has). Each dtype is then its own module, cached on its own.
DTYPE_SUFFIXES = ("f32", "f64", "i64", "bool")     # as native/cuda/launch.py's SUFFIX
SPLIT_BY_DTYPE = {"elementwise.cu", "copy.cu"}     # later phases add their files below


def dtype_options(file, name):
    """The NVRTC options that select kernel ``name``'s dtype group in ``file``:
    ``("-DMT_DTYPE_f32",)`` for ``dtype_options("elementwise.cu", "add_strided_f32")``; ``()`` (the
    whole file) for a file not in SPLIT_BY_DTYPE or a name whose last ``_`` token is no dtype."""
    suffix = name.rsplit("_", 1)[-1]
    if file in SPLIT_BY_DTYPE and suffix in DTYPE_SUFFIXES:
        return (f"-DMT_DTYPE_{suffix}",)
    return ()
SPLIT_BY_DTYPE.add("reduce.cu")
SPLIT_BY_DTYPE |= {"scan.cu", "index.cu", "sort.cu"}
DTYPE_SUFFIXES += ("f16", "bf16")
SPLIT_BY_DTYPE.add("multi_tensor.cu")
SPLIT_BY_DTYPE |= {"softmax.cu", "pooling.cu", "conv/03_implicit_gemm.cu"}
