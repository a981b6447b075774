# GENERATED from minitorch/random.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
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


class Generator:
    """A random number generator of its own, seeded apart from the global one (``torch.Generator``).

    Pass it as ``generator=`` to any random function of its device: the same seed then gives the
    same numbers on that device, whatever the global generator does. On ``cpu`` it wraps a NumPy
    PCG64 generator; on ``cuda`` it owns a cuRAND Philox generator (created on first use). Streams
    differ between the two devices and from PyTorch's: a seed repeats a run on one device only.

        g = minitorch.Generator().manual_seed(42)
        minitorch.rand(3, generator=g)
    """

    def __init__(self, device="cpu"):
        from .device import as_device
        self.device = as_device(device)
        self._handle = None                  # the cuRAND generator, on cuda
        self.manual_seed(0)

    def manual_seed(self, seed):
        """Restart the stream from ``seed`` (a non-negative int); returns ``self``."""
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        if self._handle is not None:         # restart Philox: the seed, and the position back to 0
            _curand_module().setPseudoRandomGeneratorSeed(self._handle, seed)
            _curand_module().setGeneratorOffset(self._handle, 0)
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed (``torch``'s)."""
        seed = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """The seed of the stream (last given to ``manual_seed`` or ``seed``)."""
        return self._seed

    def get_state(self):
        """The cpu generator's state (a dict, NumPy's bit-generator state); restore with set_state.

        Raises:
            NotImplementedError: on cuda (cuRAND keeps its position internally).
        """
        if self.device.type != "cpu":
            raise NotImplementedError("Generator.get_state() is only available on cpu (cuRAND keeps its position)")
        return self._rng.bit_generator.state

    def set_state(self, state):
        """Restore a state from :meth:`get_state`; returns ``self``."""
        if self.device.type != "cpu":
            raise NotImplementedError("Generator.set_state() is only available on cpu (cuRAND keeps its position)")
        self._rng.bit_generator.state = state
        return self

    def _engine(self, device):
        """What the backend draws from: the NumPy generator on cpu, the cuRAND handle on cuda.

        Raises:
            RuntimeError: the generator belongs to another device type than the tensor made.
        """
        if device.type != self.device.type:
            raise RuntimeError(f"Expected a '{device.type}' device type for generator but found '{self.device.type}'")
        if device.type == "cpu":
            return self._rng
        if self._handle is None:             # cuRAND works on the current device: create it on ours
            import cupy as cp
            with cp.cuda.Device(self.device.index):
                curand = _curand_module()
                self._handle = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
                curand.setPseudoRandomGeneratorSeed(self._handle, self._seed)
        return self._handle

    def __repr__(self):
        return f"<minitorch.Generator device={self.device} seed={self._seed}>"


def _curand_module():
    import cupy as cp
    return cp.cuda.curand


default_generator = Generator("cpu")          # minitorch.default_generator, like torch's


def cpu_generator():                         # noqa: F811 - replaces phase 01's: the default Generator's
    """The NumPy generator behind cpu random functions (the default Generator's)."""
    return default_generator._rng


_manual_seed_all = manual_seed               # phase 01's: seeds the cpu and tells every GPU to reseed


def manual_seed(seed):                       # noqa: F811 - replaces phase 01's: returns the Generator
    """Seed the cpu generator and every GPU's default generator with ``seed`` (a non-negative int).
    Returns ``minitorch.default_generator`` (the cpu one), as ``torch.manual_seed`` does."""
    _manual_seed_all(seed)
    default_generator.manual_seed(seed)
    return default_generator


def engine(generator, device):
    """What a backend draws from for ``device``: ``generator``'s engine, or the device's default
    (cpu: the default Generator's NumPy generator; cuda: None, the GPU's own cuRAND generator).

    Raises:
        TypeError: ``generator`` is not a Generator.
        RuntimeError: it belongs to another device type.
    """
    if generator is None:
        return cpu_generator() if device.type == "cpu" else None
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a minitorch.Generator, got {type(generator).__name__}")
    return generator._engine(device)


def get_rng_state():
    """The cpu generator's state as an int64 tensor of 6 numbers, to save in a checkpoint and give
    back to :func:`set_rng_state` (PyTorch's names; its tensor holds other bytes).

    NumPy's PCG64 state is two 128-bit integers (state and increment) and a buffered 32-bit draw
    (a flag and the value); each 128-bit one is stored as two 64-bit halves. GPU generators
    (cuRAND) are not included.
    """
    from .creation import from_numpy
    s = cpu_generator().bit_generator.state
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
    cpu_generator().bit_generator.state = {
        "bit_generator": "PCG64", "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]},
        "has_uint32": w[4], "uinteger": w[5]}


_MASK64 = (1 << 64) - 1
