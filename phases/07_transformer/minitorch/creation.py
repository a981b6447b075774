# GENERATED from minitorch/creation.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
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
from . import dtypes as _dtypes
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
    if array.dtype in _dtypes.HALF_NUMPY:    # float16 and ml_dtypes.bfloat16 share memory too
        return Tensor(array)
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


# ---- random numbers from a chosen generator, and more factories ---------------------------------
__all__ += ["randint", "linspace", "logspace", "eye", "empty_strided"]


def _random(draw, size, dtype, device, requires_grad, generator=None):    # noqa: F811 - adds generator=
    device, dtype = as_device(device), as_dtype(dtype or float32)
    if not dtype.is_floating_point:
        raise TypeError(f"random floats need a floating dtype, got {dtype}")
    data = getattr(native.get(device), draw)(_shape(size), dtype, random.engine(generator, device),
                                             index=device.index)
    return _make(data, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):     # noqa: F811
    """Uniform random numbers on [0, 1), from ``generator`` (a ``minitorch.Generator`` of that
    device) or the global generator."""
    return _random("rand", size, dtype, device, requires_grad, generator)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):    # noqa: F811
    """Standard normal random numbers (mean 0, variance 1), from ``generator`` or the global one."""
    return _random("randn", size, dtype, device, requires_grad, generator)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    The dtype is int64 unless given (other dtypes get the same integers, converted). On cuda each
    value is ``low + floor(w * (high - low) / 2^64)`` for a random 64-bit word w (random.cu).

    Raises:
        TypeError: no size.
        RuntimeError: ``high <= low`` (PyTorch's message).
    """
    if size is None and high is not None and not isinstance(high, numbers.Integral):
        low, high, size = 0, low, high                  # randint(high, size)
    elif high is None:
        low, high = 0, low                              # randint(high, size=...)
    if size is None:
        raise TypeError("randint() missing the required argument 'size' (a tuple of ints)")
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    device, dtype = as_device(device), as_dtype(dtype or int64)
    backend = native.get(device)
    data = backend.randint(low, high, _shape((size,)), random.engine(generator, device), index=device.index)
    if dtype is not int64:
        data = backend.cast(data, dtype)
    return _make(data, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (float32 by default).

    PyTorch's formula: ``start`` and ``end`` are first converted to the dtype (an integer dtype
    truncates them), step = (end - start) / (steps - 1), and the first half is counted from start,
    the second half back from end, so both ends are exact. Computed in float64, rounded once.

    Raises:
        RuntimeError: ``steps`` negative.
    """
    return _spaced("linspace", start, end, steps, None, dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``: ``steps`` values from base^start to base^end."""
    return _spaced("logspace", start, end, steps, float(base), dtype, device, requires_grad)


def _spaced(name, start, end, steps, base, dtype, device, requires_grad):
    if not isinstance(steps, numbers.Integral) or steps < 0:
        raise RuntimeError(f"{name}(): number of steps must be non-negative, got {steps}")
    device, dtype = as_device(device), as_dtype(dtype or float32)
    to_dtype = dtype.numpy.type if dtype.is_floating_point else int     # start/end as the dtype holds them
    start, end = float(to_dtype(start)), float(to_dtype(end))
    data = native.get(device).linspace(start, end, int(steps), dtype, base, index=device.index)
    return _make(data, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n`` x ``m`` identity matrix (``m = n`` by default): ones on the main diagonal.

    Raises:
        RuntimeError: a negative size.
    """
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye(): n and m must be non-negative, got n={n}, m={m}")
    device, dtype = as_device(device), as_dtype(dtype or float32)
    return _make(native.get(device).eye(int(n), int(m), dtype, index=device.index), device, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """Uninitialised memory seen through ``size`` and ``stride`` (in elements, like
    ``Tensor.stride()``), over a buffer just large enough for the farthest element.

    Raises:
        RuntimeError: ``size`` and ``stride`` differ in length, or a stride is negative.
    """
    size, stride = _shape((size,)), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size has {len(size)} dims, "
                           f"stride has {len(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided(): negative strides are not supported, got {stride}")
    device, dtype = as_device(device), as_dtype(dtype or float32)
    data = native.get(device).empty_strided(size, stride, dtype, index=device.index)
    return _make(data, device, requires_grad)


# ---- random permutations, categorical draws, coin flips -----------------------------------------
from .dtypes import float64  # noqa: E402 - phase 04 adds it

__all__ += ["randperm", "multinomial", "bernoulli"]


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64 unless ``dtype``). On cuda: 63-bit random keys
    sorted by a bitonic network, the positions carried along (random.cu).

    Raises:
        RuntimeError: ``n`` negative.
    """
    if not isinstance(n, numbers.Integral) or n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    device, dtype = as_device(device), as_dtype(dtype or int64)
    backend = native.get(device)
    data = backend.randperm(int(n), random.engine(generator, device), index=device.index)
    if dtype is not int64:
        data = backend.cast(data, dtype)
    return _make(data, device, requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw ``num_samples`` category indices from each row of ``input`` (weights, 1-D [n] or 2-D
    [rows, n], non-negative, not necessarily summing to 1): int64 [num_samples] or
    [rows, num_samples].

    With replacement: inverse CDF, the first category whose running sum exceeds u * total.
    Without: the exponential race (Efraimidis & Spirakis 2006; the Gumbel top-k trick): each
    category gets the key Exp(1) / p, the ``num_samples`` smallest keys are the draw, in order.
    A category of weight 0 is never drawn. (Same distributions as PyTorch, other streams.)

    Raises:
        RuntimeError: ``input`` not 1-D or 2-D, not floating, no categories; ``num_samples`` < 1,
            or more than the categories without replacement; on cpu also negative, inf or NaN
            weights, or a row without enough positive weights (checked there only: on cuda the
            check would make the host wait for the GPU, so bad rows give unspecified indices).
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial(): prob_dist must be 1 or 2 dim, got {input.ndim} dims")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.name}")
    n = input.shape[-1]
    if n == 0:
        raise RuntimeError("multinomial(): the number of categories must be at least 1")
    if num_samples < 1:
        raise RuntimeError(f"multinomial(): cannot sample n_sample <= 0 samples (got {num_samples})")
    if not replacement and num_samples > n:
        raise RuntimeError(f"multinomial(): cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement ({num_samples} > {n})")
    probs = input.detach().reshape(-1, n)
    if probs.dtype not in (float32, float64):
        probs = probs.float()                           # float16/bfloat16 weights, drawn in float32
    probs = probs.contiguous()
    if input.device.type == "cpu":
        _check_weights(probs.numpy(), num_samples, replacement)
    engine = random.engine(generator, input.device)
    data = probs._backend.multinomial(probs._data, int(num_samples), bool(replacement), engine)
    out = Tensor(data, input.device)
    return out if input.ndim == 2 else out.reshape(num_samples)


def _check_weights(p, num_samples, replacement):
    """PyTorch's cpu checks of multinomial weights (a [rows, n] NumPy array)."""
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(p.sum(axis=1) <= 0):
        raise RuntimeError("multinomial(): invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and np.any((p > 0).sum(axis=1) < num_samples):
        raise RuntimeError("multinomial(): invalid multinomial distribution (with replacement=False, "
                           "not enough non-negative category to sample)")


def bernoulli(input, p=None, *, generator=None):
    """0/1 draws of ``input``'s shape and dtype: 1 with probability ``input`` element-wise, or
    with probability ``p`` (a number) when given. A uniform draw u in [0, 1) gives 1 when u < p.
    Not differentiable (the result carries no gradient).

    Raises:
        RuntimeError: ``input`` is not floating (its elements are probabilities) and no ``p``.
    """
    if p is None and not input.dtype.is_floating_point:
        raise RuntimeError(f"bernoulli(): expected a floating input of probabilities, got {input.dtype.name}")
    draw_dtype = input.dtype if input.dtype.is_floating_point else float32
    u = rand(input.shape, generator=generator, dtype=draw_dtype, device=input.device)
    probs = input.detach() if p is None else float(p)
    return (u < probs).to(input.dtype)
