# GENERATED from minitorch/creation.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Factories: every way to make a tensor, with PyTorch's names and keywords.

Each takes ``dtype=`` (default float32, or what the data implies) and ``device=`` (default cpu).
On cuda the memory comes from the caching pool and the values from our kernels or cuRAND.
"""
import numbers

import numpy as np

from . import native, random
from .device import as_device
from .dtypes import as_dtype, float32, from_numpy_dtype, int64, scalar_dtype
from .tensor import Tensor, _unpack_ints

__all__ = ["tensor", "from_numpy", "empty", "zeros", "ones", "full", "rand", "randn", "arange",
           "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"]


def _shape(size):
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` alike."""
    size = _unpack_ints(size)
    for s in size:
        if not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"size must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _make(data, device, requires_grad):
    return Tensor(data, device, requires_grad=requires_grad)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data``: a number, nested lists, a NumPy array or a tensor.

    The dtype is inferred as PyTorch does when not given: bools -> bool, ints -> int64,
    floats -> float32; a NumPy array keeps its own (float64 stays float64).

    Raises:
        ValueError: for ragged nested lists.
        TypeError: for elements that are not numbers.
    """
    if isinstance(data, Tensor):
        array = data._host_array()
    elif isinstance(data, (np.ndarray, np.generic)):     # NumPy data keeps its dtype
        array = np.asarray(data)
    else:
        try:
            array = np.array(data)
        except ValueError as e:
            raise ValueError(f"tensor(): nested lists must be rectangular ({e})") from None
        if array.dtype == object or array.dtype.kind not in "biuf":
            raise TypeError(f"tensor(): expected numbers (bool, int or float), got {array.dtype} data")
        if array.dtype.kind == "f":
            array = array.astype(np.float32)     # Python floats become the default dtype
    dtype = from_numpy_dtype(array.dtype) if dtype is None else as_dtype(dtype)
    device = as_device(device)
    array = np.asarray(array, dtype=dtype.numpy)
    if device.type == "cpu":
        array = np.array(array, order="C", copy=True)     # tensor() never shares the caller's memory
    return _make(native.get(device).from_numpy(array, device.index), device, requires_grad)


def from_numpy(array):
    """A cpu tensor sharing memory with ``array`` (changes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy() expected a numpy.ndarray, got {type(array).__name__}")
    from_numpy_dtype(array.dtype)            # raises for dtypes we do not support
    return Tensor(array if array.dtype in (np.float32, np.float64, np.int64, np.bool_)
                  else array.astype(from_numpy_dtype(array.dtype).numpy))


def empty(*size, dtype=None, device=None, requires_grad=False):
    """Uninitialised memory: whatever bytes were there before (fast; never read before writing)."""
    device, dtype = as_device(device), as_dtype(dtype or float32)
    return _make(native.get(device).empty(_shape(size), dtype, device.index), device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """Every element ``fill_value``; the dtype follows the value (bool, int64 or float32)."""
    device = as_device(device)
    dtype = as_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    data = native.get(device).full(_shape((size,)), fill_value, dtype, device.index)
    return _make(data, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(_shape(size), 0, dtype=dtype or float32, device=device, requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(_shape(size), 1, dtype=dtype or float32, device=device, requires_grad=requires_grad)


def _random(draw, size, dtype, device, requires_grad):
    device, dtype = as_device(device), as_dtype(dtype or float32)
    if not dtype.is_floating_point:
        raise TypeError(f"random floats need a floating dtype, got {dtype}")
    backend = native.get(device)
    engine = random.cpu_generator() if device.type == "cpu" else None    # None: the GPU's own cuRAND
    data = getattr(backend, draw)(_shape(size), dtype, engine, index=device.index)
    return _make(data, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    """Uniform random numbers on [0, 1)."""
    return _random("rand", size, dtype, device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    """Standard normal random numbers (mean 0, variance 1)."""
    return _random("randn", size, dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` up to, not including, ``end``, ``step`` apart.

    ``arange(5)`` is 0..4. The dtype is int64 when start, end and step are all integers,
    else float32. Length is ``ceil((end - start) / step)``.

    Raises:
        ValueError: for a zero step, or a step pointing away from ``end``.
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(f"arange(): upper bound and step sign are inconsistent (start={start}, end={end}, step={step})")
    ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dtype = as_dtype(dtype) if dtype is not None else (int64 if ints else float32)
    n = int(np.ceil((end - start) / step))
    device = as_device(device)
    return _make(native.get(device).arange(start, step, n, dtype, device.index), device, requires_grad)


def _like(t, dtype, device):
    return dict(dtype=dtype or t.dtype, device=device or t.device)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    return empty(t.shape, **_like(t, dtype, device), requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return zeros(t.shape, **_like(t, dtype, device), requires_grad=requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return ones(t.shape, **_like(t, dtype, device), requires_grad=requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return full(t.shape, fill_value, **_like(t, dtype, device), requires_grad=requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    return rand(t.shape, **_like(t, dtype, device), requires_grad=requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    return randn(t.shape, **_like(t, dtype, device), requires_grad=requires_grad)
