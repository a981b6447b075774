"""Phase 05's block-splitting caching allocator (minitorch/cuda/allocator.py) without a GPU.

tests/fake_cuda.py stands in for CuPy: ``cuda.Memory`` hands out host buffers and records which
are alive, so the tests see every segment the allocator takes from the "driver" and gives back.
The random test checks every statistic against a model rebuilt from scratch by walking the blocks.
"""
import gc

import numpy as np
import pytest

import fake_cuda
import minitorch
from minitorch.cuda import allocator, memory
from minitorch.cuda.allocator import LARGE, SMALL

KiB, MiB = 1 << 10, 1 << 20


@pytest.fixture
def fake(monkeypatch):
    return fake_cuda.install(monkeypatch)[0]


def free_list(pool, kind=SMALL, stream=0):
    """[(size, ptr offset from the first block's segment start)] of a free list, in its order."""
    return [(size, ptr) for size, ptr, _ in pool.free_blocks[kind].get(stream, [])]


def test_phase_05_pool_is_the_caching_allocator(fake):
    assert isinstance(memory.pool(0, fake), allocator.CachingAllocator)


@pytest.mark.parametrize("nbytes, size", [(0, 512), (1, 512), (512, 512), (513, 1024), (4000, 4096),
                                          (MiB + 1, MiB + 512)])
def test_sizes_round_up_to_512_bytes(nbytes, size):
    assert allocator.round_size(nbytes) == size


@pytest.mark.parametrize("size, segment", [(512, 2 * MiB), (MiB, 2 * MiB), (MiB + 512, 20 * MiB),
                                           (10 * MiB - 512, 20 * MiB), (10 * MiB, 10 * MiB),
                                           (11 * MiB + 512, 12 * MiB), (12 * MiB, 12 * MiB)])
def test_segment_sizes(size, segment):
    assert allocator.segment_size(size) == segment


def test_a_small_request_splits_a_2_mib_segment(fake):
    pool = memory.pool(0, fake)
    a = pool.malloc(1000, 0)
    (base, nbytes), = fake.live.items()
    assert nbytes == 2 * MiB and a.ptr == base and a.size == 1024
    assert free_list(pool) == [(2 * MiB - 1024, base + 1024)]
    b = pool.malloc(3000, 0)                            # the next one is cut from the rest
    assert b.ptr == base + 1024 and b.size == 3072 and fake.mallocs == 1
    assert a.block.next is b.block and b.block.prev is a.block and b.block.next.ptr == base + 4096
    assert pool.allocated == 4096 and pool.cached == 2 * MiB - 4096


def test_freeing_merges_with_both_neighbours(fake):
    pool = memory.pool(0, fake)
    a, b, c, d = (pool.malloc(n, 0) for n in (1024, 2048, 4096, 512))
    base = a.ptr
    del a
    del c
    assert free_list(pool) == [(1024, base), (4096, base + 3072), (2 * MiB - 7680, base + 7680)]
    del b                                               # merges with a before it and c after it
    assert free_list(pool) == [(7168, base), (2 * MiB - 7680, base + 7680)]
    del d                                               # and now everything is one free block again
    assert free_list(pool) == [(2 * MiB, base)]
    stats = pool.memory_stats()
    assert stats["inactive_split_bytes.all.current"] == 0 and stats["inactive_split.all.current"] == 0
    assert pool.allocated == 0 and fake.mallocs == 1


def test_best_fit_takes_the_smallest_block_that_fits(fake):
    pool = memory.pool(0, fake)
    held = [pool.malloc(n, 0) for n in (8192, 512, 2048, 512, 4096, 512)]
    ptrs = [h.ptr for h in held]
    del held[4], held[2], held[0]                     # free: 8192, 2048, 4096 (kept apart by 512s)
    got = pool.malloc(3000, 0)                          # 3072: the 4096 block fits best
    assert got.ptr == ptrs[4] and got.size == 3072
    assert (1024, ptrs[4] + 3072) in free_list(pool)    # the rest of it stays cached
    exact = pool.malloc(2048, 0)
    assert exact.ptr == ptrs[2] and exact.size == 2048


