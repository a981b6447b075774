# GENERATED from minitorch/ops/reduce.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Reductions: ``sum`` and ``mean`` over any dimensions, and their gradients.

On cuda, ``reduce.cu`` gives each output element to a block that adds its inputs with a
shared-memory tree and warp shuffles. A mean is a sum scaled by 1/n in the same kernel.
"""
import math

from ..autograd.function import Function
from ..dtypes import int64
from ..tensor import Tensor


class Sum(Function):
    @staticmethod
    def forward(ctx, a, dims, keepdim, scale):
        ctx.shape, ctx.dims, ctx.keepdim, ctx.scale = a.shape, dims, keepdim, scale
        return Tensor(a._backend.sum(a._data, dims, keepdim, scale), a.device)

    @staticmethod
    def backward(ctx, grad):
        # every input element contributed once (times scale) to its output: spread grad back
        if not ctx.keepdim:
            shape = list(ctx.shape)
            for d in ctx.dims:
                shape[d] = 1
            grad = grad.reshape(tuple(shape))
        grad = grad.expand(ctx.shape)
        return (grad * ctx.scale if ctx.scale != 1.0 else grad), None, None, None


def _reduce_dims(a, dim):
    if dim is None:
        return tuple(range(a.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(sorted({a._dim(d) for d in dims}))
    return dims


def sum(a, dim=None, keepdim=False):
    """Sum over ``dim`` (an int, a tuple of ints, or None for all), keeping reduced dims as size 1
    when ``keepdim``. Integer and bool inputs sum to int64, as in PyTorch."""
    if not a.dtype.is_floating_point and a.dtype is not int64:
        a = a.to(int64)
    return Sum.apply(a, _reduce_dims(a, dim), keepdim, 1.0)


def mean(a, dim=None, keepdim=False):
    """Arithmetic mean over ``dim`` (see :func:`sum`).

    Raises:
        RuntimeError: for integer or bool tensors (PyTorch asks for a floating dtype too).
    """
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"mean(): expected a floating point tensor, got {a.dtype}; use .float() first")
    dims = _reduce_dims(a, dim)
    n = math.prod(a.shape[d] for d in dims)
    return Sum.apply(a, dims, keepdim, 1.0 / n if n else float("nan"))


# ---- max / min / argmax / argmin --------------------------------------------------------------
# One kernel (reduce.cu, extreme_*) finds each maximum AND where it is. NaN counts as larger (and,
# for min, smaller) than every number, so NaN propagates; ties go to the first index.
import collections  # noqa: E402 - phase 04 adds these

from ..dtypes import bool as _bool  # noqa: E402

MaxResult = collections.namedtuple("max", ["values", "indices"])     # like torch.return_types.max
MinResult = collections.namedtuple("min", ["values", "indices"])


class Selected(Function):
    """``max(dim)`` / ``min(dim)`` values: computed (with their indices) before this op; the op
    records that each output's gradient goes to the one input element it was taken from."""

    @staticmethod
    def forward(ctx, a, values, indices, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim, ctx.indices = a.shape, dim, keepdim, indices
        return values

    @staticmethod
    def backward(ctx, grad):
        # >>> exercise 04.5: max(dim) backward
        # hint: each output's gradient goes to the one input element it was taken from (ctx.indices along ctx.dim)
        # hint: zeros of the input's shape, then the backend's scatter_add_(out, dim, index, grad); unsqueeze when not keepdim
        idx = ctx.indices
        if not ctx.keepdim:
            idx, grad = idx.unsqueeze(ctx.dim), grad.unsqueeze(ctx.dim)
        b = grad._backend
        out = b.full(tuple(ctx.shape), 0, grad.dtype, grad.device.index)
        b.scatter_add_(out, ctx.dim, idx._data, grad._data)       # out[.., idx[i], ..] += grad[i]
        return Tensor(out, grad.device), None, None, None, None
        # <<< exercise


class ExtremeAll(Function):
    """``max()`` / ``min()`` over all elements: the gradient is shared evenly by every element equal
    to the result (PyTorch's rule: ties split it; a NaN result goes to the NaNs)."""

    @staticmethod
    def forward(ctx, a, value):
        ctx.save_for_backward(a, value.detach())
        return value

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import where
        a, value = ctx.saved_tensors
        hit = where(value != value, a != a, a == value).to(grad.dtype)
        return grad * hit / hit.sum(), None


def _extreme_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): expected a Tensor, got {type(input).__name__}")
    return input.to(int64) if input.dtype is _bool else input      # bools compare as 0 and 1


