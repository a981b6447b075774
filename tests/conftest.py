"""Shared fixtures: every device-generic test runs on cpu and (marked ``cuda``) on the GPU."""
import zlib

import numpy as np
import pytest


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request):
    return request.param


@pytest.fixture
def rng(request):
    """Fresh random data per test, reproducible from the test's name."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def poisoned_allocator(monkeypatch):
    """Every block our caching allocator hands out is first filled with 0xFF bytes (NaN for floats,
    -1 for int64, an invalid 0xFF for bool), so an output element a kernel forgot to write fails.
    GPU test modules turn it on with ``pytest.mark.usefixtures("poisoned_allocator")``."""
    import cupy as cp
    from minitorch.cuda import memory
    real = memory.Pool.malloc

    def malloc(self, nbytes, stream):
        block = real(self, nbytes, stream)
        cp.cuda.runtime.memsetAsync(block.ptr, 0xFF, block.size, stream)
        return block
    monkeypatch.setattr(memory.Pool, "malloc", malloc)


@pytest.fixture
def poisoned_allocator_on_cuda(request):
    """``poisoned_allocator`` for a test's cuda case only (its ``device`` is "cuda"): the cpu cases
    run where CuPy is missing. Modules use it as they use ``poisoned_allocator``."""
    if "device" in request.fixturenames and request.getfixturevalue("device") == "cuda":
        request.getfixturevalue("poisoned_allocator")
