# GENERATED from minitorch/ops/elementwise.py by tools/sync_phases.py (phase 02 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Elementwise ops: ``+ - * / ** % //``, comparisons, ``where``, the unary math functions, clamp,
rounding, logic, isnan/isinf/isfinite, nan_to_num, isclose and masked_fill.

Each op is a :class:`~minitorch.autograd.Function`. Its forward hands raw arrays to the device's
backend (NumPy on cpu, our kernels in ``elementwise.cu`` on cuda); broadcasting and strides are
handled there, inside the kernel, never by copying expanded inputs. Before that, the public
functions at the bottom check devices and shapes and apply PyTorch's type promotion.
"""
import math
import numbers

from ..autograd.function import Function
from ..broadcast import broadcast_shape
from ..dtypes import float32, int64, result_type
from ..dtypes import bool as _bool
from ..tensor import Tensor


def _new(like, data):
    """A tensor on ``like``'s device around a raw array the backend returned."""
    return Tensor(data, like._device)


# The three below run on every elementwise op: they build the Tensor themselves rather than
# through _new (one Python call less, ~0.1 us).
def _binary(op, a, b):
    return Tensor(a._backend.binary(op, a._data, b._data), a._device)


def _scalar(op, a, s, reflected=False):
    return Tensor(a._backend.binary_scalar(op, a._data, s, reflected), a._device)


def _unary(op, a):
    return Tensor(a._backend.unary(op, a._data), a._device)


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a._data.shape, b._data.shape    # plain tuples: cheaper than two Size objects
        return _binary("add", a, b)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a._data.shape, b._data.shape
        return _binary("sub", a, b)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("mul", a, b)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("div", a, b)


class Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = _binary("pow", a, b)
        ctx.save_for_backward(a, b, out)
        return out


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("maximum", a, b)


class Minimum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("minimum", a, b)


class Compare(Function):
    """``eq ne lt le gt ge``: bool outputs, so no gradient flows through them."""

    @staticmethod
    def forward(ctx, a, b, op):
        return _binary(op, a, b) if isinstance(b, Tensor) else _scalar(op, a, b)


# ---- a tensor and a Python number: one kernel, no scalar tensor to allocate --------------------
class AddScalar(Function):
    @staticmethod
    def forward(ctx, a, s):
        return _scalar("add", a, s)


class SubScalar(Function):
    """``a - s``, or ``s - a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        ctx.reflected = reflected
        return _scalar("sub", a, s, reflected)


class MulScalar(Function):
    @staticmethod
    def forward(ctx, a, s):
        ctx.s = s
        return _scalar("mul", a, s)


class DivScalar(Function):
    """``a / s``, or ``s / a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        ctx.s, ctx.reflected = s, reflected
        out = _scalar("div", a, s, reflected)
        ctx.save_for_backward(a if reflected else None)
        return out


class PowScalar(Function):
    """``a ** s``, or ``s ** a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        out = _scalar("pow", a, s, reflected)
        ctx.s, ctx.reflected = s, reflected
        ctx.save_for_backward(a, out)
        return out


# ---- unary math ---------------------------------------------------------------------------------
class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return _unary("neg", a)


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("exp", a)
        ctx.save_for_backward(out)
        return out


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("log", a)


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("sqrt", a)
        ctx.save_for_backward(out)
        return out


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("abs", a)


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("tanh", a)
        ctx.save_for_backward(out)
        return out


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("sigmoid", a)
        ctx.save_for_backward(out)
        return out


class Relu(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("relu", a)


class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        ctx.shapes = a.shape, b.shape
        return _new(a, a._backend.where(cond._data, a._data, b._data))


class Cast(Function):
    """Convert to another dtype; the gradient converts back."""

    @staticmethod
    def forward(ctx, a, dtype):
        ctx.dtype = a.dtype
        return _new(a, a._backend.cast(a._data, dtype))


# ---- the public functions: checks and promotion, then the op --------------------------------------
def check_broadcast(op, *shapes):
    """The shape ``shapes`` broadcast to (minitorch/broadcast.py has the rule).

    Raises:
        RuntimeError: naming the op, the shapes and the first dimension that disagrees.
    """
    if shapes and shapes.count(shapes[0]) == len(shapes):     # all equal: the common case, no work
        return tuple(shapes[0])
    try:
        return broadcast_shape(*shapes)
    except ValueError as e:
        raise RuntimeError(f"{op}: {e}") from None


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes``: the shape tensors of these shapes broadcast to.

    Raises:
        RuntimeError: naming the shapes and the first dimension that disagrees.
    """
    return check_broadcast("broadcast_shapes", *shapes)


