# GENERATED from minitorch/cuda/allocator.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 05
"""A caching allocator that splits big blocks and merges them back, in the manner of PyTorch's.

Phase 01's pool caches blocks by exact size: a model whose sizes change from step to step (a
last, smaller batch; a sequence that grows) keeps caching new sizes and never reuses the old
ones, so the memory held from the driver ("reserved") only grows. This allocator, like PyTorch's
CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp), asks the driver for big *segments* and
carves every request out of them::

    malloc(4000 bytes) -> round up to 4096 -> smallest free block >= 4096 on this stream and pool?
         found (say 2 MiB):  split it: [4096 on loan | 2 MiB - 4096 free]
         none:               cudaMalloc a new segment (2 MiB here), then split it the same way
    a tensor dies      -> its block is free again and merges with a free neighbour on either side

    one 2 MiB segment:  [ 4096 on loan ][ 1024 on loan ][ ......... free ......... ]
                          prev <-> next links join the blocks of a segment, in address order

Sizes (PyTorch's constants): every request rounds up to a multiple of 512 bytes. Requests up to
1 MiB come from the *small pool*, whose segments are 2 MiB; larger ones from the *large pool*,
whose segments are 20 MiB for requests below 10 MiB (so that several share one) and the request
rounded up to 2 MiB otherwise. Keeping small blocks apart stops them from pinning big segments.

A free block is split when what remains is worth keeping (at least 512 bytes in the small pool,
more than 1 MiB in the large pool: a sliver of a large segment is more use left attached). The
free blocks of each (pool, stream) sit in a list sorted by (size, address): :mod:`bisect` finds
the best fit, the smallest block that is big enough, in O(log n); an exact fit needs no split.
Every tensor pays this Python on creation and death: about 4-5 us per malloc+free pair on a busy
CPU, against 1 us for phase 01's exact-size lists (benchmarks/bench_allocator.py --fake), since
freed blocks merge back and the next requests split them again.

Streams: a block freed while a kernel queued on stream ``s`` may still read it goes back to the
free list of ``s`` only, and a segment belongs to the stream that asked for it, so its blocks are
only ever handed out for work queued on the same stream, which runs after that kernel.

``empty_cache()`` gives back (cudaFree) the segments that are wholly free; a segment with any
block on loan stays. When cudaMalloc fails, the allocator empties its cache and tries once more
(``num_alloc_retries``); if that fails too it raises an OutOfMemoryError that says how much was
asked for and where the GPU's memory is (``num_ooms``).

Statistics follow ``torch.cuda.memory_stats()``: each one has a current value, its peak, and the
totals allocated and freed, for all blocks and for each pool.
"""
import bisect
import collections
import functools

from . import CUDA_ERROR_MEMORY_ALLOCATION

MIN_BLOCK = 512                 # every size is a multiple of this (keeps 16-byte vector loads aligned)
SMALL_REQUEST = 1 << 20         # requests up to 1 MiB come from the small pool...
SMALL_SEGMENT = 2 << 20         # ...carved out of 2 MiB segments
LARGE_SEGMENT = 20 << 20        # requests of 1-10 MiB share 20 MiB segments
MIN_LARGE_ALLOC = 10 << 20      # from 10 MiB a segment is the request itself...
ROUND_LARGE = 2 << 20           # ...rounded up to 2 MiB

ALL, SMALL, LARGE = 0, 1, 2     # index of a Usage triple: all blocks, small pool, large pool
POOL_NAMES = ("all", "small_pool", "large_pool")
MiB = 1 << 20


def round_size(nbytes):
    """The bytes a request of ``nbytes`` takes: a multiple of 512 (512 for 0)."""
    return (nbytes + MIN_BLOCK - 1) & ~(MIN_BLOCK - 1) or MIN_BLOCK    # (0 rounds to 0: or gives 512)


def segment_size(size):
    """Bytes to cudaMalloc when no cached block fits a (rounded) request of ``size``."""
    if size <= SMALL_REQUEST:
        return SMALL_SEGMENT
    if size < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return (size + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1)