def test_a_block_freed_on_one_stream_is_not_used_by_another(fake):
    pool = memory.pool(0, fake)
    a = pool.malloc(4096, stream=0)
    ptr = a.ptr
    del a
    other = pool.malloc(4096, stream=7)
    assert fake.mallocs == 2 and not (ptr <= other.ptr < ptr + 2 * MiB)
    same = pool.malloc(4096, stream=0)
    assert same.ptr == ptr and fake.mallocs == 2
    assert other.block.segment is not same.block.segment


def test_small_and_large_requests_use_separate_pools(fake):
    pool = memory.pool(0, fake)
    small = pool.malloc(MiB, 0)                         # the largest small request: a 2 MiB segment
    large = pool.malloc(MiB + 1, 0)                     # the smallest large one: a 20 MiB segment
    assert small.block.pool == SMALL and large.block.pool == LARGE
    assert sorted(fake.live.values()) == [2 * MiB, 20 * MiB]
    assert free_list(pool, SMALL) == [(MiB, small.ptr + MiB)]
    assert free_list(pool, LARGE) == [(20 * MiB - MiB - 512, large.ptr + MiB + 512)]
    del small
    again = pool.malloc(1 << 19, 0)                     # small requests never take from the large pool
    assert again.block.pool == SMALL and fake.mallocs == 2
    stats = pool.memory_stats()
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB
    assert stats["reserved_bytes.large_pool.current"] == 20 * MiB
    assert stats["allocated_bytes.large_pool.current"] == MiB + 512
    assert stats["segment.all.current"] == 2


def test_a_large_block_is_split_only_when_more_than_1_mib_remains(fake):
    pool = memory.pool(0, fake)
    a = pool.malloc(19 * MiB, 0)                        # 20 MiB segment, 1 MiB left: not split
    assert a.size == 20 * MiB and free_list(pool, LARGE) == []
    assert pool.allocated == 20 * MiB
    b = pool.malloc(8 * MiB, 0)                         # 20 MiB segment, 12 MiB left: split
    assert b.size == 8 * MiB and free_list(pool, LARGE) == [(12 * MiB, b.ptr + 8 * MiB)]
    c = pool.malloc(11 * MiB, 0)                        # best fit in the 12 MiB rest, 1 MiB left over
    assert c.ptr == b.ptr + 8 * MiB and c.size == 12 * MiB and fake.mallocs == 2


def test_a_small_block_is_split_when_512_bytes_remain(fake):
    pool = memory.pool(0, fake)
    a = pool.malloc(2 * MiB - 1024, 0)                   # a large request, in the large pool
    assert a.block.pool == LARGE
    held = [pool.malloc(MiB, 0), pool.malloc(MiB - 512, 0)]      # 512 bytes of a 2 MiB segment remain
    assert held[1].size == MiB - 512 and free_list(pool, SMALL) == [(512, held[0].ptr + 2 * MiB - 512)]


def test_empty_cache_gives_back_only_wholly_free_segments(fake):
    pool = memory.pool(0, fake)
    kept = pool.malloc(4096, 0)                         # a segment with a block on loan
    gone = pool.malloc(12 * MiB, 0)                     # a segment of its own
    other_stream = pool.malloc(100, 3)
    base = gone.ptr
    del gone, other_stream
    assert len(fake.live) == 3
    pool.empty_cache()
    assert list(fake.live) == [kept.ptr] and base not in fake.live
    assert free_list(pool) == [(2 * MiB - 4096, kept.ptr + 4096)] and free_list(pool, LARGE) == []
    stats = pool.memory_stats()
    assert stats["reserved_bytes.all.current"] == 2 * MiB and stats["segment.all.current"] == 1
    assert stats["num_device_free"] == 2 and stats["reserved_bytes.all.freed"] == 12 * MiB + 2 * MiB


