# GENERATED from minitorch/device.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Devices: where a tensor's bytes live.

``cpu`` tensors keep a ``numpy.ndarray`` in host memory. ``cuda`` tensors keep device memory,
allocated and owned through CuPy, and every op on them runs one of our kernels.
"""


class device:
    """A device such as ``device('cpu')``, ``device('cuda')`` or ``device('cuda', 1)``.

    Attributes:
        type: ``'cpu'`` or ``'cuda'``.
        index: the GPU ordinal for ``cuda`` (``None`` for ``cpu``).

    Raises:
        ValueError: for any other device string, or a negative index.
    """

    __slots__ = ("type", "index", "_hash")
    _interned = {}          # (type, index) -> the one device object for it

    # Devices are interned: device('cuda') twice gives the same object. Every op checks that its
    # tensors share a device, and `a is b` is much cheaper than calling __eq__ (a Python method).
    def __new__(cls, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise ValueError(f"device index must be a non-negative integer, got '{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise ValueError(f"unknown device '{type}': expected 'cpu', 'cuda' or 'cuda:N'")
        if type == "cpu":
            index = None
        elif index is None:
            index = 0
        elif index < 0:
            raise ValueError(f"device index must be non-negative, got {index}")
        self = cls._interned.get((type, index))
        if self is None:
            self = super().__new__(cls)
            self.type = type
            self.index = index
            self._hash = hash((type, index))    # once: devices key dicts on every optimizer step
            cls._interned[(type, index)] = self
        return self

    def __reduce__(self):             # pickle and copy by value, so devices stay interned
        return (device, (self.type, self.index))

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return self._hash

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        return f"device(type='{self.type}'" + ("" if self.index is None else f", index={self.index}") + ")"


CPU = device("cpu")


def as_device(d):
    """Accept ``None`` (meaning cpu), a string, an int (a GPU ordinal) or a ``device``."""
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return device("cuda", d)
    return device(d)
