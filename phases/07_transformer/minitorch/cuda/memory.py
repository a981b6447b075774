# GENERATED from minitorch/cuda/memory.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Where ``cuda`` tensors get their bytes: our caching allocator.

Asking the driver for memory (``cudaMalloc``) takes tens of microseconds, and giving it back
(``cudaFree``) waits for the whole GPU to go idle. A training step frees and re-allocates the same
sizes thousands of times, so, like PyTorch, we keep freed blocks and hand them out again::

    malloc(4000 bytes) -> round up to 4096 -> free list for (GPU 0, stream s, 4096) empty?
                          yes: cudaMalloc a new block     no: pop a cached block (~0.1 us)
    a tensor dies      -> its Block goes back on that free list (no cudaFree)

Blocks are cached by exact (rounded) size: a training loop repeats its sizes, so after the first
step every allocation is a hit. (Phase 05 grows this into a pool that splits big blocks.)

Stream order makes reuse safe: a block freed while a kernel queued on stream ``s`` may still read
it is only handed out again for work queued on the same stream ``s``, which runs after that
kernel. Free lists are therefore kept per stream. (A tensor used on a second stream would need
PyTorch's ``record_stream``; we do not support that.)

CuPy makes the actual allocations (``cupy.cuda.Memory``: cudaMalloc, and cudaFree when dropped).
The counters below are exact at every moment: ``memory_allocated`` is the bytes of all blocks on
loan, ``memory_reserved`` adds the cached ones.
"""
from . import CUDA_ERROR_MEMORY_ALLOCATION

_SMALL = 1 << 20          # below 1 MiB sizes round up to 512 bytes, above to whole MiB
_pools = {}               # device ordinal -> DevicePool


class Block:
    """``size`` bytes of device memory at address ``ptr``, on loan to the arrays that use it.

    When the last reference dies (the last tensor or view of this memory), ``__del__`` returns the
    memory to its pool's free list. The GPU may still be running kernels on it: see the module
    docstring for why that is safe.
    """

    __slots__ = ("ptr", "size", "pool", "stream", "memory")

    def __init__(self, memory, size, pool, stream):
        self.ptr = memory.ptr
        self.size = size
        self.pool = pool
        self.stream = stream
        self.memory = memory            # the cupy.cuda.Memory that owns the cudaMalloc'd bytes

    def __del__(self):
        # the pool's release, written out here: this runs once per tensor that dies
        pool, size = self.pool, self.size
        pool.allocated -= size
        pool.cached += size
        found = pool.free.get((self.stream, size))
        if found is None:
            pool.free[self.stream, size] = [self.memory]
        else:
            found.append(self.memory)


def round_size(nbytes):
    """The size class of an ``nbytes`` request: a multiple of 512 bytes (whole MiB from 1 MiB).

    512 keeps every block aligned for 16-byte vector loads and wastes little; whole MiB for big
    blocks keep the number of distinct sizes (free lists) small.
    """
    if nbytes <= 0:
        return 512
    if nbytes < _SMALL:
        return (nbytes + 511) & ~511
    return (nbytes + _SMALL - 1) & ~(_SMALL - 1)


class DevicePool:
    """The caching allocator of one GPU: free lists and exact byte counters."""

    def __init__(self, index, cupy):
        self.index = index
        self.cupy = cupy
        self.free = {}          # (stream, size) -> [cupy.cuda.Memory, ...] cached blocks (Block.__del__ adds)
        self.allocated = 0      # bytes in Blocks on loan now
        self.cached = 0         # bytes in the free lists
        self.peak = 0           # most bytes on loan at once since the last reset_peak

    def malloc(self, nbytes, stream):
        """A Block of at least ``nbytes`` for work queued on ``stream`` (a CUstream handle).

        Raises:
            cupy.cuda.runtime.CUDARuntimeError: cudaErrorMemoryAllocation when the GPU is full even
                after the cache is freed (what cudaMalloc's failure becomes in CuPy).
        """
        size = round_size(nbytes)
        cached = self.free.get((stream, size))
        if cached:
            memory = cached.pop()
            self.cached -= size
        else:
            memory = self._cuda_malloc(size)
        self.allocated += size
        if self.allocated > self.peak:
            self.peak = self.allocated
        return Block(memory, size, self, stream)

    def _cuda_malloc(self, size):
        """cudaMalloc through CuPy on this pool's GPU; on failure free the cache and try once more."""
        with self.cupy.cuda.Device(self.index):
            try:
                return self.cupy.cuda.Memory(size)
            except self.cupy.cuda.runtime.CUDARuntimeError as e:     # how CuPy reports cudaMalloc failing
                if e.status != CUDA_ERROR_MEMORY_ALLOCATION:
                    raise
                self.empty_cache()
                return self.cupy.cuda.Memory(size)

    def empty_cache(self):
        """cudaFree every cached block (waits for the GPU). Blocks on loan are untouched."""
        self.free = {}          # dropping the cupy.cuda.Memory objects frees them
        self.cached = 0

    def reset_peak(self):
        self.peak = self.allocated


Pool = DevicePool          # the class pool() makes (phase 05 swaps in the block-splitting allocator)
from .allocator import CachingAllocator as Pool  # noqa: E402  blocks that split and merge (allocator.py)


def pool(index, cupy):
    """The allocator of GPU ``index`` (a ``Pool``, made on first use)."""
    found = _pools.get(index)
    if found is None:
        found = _pools[index] = Pool(index, cupy)
    return found


def pools():
    """Every pool made so far."""
    return list(_pools.values())
