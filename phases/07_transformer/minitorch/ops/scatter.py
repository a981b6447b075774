# GENERATED from minitorch/ops/scatter.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Gathering and scattering along a dimension: ``gather``, ``take_along_dim``, ``scatter``,
``scatter_add``, ``index_put`` (``x[indices] = values`` as a function), and ``where(cond)``.

``gather(input, dim, index)`` reads, for every position of ``index`` (a tensor of input's rank),
the element of ``input`` at that position with coordinate ``dim`` replaced by the index there:
for dim=1, ``out[i][j] = input[i][index[i][j]]``. ``scatter`` writes the other way round,
``out[i][index[i][j]] = src[i][j]``, and ``scatter_add`` adds there instead. On cuda they are the
kernels of index.cu (``gather_<t>``, ``scatter_store_<t>``, ``scatter_add_<t>``) with a Layout
that walks index's shape. Their gradients are each other: gather's is a scatter_add of ``grad``
into zeros; scatter's and scatter_add's are a gather of ``grad`` for ``src``.

Repeated indices: scatter_add and ``index_put(accumulate=True)`` add them all up with atomicAdd
on cuda, in no fixed order, so float results may differ in the last bits from run to run (as
PyTorch's on CUDA). scatter and ``index_put(accumulate=False)`` keep ONE of the written values,
which one being unspecified (PyTorch's rule too).

Index ranges: on cpu an index outside [0, size) raises (PyTorch's message; ``index_put``, like
``x[idx]``, also accepts negative indices). On cuda checking would need the GPU's answer on the
host, so it is not done: the kernels wrap negative indices, never touch memory outside the tensor,
and skip an out-of-range write (a gather reads NaN / 0 / False there).
"""
from ..autograd.function import Function
from ..dtypes import float32, int64
from ..tensor import Tensor
from .elementwise import check_broadcast, check_same_device, logical_and
from .elementwise import where as _where3
from .indexing import _fused, _index_tensors, _parse, nonzero


def _zeros(shape, like):
    return like._backend.full(tuple(shape), 0, like.dtype, like.device.index)


def _zeros_as(shape, like):
    """A raw array of ``shape`` reading one 0 everywhere (stride 0): what a scatter of zeros reads."""
    return like._backend.as_strided(_zeros((), like), shape, (0,) * len(shape))


# ---- gather / scatter / scatter_add ---------------------------------------------------------------------
class Gather(Function):
    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.shape, ctx.dim, ctx.index = a.shape, dim, index
        return Tensor(a._backend.gather(a._data, dim, index._data), a.device)

    @staticmethod
    def backward(ctx, grad):
        g = _zeros(ctx.shape, grad)
        grad._backend.scatter_add_(g, ctx.dim, ctx.index._data, grad._data)
        return Tensor(g, grad.device), None, None


class Scatter(Function):
    """``out = a`` with ``src`` stored (``add=False``) or added at the indexed positions; ``src``
    is a tensor of index's shape (a view of a larger one, or a number expanded)."""

    @staticmethod
    def forward(ctx, a, dim, index, src, add):
        b = a._backend
        out = b.contiguous(a._data)                  # a fresh copy to write into
        (b.scatter_add_ if add else b.scatter_)(out, dim, index._data, src._data)
        ctx.dim, ctx.index, ctx.add = dim, index, add
        return Tensor(out, a.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g_src = Tensor(b.gather(grad._data, ctx.dim, ctx.index._data), grad.device)
        if ctx.add:
            return grad, None, None, g_src, None
        g = b.contiguous(grad._data)                 # the overwritten elements get no gradient
        b.scatter_(g, ctx.dim, ctx.index._data, _zeros_as(ctx.index.shape, grad))
        return Tensor(g, grad.device), None, None, g_src, None


def _check_index(name, input, dim, index, src=None):
    """PyTorch's checks of gather/scatter arguments; returns the wrapped dim."""
    if not isinstance(input, Tensor) or not isinstance(index, Tensor):
        raise TypeError(f"{name}(): expected Tensors, got {type(input).__name__} and {type(index).__name__}")
    if index.dtype is not int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index.dtype.name}")
    check_same_device(name, input, index, *([src] if isinstance(src, Tensor) else []))
    d = input._dim(dim)
    if index.ndim != input.ndim:
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as input tensor "
                           f"(index {list(index.shape)}, input {list(input.shape)})")
    if isinstance(src, Tensor) and src.ndim != index.ndim:
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as src tensor "
                           f"(index {list(index.shape)}, src {list(src.shape)})")
    for k in range(index.ndim):
        if (k != d and index.shape[k] > input.shape[k]) or (isinstance(src, Tensor) and index.shape[k] > src.shape[k]):
            also = f" and to be no larger size than src {list(src.shape)}" if isinstance(src, Tensor) else ""
            raise RuntimeError(f"{name}(): Expected index {list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {d}{also}")
    if input.device.type == "cpu" and index.numel():     # cheap on cpu; cuda kernels skip bad indices
        n = input.shape[d] if input.ndim else 1
        bad = index._data[(index._data < 0) | (index._data >= n)]
        if bad.size:
            raise RuntimeError(f"{name}(): index {int(bad.flat[0])} is out of bounds for dimension {d} with size {n}")
    return d


def gather(input, dim, index):
    """``out[..., i_dim, ...] = input[..., index[..., i_dim, ...], ...]``: along ``dim`` the
    index says which element to take, elsewhere the coordinates are index's own (``torch.gather``).
    ``index``: int64 of input's rank, no larger than input outside ``dim``. Output: index's shape,
    input's dtype. Differentiable (the gradient is a scatter_add into zeros, atomicAdd on cuda).

    Raises:
        RuntimeError: index not int64, ranks or sizes that do not fit, an index outside
            [0, input.size(dim)) (on cpu; see the module docstring for cuda).
        IndexError: ``dim`` out of range.
    """
    d = _check_index("gather", input, dim, index)
    if input.ndim == 0:                              # 0-d input and index: as one-element vectors
        return Gather.apply(input.reshape(1), 0, index.reshape(1)).reshape(())
    return Gather.apply(input, d, index)


def take_along_dim(input, indices, dim=None):
    """``gather`` after broadcasting ``input`` and ``indices`` against each other outside ``dim``
    (NumPy's take_along_axis); with ``dim=None`` both are flattened first.

    Raises:
        RuntimeError: indices not int64, ranks that differ, shapes that do not broadcast, an
            index out of range (on cpu).
    """
    if not isinstance(indices, Tensor) or indices.dtype is not int64:
        got = indices.dtype.name if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {got}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = input._dim(dim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    outer = check_broadcast("take_along_dim", *((s[:d] + (1,) + s[d + 1:]) for s in (input.shape, indices.shape)))
    outer = tuple(outer)
    return gather(input.expand(outer[:d] + (input.shape[d],) + outer[d + 1:]), d,
                  indices.expand(outer[:d] + (indices.shape[d],) + outer[d + 1:]))


def _scatter(name, input, dim, index, src, add):
    d, src = _scatter_args(name, input, dim, index, src)
    if input.ndim == 0:                              # 0-d input, index and src: as one-element vectors
        return Scatter.apply(input.reshape(1), 0, index.reshape(1), src.reshape(1), add).reshape(())
    return Scatter.apply(input, d, index, src, add)


def _scatter_args(name, input, dim, index, src):
    """Checked arguments of a scatter: (the wrapped dim, src as a tensor of index's shape)."""
    d = _check_index(name, input, dim, index, src)
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype "
                               f"(self {input.dtype.name}, src {src.dtype.name})")
        src = src[tuple(slice(0, n) for n in index.shape)] if src.shape != index.shape else src
    else:                                            # a number: one value read everywhere
        from ..creation import full
        src = full((), src, dtype=input.dtype, device=input.device).expand(index.shape)
    return d, src


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """A copy of ``input`` with ``src[i]`` written at position i with coordinate ``dim``
    replaced by ``index[i]``, for every position i of index (``torch.scatter``): for dim=1,
    ``out[i][index[i][j]] = src[i][j]``. ``src``: a tensor of input's dtype and rank, no smaller
    than index (its first index.shape elements are used), or a number (``value``). Repeated
    indices keep one of their values (unspecified which). ``reduce="add"`` is :func:`scatter_add`;
    ``reduce="multiply"`` multiplies instead (PyTorch's deprecated argument: use
    :func:`scatter_reduce`), and, as in PyTorch, has no gradient (backward raises).
    Differentiable otherwise: input's gradient is zero where written, src's is
    ``grad.gather(dim, index)``.

    Raises:
        RuntimeError: as :func:`gather`, src of another dtype, or ``reduce`` not "add"/"multiply".
    """
    src = value if src is None else src
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if reduce == "multiply":
        d, src = _scatter_args("scatter", input, dim, index, src)
        return _reduced(input, d, index, src, "prod", True, differentiable=False)
    return _scatter("scatter", input, dim, index, src, add=reduce == "add")


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src[i]`` ADDED at the position :func:`scatter` would write it;
    repeated indices add up (atomicAdd on cuda for float32/float64/int64 and halves, in no fixed
    order: float results may vary in the last bits between runs). Differentiable: input's
    gradient is ``grad``, src's is ``grad.gather(dim, index)``.

    Raises:
        RuntimeError: as :func:`scatter`.
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    return _scatter("scatter_add", input, dim, index, src, add=True)


# ---- scatter_reduce: sum, prod, mean, amax, amin at the indexed positions -------------------------------
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _start(op, dtype):
    """The value a position scattered to starts from when include_self=False (op's identity)."""
    import numpy as np
    if op in ("sum", "mean"):
        return 0
    if op == "prod":
        return 1
    if dtype.is_floating_point:
        return float("-inf") if op == "amax" else float("inf")
    return int(np.iinfo(np.int64).min if op == "amax" else np.iinfo(np.int64).max)


class ScatterReduce(Function):
    """``out = a`` (or, without include_self, ``a`` with op's identity at the indexed positions)
    combined with ``src`` (index's shape) at the indexed positions by ``op``: "sum", "prod",
    "amax" or "amin" (mean is a sum divided by a count, :func:`scatter_reduce`). Gradients as
    PyTorch's scatter_reduce_backward: prod divides the product by each factor, computing the
    product without it where that factor is a zero; amax/amin share the gradient equally among
    every element (of input and src) equal to the result."""

    @staticmethod
    def forward(ctx, a, dim, index, src, op, include_self, differentiable):
        b = a._backend
        out = b.contiguous(a._data)                  # a fresh copy to write into
        if not include_self:
            start = b.full((), _start(op, a.dtype), a.dtype, a.device.index)
            b.scatter_(out, dim, index._data, b.as_strided(start, index.shape, (0,) * index.ndim))
        b.scatter_reduce_(out, dim, index._data, src._data, op)
        out = Tensor(out, a.device)
        ctx.save_for_backward(a, src, out)
        ctx.dim, ctx.index, ctx.op, ctx.include_self, ctx.differentiable = dim, index, op, include_self, differentiable
        return out

    @staticmethod
    def backward(ctx, grad):
        if not ctx.differentiable:
            raise RuntimeError("derivative for scatter with reduce='multiply' is not implemented (as in PyTorch); "
                               "use scatter_reduce(..., reduce='prod')")
        a, src, out = ctx.saved_tensors
        d, index, op, include_self = ctx.dim, ctx.index, ctx.op, ctx.include_self
        if op == "sum":
            g_self, g_src = grad, grad.gather(d, index)
        elif op == "prod":
            g_self, g_src = _prod_grads(a, src, out, grad, d, index, include_self)
        else:
            value = out.gather(d, index)
            self_is, src_is = (a == out).to(grad.dtype), (src == value).to(grad.dtype)
            share = grad / self_is.scatter_add(d, index, src_is)     # how many elements reach the result
            g_self, g_src = self_is * share, src_is * share.gather(d, index)
        if not include_self:                         # input's old values there were not used
            g_self = g_self.scatter(d, index, 0.0)
        return g_self, None, None, g_src, None, None, None


def _prod_grads(a, src, out, grad, d, index, include_self):
    """Input's and src's gradients of a scatter product: ``grad * product of the others``; the
    product of the others is out / x, except where x is 0 (recomputed with x as 1)."""
    ones = _where3(a == 0, 1.0, a)
    g_self = grad * scatter_reduce(ones, d, index, src, "prod", include_self=include_self) / ones
    zero = src == 0
    from ..creation import zeros
    zeros_there = zeros(a.shape, dtype=src.dtype, device=a.device).scatter_add(d, index, zero.to(src.dtype))
    zeros_there = zeros_there.gather(d, index)       # how many zeros of src reach each one's position
    single = logical_and(zero, zeros_there == 1)     # the only zero at its position: others' product
    without = scatter_reduce(a, d, index, _where3(single, 1.0, src), "prod", include_self=include_self)
    g_src = _where3(single, (grad * without).gather(d, index),
                    (grad * out).gather(d, index) / _where3(zero, 1.0, src))
    return g_self, g_src


def _reduced(input, d, index, src, op, include_self, differentiable=True):
    """ScatterReduce.apply for every dtype and rank: float16/bfloat16 computed in float32 (the
    CAS kernels exist for 4 and 8 bytes), a 0-d input as a one-element vector."""
    if input.dtype.is_floating_point and input.dtype.itemsize == 2:
        return _reduced(input.to(float32), d, index, src.to(float32), op, include_self, differentiable).to(input.dtype)
    if input.ndim == 0:
        return ScatterReduce.apply(input.reshape(1), 0, index.reshape(1), src.reshape(1), op, include_self,
                                   differentiable).reshape(())
    return ScatterReduce.apply(input, d, index, src, op, include_self, differentiable)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` where each element of ``src`` is combined, by ``reduce``, into the
    position :func:`scatter` would write it (``torch.scatter_reduce``): "sum", "prod", "mean"
    (the sum over the elements reaching a position divided by their count; floor division for
    integers), "amax", "amin" (NaN propagates). ``include_self=False``: a position that is
    scattered to ignores input's old value there (positions not scattered to keep it).
    Shapes: as :func:`scatter`; output: input's shape and dtype. Differentiable (PyTorch's
    gradients: see :class:`ScatterReduce`). On cuda, prod, amax and amin use atomicCAS loops
    (index.cu): a float product's last bits may vary between runs.

    Raises:
        RuntimeError: as :func:`scatter`, or ``reduce`` not one of the five.
        TypeError: ``src`` not a Tensor.
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
    d, src = _scatter_args("scatter_reduce", input, dim, index, src)
    if reduce != "mean":
        return _reduced(input, d, index, src, reduce, include_self)
    total = _reduced(input, d, index, src, "sum", include_self)
    from ..creation import full
    count = full(input.shape, 1 if include_self else 0, dtype=input.dtype, device=input.device)
    count = count.scatter_add(d, index, full(index.shape, 1, dtype=input.dtype, device=input.device))
    count = _where3(count == 0, 1, count)            # positions nothing reaches keep their value
    if input.dtype.is_floating_point:
        return total / count
    from .elementwise import floor_divide
    return floor_divide(total, count)


# ---- index_put: x[indices] = values as a function ---------------------------------------------------------
def _target(backend, data, target):
    """``data``'s positions that ``target`` (see :func:`_index_target`) selects, as (a raw view,
    the dim of that view, a raw int64 index along it): k index tensors on k dims become one
    linear index into a merged dim (indexing._fused)."""
    basic, order, first, tensors = target
    view = data if basic is None else data[basic]
    view = view if order is None else view.transpose(order)
    if len(tensors) == 1:
        return view, first, tensors[0]._data
    view, lin = _fused(backend, view, view.shape, first, tensors)
    return view, first, lin._data


class IndexPut(Function):
    """``out = a`` with ``values`` (already expanded to the indexed shape) stored or added at the
    positions ``target`` selects."""

    @staticmethod
    def forward(ctx, a, values, target, accumulate):
        b = a._backend
        out = b.contiguous(a._data)                  # a fresh copy to write into
        view, dim, index = _target(b, out, target)
        (b.index_add_ if accumulate else b.index_copy_)(view, dim, index, values._data)
        ctx.target, ctx.accumulate = target, accumulate
        return Tensor(out, a.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g = b.contiguous(grad._data)                 # the layout forward wrote into
        view, dim, index = _target(b, g, ctx.target)
        g_values = Tensor(b.take(view, dim, index), grad.device)
        if not ctx.accumulate:                       # overwritten elements get no gradient
            b.index_copy_(view, dim, index, _zeros_as(g_values.shape, grad))
        return Tensor(g, grad.device), g_values, None, None


def _index_target(input, indices):
    """(basic key, permutation, first dim, int64 index tensors) for ``input[indices]``, and the
    shape of that result."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put_(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    for k in indices:
        if not isinstance(k, Tensor):
            raise TypeError(f"index_put_(): indices must be Tensors, got {type(k).__name__}")
    basic, advanced = _parse(input, tuple(indices))
    shape = input._data.shape if basic is None else input._data[basic].shape
    if not advanced:                                 # e.g. indices=(): the whole tensor
        return None, shape
    tensors, dims, order = _index_tensors(shape, input.device, advanced)
    first = dims[0]
    if order is not None:
        shape, first = tuple(shape[d] for d in order), 0
    k = len(tensors)
    batch = check_broadcast("index_put", *(t.shape for t in tensors))
    return (basic, order, first, tuple(tensors)), tuple(shape[:first]) + tuple(batch) + tuple(shape[first + k:])


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``input[indices] = values`` (``accumulate=True``: ``+=``, repeated
    indices adding up; otherwise one of their values stays). ``indices``: a tuple of int64 or
    bool tensors, as in ``input[i0, i1, ...]`` (negative indices count from the end; a bool mask
    costs a GPU synchronisation, as ``nonzero``). ``values``: input's dtype, broadcasting to the
    shape of ``input[indices]``. Differentiable in ``input`` and ``values``.

    Raises:
        TypeError: indices not a tuple of tensors.  IndexError: as ``input[indices]``.
        RuntimeError: values of another dtype or shape.
    """
    target, shape = _index_target(input, indices)
    if not isinstance(values, Tensor) or values.dtype is not input.dtype:
        got = values.dtype.name if isinstance(values, Tensor) else type(values).__name__
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {input.dtype.name} "
                           f"for the destination and {got} for the source.")
    check_same_device("index_put", input, values)
    while values.ndim > len(shape) and values.shape[0] == 1:
        values = values.reshape(values.shape[1:])
    if values.ndim > len(shape) or any(s not in (1, n) for s, n in zip(values.shape, shape[len(shape) - values.ndim:])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    if target is None:                               # no index tensor: every element
        return values.expand(shape) + input if accumulate else values.expand(shape).clone()
    return IndexPut.apply(input, values.expand(shape), target, accumulate)


# ---- where(condition): the one-argument form ----------------------------------------------------------------
def where(condition, input=None, other=None):
    """``where(condition, input, other)``: elementwise choice (minitorch.ops.elementwise.where).
    ``where(condition)``: ``nonzero(condition, as_tuple=True)``, one int64 tensor of positions per
    dimension; it waits for the GPU (the count of true elements sizes the result).

    Raises:
        TypeError: only one of ``input`` and ``other`` given.
    """
    if input is None and other is None:              # a 0-d condition counts as one element
        return nonzero(condition.reshape(-1) if condition.ndim == 0 else condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes 1 or 3 arguments (condition, input, other)")
    return _where3(condition, input, other)
