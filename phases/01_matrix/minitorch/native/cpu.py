# GENERATED from minitorch/native/cpu.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""The cpu backend: each function takes and returns ``numpy.ndarray``s.

It is the reference the cuda backend is tested against, so it stays plain NumPy.
"""
import numpy as np


def _c(x, dtype=None):
    """``x`` as a C-contiguous array (0-d stays 0-d, unlike np.ascontiguousarray)."""
    return np.asarray(x, dtype=dtype, order="C")


def empty(shape, dtype, index=None):
    return np.empty(shape, dtype=dtype.numpy)


def full(shape, value, dtype, index=None):
    return np.full(shape, value, dtype=dtype.numpy)


def fill_(x, value):
    x[...] = value
    return x


def arange(start, step, n, dtype, index=None):
    """``n`` values ``start + i * step``, computed in float64 like the cuda kernel."""
    return (start + np.arange(n, dtype=np.float64) * step).astype(dtype.numpy)


def from_numpy(array, index=None):
    """Host data to this device: on cpu the array itself."""
    return array


def to_numpy(x):
    return x


def rand(shape, dtype, generator, index=None):
    """Uniform on [0, 1)."""
    return generator.random(shape, dtype=dtype.numpy)


def randn(shape, dtype, generator, index=None):
    """Standard normal."""
    return generator.standard_normal(shape, dtype=dtype.numpy)


