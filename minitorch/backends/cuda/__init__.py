# phase: 01
"""The cuda backend: each function takes and returns ``cupy.ndarray``s, computed by our kernels.

One module per concept; this file gathers their functions so ``backends.get(device)`` gives one
namespace with the same names as ``backends/cpu.py``.
"""
from .creation import arange, empty, fill_, from_numpy, full, rand, randn, to_numpy
