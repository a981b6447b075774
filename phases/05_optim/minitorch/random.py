# GENERATED from minitorch/random.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Seeding: ``minitorch.manual_seed(s)`` makes both devices repeat the same random numbers.

The cpu device draws from NumPy's PCG64 generator; each GPU draws from a cuRAND Philox generator.
The two streams differ from each other and from PyTorch's: a seed repeats a run on one device.
"""
import numpy as np

_seed = 0
_epoch = 0                                   # bumped by manual_seed: GPUs re-create their generators
_cpu_generator = np.random.default_rng(_seed)


def manual_seed(seed):
    """Seed the cpu generator and every GPU's generator with ``seed`` (a non-negative int)."""
    global _seed, _epoch, _cpu_generator
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    _seed, _epoch = seed, _epoch + 1
    _cpu_generator = np.random.default_rng(seed)
    return seed


def initial_seed():
    """The seed last given to :func:`manual_seed` (0 at start)."""
    return _seed


def seed_epoch():
    return _epoch


def cpu_generator():
    """The NumPy generator behind cpu ``rand``/``randn``."""
    return _cpu_generator