def _extreme(name, input, dim, keepdim, largest):
    from . import elementwise
    if isinstance(dim, Tensor):                     # max(a, b): the elementwise maximum, as torch.max
        return (elementwise.maximum if largest else elementwise.minimum)(input, dim)
    work = _extreme_input(name, input)
    b = input._backend
    result = MaxResult if largest else MinResult
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim needs a dim (max over all elements returns a 0-d tensor)")
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        data = work.reshape(1)._data if work.ndim == 0 else work._data
        vals, _ = b.extreme(data, tuple(range(data.ndim)), False, largest)      # strided: no copy
        value = Tensor(vals, input.device).to(input.dtype)
        return ExtremeAll.apply(input, value)
    d = input._dim(dim)
    if input.ndim == 0:                             # one element: as a 1-d tensor of one
        values, indices = _extreme(name, input.reshape(1), 0, False, largest)
        return result(values, indices)
    if input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    vals, idx = b.extreme(work._data, (d,), keepdim, largest)
    indices = Tensor(idx, input.device)
    values = Tensor(vals, input.device).to(input.dtype)
    return result(Selected.apply(input, values, indices, d, keepdim), indices)


def max(input, dim=None, keepdim=False):
    """The largest element, or the largest along ``dim`` and where it is (``torch.max``).

    * ``max(x)``: a 0-d tensor; its gradient is shared by the elements equal to it.
    * ``max(x, dim, keepdim=False)``: a named tuple ``(values, indices)``; indices (int64) are
      positions along ``dim``, the first one on ties; the gradient goes to those positions.
    * ``max(x, other)``: the elementwise maximum of two tensors.

    NaN counts as the maximum (it propagates). Bool inputs compare as 0 and 1 and give bool values.

    Raises:
        RuntimeError: ``max(x)`` of an empty tensor.  IndexError: ``dim`` out of range, or of size 0.
    """
    return _extreme("max", input, dim, keepdim, True)


def min(input, dim=None, keepdim=False):
    """The smallest element, or the smallest along ``dim`` and where it is: see :func:`max`."""
    return _extreme("min", input, dim, keepdim, False)


def _arg_extreme(name, input, dim, keepdim, largest):
    work = _extreme_input(name, input)
    b = input._backend
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        data = work.reshape(1)._data if work.ndim == 0 else work._data
        _, idx = b.extreme(data, tuple(range(data.ndim)), False, largest)     # flat row-major index
        return Tensor(idx.reshape((1,) * input.ndim if keepdim else ()), input.device)
    d = input._dim(dim)
    if input.ndim == 0:                             # one element: index 0
        return Tensor(b.full((), 0, int64, input.device.index), input.device)
    if input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return Tensor(b.extreme(work._data, (d,), keepdim, largest)[1], input.device)


def argmax(input, dim=None, keepdim=False):
    """int64 index of the maximum along ``dim`` (the first one on ties; NaN counts as the maximum),
    or, with ``dim=None``, the flat row-major index over all elements (a 0-d tensor, or all-ones
    shape with ``keepdim``). No gradient flows through indices.

    Raises:
        IndexError: ``dim`` out of range, or an empty reduction (PyTorch's messages).
    """
    return _arg_extreme("argmax", input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    """int64 index of the minimum: see :func:`argmax`."""
    return _arg_extreme("argmin", input, dim, keepdim, False)


# ---- var / std ------------------------------------------------------------------------------------
class Var(Function):
    """Variance (or standard deviation) over ``dims``; the kernel also gives the mean, kept for
    the gradient: d var / d x_i = 2 (x_i - mean) / (R - correction), and
    d std / d x_i = (d var / d x_i) / (2 std) (0 where std is 0, as PyTorch)."""

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim, take_sqrt):
        out, mean = a._backend.var_mean(a._data, dims, correction, keepdim, take_sqrt)
        ctx.save_for_backward(a)
        ctx.mean, ctx.out = Tensor(mean, a.device), Tensor(out, a.device)
        ctx.dims, ctx.correction, ctx.keepdim, ctx.take_sqrt = dims, correction, keepdim, take_sqrt
        return Tensor(out, a.device)

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import where
        a, = ctx.saved_tensors
        mean, out = ctx.mean, ctx.out
        if not ctx.keepdim:
            shape = tuple(1 if d in ctx.dims else n for d, n in enumerate(a.shape))
            grad, mean, out = grad.reshape(shape), mean.reshape(shape), out.reshape(shape)
        if ctx.take_sqrt:
            grad = where(out == 0, 0.0, grad / (out * 2.0))
        n = math.prod(a.shape[d] for d in ctx.dims)
        dof = n - ctx.correction
        scale = 2.0 / dof if dof else math.inf
        return grad * (a - mean) * scale, None, None, None, None


