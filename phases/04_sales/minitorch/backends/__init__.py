# GENERATED from minitorch/backends/__init__.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Backends: the same list of array functions, once for each device.

``cpu.py`` computes with NumPy and is the reference; ``cuda.py`` launches our kernels from
``minitorch/cuda/*.cu``. Both take and return raw arrays (``numpy.ndarray`` or ``cupy.ndarray``):
the :class:`~minitorch.Tensor` layer above them owns devices, dtypes, errors and autograd.
"""
from . import cpu


def get(device):
    """The backend module for a :class:`~minitorch.device`."""
    if device.type == "cpu":
        return cpu
    from . import cuda
    return cuda