def check_same_device(op, *tensors):
    """Raises RuntimeError unless all ``tensors`` are on one device."""
    first = tensors[0]._device
    # devices are interned (the same device is the same object): identity settles the usual case
    # (a list, not a generator: every op with two or more tensors checks this)
    if all([t._device is first for t in tensors]):
        return
    if len({t._device for t in tensors}) > 1:
        raise RuntimeError(f"{op}: expected all tensors on the same device, but found "
                           f"{' and '.join(str(t.device) for t in tensors)}")


# float and int first: isinstance tries them before the abstract numbers.Number, which is slower
_NUMBERS = (float, int, numbers.Number)


def _as_tensor_operands(op, a, b):
    """Promote ``a`` and ``b`` (tensor or number) to their result dtype; check device and shape."""
    a_is, b_is = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_is and b_is:
        # this runs before every binary op, so it passes the raw arrays' shapes (no Size objects)
        check_same_device(op, a, b)
        check_broadcast(op, a._data.shape, b._data.shape)
        da, db = a.dtype, b.dtype
        return da if da is db and a._data.ndim and b._data.ndim else result_type(a, b)
    if not (a_is or b_is):
        raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}")
    t, x = (a, b) if a_is else (b, a)
    if not isinstance(x, _NUMBERS):
        raise TypeError(f"{op}: unsupported operand type {type(x).__name__}; expected Tensor or a number")
    dt = t.dtype
    if dt.is_floating_point and not isinstance(x, complex):    # a number never widens a float tensor
        return dt
    return result_type(a, b)


def _cast(x, dtype):
    """Tensor ``x`` converted to ``dtype`` (``x`` itself when it has it already); numbers pass through."""
    return x if not isinstance(x, Tensor) or x.dtype is dtype else Cast.apply(x, dtype)


def _arith(op, cls, cls_scalar, a, b, reflected_ok=True):
    """Check and promote the operands, then apply ``cls`` to two tensors, or ``cls_scalar`` to a
    tensor and a number (``reflected_ok``: cls_scalar takes a flag for ``number <op> tensor``)."""
    dtype = _as_tensor_operands(op, a, b)
    if dtype.name == "bool":
        dtype = int64                       # arithmetic on bools counts them as integers
    elif op == "div" and not dtype.is_floating_point:
        dtype = float32                     # true division, as in Python 3 and PyTorch
    if isinstance(a, Tensor):
        a = a if a.dtype is dtype else Cast.apply(a, dtype)
        if isinstance(b, Tensor):
            return cls.apply(a, b if b.dtype is dtype else Cast.apply(b, dtype))
        return cls_scalar.apply(a, b, False) if reflected_ok else cls_scalar.apply(a, b)
    b = b if b.dtype is dtype else Cast.apply(b, dtype)       # number <op> tensor
    return cls_scalar.apply(b, a, True) if reflected_ok else cls_scalar.apply(b, a)


def add(a, b):
    """``a + b`` elementwise with broadcasting; either may be a Python number."""
    return _arith("add", Add, AddScalar, a, b, reflected_ok=False)


def sub(a, b):
    """``a - b`` elementwise with broadcasting; either may be a Python number."""
    return _arith("sub", Sub, SubScalar, a, b)


def mul(a, b):
    """``a * b`` elementwise with broadcasting; either may be a Python number."""
    return _arith("mul", Mul, MulScalar, a, b, reflected_ok=False)


def div(a, b):
    """``a / b`` (true division: integer inputs give float32) with broadcasting."""
    return _arith("div", Div, DivScalar, a, b)


