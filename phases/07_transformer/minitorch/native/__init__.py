# GENERATED from minitorch/native/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Native implementations (ATen's `native/` in PyTorch): the same list of array functions, once per device.

``cpu.py`` computes with NumPy and is the reference; ``cuda/`` launches our kernels from
``minitorch/cuda/*.cu``. Both take and return raw arrays (``numpy.ndarray`` or our ``DeviceArray``):
the :class:`~minitorch.Tensor` layer above them owns devices, dtypes, errors and autograd.
"""
from . import cpu

_cuda = None        # the cuda backend module, imported on first use (it needs CuPy)


def get(device):
    """The backend module for a :class:`~minitorch.device`."""
    if device.type == "cpu":
        return cpu
    global _cuda
    if _cuda is None:
        # import once and keep the module: every op asks for its backend, and an import
        # statement costs ~0.7 us per call even when the module is already loaded
        from . import cuda
        _cuda = cuda
    return _cuda
