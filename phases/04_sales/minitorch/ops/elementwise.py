# GENERATED from minitorch/ops/elementwise.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Elementwise ops: ``+ - * / **``, comparisons, ``where`` and the unary math functions.

Each op is a :class:`~minitorch.autograd.Function`. Its forward hands raw arrays to the device's
backend (NumPy on cpu, our kernels in ``elementwise.cu`` on cuda); broadcasting and strides are
handled there, inside the kernel, never by copying expanded inputs. Before that, the public
functions at the bottom check devices and shapes and apply PyTorch's type promotion.
"""
import numbers

from ..autograd.function import Function
from ..autograd import grad_mode as _grad_mode
from ..broadcast import broadcast_shape
from ..dtypes import float32, int64, result_type
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


def _sum_to(grad, shape):
    """Fold a broadcast gradient back to ``shape``: sum the dimensions broadcasting added or
    stretched from 1. (If y = x broadcast to a bigger shape, each x element fed several y
    elements, so its gradient is the sum of theirs.)"""
    if grad.shape == shape:
        return grad
    # >>> exercise 03.3: folding a broadcast gradient
    # hint: sum the leading dimensions broadcasting added, and those stretched from 1 (keepdim=True)
    # hint: then reshape to `shape`
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1)
    return grad.sum(dim=dims, keepdim=True).reshape(shape) if dims else grad.reshape(shape)
    # <<< exercise


def _route_to_winner(grad, a, b, a_wins):
    """Gradient of an elementwise max/min: all of it to the operand that was picked; ties split
    it evenly, as PyTorch does."""
    wa = a_wins.to(grad.dtype) + (a == b).to(grad.dtype) * 0.5
    return _sum_to(grad * wa, a.shape), _sum_to(grad * (1 - wa), b.shape)


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a._data.shape, b._data.shape    # plain tuples: cheaper than two Size objects
        return _binary("add", a, b)

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        return _sum_to(grad, sa), _sum_to(grad, sb)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a._data.shape, b._data.shape
        return _binary("sub", a, b)

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        return _sum_to(grad, sa), _sum_to(-grad, sb)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("mul", a, b)

    @staticmethod
    def backward(ctx, grad):
        # >>> exercise 03.1: Mul backward
        # hint: d(a*b)/da = b and d(a*b)/db = a, each times the incoming grad
        # hint: fold each gradient back to its input's shape with _sum_to (broadcasting)
        a, b = ctx.saved_tensors
        return _sum_to(grad * b, a.shape), _sum_to(grad * a, b.shape)
        # <<< exercise


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("div", a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad / b
        return _sum_to(ga, a.shape), _sum_to(-ga * a / b, b.shape)


class Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = _binary("pow", a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ga = grad * b * a ** (b - 1)
        # d(a^b)/db = a^b ln a; where a == 0 the limit is 0 (PyTorch's convention)
        gb = where(a == 0, scalar_tensor(grad, 0.0), grad * out * a.log()) if ctx.needs_input_grad[1] else None
        return _sum_to(ga, a.shape), None if gb is None else _sum_to(gb, b.shape)


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("maximum", a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _route_to_winner(grad, a, b, a > b)


class Minimum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("minimum", a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _route_to_winner(grad, a, b, a < b)


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

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class SubScalar(Function):
    """``a - s``, or ``s - a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        ctx.reflected = reflected
        return _scalar("sub", a, s, reflected)

    @staticmethod
    def backward(ctx, grad):
        return (-grad if ctx.reflected else grad), None, None


class MulScalar(Function):
    @staticmethod
    def forward(ctx, a, s):
        ctx.s = s
        return _scalar("mul", a, s)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.s, None


class DivScalar(Function):
    """``a / s``, or ``s / a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        ctx.s, ctx.reflected = s, reflected
        out = _scalar("div", a, s, reflected)
        ctx.save_for_backward(a if reflected else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        if not ctx.reflected:
            return grad * (1.0 / ctx.s), None, None
        a, = ctx.saved_tensors                       # d(s/a)/da = -s / a^2
        return grad * (-ctx.s) / (a * a), None, None


class PowScalar(Function):
    """``a ** s``, or ``s ** a`` when ``reflected``."""

    @staticmethod
    def forward(ctx, a, s, reflected):
        out = _scalar("pow", a, s, reflected)
        ctx.s, ctx.reflected = s, reflected
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if ctx.reflected:                            # d(s^a)/da = s^a ln s
            import math
            return grad * out * math.log(ctx.s), None, None
        if ctx.s == 0:
            return grad * 0.0, None, None
        return grad * ctx.s * a ** (ctx.s - 1), None, None


# ---- unary math ---------------------------------------------------------------------------------
class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return _unary("neg", a)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("exp", a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("log", a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / a


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("sqrt", a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad / (out * 2.0)


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("abs", a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors               # sign(a), with sign(0) = 0 like PyTorch
        return grad * ((a > 0).to(grad.dtype) - (a < 0).to(grad.dtype))


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("tanh", a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors             # 1 - tanh^2, fused in one kernel
        if _grad_mode._enabled:              # create_graph: the same formula from recorded ops
            return grad * (1 - out * out)
        return _new(grad, grad._backend.unary_backward("tanh", grad._data, out._data))


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a):
        out = _unary("sigmoid", a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors             # y (1 - y), fused in one kernel
        if _grad_mode._enabled:              # create_graph: the same formula from recorded ops
            return grad * out * (1 - out)
        return _new(grad, grad._backend.unary_backward("sigmoid", grad._data, out._data))


class Relu(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _unary("relu", a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors               # grad where a > 0, else 0, fused in one kernel
        if _grad_mode._enabled:              # create_graph: the same formula from recorded ops
            return grad * (a > 0).to(grad.dtype)
        return _new(grad, grad._backend.unary_backward("relu", grad._data, a._data))


class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        ctx.shapes = a.shape, b.shape
        return _new(a, a._backend.where(cond._data, a._data, b._data))

    @staticmethod
    def backward(ctx, grad):
        cond, = ctx.saved_tensors
        sa, sb = ctx.shapes
        zero = scalar_tensor(grad, 0.0)
        return None, _sum_to(where(cond, grad, zero), sa), _sum_to(where(cond, zero, grad), sb)


class Cast(Function):
    """Convert to another dtype; the gradient converts back."""

    @staticmethod
    def forward(ctx, a, dtype):
        ctx.dtype = a.dtype
        return _new(a, a._backend.cast(a._data, dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.dtype), None


class ToDevice(Function):
    """Copy to another device (``Tensor.to(device)``, ``.cuda()``, ``.cpu()``); the gradient moves
    back. Recorded like any op, so ``minitorch.tensor(a, requires_grad=True).cuda()`` is a non-leaf
    whose gradient reaches the cpu leaf, as in PyTorch."""

    @staticmethod
    def forward(ctx, a, device):
        from .. import native
        ctx.device = a.device
        return Tensor(native.get(device).from_numpy(a._host_array(), device.index), device)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.device), None


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
    if all(t._device is first for t in tensors):
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