def test_out_of_memory_empties_the_cache_retries_once_then_says_what_it_asked(monkeypatch):
    fake, _ = fake_cuda.install(monkeypatch, limit=24 * MiB)
    pool = memory.pool(0, fake)
    cached = pool.malloc(2 * MiB, 0)                    # a 20 MiB segment...
    del cached                                          # ...cached, 4 MiB left on the "GPU"
    big = pool.malloc(21 * MiB, 0)                      # a 22 MiB segment fits once the cache is gone
    assert pool.num_alloc_retries == 1 and list(fake.live.values()) == [22 * MiB]
    with pytest.raises(fake_cuda.OutOfMemoryError) as info:
        pool.malloc(13 * MiB, 0)                        # 14 MiB: no cache to give back
    message = str(info.value)
    assert "tried to allocate 13.00 MiB" in message and "22.00 MiB is reserved" in message
    assert "22.00 MiB is allocated" in message and "2.00 MiB of the GPU's 24.00 MiB is free" in message
    stats = pool.memory_stats()
    assert stats["num_alloc_retries"] == 2 and stats["num_ooms"] == 1
    assert pool.allocated == 22 * MiB and big


def test_a_cuda_error_other_than_out_of_memory_is_not_retried(fake, monkeypatch):
    def broken(size):
        raise fake_cuda.CUDARuntimeError(1)                # cudaErrorInvalidValue
    monkeypatch.setattr(fake.cuda, "Memory", broken)
    pool = memory.pool(0, fake)
    with pytest.raises(fake_cuda.CUDARuntimeError):
        pool.malloc(100, 0)
    assert pool.num_alloc_retries == 0 and pool.num_ooms == 0


def test_the_torch_cuda_style_api(fake):
    cuda = minitorch.cuda
    pool = memory.pool(0, fake)
    a = pool.malloc(10_000, 0)
    b = pool.malloc(1000, 0)
    assert cuda.memory_allocated() == 10_240 + 1024 == cuda.max_memory_allocated()
    assert cuda.memory_reserved() == 2 * MiB == cuda.max_memory_reserved()
    del a
    gc.collect()
    assert cuda.memory_allocated() == 1024 and cuda.max_memory_allocated() == 11_264
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == 1024
    stats = cuda.memory_stats()
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "allocated_bytes.all.allocated",
                "allocated_bytes.all.freed", "reserved_bytes.all.current", "active_bytes.all.current",
                "inactive_split_bytes.all.current", "segment.all.current", "allocation.all.current",
                "allocated_bytes.small_pool.current", "reserved_bytes.large_pool.peak",
                "num_alloc_retries", "num_ooms"):
        assert key in stats, key
    assert list(stats) == sorted(stats)
    assert stats["allocation.all.allocated"] == 2 and stats["allocation.all.freed"] == 1
    assert stats["inactive_split_bytes.all.current"] == 2 * MiB - 1024
    summary = cuda.memory_summary()
    assert "Allocated memory" in summary and "GPU reserved memory" in summary and "2.00 MiB" in summary
    cuda.reset_accumulated_memory_stats()
    stats = cuda.memory_stats()
    assert stats["allocation.all.allocated"] == stats["allocation.all.freed"] == 0
    assert stats["allocated_bytes.all.freed"] == 0 and stats["allocated_bytes.all.current"] == 1024
    c = pool.malloc(100, 0)
    del c
    stats = cuda.memory_stats()
    assert stats["allocation.all.allocated"] == stats["allocation.all.freed"] == 1
    assert stats["allocated_bytes.all.allocated"] == stats["allocated_bytes.all.freed"] == 512
    cuda.empty_cache()
    assert cuda.memory_reserved() == 2 * MiB and b                        # b's segment stays
    del b
    cuda.empty_cache()
    assert cuda.memory_reserved() == 0 and not fake.live


def test_device_arrays_borrow_and_return_blocks(monkeypatch):
    fake, arr = fake_cuda.install(monkeypatch)
    x = arr.from_numpy(np.arange(1000, dtype=np.float32), 0)
    y = arr.from_numpy(np.arange(10, dtype=np.int64), 0)
    assert y.ptr == x.ptr + 4096 and (x.get() == np.arange(1000)).all()
    del x
    assert minitorch.cuda.memory_allocated() == 512 and (y.get() == np.arange(10)).all()


