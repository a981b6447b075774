# GENERATED from minitorch/cuda/memory.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Where ``cuda`` tensors get their bytes: CuPy's caching memory pool, with peak tracking.

``cudaMalloc`` and ``cudaFree`` are slow, and ``cudaFree`` waits for the whole GPU, so, like
PyTorch, we keep freed blocks in a pool and hand them out again. CuPy's pool does that for now;
phase 05 replaces it with our own. We wrap its ``malloc`` only to remember the peak.
"""
_installed = False
_peak = {}          # device ordinal -> most bytes held at once


def install(cupy):
    """Route CuPy's allocations through :func:`_malloc` (once per process)."""
    global _installed, _pool
    if _installed:
        return
    _pool = cupy.get_default_memory_pool()
    getdevice = cupy.cuda.runtime.getDevice

    def _malloc(nbytes):
        block = _pool.malloc(nbytes)
        dev = getdevice()
        used = _pool.used_bytes()          # bytes handed out on this device
        if used > _peak.get(dev, 0):
            _peak[dev] = used
        return block

    cupy.cuda.set_allocator(_malloc)
    _installed = True


def allocated(cupy, index):
    with cupy.cuda.Device(index):
        return _pool.used_bytes()


def reserved(cupy, index):
    with cupy.cuda.Device(index):
        return _pool.total_bytes()


def peak(index):
    return _peak.get(index, 0)


def reset_peak(cupy, index):
    _peak[index] = allocated(cupy, index)
