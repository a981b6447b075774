# GENERATED from minitorch/dtypes.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Data types: ``minitorch.float32`` and friends, and PyTorch's type promotion.

A ``dtype`` names how the bytes of a tensor are read: four from phase 01, and the two 2-byte
floats (``float16``, ``bfloat16``) from phase 05:

=================  =========  ===================  ===============================  =======
minitorch name     bytes      C type in .cu        NumPy twin                       suffix
=================  =========  ===================  ===============================  =======
``float32``        4          ``float``            ``numpy.float32`` (default)      ``f32``
``float64``        8          ``double``           ``numpy.float64``                ``f64``
``float16``        2          ``__half``           ``numpy.float16``                ``f16``
``bfloat16``       2          ``__nv_bfloat16``    ``ml_dtypes.bfloat16``           ``bf16``
``int64``          8          ``long long``        ``numpy.int64``                  ``i64``
``bool``           1          ``bool``             ``numpy.bool_``                  ``bool``
=================  =========  ===================  ===============================  =======

(``half`` is ``float16``. The two 2-byte floats are *storage*
types: every op loads them as float32, computes in float32 and rounds once when it stores, and
reductions accumulate in float32, as PyTorch does. float16 has 10 mantissa bits and a range up to
65504; bfloat16 has float32's range with 7 mantissa bits.)

Promotion follows PyTorch (https://pytorch.org/docs/stable/tensor_attributes.html#type-promotion-doc):
categories rank bool < integer < floating; a tensor with dimensions beats a zero-dimensional
tensor, which beats a Python number, unless the weaker operand is of a higher category. Within
floating, the wider type wins, and float16 with bfloat16 gives float32 (neither holds the other).
"""
import builtins

import numpy as np


class dtype:
    """One element type. Compare with ``==``; ``str(d)`` gives ``'minitorch.float32'``."""

    def __init__(self, name, numpy_dtype, category):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.category = category      # 0 bool, 1 integer, 2 floating
        self.itemsize = self.numpy.itemsize
        self.is_floating_point = category == 2   # a plain attribute: read on every op

    def __repr__(self):
        return f"minitorch.{self.name}"

    def __reduce__(self):             # pickle by name so dtypes stay singletons
        return (_by_name, (self.name,))


bool = dtype("bool", np.bool_, 0)
int64 = dtype("int64", np.int64, 1)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)

# PyTorch's aliases
long = int64
float = float32
double = float64

_ALL = (bool, int64, float32, float64)
import ml_dtypes  # noqa: E402  (NumPy has no bfloat16; ml_dtypes registers one)

float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2)
half = float16
_ALL = _ALL + (float16, bfloat16)
HALF_NUMPY = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))    # computed in float32 ("opmath")


class _NumpyToMinitorch(dict):
    """NumPy (or CuPy) dtype -> minitorch dtype, read on every op (``Tensor.dtype``).

    The exact twins are the keys, so the common case is one dict lookup with no Python call;
    a miss goes to ``__missing__``, which maps other NumPy types to their nearest twin.
    """

    def __missing__(self, np_dtype):
        np_dtype = np.dtype(np_dtype)
        found = self.get(np_dtype)
        if found is not None:
            return found
        if np_dtype.kind == "f":
            return float32 if np_dtype.itemsize <= 4 else float64
        if np_dtype.kind in "iu":
            return int64
        raise TypeError(f"numpy dtype {np_dtype} has no minitorch twin; "
                        f"expected one of bool, integer or floating types")


FROM_NUMPY = _NumpyToMinitorch((d.numpy, d) for d in _ALL)


def _by_name(name):
    return globals()[name]


def from_numpy_dtype(np_dtype):
    """The minitorch dtype of a NumPy (or CuPy) dtype; other NumPy types map to their nearest.

    Raises:
        TypeError: for types with no minitorch twin (complex, strings, objects).
    """
    return FROM_NUMPY[np_dtype]


def as_dtype(d):
    """Accept a minitorch dtype, a NumPy dtype or a name such as 'float32'."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str) and d in ("bool", "int64", "float32", "float64", "long", "float", "double"):
        return globals()[d]
    if isinstance(d, str) and d in ("float16", "bfloat16", "half"):
        return globals()[d]
    return from_numpy_dtype(d)


def scalar_dtype(value):
    """The dtype PyTorch gives a Python number: bool, int64 or the default float32."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (builtins.float, np.floating)):
        return float32
    raise TypeError(f"expected a Python number (bool, int or float), got {type(value).__name__}")


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize == b.itemsize == 2 and a.category == 2:
        return float32                # float16 and bfloat16: neither holds the other (PyTorch's rule)
    return a if a.itemsize >= b.itemsize else b


def result_type(*operands):
    """The dtype of an elementwise op over tensors and Python numbers, as PyTorch computes it.

    Operands are ranked in three tiers: tensors with dimensions, zero-dimensional tensors, and
    Python numbers. The result is the promotion of the highest tier, lifted to the category of a
    lower-tier operand when that category is higher (``int_tensor * 0.5`` is float32).
    """
    tiers = [None, None, None]        # dimensioned, zero-dim, scalar
    for x in operands:
        if hasattr(x, "dtype") and hasattr(x, "ndim"):
            tier, d = (0 if x.ndim > 0 else 1), x.dtype
        else:
            tier, d = 2, scalar_dtype(x)
        tiers[tier] = d if tiers[tier] is None else promote_types(tiers[tier], d)
    result = None
    for d in tiers:
        if d is None:
            continue
        if result is None:
            result = d
        elif d.category > result.category:
            # a weaker operand of a higher category lifts the result into its category
            # (Python floats count as float32, the default, so int_tensor * 0.5 is float32)
            result = d
    return result