def pow(a, b):
    """``a ** b`` elementwise with broadcasting; either may be a Python number."""
    return _arith("pow", Pow, PowScalar, a, b)


def maximum(a, b):
    """Elementwise maximum of two tensors (broadcast)."""
    dtype = _as_tensor_operands("maximum", a, b)
    return Maximum.apply(_cast(a, dtype), _cast(b, dtype))


def minimum(a, b):
    """Elementwise minimum of two tensors (broadcast)."""
    dtype = _as_tensor_operands("minimum", a, b)
    return Minimum.apply(_cast(a, dtype), _cast(b, dtype))


def compare(op, a, b):
    """``op`` in eq ne lt le gt ge: a bool tensor, computed in the promoted dtype."""
    if not isinstance(a, Tensor):                       # 1 < t  is  t > 1
        a, b, op = b, a, {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(op, op)
    dtype = _as_tensor_operands(op, a, b)
    if dtype.name == "bool" and op not in ("eq", "ne"):
        dtype = int64
    return Compare.apply(_cast(a, dtype), _cast(b, dtype), op)


def _float_unary(cls, a):
    """Math functions give floats: integer inputs are promoted to float32 first (PyTorch's rule)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{cls.__name__.lower()}: expected a Tensor, got {type(a).__name__}")
    return cls.apply(a if a.dtype.is_floating_point else Cast.apply(a, float32))


def neg(a):
    return Neg.apply(_cast(a, int64) if a.dtype.name == "bool" else a)


def exp(a):
    return _float_unary(Exp, a)


def log(a):
    return _float_unary(Log, a)


def sqrt(a):
    return _float_unary(Sqrt, a)


def tanh(a):
    return _float_unary(Tanh, a)


def sigmoid(a):
    return _float_unary(Sigmoid, a)


def abs(a):
    return Abs.apply(a)


def relu(a):
    """``max(a, 0)`` elementwise."""
    return Relu.apply(a)


def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``; the three broadcast together.

    Raises:
        TypeError: if ``condition`` is not a bool tensor.
    """
    if not isinstance(condition, Tensor) or condition.dtype.name != "bool":
        raise TypeError(f"where: condition must be a bool tensor, got "
                        f"{condition.dtype if isinstance(condition, Tensor) else type(condition).__name__}")
    like = input if isinstance(input, Tensor) else other
    input = input if isinstance(input, Tensor) else scalar_tensor(like, input)
    other = other if isinstance(other, Tensor) else scalar_tensor(like, other)
    check_same_device("where", condition, input, other)
    check_broadcast("where", condition.shape, input.shape, other.shape)
    dtype = result_type(input, other)
    return Where.apply(condition, _cast(input, dtype), _cast(other, dtype))


def scalar_tensor(like, value):
    """A zero-dimensional tensor holding ``value`` on ``like``'s device (broadcasts anywhere)."""
    from ..creation import full
    dtype = like.dtype if isinstance(value, float) and like.dtype.is_floating_point else None
    return full((), value, dtype=dtype, device=like.device)


# ---- more math: trigonometry, rounding, % and //, logic, special values (issue 13) ---------------
class Sin(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("sin", a)


class Cos(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("cos", a)


class Erf(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("erf", a)


class Rsqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("rsqrt", a)
        ctx.save_for_backward(out)
        return out


class Log1p(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("log1p", a)


class Expm1(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("expm1", a)
        ctx.save_for_backward(out)
        return out


class Step(Function):
    """``sign``, ``floor``, ``ceil``, ``round`` (``decimals`` digits): piecewise constant, so their
    gradient is 0 everywhere (PyTorch's convention, also at the jumps)."""

    @staticmethod
    def forward(ctx, a, op, decimals=0):
        if decimals == 0:
            return _unary(op, a)
        # PyTorch's round_decimals: rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for d < 0
        scale, there, back = (10.0 ** decimals, "mul", "div") if decimals > 0 else (10.0 ** -decimals, "div", "mul")
        b, x = a._backend, a._data
        out = b.binary_scalar(back, b.unary("round", b.binary_scalar(there, x, scale)), scale)
        return _new(a, out)


class Remainder(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("remainder", a, b)


class RemainderScalar(Function):
    """``a % s``, or ``s % a`` when ``reflected`` (PyTorch defines no derivative for that one)."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        ctx.reflected = reflected
        return _scalar("remainder", a, s, reflected)


class FloorDivide(Function):
    """``a // b`` (tensors, or a tensor and a number when ``reflected`` is not None). PyTorch
    defines no derivative: backward through it raises."""

    @staticmethod
    def forward(ctx, a, b, reflected=None):
        return _binary("floor_divide", a, b) if reflected is None else _scalar("floor_divide", a, b, reflected)


class Logical(Function):
    """``logical_and``/``or``/``xor`` of two bool tensors, ``logical_not`` of one: no gradient."""

    @staticmethod
    def forward(ctx, op, a, b=None):
        return _unary(op, a) if b is None else _binary(op, a, b)


class Predicate(Function):
    """``isnan``, ``isinf``, ``isfinite`` of a floating tensor: bool, so no gradient."""

    @staticmethod
    def forward(ctx, a, op):
        return _unary(op, a)


class NanToNum(Function):
    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        ctx.save_for_backward(a)
        return _new(a, a._backend.nan_to_num(a._data, nan, posinf, neginf))


class Clamp(Function):
    """``min(max(a, lo), hi)``, with ``lo``/``hi`` numbers, tensors of a's dtype (broadcast) or None."""

    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        out = a
        for op, bound in (("maximum", lo), ("minimum", hi)):
            if isinstance(bound, Tensor):
                out = _binary(op, out, bound)
            elif bound is not None:
                out = _scalar(op, out, bound)
        return out


def _check_tensor(name, x, what="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(x).__name__}")


def sin(input):
    """Sine (radians), elementwise. Any shape; integer and bool inputs give float32."""
    return _float_unary(Sin, input)


def cos(input):
    """Cosine (radians), elementwise. Any shape; integer and bool inputs give float32."""
    return _float_unary(Cos, input)


def erf(input):
    """The error function 2/sqrt(pi) * integral_0^x e^(-t^2) dt, elementwise; ints give float32."""
    return _float_unary(Erf, input)


def rsqrt(input):
    """``1 / sqrt(x)`` elementwise (inf at 0, NaN below); ints give float32."""
    return _float_unary(Rsqrt, input)


def log1p(input):
    """``log(1 + x)``, accurate for tiny x (where 1 + x rounds to 1); ints give float32."""
    return _float_unary(Log1p, input)


def expm1(input):
    """``e^x - 1``, accurate for tiny x; ints give float32."""
    return _float_unary(Expm1, input)


def _step(op, input, decimals=0):
    """A rounding op: floats through their kernel; integers are already whole (a copy, as PyTorch)."""
    _check_tensor(op, input)
    if input.dtype.is_floating_point:
        return Step.apply(input, op, decimals)
    if input.dtype.name == "bool" and op != "sign":
        raise NotImplementedError(f'"{op}" not implemented for bool tensors (as in PyTorch); convert with .long()')
    if decimals:
        raise NotImplementedError(f'"round" with decimals={decimals} not implemented for {input.dtype.name} '
                                  f"(as in PyTorch); convert to a floating dtype first")
    if op == "sign" and input.dtype.name == "int64":
        return Step.apply(input, op)
    return input.clone()                     # whole numbers already; the sign of a bool is itself


def sign(input):
    """-1, 0 or 1 elementwise, in input's dtype (NaN and -0.0 give 0, as PyTorch); bool stays bool."""
    return _step("sign", input)


def floor(input):
    """The largest whole number <= x, elementwise, in input's dtype (integers: a copy).

    Raises:
        NotImplementedError: for bool tensors, as PyTorch.
    """
    return _step("floor", input)


def ceil(input):
    """The smallest whole number >= x, elementwise, in input's dtype (integers: a copy).

    Raises:
        NotImplementedError: for bool tensors, as PyTorch.
    """
    return _step("ceil", input)


def round(input, *, decimals=0):
    """Round to ``decimals`` digits after the point (negative: before it), ties to even
    (0.5 -> 0, 2.5 -> 2), as PyTorch: ``rint(x * 10^d) / 10^d``. Input's dtype.

    Raises:
        NotImplementedError: bool input, or integer input with ``decimals`` != 0 (as PyTorch).
    """
    return _step("round", input, decimals)


def _divisor_checked(op, a, b):
    """The promoted dtype of ``a <op> b`` for % and //. Integer division by zero raises on cpu,
    as PyTorch's cpu kernels do (the check is free there); on cuda the kernel gives 0 instead,
    because looking would make the host wait for the GPU (PyTorch's cuda kernels do not check either).

    Raises:
        NotImplementedError: bool operands (as PyTorch).  RuntimeError: ZeroDivisionError.
    """
    dtype = _as_tensor_operands(op, a, b)
    if dtype.name == "bool":
        raise NotImplementedError(f'"{op}" not implemented for bool tensors (as in PyTorch); convert with .long()')
    if not dtype.is_floating_point:
        if isinstance(b, Tensor) and b._device.type == "cpu":
            zero = bool((b._data == 0).any())
        else:
            zero = not isinstance(b, Tensor) and b == 0
        if zero:
            raise RuntimeError(f"ZeroDivisionError: integer {op} by zero")
    return dtype


def remainder(input, other):
    """``input % other`` with Python's sign rule (the result takes other's sign) and broadcasting;
    either may be a number. ``a - floor(a / b) * b``; int64 stays int64.

    Raises:
        NotImplementedError: bool operands.  RuntimeError: integer division by zero on cpu.
    """
    _divisor_checked("remainder", input, other)
    return _arith("remainder", Remainder, RemainderScalar, input, other)


def floor_divide(input, other):
    """``input // other``: ``floor(a / b)`` with broadcasting (Python's and PyTorch's rounding, not
    truncation); either may be a number. int64 stays int64; no gradient (PyTorch has none).

    Raises:
        NotImplementedError: bool operands.  RuntimeError: integer division by zero on cpu.
    """
    dtype = _divisor_checked("floor_divide", input, other)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return FloorDivide.apply(_cast(input, dtype), _cast(other, dtype))
    if isinstance(input, Tensor):
        return FloorDivide.apply(_cast(input, dtype), other, False)
    return FloorDivide.apply(_cast(other, dtype), input, True)


def _as_bool(name, x, what):
    _check_tensor(name, x, what)
    return x if x.dtype.name == "bool" else Cast.apply(x, _bool)


def _logical(op, input, other):
    a, b = _as_bool(op, input, "input"), _as_bool(op, other, "other")
    check_same_device(op, a, b)
    check_broadcast(op, a.shape, b.shape)
    return Logical.apply(op, a, b)


def logical_and(input, other):
    """``(input != 0) and (other != 0)`` elementwise (NaN counts as true), broadcast; bool output."""
    return _logical("logical_and", input, other)


def logical_or(input, other):
    """``(input != 0) or (other != 0)`` elementwise, broadcast; bool output."""
    return _logical("logical_or", input, other)


def logical_xor(input, other):
    """Exactly one of ``input != 0`` and ``other != 0``, elementwise, broadcast; bool output."""
    return _logical("logical_xor", input, other)


def logical_not(input):
    """``input == 0`` elementwise, as a bool tensor of input's shape."""
    return Logical.apply("logical_not", _as_bool("logical_not", input, "input"))


def _predicate(op, input, integer_answer):
    _check_tensor(op, input)
    if input.dtype.is_floating_point:
        return Predicate.apply(input, op)
    from ..creation import full
    return full(input.shape, integer_answer, dtype=_bool, device=input.device)   # ints are never NaN or inf


def isnan(input):
    """True where ``input`` is NaN; a bool tensor of input's shape (all False for ints)."""
    return _predicate("isnan", input, False)


def isinf(input):
    """True where ``input`` is +inf or -inf; bool (all False for ints)."""
    return _predicate("isinf", input, False)


def isfinite(input):
    """True where ``input`` is neither NaN nor +-inf; bool (all True for ints)."""
    return _predicate("isfinite", input, True)


def _finfo(dtype):
    import ml_dtypes                          # its finfo knows bfloat16 too (np.finfo does not)
    return ml_dtypes.finfo(dtype.numpy)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` (default: the dtype's largest
    finite value) and -inf by ``neginf`` (default: its lowest). Same shape and dtype; integers and
    bools are returned as a copy. Gradient 1 where input is finite, 0 elsewhere."""
    _check_tensor("nan_to_num", input)
    if not input.dtype.is_floating_point:
        return input.clone()
    info = _finfo(input.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    return NanToNum.apply(input, nan, posinf, neginf)


def clamp(input, min=None, max=None):
    """Every element limited to ``[min, max]``: ``minimum(maximum(x, min), max)``; either bound may
    be None, and both are numbers or both tensors (broadcast with input). NaN in input or in a
    bound gives NaN; when min > max every element is max. The dtype promotes over input and the
    bounds (an int tensor clamped at 0.5 is float32). Gradient: to input where min <= x <= max,
    to a tensor bound where it was picked (PyTorch's rule).

    Raises:
        RuntimeError: both bounds None; devices differ; shapes do not broadcast.
        TypeError: a number and a tensor as bounds (PyTorch has no such overload).
    """
    _check_tensor("clamp", input)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if b is not None]
    tensors = [b for b in bounds if isinstance(b, Tensor)]
    if tensors and len(tensors) != len(bounds):
        raise TypeError("clamp(): min and max must both be numbers or both be tensors, got "
                        f"{type(min).__name__} and {type(max).__name__}")
    if tensors:
        check_same_device("clamp", input, *tensors)
        check_broadcast("clamp", input.shape, *(t.shape for t in tensors))
    dtype = result_type(input, *bounds)
    return Clamp.apply(_cast(input, dtype), _cast(min, dtype), _cast(max, dtype))


def clip(input, min=None, max=None):
    """Alias of :func:`clamp`."""
    return clamp(input, min, max)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|input - other| <= atol + rtol * |other|`` or the two are equal (so inf == inf);
    NaNs are close to each other only with ``equal_nan``. Both tensors of one dtype, broadcast;
    integers are compared in float32 (PyTorch's algorithm). Returns a bool tensor.

    Raises:
        TypeError: a non-tensor operand.  RuntimeError: different dtypes; negative rtol or atol.
    """
    _check_tensor("isclose", input)
    _check_tensor("isclose", other, "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"isclose: {input.dtype.name} did not match {other.dtype.name} "
                           "(both tensors must have the same dtype)")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if equal_nan and input.dtype.is_floating_point:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    a, b = (input, other) if input.dtype.is_floating_point else (input.to(float32), other.to(float32))
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return logical_or(close, logical_and(isfinite(actual), actual <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (:func:`isclose`): a Python bool. The answer goes to the host,
    so on cuda this waits for the GPU (as PyTorch's allclose does)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._host_array().all())


def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor, converted to input's dtype)
    where the bool ``mask`` (broadcasting to input's shape) is true. Gradient: to input where mask
    is false, to a tensor ``value`` summed where it is true.

    Raises:
        RuntimeError: a mask that is not bool or does not broadcast to input's shape; a value tensor
            with dimensions.
    """
    _check_tensor("masked_fill", input)
    if not isinstance(mask, Tensor) or mask.dtype.name != "bool":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if check_broadcast("masked_fill", mask.shape, input.shape) != tuple(input.shape):
        raise RuntimeError(f"masked_fill: the mask of shape {tuple(mask.shape)} must broadcast to the input's "
                           f"shape {tuple(input.shape)}")
    if isinstance(value, Tensor):
        value = _cast(value.to(input.device), input.dtype)
    else:
        from ..creation import full
        value = full((), value, dtype=input.dtype, device=input.device)
    return where(mask.to(input.device), value, input)
