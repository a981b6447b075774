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


def get_rng_state():
    """The cpu generator's state as an int64 tensor of 6 numbers, to save in a checkpoint and give
    back to :func:`set_rng_state` (PyTorch's names; its tensor holds other bytes).

    NumPy's PCG64 state is two 128-bit integers (state and increment) and a buffered 32-bit draw
    (a flag and the value); each 128-bit one is stored as two 64-bit halves. GPU generators
    (cuRAND) are not included.
    """
    from .creation import from_numpy
    s = _cpu_generator.bit_generator.state
    words = [s["state"]["state"] >> 64, s["state"]["state"], s["state"]["inc"] >> 64, s["state"]["inc"],
             s["has_uint32"], s["uinteger"]]
    return from_numpy(np.array([w & _MASK64 for w in words], dtype=np.uint64).view(np.int64))


def set_rng_state(new_state):
    """Restore the cpu generator to a state :func:`get_rng_state` gave. The generator object is
    updated in place, so a DataLoader given ``cpu_generator()`` follows it.

    Raises:
        RuntimeError: ``new_state`` is not an int64 tensor of 6 numbers.
    """
    if tuple(new_state.shape) != (6,) or new_state.dtype.name != "int64":
        raise RuntimeError(f"set_rng_state: expected the int64 tensor of shape (6,) that get_rng_state gives, "
                           f"got {new_state.dtype} of shape {tuple(new_state.shape)}")
    w = [int(v) for v in new_state.cpu().numpy().view(np.uint64)]
    _cpu_generator.bit_generator.state = {
        "bit_generator": "PCG64", "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]},
        "has_uint32": w[4], "uinteger": w[5]}


_MASK64 = (1 << 64) - 1