class Block:
    """``size`` bytes at ``ptr`` inside one segment, free or on loan.

    ``prev``/``next`` are the blocks just before and after it in its segment (None at the ends); a
    segment is wholly free when it is one free block with neither. ``segment`` is the
    ``cupy.cuda.Memory`` that owns the segment's bytes: every block holds it, so the segment lives
    until its last block is dropped.
    """

    __slots__ = ("ptr", "size", "stream", "pool", "segment", "prev", "next", "allocated")

    def __init__(self, ptr, size, stream, pool, segment):
        self.ptr = ptr
        self.size = size
        self.stream = stream
        self.pool = pool                # SMALL or LARGE
        self.segment = segment
        self.prev = None
        self.next = None
        self.allocated = False

    def is_split(self):
        """True when the block shares its segment with others."""
        return self.prev is not None or self.next is not None

    def __repr__(self):
        state = "on loan" if self.allocated else "free"
        return f"Block({self.size} bytes at {self.ptr:#x}, stream {self.stream}, {POOL_NAMES[self.pool]}, {state})"


class Allocation:
    """What a DeviceArray owns: a block on loan. When the last array using it dies, ``__del__``
    gives the block back to the allocator (the GPU may still be reading it: see the module
    docstring for why that is safe)."""

    __slots__ = ("ptr", "size", "block", "allocator")

    def __init__(self, block, allocator):
        self.ptr = block.ptr
        self.size = block.size
        self.block = block
        self.allocator = allocator

    def __del__(self):
        self.allocator.free(self.block)


class Usage:
    """How many blocks (or segments) and how many bytes: now, at the peak, and the totals added
    and taken away. ``torch.cuda.memory_stats`` reports each as two statistics, e.g. the usage
    ``allocation`` gives ``allocation.*`` (blocks) and ``allocated_bytes.*`` (bytes).

    The totals taken away are not counted as they happen (this runs on every tensor's death):
    they are what was added less what is here now, plus what was here when the totals were last
    reset (``*_at_reset``).
    """

    __slots__ = ("count", "count_peak", "count_added", "count_at_reset",
                 "bytes", "bytes_peak", "bytes_added", "bytes_at_reset")

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, 0)

    def add(self, nbytes):
        """One more block of ``nbytes``."""
        self.count += 1
        self.count_added += 1
        if self.count > self.count_peak:
            self.count_peak = self.count
        self.bytes += nbytes
        self.bytes_added += nbytes
        if self.bytes > self.bytes_peak:
            self.bytes_peak = self.bytes

    def remove(self, nbytes):
        """One block of ``nbytes`` fewer."""
        self.count -= 1
        self.bytes -= nbytes

    def replace(self, gone, gone_bytes, nbytes):
        """``gone`` blocks of ``gone_bytes`` bytes in all leave, then one block of ``nbytes`` comes
        (none when ``nbytes`` is 0): the numbers of ``gone`` remove() calls then one add(), in one
        update. (The peaks can only move at the add, the last step: checking them once is exact.)
        Written out rather than calling add(): it runs on every malloc and free that splits or merges."""
        if not nbytes:
            self.count -= gone
            self.bytes -= gone_bytes
            return
        self.count += 1 - gone
        self.count_added += 1
        if self.count > self.count_peak:
            self.count_peak = self.count
        self.bytes += nbytes - gone_bytes
        self.bytes_added += nbytes
        if self.bytes > self.bytes_peak:
            self.bytes_peak = self.bytes

    def reset_peak(self):
        self.count_peak, self.bytes_peak = self.count, self.bytes

    def reset_totals(self):
        self.count_added = self.bytes_added = 0
        self.count_at_reset, self.bytes_at_reset = self.count, self.bytes

    def fields(self, bytes_):
        """(current, peak, allocated, freed) of the bytes (``bytes_``) or of the count."""
        if bytes_:
            return (self.bytes, self.bytes_peak, self.bytes_added,
                    self.bytes_added + self.bytes_at_reset - self.bytes)
        return self.count, self.count_peak, self.count_added, self.count_added + self.count_at_reset - self.count


