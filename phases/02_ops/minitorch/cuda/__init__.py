# GENERATED from minitorch/cuda/__init__.py by tools/sync_phases.py (phase 02 snapshot): edit the source and re-run, not this file.
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
