# GENERATED from minitorch/native/cuda/elementwise.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Elementwise ops on ``DeviceArray``s with our kernels (``minitorch/cuda/elementwise.cu``,
``copy.cu``): the cuda twins of ``binary``, ``binary_scalar``, ``unary``, ``where``, ``cast`` and
``contiguous`` in ``native/cpu.py``.

Every function returns a new contiguous array. Two paths each:

* fast: inputs contiguous and of the output's shape. One flat kernel, 16 bytes per load; the
  Python work is a few attribute reads (this path runs on every step of a training loop).
* general: broadcasting and any strides (transposes, slices with steps). The shapes and strides
  go to the kernel in a ``Layout`` struct (``launch.broadcast_layout``, cached by shape and
  strides), and the kernel reads the inputs in place: nothing is expanded or copied first.
"""
import numpy as np

from ...cuda.array import empty
from .launch import SUFFIX, broadcast_layout, kernel, launch_stride

FILE = "elementwise.cu"

_BOOL = np.dtype(np.bool_)
_TRUE, _FALSE = np.bool_(True), np.bool_(False)   # made once: a NumPy scalar costs ~0.3 us to build
_FLOATS = ("f32", "f64")

# Which dtypes each op has kernels for (see the end of elementwise.cu). Keys match cpu.py's.
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")     # these return bool
BINARY_OPS = {
    **{op: _FLOATS + ("i64",) for op in ("add", "sub", "mul", "pow", "maximum", "minimum")},
    "div": _FLOATS,
    **{op: _FLOATS + ("i64",) for op in ("lt", "le", "gt", "ge")},
    "eq": _FLOATS + ("i64", "bool"), "ne": _FLOATS + ("i64", "bool"),
    "remainder": _FLOATS + ("i64",), "floor_divide": _FLOATS + ("i64",),
    **{op: ("bool",) for op in ("logical_and", "logical_or", "logical_xor")},
}
PREDICATES = ("isnan", "isinf", "isfinite")             # unary ops that return bool
UNARY_OPS = {
    **{op: _FLOATS + ("i64",) for op in ("neg", "abs", "relu")},
    **{op: _FLOATS for op in ("exp", "log", "sqrt", "tanh", "sigmoid")},
    **{op: _FLOATS for op in ("sin", "cos", "erf", "rsqrt", "log1p", "expm1", "floor", "ceil", "round")},
    "sign": _FLOATS + ("i64",), "logical_not": ("bool",),
    **{op: _FLOATS for op in PREDICATES},
}

# float16 and bfloat16 have every float op: their kernels load float, compute, round once
# (elementwise.cu, InFloat). Their _scalar kernels take the number as a C float, not rounded to half.
_HALVES = ("f16", "bf16")
_HALF_DTYPES = tuple(dt for dt, suf in SUFFIX.items() if suf in _HALVES)
for _ops in (BINARY_OPS, UNARY_OPS):
    for _op in _ops:
        if "f32" in _ops[_op]:                # not the logical ops: they work on bool only
            _ops[_op] = _ops[_op] + _HALVES


def _table(ops, variants, out_dtype):
    """{(op, numpy dtype): (output dtype, kernel names per variant)} for every supported pair,
    built once so a call looks up one tuple instead of formatting names."""
    table = {}
    for op, suffixes in ops.items():
        for dtype, suf in SUFFIX.items():
            if suf in suffixes:
                names = tuple(f"{op}{variant}_{suf}" for variant in variants)
                table[op, dtype] = (out_dtype(op, dtype), 16 // dtype.itemsize, names)
    return table


_BINARY = _table(BINARY_OPS, ("", "_strided", "_scalar", "_scalar_strided"),
                 lambda op, dt: _BOOL if op in COMPARISONS else dt)
_UNARY = _table(UNARY_OPS, ("", "_strided"), lambda op, dt: _BOOL if op in PREDICATES else dt)
_WHERE = {dt: (f"where_{suf}", f"where_strided_{suf}") for dt, suf in SUFFIX.items()}
_CAST = {(src, dst): (f"cast_{s}_{d}", f"cast_strided_{s}_{d}")
         for src, s in SUFFIX.items() for dst, d in SUFFIX.items()}


def _same_dtype(a, b, what):
    if a.dtype != b.dtype:
        raise TypeError(f"cuda {what}: operands must share a dtype, got {a.dtype} and {b.dtype}")


def _unsupported(ops, kind, op, a, b=None):
    """Raise what cpu.py would (KeyError for an unknown op), or a TypeError naming the dtypes the
    op has kernels for, or saying that the two operands' dtypes differ."""
    if op not in ops:
        raise KeyError(op)
    if b is not None:
        _same_dtype(a, b, op)
    raise TypeError(f"cuda {kind} op {op!r} has no kernel for {a.dtype}; it supports "
                    f"{', '.join(ops[op])} (the Tensor layer promotes before calling)")

# The functions below are written for a short fast path: on every training step they run once per
# op, and their Python time adds to the kernel's. Table lookups replace string formatting, and the
# kernel comes from compiler.kernel with the device given (one dictionary lookup).


