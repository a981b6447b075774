"""Phase 01's caching allocator (minitorch/cuda/memory.py: exact-size free lists) without a GPU,
against a model of it. Phase 05 swaps in the block-splitting allocator (tests/test_allocator.py);
the fixture here puts phase 01's DevicePool back in place.

tests/fake_cuda.py stands in for CuPy: ``cuda.Memory`` hands out host buffers and records which
are alive, so the tests see every "cudaMalloc" and "cudaFree" the pool makes.
"""
import gc

import numpy as np
import pytest

import fake_cuda
import minitorch
from minitorch.cuda import memory


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(memory, "Pool", memory.DevicePool)
    return fake_cuda.install(monkeypatch)[0]


@pytest.mark.parametrize("nbytes, size", [(0, 512), (1, 512), (512, 512), (513, 1024), (4000, 4096),
                                          ((1 << 20) - 1, 1 << 20), (1 << 20, 1 << 20), ((1 << 20) + 1, 2 << 20)])
def test_size_classes(nbytes, size):
    assert memory.round_size(nbytes) == size


def test_a_freed_block_is_reused_on_its_stream_only(fake):
    pool = memory.pool(0, fake)
    block = pool.malloc(4000, stream=0)
    ptr = block.ptr
    del block
    assert fake.mallocs == 1 and pool.cached == 4096
    again = pool.malloc(4096, stream=0)              # same size class, same stream: the cached block
    assert again.ptr == ptr and fake.mallocs == 1 and pool.cached == 0
    del again
    other = pool.malloc(4000, stream=7)              # another stream may still be using it: a new one
    assert other.ptr != ptr and fake.mallocs == 2
    bigger = pool.malloc(5000, stream=0)             # another size class: a new one
    assert bigger.ptr != ptr and fake.mallocs == 3


@pytest.mark.parametrize("seed", range(10))
def test_counters_are_exact_under_random_mallocs_and_frees(fake, seed):
    rng = np.random.default_rng(seed)
    pool = memory.pool(0, fake)
    held, peak = [], 0
    for step in range(500):
        r = rng.random()
        if r < 0.03:
            pool.reset_peak()
            peak = sum(b.size for b in held)
        elif r < 0.05:
            pool.empty_cache()
        elif r < 0.5 and held:
            held.pop(int(rng.integers(0, len(held))))
        else:
            held.append(pool.malloc(int(rng.choice([0, 1, 100, 4000, 4096, 70000, 1 << 20])), int(rng.integers(0, 2))))
        on_loan = sum(b.size for b in held)
        peak = max(peak, on_loan)
        assert pool.allocated == on_loan, step
        assert pool.peak == peak, step
        assert pool.allocated + pool.cached == sum(fake.live.values()), step     # reserved = what the driver gave


def test_empty_cache_frees_only_cached_blocks(fake):
    pool = memory.pool(0, fake)
    kept = pool.malloc(1 << 20, 0)
    dropped = [pool.malloc(4096, 0) for _ in range(3)]
    del dropped
    assert len(fake.live) == 4
    pool.empty_cache()
    assert list(fake.live) == [kept.ptr] and pool.cached == 0 and pool.allocated == 1 << 20


def test_out_of_memory_frees_the_cache_and_retries(monkeypatch):
    monkeypatch.setattr(memory, "Pool", memory.DevicePool)
    fake, _ = fake_cuda.install(monkeypatch, limit=3 << 20)
    pool = memory.pool(0, fake)
    cached = [pool.malloc(1 << 20, 0) for _ in range(2)]
    del cached                                        # 2 MiB cached, 1 MiB free on the "GPU"
    big = pool.malloc(3 << 20, 0)                     # fits only once the cache is given back
    assert pool.allocated == 3 << 20 and pool.cached == 0
    with pytest.raises(fake_cuda.CUDARuntimeError):
        pool.malloc(1, 0)
    assert pool.allocated == 3 << 20 and big


def test_the_torch_cuda_style_api_reads_the_pool(fake):
    cuda = minitorch.cuda
    pool = memory.pool(0, fake)
    a = pool.malloc(10_000, 0)
    b = pool.malloc(1000, 0)
    assert cuda.memory_allocated() == 10_240 + 1024 == cuda.max_memory_allocated()
    del a
    gc.collect()
    assert cuda.memory_allocated() == 1024 and cuda.max_memory_allocated() == 11_264
    assert cuda.memory_reserved() == 11_264
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == 1024
    cuda.empty_cache()
    assert cuda.memory_reserved() == 1024 and b
    assert cuda.memory_allocated("cuda:1") == 0           # another GPU's pool
