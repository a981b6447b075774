# GENERATED from minitorch/native/cpu.py by tools/sync_phases.py (phase 02 snapshot): edit the source and re-run, not this file.
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

import math  # noqa: E402 - phase 02 adds it

# ---- elementwise ops ------------------------------------------------------------------------
# Inputs of binary ops already share one dtype (the Tensor layer promotes them first) and
# broadcast against each other; any strides are allowed. Outputs are new contiguous arrays.
BINARY_OPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")     # these return bool


def _remainder(a, b):
    # PyTorch's formula: fmod (the sign of a), moved by one b when the sign is not b's
    r = np.fmod(a, b)
    return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


BINARY_OPS.update({
    "remainder": _remainder, "floor_divide": np.floor_divide,   # NumPy's // is PyTorch's (x // 0 is 0 for ints)
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
})
PREDICATES = ("isnan", "isinf", "isfinite")           # unary ops that return bool


def _sigmoid(x):
    # written so that exp never overflows: for x < 0 use e^x / (1 + e^x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


UNARY_OPS = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
    "tanh": np.tanh, "sigmoid": _sigmoid, "relu": lambda x: np.maximum(x, x.dtype.type(0)),
}


def _erf(x):
    # NumPy has no erf: the standard library's, element by element in float64 (slow, but exact)
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x), dtype=np.float64)


UNARY_OPS.update({
    "sin": np.sin, "cos": np.cos, "erf": _erf, "rsqrt": lambda x: 1 / np.sqrt(x), "log1p": np.log1p,
    "expm1": np.expm1, "floor": np.floor, "ceil": np.ceil, "round": np.rint,    # rint: ties to even
    "sign": lambda x: (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype),        # 0 for NaN, as PyTorch
    "logical_not": np.logical_not, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
})


def binary(op, a, b):
    """``a <op> b`` with broadcasting; ``op`` is a key of BINARY_OPS."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _c(BINARY_OPS[op](a, b))


def binary_scalar(op, a, scalar, reflected=False):
    """``a <op> scalar``, or ``scalar <op> a`` when ``reflected``; keeps ``a``'s dtype."""
    s = a.dtype.type(scalar)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = BINARY_OPS[op](s, a) if reflected else BINARY_OPS[op](a, s)
    return _c(out)


def unary(op, a):
    """``op(a)`` elementwise; ``op`` is a key of UNARY_OPS. Keeps the dtype (bool for PREDICATES)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _c(UNARY_OPS[op](a)).astype(bool if op in PREDICATES else a.dtype, copy=False)


def nan_to_num(a, nan, posinf, neginf):
    """``a`` (floating) with NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf``."""
    with np.errstate(over="ignore"):            # a number beyond the dtype's range becomes inf
        return _c(np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf))


def where(cond, a, b):
    """``a`` where ``cond`` else ``b``; the three broadcast; ``a`` and ``b`` share a dtype."""
    return _c(np.where(cond, a, b))


def cast(a, dtype):
    """A contiguous copy of ``a`` (any strides) converted to ``dtype``."""
    with np.errstate(over="ignore", invalid="ignore"):     # like torch: out of range -> inf, silently
        return np.array(a, dtype=dtype.numpy, order="C", copy=True)


def contiguous(a):
    """A contiguous row-major copy of ``a`` (any strides)."""
    return np.array(a, order="C", copy=True)


def as_strided(a, shape, strides):
    """A view of ``a``'s memory with ``shape`` and byte ``strides`` (no copy, nothing checked)."""
    return np.lib.stride_tricks.as_strided(a, shape=tuple(shape), strides=tuple(strides))


# ---- matrices ---------------------------------------------------------------------------------
def transpose2d(a):
    """The transpose of a 2-D array, materialised: ``out[j, i] = a[i, j]``, contiguous."""
    return _c(a.T)


def matmul(a, b):
    """``a @ b`` for ``a`` [..., M, K] and ``b`` [..., K, N] with broadcast batch dimensions.

    Floating dtypes only. Returns a contiguous [..., M, N] array.
    """
    return _c(np.matmul(a, b))



# ---- random numbers in place, and the factories of phase 02 -----------------------------------
# ``generator`` is a NumPy Generator (a minitorch.Generator's, or the global one). Draws are made
# in float64 and rounded once into ``x``, which may be any view (NumPy writes through strides).
def uniform_(x, low, high, generator):
    """Fill ``x`` with U(low, high) draws in place; returns x."""
    x[...] = generator.uniform(low, high, x.shape)
    return x


def normal_(x, mean, std, generator):
    """Fill ``x`` with N(mean, std^2) draws in place; returns x."""
    x[...] = generator.normal(mean, std, x.shape)
    return x


def randint(low, high, shape, generator, index=None):
    """int64 array of ``shape`` uniform on [low, high)."""
    return generator.integers(low, high, size=shape, dtype=np.int64)


def linspace(start, end, steps, dtype, base=None, index=None):
    """PyTorch's two-ended formula in float64 (the first half from ``start``, the second from
    ``end``), ``base ** value`` when ``base`` is given (logspace), rounded once to ``dtype``."""
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    v = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    if base is not None:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            v = np.power(np.float64(base), v)
    with np.errstate(invalid="ignore"):
        return v.astype(dtype.numpy)


def eye(n, m, dtype, index=None):
    return np.eye(n, m, dtype=dtype.numpy)


def empty_strided(shape, strides, dtype, index=None):
    """Uninitialised memory viewed with ``shape`` and element ``strides`` (non-negative), over a
    buffer just large enough: 1 + sum((size - 1) * stride) elements, 0 if any size is 0."""
    need = 0 if 0 in shape else 1 + int(np.dot(np.array(shape, np.int64) - 1, np.array(strides, np.int64)))
    buf = np.empty(need, dtype=dtype.numpy)
    return np.lib.stride_tricks.as_strided(buf, shape=tuple(shape), strides=tuple(st * buf.itemsize for st in strides))
