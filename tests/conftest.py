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