def _var(name, input, dim, unbiased, keepdim, correction, take_sqrt):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): expected a Tensor, got {type(input).__name__}")
    if isinstance(dim, bool):                       # var(x, False): the old (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{name}(): give correction or unbiased, not both")
        correction = 1 if unbiased else 0
    correction = 1 if correction is None else correction
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return Var.apply(input, _reduce_dims(input, dim), correction, bool(keepdim), take_sqrt)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` (an int, a tuple, or None for all): ``sum((x - mean)^2) / (R - correction)``
    for the R reduced elements (``correction=1``, the default: Bessel's unbiased estimate; 0: the
    population variance; ``unbiased=True/False`` is the older spelling of 1/0). Where
    ``R - correction <= 0`` the result is NaN or inf, as in PyTorch.

    Numerically stable: one pass of Welford's update merged with Chan et al.'s formula on cuda (see
    reduce.cu), two passes on cpu; never the cancelling E[x^2] - E[x]^2. Differentiable.

    Raises:
        RuntimeError: an integer or bool input.  IndexError: ``dim`` out of range.
    """
    return _var("var", input, dim, unbiased, keepdim, correction, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, ``sqrt(var)``: see :func:`var`."""
    return _var("std", input, dim, unbiased, keepdim, correction, True)


# ---- all/any, prod, amax/amin, logsumexp, norm, count_nonzero --------------------------------------
# One backend function, fold(op, data, dims, keepdim), computes them all (reduce.cu: one generic
# kernel set, the op a small struct). float16/bfloat16 are computed on a float32 copy and rounded
# back (these kernels have no half variants).
import math as _math  # noqa: E402 - phase 04 adds these

from ..dtypes import float32 as _float32  # noqa: E402


def _wide(a):
    """float16/bfloat16 as float32 (the fold kernels compute float32, float64, int64, bool)."""
    return a.to(_float32) if a.dtype.itemsize == 2 and a.dtype.is_floating_point else a


def _keepdim_shape(shape, dims):
    return tuple(1 if d in dims else n for d, n in enumerate(shape))


def _tensor_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): expected a Tensor, got {type(input).__name__}")


def _fold(op, a, dims, keepdim):
    """The backend's fold of the Tensor ``a`` (half computed in float32 and rounded back)."""
    wide = _wide(a)
    out = Tensor(a._backend.fold(op, wide._data, dims, keepdim), a.device)
    return out.to(a.dtype) if wide is not a and out.dtype is _float32 else out


class Fold(Function):
    """A fold over ``dims`` with its gradient (prod, amax/amin, logsumexp, norms): backward
    receives the input, the result, and the gradient reshaped to keep the reduced dims."""

    @staticmethod
    def forward(ctx, a, op, dims, keepdim):
        out = _fold(op, a, dims, keepdim)
        ctx.save_for_backward(a, out)
        ctx.op, ctx.dims, ctx.keepdim = op, dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        shape = _keepdim_shape(a.shape, ctx.dims)
        grad, out = grad.reshape(shape), out.reshape(shape)
        return _FOLD_GRADS[ctx.op](a, out, ctx.dims) * grad, None, None, None


def _sign(a):
    return (a > 0).to(a.dtype) - (a < 0).to(a.dtype)


def _prod_grad(a, out, dims):
    """d out / d x_i = product of the others: out / x_i without zeros; with one zero in the slice
    only the zero gets the product of the rest; with two or more, every derivative is 0 (PyTorch)."""
    from .elementwise import where
    zero = a == 0
    zeros = sum(zero, dims, keepdim=True)
    rest = Fold.apply(where(zero, 1.0, a), "prod", dims, True)      # product of the non-zeros
    return where(zero, where(zeros == 1, rest, 0.0), out / where(zero, 1.0, a))


def _extreme_grad(a, out, dims):
    """amax/amin (and the inf-norm's |x|): shared evenly by the elements equal to the result."""
    hit = (a == out).to(a.dtype)
    return hit / sum(hit, dims, keepdim=True)


def _norm_inf_grad(a, out, dims):
    return _sign(a) * _extreme_grad(a.abs(), out, dims)


def _norm2_grad(a, out, dims):
    from .elementwise import where
    return where(out == 0, 0.0, a / out)             # subgradient 0 at 0, as PyTorch


_FOLD_GRADS = {
    "prod": _prod_grad, "amax": _extreme_grad, "amin": _extreme_grad,
    "logsumexp": lambda a, out, dims: (a - out).exp(),
    "norm1": lambda a, out, dims: _sign(a), "norm2": _norm2_grad, "norminf": _norm_inf_grad,
}


def _logical(name, input, dim, keepdim):
    _tensor_input(name, input)
    return _fold(name, input, _reduce_dims(input, dim), bool(keepdim))


def all(input, dim=None, keepdim=False):
    """True where every element over ``dim`` (an int, a tuple, or None for all) is non-zero (NaN
    counts as non-zero); bool, as ``torch.all``. An empty reduction is True."""
    return _logical("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    """True where some element over ``dim`` is non-zero; bool. An empty reduction is False."""
    return _logical("any", input, dim, keepdim)


def count_nonzero(input, dim=None):
    """int64 count of the non-zero elements over ``dim`` (an int, a tuple, or None for all)."""
    _tensor_input("count_nonzero", input)
    return _fold("count_nonzero", input, _reduce_dims(input, dim), False)


def prod(input, dim=None, keepdim=False):
    """Product over ``dim`` (an int, or None for all elements: a 0-d result; ``keepdim`` then keeps
    every dim as size 1). bool and integer inputs multiply in int64, as PyTorch. Differentiable,
    also where elements are 0 (see _prod_grad)."""
    _tensor_input("prod", input)
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod(): dim must be an int or None (PyTorch reduces one dim at a time)")
    a = input if input.dtype.is_floating_point or input.dtype is int64 else input.to(int64)
    return Fold.apply(a, "prod", _reduce_dims(a, dim), bool(keepdim))


def _amax_amin(name, input, dim, keepdim):
    _tensor_input(name, input)
    every = dim is None or dim in ((), [])
    dims = tuple(range(input.ndim)) if every else _reduce_dims(input, dim)
    if every and input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if input.dtype is _bool:                         # max of bools is any; min is all
        return _fold("any" if name == "amax" else "all", input, dims, bool(keepdim))
    return Fold.apply(input, name, dims, bool(keepdim))


def amax(input, dim=(), keepdim=False):
    """The maximum over ``dim`` (an int or a tuple; all dims when empty), values only. NaN
    propagates. Its gradient is shared evenly by the elements equal to the maximum (PyTorch).

    Raises:
        IndexError: a reduced dim of size 0.  RuntimeError: every dim reduced of an empty tensor.
    """
    return _amax_amin("amax", input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """The minimum over ``dim``: see :func:`amax`."""
    return _amax_amin("amin", input, dim, keepdim)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x)))`` over ``dim`` (an int or a tuple), without overflow: computed as
    m + log(sum(exp(x - m))) with m the maximum, in one read on cuda (online form, reduce.cu).
    Integer inputs are computed in float32. Gradient: ``exp(x - result)`` (a softmax).
    """
    _tensor_input("logsumexp", input)
    a = input if input.dtype.is_floating_point else input.to(_float32)
    return Fold.apply(a, "logsumexp", _reduce_dims(a, dim), bool(keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector norm over ``dim`` (an int, a tuple, or None for all): ``p`` = 1 (sum |x|), 2 or "fro"
    (sqrt of sum x^2), inf (max |x|), -inf (min |x|), 0 (count of non-zeros), or any other number
    (``sum(|x|^p)^(1/p)``, composed of elementwise ops). ``dtype`` converts the input first.
    Differentiable (at 0 the 2-norm's subgradient is 0, as PyTorch's; the composed p's give NaN there).

    Raises:
        RuntimeError: an integer or bool input.  NotImplementedError: p="nuc" (a matrix norm).
    """
    _tensor_input("norm", input)
    a = input if dtype is None else input.to(dtype)
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be floating point, got {a.dtype}")
    if isinstance(p, str) and p != "fro":
        raise NotImplementedError(f"norm(): p={p!r} is a matrix norm; only vector norms (numbers and 'fro')")
    dims, keepdim = _reduce_dims(a, dim), bool(keepdim)
    fused = {"fro": "norm2", 2: "norm2", 1: "norm1", _math.inf: "norminf"}.get(p)
    if fused is not None:
        return Fold.apply(a, fused, dims, keepdim)
    if p == -_math.inf:
        return amin(a.abs(), dims, keepdim) if dims else amin(a.abs())
    if p == 0:
        return sum((a != 0).to(a.dtype), dims, keepdim)
    return sum(a.abs() ** p, dims, keepdim) ** (1.0 / p)