def binary(op, a, b):
    """``a <op> b`` elementwise with broadcasting; ``op`` is a key of BINARY_OPS.

    ``a`` and ``b`` share a dtype (float32, float64; int64 for all but div; bool for eq/ne) and
    broadcast against each other; any strides. Returns a new contiguous array of the broadcast
    shape, of bool for COMPARISONS and of the inputs' dtype otherwise.

    Raises:
        KeyError: unknown op.  TypeError: dtype without a kernel, or a and b of two dtypes.
        ValueError: shapes that do not broadcast.
    """
    entry = _BINARY.get((op, a.dtype))
    if entry is None or (b.dtype is not a.dtype and b.dtype != a.dtype):   # `is`: the cheap common case
        _unsupported(BINARY_OPS, "binary", op, a, b)
    out_dtype, vec, names = entry
    idx = a.device_id
    if a.shape == b.shape and a.c_contiguous and b.c_contiguous:
        n = a.size
        out = empty(a.shape, out_dtype, idx)
        launch_stride(kernel(FILE, names[0], idx), n, vec, idx, (a, b, out, n))
    else:
        shape, n, layout = broadcast_layout(((a.shape, a.strides, a.itemsize),
                                             (b.shape, b.strides, b.itemsize)))
        out = empty(shape, out_dtype, idx)
        launch_stride(kernel(FILE, names[1], idx), n, 1, idx, (a, b, out, n, layout))
    return out


def binary_scalar(op, a, scalar, reflected=False):
    """``a <op> scalar``, or ``scalar <op> a`` when ``reflected``, elementwise.

    The scalar is converted to ``a``'s dtype first (as cpu.py does); ``a`` may have any strides.
    Returns a new contiguous array of ``a``'s shape (bool for COMPARISONS).

    Raises:
        KeyError: unknown op.  TypeError: dtype without a kernel for this op.
    """
    entry = _BINARY.get((op, a.dtype))
    if entry is None:
        _unsupported(BINARY_OPS, "binary", op, a)
    out_dtype, vec, names = entry
    s = a.dtype.type(scalar)                 # the exact C type the kernel takes
    if a.dtype in _HALF_DTYPES:
        s = np.float32(scalar)               # half kernels take float: x * 0.1 uses 0.1f, as PyTorch
    flip = _TRUE if reflected else _FALSE
    idx = a.device_id
    n = a.size
    out = empty(a.shape, out_dtype, idx)
    if a.c_contiguous:
        launch_stride(kernel(FILE, names[2], idx), n, vec, idx, (a, s, out, n, flip))
    else:
        _, _, layout = broadcast_layout(((a.shape, a.strides, a.itemsize),))
        launch_stride(kernel(FILE, names[3], idx), n, 1, idx, (a, s, out, n, flip, layout))
    return out


def unary(op, a):
    """``op(a)`` elementwise; ``op`` is a key of UNARY_OPS (neg, abs, relu, sign also for int64;
    logical_not for bool only).

    Any strides. Returns a new contiguous array of ``a``'s shape and dtype (bool for PREDICATES).
    ``sigmoid`` never overflows (e^-|x| <= 1); log/sqrt of negatives give NaN, as in NumPy.

    Raises:
        KeyError: unknown op.  TypeError: dtype without a kernel for this op.
    """
    entry = _UNARY.get((op, a.dtype))
    if entry is None:
        _unsupported(UNARY_OPS, "unary", op, a)
    out_dtype, vec, names = entry
    idx = a.device_id
    n = a.size
    out = empty(a.shape, out_dtype, idx)
    if a.c_contiguous:
        launch_stride(kernel(FILE, names[0], idx), n, vec, idx, (a, out, n))
    else:
        _, _, layout = broadcast_layout(((a.shape, a.strides, a.itemsize),))
        launch_stride(kernel(FILE, names[1], idx), n, 1, idx, (a, out, n, layout))
    return out


_NAN_TO_NUM = {dt: (f"nan_to_num_{suf}", f"nan_to_num_strided_{suf}")
               for dt, suf in SUFFIX.items() if suf in _FLOATS}


