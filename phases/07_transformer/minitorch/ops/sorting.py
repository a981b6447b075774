# GENERATED from minitorch/ops/sorting.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Scans, sorting and counting: cumsum, cumprod, sort, argsort, topk, kthvalue, median, mode,
unique, bincount, histc.

On cuda: ``scan.cu`` (block-wide scans; one pass with decoupled look-back for few long rows),
``sort.cu`` (a stable bitonic sort: topk, kthvalue and median sort the whole row and then
select, where a selection algorithm would do less work; mode runs libstdc++'s introsort, one
thread per row, to return PyTorch's index) and ``histogram.cu`` (atomic counts).
unique, bincount and histc read a number back to the host, because the data decides their
output's size or range.
"""
import collections

from ..autograd.function import Function
from ..dtypes import float32, int64
from ..tensor import Tensor
from .elementwise import logical_and, where
from .reduce import ExtremeAll, Selected

SortResult = collections.namedtuple("sort", ["values", "indices"])        # like torch.return_types
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
MedianResult = collections.namedtuple("median", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])


def _check(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): expected a Tensor, got {type(input).__name__}")


def _wide(a):
    """float16/bfloat16 as float32: the scan and sort kernels compute float32, float64, int64."""
    return a.to(float32) if a.dtype.itemsize == 2 and a.dtype.is_floating_point else a


# ---- cumsum / cumprod -----------------------------------------------------------------------------
def _reverse_cumsum(grad, dim):
    """sum of grad[j] for j >= i along ``dim``: a cumsum of the reversed view, reversed back."""
    b = grad._backend
    flip = (slice(None),) * dim + (slice(None, None, -1),)
    return Tensor(b.contiguous(b.cumulative("cumsum", grad._data[flip], dim)[flip]), grad.device)


class Cumulative(Function):
    @staticmethod
    def forward(ctx, a, op, dim):
        data = a._data if a.ndim else a._data.reshape(1)
        out = Tensor(a._backend.cumulative(op, data, dim).reshape(a.shape), a.device)
        ctx.save_for_backward(a, out)
        ctx.op, ctx.dim = op, dim
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if a.ndim == 0:
            return grad, None, None
        grad = grad.contiguous()
        if ctx.op == "cumsum":          # x_i feeds every out_j with j >= i
            return _reverse_cumsum(grad, ctx.dim), None, None
        return _cumprod_backward(a, out, grad, ctx.dim), None, None


def _cumprod_backward(a, out, grad, dim):
    """The gradient of ``out = cumprod(a, dim)``, zeros included, in O(n) per row.

    d out_j / d a_i = prod of a_k for k <= j, k != i (j >= i). Before a row's first zero that is
    out_j / a_i; at the first zero z it is the running product with a_z taken as 1; after z every
    such product holds a_z = 0. So three cases, computed for every element and picked with where
    (no host sync to ask whether a zero exists):
        i before z:  sum_{j>=i} grad_j out_j / a_i
        i == z:      sum_{j>=z} grad_j cumprod(a with a_z := 1)_j
        i after z:   0
    """
    zero = a == 0
    zeros_so_far = cumsum(zero, dim)                   # zeros at or before each position
    before = zeros_so_far == 0
    first = logical_and(zero, zeros_so_far == 1)
    g_before = _reverse_cumsum((grad * out).contiguous(), dim) / where(before, a, 1.0)
    skip_first = cumprod(where(first, 1.0, a), dim)
    g_first = _reverse_cumsum((grad * skip_first).contiguous(), dim)
    return where(before, g_before, where(first, g_first, 0.0))


def _cumulative(name, input, dim, dtype):
    _check(name, input)
    d = input._dim(dim)
    a = input if dtype is None else input.to(dtype)
    if not a.dtype.is_floating_point and a.dtype is not int64:
        a = a.to(int64)                 # bool and integers accumulate in int64, as PyTorch
    wide = _wide(a)
    out = Cumulative.apply(wide, name, d)
    return out.to(a.dtype) if wide is not a else out


def cumsum(input, dim, *, dtype=None):
    """Running sums along ``dim``: ``out[..., i, ...] = sum of input[..., :i+1, ...]``. Same shape;
    bool/integer inputs give int64. Differentiable.

    Raises:
        IndexError: ``dim`` out of range.
    """
    return _cumulative("cumsum", input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``: see :func:`cumsum`. Differentiable, zeros included
    (see :func:`_cumprod_backward`)."""
    return _cumulative("cumprod", input, dim, dtype)


# ---- sort and the selections built on it ------------------------------------------------------------
# A 0-d input is handled as a row of one (reshape is differentiable) and its results reshaped back.
def _sorted(a, dim, descending):
    """(values, indices) Tensors of the stable sort of ``a`` (at least 1-d) along ``dim``; no autograd."""
    w = _wide(a)
    vals, ids = w._backend.sort(w._data, dim, descending)
    return Tensor(vals, a.device).to(a.dtype), Tensor(ids, a.device)


def _narrow(t, dim, start, stop):
    """``t`` sliced to [start, stop) along ``dim`` (a view)."""
    return t[(slice(None),) * dim + (slice(start, stop),)]


def _row_op(name, result, input, dim, keepdim, pick):
    """Shared by sort, topk, kthvalue, median, mode: ``pick(a, d)`` gives (values, indices) along
    ``d`` of ``a`` (at least 1-d, dim kept); gradients go back through the indices."""
    _check(name, input)
    d = input._dim(dim)
    a = input.reshape(1) if input.ndim == 0 else input
    vals, ids = pick(a, d)
    if not keepdim:
        vals, ids = vals.squeeze(d), ids.squeeze(d)
    out = Selected.apply(a, vals, ids, d, keepdim)
    if input.ndim == 0:
        out, ids = out.reshape(()), ids.reshape(())
    return result(out, ids)


def _nonempty(name, a, d):
    if a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def sort(input, dim=-1, descending=False, stable=False):
    """``input`` sorted along ``dim``, and where each value came from: ``(values, indices)`` (int64),
    both of ``input``'s shape. Always stable (equal values keep their order; ``stable`` is accepted
    for PyTorch's signature); NaN sorts as the largest. Gradients flow to the original positions.

    Raises:
        IndexError: ``dim`` out of range.
    """
    return _row_op("sort", SortResult, input, dim, True, lambda a, d: _sorted(a, d, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    """int64 positions that sort ``input`` along ``dim`` (see :func:`sort`)."""
    return sort(input, dim, descending).indices


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their positions:
    ``(values, indices)`` with ``dim`` of size k, in sorted order (``sorted`` is accepted; the
    result is always sorted). Computed by a full sort (a selection would do less work).

    Raises:
        RuntimeError: k outside [0, size of dim].  IndexError: ``dim`` out of range.
    """
    def pick(a, d):
        if not 0 <= k <= a.shape[d]:
            raise RuntimeError(f"topk(): selected index k={k} out of range for a dimension of size {a.shape[d]}")
        vals, ids = _sorted(a, d, largest)
        return _narrow(vals, d, 0, k), _narrow(ids, d, 0, k)
    return _row_op("topk", TopkResult, input, dim, True, pick)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along ``dim`` (k from 1) and its position: ``(values, indices)``;
    ``dim`` is removed unless ``keepdim``. Computed by a full sort.

    Raises:
        RuntimeError: k outside [1, size of dim].  IndexError: ``dim`` out of range.
    """
    def pick(a, d):
        if not 1 <= k <= a.shape[d]:
            raise RuntimeError(f"kthvalue(): selected number k={k} out of range for a dimension of size {a.shape[d]}")
        vals, ids = _sorted(a, d, False)
        return _narrow(vals, d, k - 1, k), _narrow(ids, d, k - 1, k)
    return _row_op("kthvalue", KthvalueResult, input, dim, keepdim, pick)


def _median_along(a, d):
    """Sorted descending, NaN comes first (at its first position): take it where the row has one,
    else the lower median, which sits at n - 1 - (n - 1) // 2 from the top."""
    from .elementwise import where
    _nonempty("median", a, d)
    n = a.shape[d]
    vals, ids = _sorted(a, d, True)
    at = n - 1 - (n - 1) // 2
    top_v, top_i = _narrow(vals, d, 0, 1), _narrow(ids, d, 0, 1)
    nan = top_v != top_v
    return where(nan, top_v, _narrow(vals, d, at, at + 1)), where(nan, top_i, _narrow(ids, d, at, at + 1))


def median(input, dim=None, keepdim=False):
    """The lower median (the ((n - 1) // 2)-th smallest, not the mean of the two middle values),
    as PyTorch. ``median(x)``: over all elements, a 0-d tensor whose gradient is shared by the
    elements equal to it; ``median(x, dim)``: ``(values, indices)`` along ``dim``. NaN propagates:
    a row holding NaN has median NaN, at its first NaN; the median of an empty tensor is NaN.
    Computed by a full sort.

    Raises:
        IndexError: ``dim`` out of range or of size 0.
    """
    if dim is None:
        _check("median", input)
        if input.numel() == 0:       # NaN, as PyTorch
            from ..creation import full
            return full((), float("nan"), dtype=input.dtype, device=input.device)
        value = _median_along(input.detach().reshape(-1), 0)[0].reshape(())
        return ExtremeAll.apply(input, value)
    return _row_op("median", MedianResult, input, dim, keepdim, _median_along)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and one of its
    positions: ``(values, indices)``. The position is the one PyTorch's cpu mode returns, which
    sorts (value, position) pairs with libstdc++'s unstable ``std::sort`` and takes the last of
    the modal run: the last occurrence on rows of at most 16, another one on longer rows. Both
    devices run that same sort to match it (cpu.py's ``_introsort``, sort.cu's ``mode_rows``).
    Gradients flow to that position.

    Raises:
        IndexError: ``dim`` out of range or of size 0.
    """
    def pick(a, d):
        _nonempty("mode", a, d)
        w = _wide(a)
        vals, ids = w._backend.mode(w._data, d, True)
        return Tensor(vals, a.device).to(a.dtype), Tensor(ids, a.device)
    return _row_op("mode", ModeResult, input, dim, keepdim, pick)


# ---- unique, bincount, histc (outputs sized by the data: a host synchronization) --------------------
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (flattened), ascending (``sorted`` is accepted: always
    sorted). With ``return_inverse``, also each element's int64 position among them (``input``'s
    shape); with ``return_counts``, how often each occurs (int64). Returns a tensor or a tuple in
    that order, as ``torch.unique``. Not differentiable.

    With ``dim``: the distinct slices ``input.select(dim, i)``, in lexicographic order (compared
    element by element in row-major order), stacked along ``dim``; a NaN is never equal to
    anything, and sorts as the largest (PyTorch's comparison is no strict order there, so slices
    holding NaN may come in another order than PyTorch's); ``inverse`` and ``counts`` are then per slice (length input.size(dim) and the
    number of distinct slices). See :func:`_unique_dim`.

    Raises:
        IndexError: ``dim`` out of range.
        RuntimeError: with ``dim``, another dimension of size 0 (PyTorch's message).
    """
    _check("unique", input)
    if dim is not None:
        return _unique_dim(input, dim, return_inverse, return_counts)
    a = _wide(input)
    vals, inverse, counts = a._backend.unique(a._data, return_inverse, return_counts)
    out = [Tensor(vals, a.device).to(input.dtype)]
    if return_inverse:
        out.append(Tensor(inverse, a.device))
    if return_counts:
        out.append(Tensor(counts, a.device))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_dim(input, dim, return_inverse, return_counts):
    """unique along ``dim`` from ops we have (sort, index_select, any, cumsum, nonzero, scatter):

    1. each slice flattened into a row: rows [n, m];
    2. the rows sorted lexicographically by a least-significant-digit pass: a STABLE sort by the
       last column, then by the one before, ... then by the first (stability keeps the order the
       later columns gave among equal values of an earlier one): m sorts, each O(n log n);
    3. a new slice starts where a sorted row differs from the one before (any column ``!=``);
       nonzero of those flags (a host synchronization: the count decides the output's size) gives
       where each distinct row starts, their running count each row's group.
    """
    from ..creation import arange, full, zeros
    from .indexing import cat, nonzero
    d = input._dim(dim)
    if any(n == 0 for k, n in enumerate(input.shape) if k != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    x = _wide(input.detach())
    n, device = x.shape[d], x.device
    slice_shape = tuple(x.movedim(d, 0).shape[1:])
    rows = x.movedim(d, 0).reshape(n, x.numel() // n if n else 0)
    order = arange(n, device=device)
    for c in range(rows.shape[1] - 1, -1, -1):
        _, by_column = _sorted(rows[:, c].index_select(0, order), 0, False)
        order = order.index_select(0, by_column)
    s = rows.index_select(0, order)
    new = cat([full((min(n, 1),), True, device=device), (s[1:] != s[:-1]).any(1)])   # row starts a slice
    starts = nonzero(new).reshape(-1)
    values = s.index_select(0, starts).reshape((starts.shape[0],) + slice_shape).movedim(0, d)
    out = [values.to(input.dtype)]
    if return_inverse:
        group = cumsum(new, 0) - 1
        out.append(zeros(n, dtype=int64, device=device).scatter(0, order, group))
    if return_counts:
        ends = cat([starts[1:], full((1,), n, dtype=int64, device=device)])[:starts.shape[0]]   # [:0] when n = 0
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    """Counts of each value 0..max(input) of a 1-d non-negative integer tensor (at least
    ``minlength`` bins); with ``weights`` (same length), the sum of their weights per value
    (float32 for float32 weights, float64 otherwise); int64 counts otherwise.

    Raises:
        RuntimeError: not 1-d, not integer, negative values, or weights of another length.
    """
    _check("bincount", input)
    if input.ndim != 1 or input.dtype is not int64:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got {input.ndim}-d {input.dtype}")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as input "
                           f"({tuple(weights.shape)} vs {tuple(input.shape)})")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    try:
        out = input._backend.bincount(input._data, None if weights is None else _wide(weights)._data, minlength)
    except ValueError as e:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs: {e}") from None
    return Tensor(out, input.device)


def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` in ``bins`` equal-width bins over [min, max] (both 0: the data's
    minimum and maximum); elements outside are ignored; same floating dtype as ``input``.

    Raises:
        RuntimeError: a non-floating input, bins <= 0, or max < min.
    """
    _check("histc", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"histc(): expected a floating point tensor, got {input.dtype}")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, got {bins}")
    if max < min:
        raise RuntimeError(f"histc(): max must be larger than min (min={min}, max={max})")
    a = _wide(input)
    return Tensor(a._backend.histc(a._data, bins, min, max), a.device).to(input.dtype)
