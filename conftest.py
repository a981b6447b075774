"""Pytest setup for the whole repository (tests/ and the phase notebooks run by nbval)."""
import os

import pytest

# notebooks executed by nbval inherit this: they run their CI-sized (quick) configuration
os.environ.setdefault("MINITORCH_QUICK", "1")
# BLAS and OpenMP threads of NumPy and PyTorch spin while waiting and steal each other's cores
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``cuda`` when CuPy or a GPU is missing, saying which."""
    import minitorch
    cupy, reason = minitorch.cuda._probe()
    if cupy is not None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