# ---- every statistic against a model, under random sequences -----------------------------------
def _blocks(pool, held):
    """Every block the allocator knows: those on loan (held) and those in its free lists."""
    blocks = {id(a.block): a.block for a in held}
    for by_stream in pool.free_blocks.values():
        for free in by_stream.values():
            for _, _, block in free:
                blocks[id(block)] = block
    return list(blocks.values())


def _check_structure(pool, fake, held):
    """Segments tile their memory with linked blocks; free lists hold exactly the free blocks."""
    blocks = _blocks(pool, held)
    heads = {}
    for block in blocks:
        head = block
        while head.prev is not None:
            head = head.prev
        heads[head.ptr] = head
    assert sorted(heads) == sorted(fake.live), "every segment is reachable, none is leaked"
    seen = 0
    for ptr, head in heads.items():
        end, block, last_free = ptr, head, False
        while block is not None:
            assert block.ptr == end and block.segment.ptr == ptr and block.size % 512 == 0
            assert not (last_free and not block.allocated), "two free neighbours were not merged"
            assert block.next is None or block.next.prev is block
            last_free = not block.allocated
            end += block.size
            block, seen = block.next, seen + 1
        assert end - ptr == fake.live[ptr]
    assert seen == len(blocks)
    for kind, by_stream in pool.free_blocks.items():
        for stream, free in by_stream.items():
            assert free == sorted(free, key=lambda e: e[:2])
            for size, ptr, block in free:
                assert (size, ptr) == (block.size, block.ptr) and not block.allocated
                assert block.pool == kind and block.stream == stream
    return blocks


BYTES = {"allocation": "allocated_bytes", "inactive_split": "inactive_split_bytes"}


@pytest.mark.parametrize("seed", range(8))
def test_every_statistic_matches_a_model_under_random_mallocs_and_frees(monkeypatch, seed):
    fake, _ = fake_cuda.install(monkeypatch, limit=160 * MiB)
    rng = np.random.default_rng(seed)
    pool = memory.pool(0, fake)
    sizes = [0, 1, 100, 512, 4000, 70_000, MiB, MiB + 1, 3 * MiB, 9 * MiB, 12 * MiB + 7, 30 * MiB]
    held = []
    model = {}          # (name, pool) -> [current, peak, allocated, freed]; pool 0 all, 1 small, 2 large

    def observe():
        """Recompute the current values from the blocks; totals follow from the changes."""
        blocks = _check_structure(pool, fake, held)
        now = {}
        for b in blocks:
            if b.allocated:
                names = ["allocation"]
            else:
                names = ["inactive_split"] if b.is_split() else []
            for name in names:
                for kind in (0, b.pool):
                    now[name, kind] = now.get((name, kind), 0) + 1
                    now[BYTES[name], kind] = now.get((BYTES[name], kind), 0) + b.size
        for ptr, size in fake.live.items():
            head = next(b for b in blocks if b.segment.ptr == ptr)
            for kind in (0, head.pool):
                now["segment", kind] = now.get(("segment", kind), 0) + 1
                now["reserved_bytes", kind] = now.get(("reserved_bytes", kind), 0) + size
        for key in set(now) | set(model):
            row = model.setdefault(key, [0, 0, 0, 0])
            change = now.get(key, 0) - row[0]
            row[0] += change
            row[2 if change > 0 else 3] += abs(change)
            row[1] = max(row[1], row[0])

    stats = pool.memory_stats()
    names = {"allocation": "allocation", "allocated_bytes": "allocated_bytes", "active": "allocation",
             "active_bytes": "allocated_bytes", "segment": "segment", "reserved_bytes": "reserved_bytes",
             "inactive_split": "inactive_split", "inactive_split_bytes": "inactive_split_bytes"}
    for step in range(300):
        r = rng.random()
        if r < 0.02:
            pool.reset_peak()
            for row in model.values():
                row[1] = row[0]
        elif r < 0.05:
            pool.empty_cache()
        elif r < 0.5 and held:
            held.pop(int(rng.integers(0, len(held))))
        else:
            try:
                held.append(pool.malloc(int(rng.choice(sizes)), int(rng.integers(0, 2))))
            except fake_cuda.OutOfMemoryError:              # ours, a subclass of CuPy's
                pass
        observe()
        stats = pool.memory_stats()
        for stat, source in names.items():
            for kind, kind_name in enumerate(("all", "small_pool", "large_pool")):
                current, peak, total_in, _ = model.get((source, kind), [0, 0, 0, 0])
                got = [stats[f"{stat}.{kind_name}.{f}"] for f in ("current", "peak", "allocated", "freed")]
                where = f"step {step}: {stat}.{kind_name}"
                assert got[0] == current, where
                assert got[1] == peak, where
                assert got[0] == got[2] - got[3], where
                if source in ("allocation", "allocated_bytes"):
                    assert got[2] == total_in, where            # one block per malloc, one per free
        assert pool.allocated == sum(a.size for a in held)
        assert pool.allocated + pool.cached == sum(fake.live.values())
        assert stats["segment.all.allocated"] == stats["num_device_alloc"] == fake.mallocs
    assert stats["num_device_alloc"] - stats["num_device_free"] == len(fake.live)