def _usages():
    return (Usage(), Usage(), Usage())            # indexed by ALL, SMALL, LARGE


@functools.lru_cache(maxsize=None)
def out_of_memory_error(base):
    """Our OutOfMemoryError for a CuPy whose own is ``base`` (a subclass, so that code catching
    CuPy's error catches ours): it carries a message of our own instead of CuPy's arguments."""

    class OutOfMemoryError(base):
        def __init__(self, message):
            MemoryError.__init__(self, message)

        def __str__(self):
            return self.args[0]

    return OutOfMemoryError


class CachingAllocator:
    """The block-splitting caching allocator of one GPU (``memory.pool(index)`` makes it).

    Attributes:
        free_blocks: ``{pool: {stream: [(size, ptr, Block), ...]}}``, each list sorted.
        loaned, segments, inactive_split: :class:`Usage` triples (all, small pool, large pool) of
            the blocks on loan, the segments held from the driver, and the free blocks that share
            a segment with others (cached, yet their segment cannot be given back). A malloc takes
            at most one such block off the free lists and caches at most one (the rest it cuts
            off); a free takes off the neighbours it absorbs and caches at most one (the merged
            block): inactive_split is updated once per malloc or free with the net change
            (Usage.replace: the same numbers as a remove per block gone and an add), rather than
            as each block moves, since this runs for every tensor made and freed.
        num_alloc_retries: times cudaMalloc failed and the cache was emptied to try again.
        num_ooms: requests that failed even after that retry.
    """

    def __init__(self, index, cupy):
        self.index = index
        self.cupy = cupy
        self.free_blocks = {SMALL: {}, LARGE: {}}
        self.loaned, self.segments, self.inactive_split = _usages(), _usages(), _usages()
        self.num_alloc_retries = self.num_ooms = 0
        self.num_device_alloc = self.num_device_free = 0          # cudaMalloc and cudaFree calls

    # ---- the two calls every tensor makes ------------------------------------------------------
    def malloc(self, nbytes, stream):
        """An Allocation of at least ``nbytes`` for work queued on ``stream`` (a CUstream handle).

        Raises:
            OutOfMemoryError (a subclass of cupy.cuda.memory.OutOfMemoryError): the GPU is full
                even after the cached segments were given back; the message names the request
                and the memory reserved, allocated and free.
        """
        size = round_size(nbytes)
        pool = SMALL if size <= SMALL_REQUEST else LARGE
        block = self._best_fit(pool, stream, size)
        taken = 0                   # bytes of a cached block that shared its segment (inactive split)
        if block is None:
            block = self._new_segment(pool, stream, size, nbytes)
        elif block.prev is not None or block.next is not None:
            taken = block.size
        rest = 0                    # bytes of the rest cut off and cached (it shares the segment)
        if block.size - size >= (MIN_BLOCK if pool == SMALL else SMALL_REQUEST + 1):
            self._split(block, size)
            rest = block.next.size
        if taken or rest:           # inactive split: the block taken left it, the rest joined it
            self.inactive_split[ALL].replace(1 if taken else 0, taken, rest)
            self.inactive_split[pool].replace(1 if taken else 0, taken, rest)
        block.allocated = True
        self.loaned[ALL].add(block.size)
        self.loaned[pool].add(block.size)
        return Allocation(block, self)

    def free(self, block):
        """Take back ``block`` (its Allocation died): merge it with free neighbours, cache it."""
        block.allocated = False
        self.loaned[ALL].remove(block.size)
        self.loaned[block.pool].remove(block.size)
        gone, gone_bytes = self._merge(block)
        self._insert_free(block)
        cached = block.size if block.prev is not None or block.next is not None else 0
        if gone or cached:          # inactive split: the neighbours absorbed left it, the merged block joined it
            self.inactive_split[ALL].replace(gone, gone_bytes, cached)
            self.inactive_split[block.pool].replace(gone, gone_bytes, cached)

    # ---- free lists ----------------------------------------------------------------------------
    def _best_fit(self, pool, stream, size):
        """Take the smallest cached block of ``pool`` on ``stream`` with at least ``size`` bytes
        off its free list; None when there is none."""
        free = self.free_blocks[pool].get(stream)
        if not free:
            return None
        i = bisect.bisect_left(free, (size,))           # (size,) sorts before every (size, ptr, block)
        if i == len(free):
            return None
        return free.pop(i)[2]

    def _insert_free(self, block):
        """Cache ``block`` on the free list of its pool and stream."""
        free = self.free_blocks[block.pool].get(block.stream)
        if free is None:
            free = self.free_blocks[block.pool][block.stream] = []
        bisect.insort(free, (block.size, block.ptr, block))

    def _remove_free(self, block):
        """Take ``block`` off its free list (found by bisection on its (size, ptr))."""
        free = self.free_blocks[block.pool][block.stream]
        del free[bisect.bisect_left(free, (block.size, block.ptr))]

    # ---- splitting and merging -----------------------------------------------------------------
    def _split(self, block, size):
        """Keep the first ``size`` bytes of ``block`` (which is off the free lists) and make the
        rest a new free block right after it in the segment."""
        # >>> exercise 05.1: split a block
        # hint: the rest starts at block.ptr + size, has block.size - size bytes, and the same stream, pool and segment
        # hint: link it between block and block.next in both directions (block.next may be None)
        # hint: then shrink block to size and cache the rest with self._insert_free(rest)
        rest = Block(block.ptr + size, block.size - size, block.stream, block.pool, block.segment)
        rest.prev, rest.next = block, block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        self._insert_free(rest)
        # <<< exercise

    def _merge(self, block):
        """Absorb the free neighbours of ``block`` (just freed, off the free lists) into it.
        Returns how many it absorbed and their bytes (cached blocks that shared the segment)."""
        gone = gone_bytes = 0
        before = block.prev
        if before is not None and not before.allocated:
            self._remove_free(before)
            gone, gone_bytes = 1, before.size
            block.ptr, block.size = before.ptr, before.size + block.size
            block.prev = before.prev
            if block.prev is not None:
                block.prev.next = block
        after = block.next
        if after is not None and not after.allocated:
            self._remove_free(after)
            gone, gone_bytes = gone + 1, gone_bytes + after.size
            block.size += after.size
            block.next = after.next
            if block.next is not None:
                block.next.prev = block
        return gone, gone_bytes

    # ---- talking to the driver -----------------------------------------------------------------
    def _new_segment(self, pool, stream, size, nbytes):
        """A new segment (one free block, off the free lists) big enough for ``size`` bytes. When
        cudaMalloc fails, give back the cached segments and try once more."""
        nsegment = segment_size(size)
        memory = self._cuda_malloc(nsegment)
        if memory is None:
            self.num_alloc_retries += 1
            self.empty_cache()
            memory = self._cuda_malloc(nsegment)
            if memory is None:
                self.num_ooms += 1
                oom = out_of_memory_error(self.cupy.cuda.memory.OutOfMemoryError)
                raise oom(self._oom_message(nbytes, nsegment))
        self.num_device_alloc += 1
        self.segments[ALL].add(nsegment)
        self.segments[pool].add(nsegment)
        return Block(memory.ptr, nsegment, stream, pool, memory)

    def _cuda_malloc(self, nbytes):
        """A ``cupy.cuda.Memory`` of ``nbytes`` on this GPU (cudaMalloc); None when the GPU is full."""
        runtime = self.cupy.cuda.runtime
        with self.cupy.cuda.Device(self.index):
            try:
                return self.cupy.cuda.Memory(nbytes)
            except runtime.CUDARuntimeError as e:          # what CuPy makes of cudaMalloc's failure
                if e.status != CUDA_ERROR_MEMORY_ALLOCATION:
                    raise
                return None

    def _oom_message(self, nbytes, nsegment):
        free, total = self.cupy.cuda.runtime.memGetInfo()
        reserved, allocated = self.segments[ALL].bytes, self.loaned[ALL].bytes
        return (f"CUDA out of memory on GPU {self.index}: tried to allocate {nbytes / MiB:.2f} MiB "
                f"(a new {nsegment / MiB:.2f} MiB segment); {reserved / MiB:.2f} MiB is reserved by "
                f"MiniTorch, of which {allocated / MiB:.2f} MiB is allocated to tensors; "
                f"{free / MiB:.2f} MiB of the GPU's {total / MiB:.2f} MiB is free")

    def empty_cache(self):
        """cudaFree every segment that is wholly free (one free block); others stay, as they are."""
        for pool, by_stream in self.free_blocks.items():
            for stream, free in by_stream.items():
                whole = [entry for entry in free if not entry[2].is_split()]
                if not whole:
                    continue
                by_stream[stream] = [entry for entry in free if entry[2].is_split()]
                for size, _ptr, _block in whole:
                    self.num_device_free += 1
                    self.segments[ALL].remove(size)
                    self.segments[pool].remove(size)
                # the blocks (and with them their cupy.cuda.Memory) die here: cudaFree

    # ---- what memory_allocated() and friends read ----------------------------------------------
    @property
    def allocated(self):
        """Bytes of blocks on loan now."""
        return self.loaned[ALL].bytes

    @property
    def cached(self):
        """Bytes reserved from the driver but not on loan (free blocks)."""
        return self.segments[ALL].bytes - self.loaned[ALL].bytes

    @property
    def peak(self):
        """Most bytes on loan at once since the start or the last reset_peak()."""
        return self.loaned[ALL].bytes_peak

    @property
    def peak_reserved(self):
        """Most bytes held from the driver at once since the start or the last reset_peak()."""
        return self.segments[ALL].bytes_peak

    def _all_usages(self):
        return self.loaned + self.segments + self.inactive_split

    def reset_peak(self):
        """Every peak starts afresh from the current value."""
        for usage in self._all_usages():
            usage.reset_peak()

    def reset_accumulated(self):
        """The totals allocated and freed, and the retry and OOM counts, start from zero."""
        for usage in self._all_usages():
            usage.reset_totals()
        self.num_alloc_retries = self.num_ooms = self.num_device_alloc = self.num_device_free = 0

    def memory_stats(self):
        """``torch.cuda.memory_stats()``'s flat dictionary, keys sorted: ``"<stat>.<pool>.<field>"``
        with pool ``all``/``small_pool``/``large_pool`` and field current/peak/allocated/freed,
        plus the counts ``num_alloc_retries``, ``num_ooms``, ``num_device_alloc`` and
        ``num_device_free``. Our frees are never deferred (there is no ``record_stream``), so
        ``active`` equals ``allocation`` and ``active_bytes`` equals ``allocated_bytes``."""
        out = {"num_alloc_retries": self.num_alloc_retries, "num_ooms": self.num_ooms,
               "num_device_alloc": self.num_device_alloc, "num_device_free": self.num_device_free}
        names = [("allocation", "allocated_bytes", self.loaned), ("active", "active_bytes", self.loaned),
                 ("segment", "reserved_bytes", self.segments),
                 ("inactive_split", "inactive_split_bytes", self.inactive_split)]
        for count_name, bytes_name, usages in names:
            for pool_name, usage in zip(POOL_NAMES, usages):
                for name, bytes_ in ((count_name, False), (bytes_name, True)):
                    for field, value in zip(("current", "peak", "allocated", "freed"), usage.fields(bytes_)):
                        out[f"{name}.{pool_name}.{field}"] = value
        return collections.OrderedDict(sorted(out.items()))
