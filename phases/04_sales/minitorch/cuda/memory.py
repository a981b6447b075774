# GENERATED from minitorch/cuda/memory.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Where ``cuda`` tensors get their bytes: CuPy's caching memory pool, with peak tracking.

``cudaMalloc`` and ``cudaFree`` are slow, and ``cudaFree`` waits for the whole GPU, so, like
PyTorch, we keep freed blocks in a pool and hand them out again. CuPy's pool does that for now;
phase 05 replaces it with our own. We wrap its ``malloc`` only to remember the peak.
"""
_installed = False
_pool = None
_peak = {}          # device ordinal -> most bytes held at once
_bound = {}         # device ordinal -> at least the bytes held now (see _malloc)


def install(cupy):
    """Route CuPy's allocations through :func:`_malloc` (once per process)."""
    global _installed, _pool
    if _installed:
        return
    _pool = cupy.get_default_memory_pool()
    cupy.cuda.set_allocator(_malloc)
    _installed = True


def _malloc(nbytes):
    """CuPy's allocator: a block from the pool, and the peak brought up to date.

    The bytes held only grow here (frees are not hooked), so the peak is always reached right
    after some malloc. Counting them exactly, ``_pool.used_bytes()``, walks every block in use:
    its cost grows with the number of live arrays. So we count only when the peak may have moved:
    ``_bound`` is the last exact count plus every block handed out since (``block.mem.size`` is
    the rounded size, exactly what used_bytes() counts for it); frees only make it larger than
    the truth. While the bound is at most the peak, so is the true count, and the peak stands.
    Exact, as long as the pool's blocks are handed out through here (CuPy's own are).
    """
    block = _pool.malloc(nbytes)
    dev = block.device_id                  # the device the pool allocated on: the current one
    bound = _bound.get(dev)
    peak = _peak.get(dev, 0)
    if bound is None or bound + block.mem.size > peak:
        bound = _pool.used_bytes()         # exact: bytes handed out on the current device
        if bound > peak:
            _peak[dev] = bound
    else:
        bound += block.mem.size
    _bound[dev] = bound
    return block


def allocated(cupy, index):
    with cupy.cuda.Device(index):
        return _pool.used_bytes()


def reserved(cupy, index):
    with cupy.cuda.Device(index):
        return _pool.total_bytes()


def peak(index):
    return _peak.get(index, 0)


def reset_peak(cupy, index):
    _peak[index] = _bound[index] = allocated(cupy, index)