# ---- on the GPU ------------------------------------------------------------------------------------
class _MLP(minitorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = minitorch.nn.Linear(784, 128)
        self.relu = minitorch.nn.ReLU()
        self.out = minitorch.nn.Linear(128, 10)

    def forward(self, x):
        return self.out(self.relu(self.hidden(x)))


@pytest.mark.cuda
def test_reserved_memory_stops_growing_over_1000_training_steps():
    """An MLP trained for 1000 steps, every 10th batch smaller (an epoch's last batch): after the
    first steps every request is served from the cache, so reserved memory stays flat, and
    nothing leaks (allocated memory comes back to the parameters' bytes after each step)."""
    cuda = minitorch.cuda
    rng = np.random.default_rng(0)
    minitorch.manual_seed(0)
    model = _MLP().cuda()
    opt = minitorch.optim.SGD(model.parameters(), lr=0.01)
    batches = []
    for n in (128, 40):
        x = minitorch.tensor(rng.standard_normal((n, 784)).astype(np.float32), device="cuda")
        y = minitorch.tensor(rng.integers(0, 10, n), device="cuda")
        batches.append((x, y))
    reserved, allocated = [], []
    for step in range(1000):
        x, y = batches[1] if step % 10 == 9 else batches[0]
        opt.zero_grad()
        loss = minitorch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        del loss
        reserved.append(cuda.memory_reserved())
        allocated.append(cuda.memory_allocated())
    cuda.synchronize()
    grew = [(step, reserved[step]) for step in range(1, 1000) if reserved[step] > reserved[step - 1]]
    assert all(step < 50 for step, _ in grew), f"reserved memory grew after step 50: (step, bytes) {grew}"
    assert allocated[-1] == allocated[50] and allocated[-11] == allocated[50], \
        f"allocated memory changes from step to step: {allocated[50]}, {allocated[-11]}, {allocated[-1]} bytes"
    stats = cuda.memory_stats()
    assert stats["num_ooms"] == 0 and stats["allocation.all.allocated"] > 10_000


@pytest.mark.cuda
def test_a_gpu_out_of_memory_error_names_the_request():
    import cupy as cp
    pool = memory.pool(0, cp)
    before = pool.num_ooms
    with pytest.raises(cp.cuda.memory.OutOfMemoryError) as info:
        pool.malloc(1 << 50, cp.cuda.get_current_stream().ptr)            # 1 PiB
    assert "tried to allocate 1073741824.00 MiB" in str(info.value) and "reserved by MiniTorch" in str(info.value)
    assert pool.num_ooms == before + 1 and pool.num_alloc_retries >= 1


@pytest.mark.cuda
def test_blocks_cut_from_one_segment_hold_their_own_bytes():
    """Many small arrays share 2 MiB segments: each one must read back exactly what was written."""
    from minitorch.cuda import array
    rng = np.random.default_rng(1)
    hosts = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 5000, 300)]
    devs = [array.from_numpy(h, 0) for h in hosts]
    for i in range(0, 300, 3):                  # free a third, reuse the holes, then read everything
        devs[i] = None
    for i in range(0, 300, 3):
        devs[i] = array.from_numpy(hosts[i], 0)
    for h, d in zip(hosts, devs):
        assert (d.get() == h).all()
