# GENERATED from minitorch/cuda/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""``minitorch.cuda``: is a GPU there, which one, and how much of its memory our tensors hold.

Everything here imports CuPy lazily, so ``import minitorch`` works on machines without a GPU or
without CuPy; asking for the GPU there raises :class:`CudaUnavailableError` saying what is missing.
Names follow ``torch.cuda``.
"""
import functools

INSTALL_HINT = ("install CuPy for your CUDA version, e.g. pip install 'minitorch-cuda-course[gpu]' "
                "(cupy-cuda12x) or pip install cupy-cuda13x")


CUDA_ERROR_MEMORY_ALLOCATION = 2   # cudaErrorMemoryAllocation (CUDA's driver_types.h): the GPU is full


class CudaUnavailableError(RuntimeError):
    """Raised when a ``cuda`` tensor or kernel is asked for and CuPy or a GPU is missing."""


@functools.lru_cache(maxsize=None)
def _probe():
    """(cupy module or None, reason or None). Cached: the answer does not change in a process."""
    try:
        import cupy
    except ImportError as e:
        return None, f"CuPy is not installed ({e}); {INSTALL_HINT}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:       # no driver, or a driver too old for this CuPy build
        return None, f"CuPy is installed but no CUDA GPU is usable ({e}); check nvidia-smi and the driver"
    if count == 0:
        return None, "CuPy is installed but no CUDA GPU is visible (cudaGetDeviceCount() == 0)"
    return cupy, None


def cupy_or_raise():
    """Return the ``cupy`` module.

    Raises:
        CudaUnavailableError: naming what is missing (CuPy, or a GPU) and how to get it.
    """
    cupy, reason = _probe()
    if cupy is None:
        raise CudaUnavailableError(f"cuda was asked for, but {reason}")
    return cupy


def is_available():
    """True when CuPy imports and at least one CUDA GPU is visible."""
    return _probe()[0] is not None


def device_count():
    """Number of visible CUDA GPUs (0 without CuPy or a GPU)."""
    cupy = _probe()[0]
    return cupy.cuda.runtime.getDeviceCount() if cupy is not None else 0


def _index(device):
    from ..device import as_device
    return 0 if device is None else as_device(device).index


def get_device_name(device=None):
    """The GPU's marketing name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    cupy = cupy_or_raise()
    name = cupy.cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device=None):
    """``(major, minor)`` compute capability, e.g. ``(9, 0)`` for Hopper."""
    cupy = cupy_or_raise()
    props = cupy.cuda.runtime.getDeviceProperties(_index(device))
    return props["major"], props["minor"]


def synchronize(device=None):
    """Block the host until every kernel queued on the GPU has finished."""
    cupy = cupy_or_raise()
    with cupy.cuda.Device(_index(device)):
        cupy.cuda.runtime.deviceSynchronize()


def current_stream(device=None):
    """The CuPy stream our kernels launch on (CuPy's current stream)."""
    cupy = cupy_or_raise()
    with cupy.cuda.Device(_index(device)):
        return cupy.cuda.get_current_stream()


def _pool(device):
    from . import memory
    return memory.pool(_index(device), cupy_or_raise())


def memory_allocated(device=None):
    """Bytes of device memory held by live tensors (blocks our caching allocator has on loan)."""
    return _pool(device).allocated


def max_memory_allocated(device=None):
    """Peak of :func:`memory_allocated` since start or the last :func:`reset_peak_memory_stats`."""
    return _pool(device).peak


def reset_peak_memory_stats(device=None):
    """Start peak tracking afresh from the bytes held now."""
    _pool(device).reset_peak()


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver: allocated plus cached free blocks."""
    pool = _pool(device)
    return pool.allocated + pool.cached


def empty_cache():
    """Give cached free blocks back to the driver (cudaFree; live tensors keep theirs)."""
    from . import memory
    for pool in memory.pools():
        pool.empty_cache()


def mem_get_info(device=None):
    """``(free, total)`` bytes of the whole GPU, as the driver reports them (cudaMemGetInfo)."""
    cupy = cupy_or_raise()
    with cupy.cuda.Device(_index(device)):
        return cupy.cuda.runtime.memGetInfo()


def max_memory_reserved(device=None):
    """Peak of :func:`memory_reserved` since start or the last :func:`reset_peak_memory_stats`."""
    return _pool(device).peak_reserved


def reset_accumulated_memory_stats(device=None):
    """Start the totals (``*.allocated``, ``*.freed``, ``num_alloc_retries``, ``num_ooms``) from zero."""
    _pool(device).reset_accumulated()


def memory_stats(device=None):
    """The caching allocator's statistics as ``torch.cuda.memory_stats`` names them: an OrderedDict
    of ``"<stat>.<pool>.<field>"`` -> int, where stat is ``allocation``, ``allocated_bytes``,
    ``active``, ``active_bytes``, ``segment``, ``reserved_bytes``, ``inactive_split`` or
    ``inactive_split_bytes``; pool is ``all``, ``small_pool`` or ``large_pool``; field is
    ``current``, ``peak``, ``allocated`` or ``freed``. Also ``num_alloc_retries``, ``num_ooms``,
    ``num_device_alloc`` and ``num_device_free``. Bytes are bytes; counts are blocks or segments.
    """
    return _pool(device).memory_stats()


def memory_summary(device=None, abbreviated=False):
    """A table of :func:`memory_stats` to print, laid out like ``torch.cuda.memory_summary``: a
    row per statistic (and, unless ``abbreviated``, one per pool under it), columns for now, peak,
    total allocated and total freed."""
    stats = memory_stats(device)
    rows = [("Allocated memory", "allocated_bytes", True), ("Active memory", "active_bytes", True),
            ("GPU reserved memory", "reserved_bytes", True),
            ("Non-releasable memory", "inactive_split_bytes", True),
            ("Allocations", "allocation", False), ("Active allocs", "active", False),
            ("GPU reserved segments", "segment", False), ("Non-releasable allocs", "inactive_split", False)]
    fields = ("current", "peak", "allocated", "freed")
    width = 14
    line = "|" + "-" * (33 + 4 * (width + 3)) + "|"
    out = [line, f"| MiniTorch CUDA memory summary, device {_index(device)}".ljust(len(line) - 1) + "|",
           f"| cudaMalloc retries: {stats['num_alloc_retries']:<8} cudaMalloc OOMs: {stats['num_ooms']}"
           .ljust(len(line) - 1) + "|", line,
           "| " + "Metric".ljust(32) + "".join(f"| {h:<{width}} " for h in
                                               ("Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed")) + "|", line]
    for title, name, is_bytes in rows:
        pools = [("all", title)] + ([] if abbreviated else [("large_pool", "      from large pool"),
                                                           ("small_pool", "      from small pool")])
        for pool_name, label in pools:
            values = [stats[f"{name}.{pool_name}.{f}"] for f in fields]
            cells = [_format_bytes(v) if is_bytes else str(v) for v in values]
            out.append("| " + label.ljust(32) + "".join(f"| {c:<{width}} " for c in cells) + "|")
        out.append(line)
    return "\n".join(out)


def _format_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