def nan_to_num(a, nan, posinf, neginf):
    """``a`` (float32 or float64, any strides) with NaN, +inf and -inf replaced by the numbers
    ``nan``, ``posinf`` and ``neginf`` (converted to ``a``'s dtype). Returns a new contiguous array.

    Raises:
        TypeError: a dtype other than the floating ones.
    """
    names = _NAN_TO_NUM.get(a.dtype)
    if names is None:
        raise TypeError(f"cuda nan_to_num has no kernel for {a.dtype}; floating dtypes only")
    t = a.dtype.type
    if a.dtype in _HALF_DTYPES:
        t = np.float32                       # half kernels take the numbers as C floats
    values = (t(nan), t(posinf), t(neginf))
    idx = a.device_id
    n = a.size
    out = empty(a.shape, a.dtype, idx)
    if a.c_contiguous:
        launch_stride(kernel(FILE, names[0], idx), n, 16 // a.itemsize, idx, (a, *values, out, n))
    else:
        _, _, layout = broadcast_layout(((a.shape, a.strides, a.itemsize),))
        launch_stride(kernel(FILE, names[1], idx), n, 1, idx, (a, *values, out, n, layout))
    return out


def where(cond, a, b):
    """``a`` where ``cond`` else ``b``, elementwise; the three broadcast together.

    ``a`` and ``b`` share a dtype (any of the four); ``cond`` is bool (other dtypes are first
    converted with ``x != 0``, as NumPy reads them). Returns a new contiguous array.

    Raises:
        TypeError: a and b of two dtypes.  ValueError: shapes that do not broadcast.
    """
    _same_dtype(a, b, "where")
    if cond.dtype != _BOOL:
        cond = cast(cond, _BOOL)
    names = _WHERE[a.dtype]
    idx = a.device_id
    if (cond.shape == a.shape == b.shape and cond.c_contiguous
            and a.c_contiguous and b.c_contiguous):
        n = a.size
        out = empty(a.shape, a.dtype, idx)
        launch_stride(kernel(FILE, names[0], idx), n, 1, idx, (cond, a, b, out, n))
    else:
        shape, n, layout = broadcast_layout(((cond.shape, cond.strides, cond.itemsize),
                                             (a.shape, a.strides, a.itemsize),
                                             (b.shape, b.strides, b.itemsize)))
        out = empty(shape, a.dtype, idx)
        launch_stride(kernel(FILE, names[1], idx), n, 1, idx, (cond, a, b, out, n, layout))
    return out


def cast(a, dtype):
    """A new contiguous copy of ``a`` (any strides) converted to ``dtype`` (a minitorch dtype or
    a NumPy dtype). To bool is ``x != 0``; float to int64 truncates toward zero."""
    dst = np.dtype(getattr(dtype, "numpy", dtype))
    names = _CAST[a.dtype, dst]
    idx = a.device_id
    n = a.size
    out = empty(a.shape, dst, idx)
    if a.c_contiguous:
        per_thread = 16 // max(a.itemsize, dst.itemsize)
        launch_stride(kernel("copy.cu", names[0], idx), n, per_thread, idx, (a, out, n))
    else:
        _, _, layout = broadcast_layout(((a.shape, a.strides, a.itemsize),))
        launch_stride(kernel("copy.cu", names[1], idx), n, 1, idx, (a, out, n, layout))
    return out


def contiguous(a):
    """A new contiguous row-major copy of ``a`` (any strides), of the same dtype."""
    return cast(a, a.dtype)


_BACKWARD = {(op, dt): f"{op}_backward_{suf}"
             for op in ("relu", "sigmoid", "tanh") for dt, suf in SUFFIX.items() if suf in _FLOATS}


def unary_backward(op, grad, saved):
    """Gradient of a unary op from what its forward saved: ``relu`` its input x, ``sigmoid`` and
    ``tanh`` their output y. Returns grad * d(op)/dx, a new contiguous array.

    ``grad`` and ``saved`` share a float dtype and a shape (non-contiguous ones are copied first).

    Raises:
        KeyError: op other than relu, sigmoid, tanh.  TypeError: not a float dtype, or two dtypes.
        ValueError: grad and saved of different shapes.
    """
    name = _BACKWARD.get((op, grad.dtype))
    if name is None:
        if op not in ("relu", "sigmoid", "tanh"):
            raise KeyError(op)
        raise TypeError(f"cuda unary_backward has no kernel for {grad.dtype}; float32 and float64 only")
    _same_dtype(grad, saved, "unary_backward")
    if grad.shape != saved.shape:
        raise ValueError(f"unary_backward: grad {grad.shape} and saved {saved.shape} differ in shape")
    if not grad.c_contiguous:
        grad = contiguous(grad)
    if not saved.c_contiguous:
        saved = contiguous(saved)
    idx = grad.device_id
    n = grad.size
    out = empty(grad.shape, grad.dtype, idx)
    launch_stride(kernel(FILE, name, idx), n, 16 // grad.itemsize, idx, (grad, saved, out, n))
    return out
_NAN_TO_NUM.update({dt: (f"nan_to_num_{SUFFIX[dt]}", f"nan_to_num_strided_{SUFFIX[dt]}") for dt in _HALF_DTYPES})
_BACKWARD.update({(op, dt): f"{op}_backward_{SUFFIX[dt]}" for op in ("relu", "sigmoid", "tanh")
                  for dt in _HALF_DTYPES})
# GELU (elementwise.cu's phase-07 functors): gelu (exact, with erf) and gelu_tanh (the tanh form),
# every float dtype; their backward kernels take the input x as the saved array.
_GELU = ("gelu", "gelu_tanh")
UNARY_OPS.update({op: _FLOATS + _HALVES for op in _GELU})
_UNARY.update(_table({op: UNARY_OPS[op] for op in _GELU}, ("", "_strided"), lambda op, dt: dt))
_BACKWARD.update({(op, dt): f"{op}_backward_{suf}" for op in _GELU for dt, suf in SUFFIX.items()
                  if suf in _FLOATS + _HALVES})
