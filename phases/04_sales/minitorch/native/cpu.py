# GENERATED from minitorch/native/cpu.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
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

# ---- reductions and what backward needs ---------------------------------------------------------
def sum(a, dims, keepdim=False, scale=1.0):
    """``scale * a.sum(dims)``; ``dims`` a tuple of non-negative axes (all when empty is not meant:
    pass every axis). ``scale`` turns a sum into a mean without a second pass.

    float32 is added in float64: NumPy sums pairwise only along the contiguous axis, and a plain
    running float32 sum down 300K rows loses ~1e-4 relative (our GPU tree sum does not)."""
    wide = np.float64 if a.dtype == np.float32 else None
    out = np.sum(a, axis=tuple(dims), keepdims=keepdim, dtype=wide)
    if scale != 1.0:
        out = out * a.dtype.type(scale)
    return _c(out, dtype=a.dtype)


def unary_backward(op, grad, saved):
    """Gradient of a unary op from its saved tensor: ``relu`` saves its input x, ``sigmoid`` and
    ``tanh`` save their output y. Returns grad * d(op)/dx."""
    if op == "relu":
        return _c(np.where(saved > 0, grad, grad.dtype.type(0)))
    if op == "sigmoid":
        return _c(grad * saved * (1 - saved))
    if op == "tanh":
        return _c(grad * (1 - saved * saved))
    raise KeyError(op)


def sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first_step):
    """One SGD update, in place on ``param`` (and ``buf``), as ``torch.optim.SGD`` computes it.

    ``buf`` is the momentum buffer (``None`` when momentum is 0); on the first step it is set to
    the gradient, later ``buf = momentum * buf + (1 - dampening) * g``."""
    # >>> exercise 03.7: the SGD step
    # hint: follow torch.optim.SGD's pseudo-code: weight decay, then momentum (buf = g on the first step), nesterov
    # hint: update param and buf IN PLACE (param -= ..., buf[...] = ...): the caller keeps these arrays
    g = -grad if maximize else grad
    if weight_decay:
        g = g + weight_decay * param
    if momentum:
        if first_step:
            buf[...] = g
        else:
            buf *= momentum
            buf += (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    param -= param.dtype.type(lr) * g
    # <<< exercise
import warnings  # noqa: E402 - phase 04 adds it


# ---- max/min with indices, var/std ---------------------------------------------------------------
def _rows_last(a, dims):
    """``a`` with the reduced ``dims`` moved last and merged: [kept..., R] (a copy only if needed)."""
    kept = [d for d in range(a.ndim) if d not in dims]
    moved = np.transpose(a, kept + list(dims))
    r = int(np.prod([a.shape[d] for d in dims], dtype=np.int64))
    return moved.reshape(tuple(a.shape[d] for d in kept) + (r,)), kept


def _reduced_shape(shape, dims, keepdim):
    return tuple(1 if d in dims else n for d, n in enumerate(shape)) if keepdim else \
        tuple(n for d, n in enumerate(shape) if d not in dims)


def extreme(a, dims, keepdim=False, largest=True):
    """Maxima (``largest``) or minima over ``dims`` and their indices: (values, int64 indices).

    Indices count positions in row-major order over the reduced dimensions (the index along the
    dimension when there is one). NaN beats numbers (the first NaN wins), ties go to the first
    index: NumPy's argmax/argmin rule, and the kernel's.

    Raises:
        ValueError: no dimension, or a reduced dimension of size 0.
    """
    dims = tuple(sorted(set(dims)))
    if not dims:
        raise ValueError("max/min: at least one dimension must be reduced")
    if any(a.shape[d] == 0 for d in dims):
        raise ValueError(f"max/min: cannot reduce a dimension of size 0 (shape {a.shape}, dims {dims})")
    rows, _ = _rows_last(a, dims)
    idx = (np.argmax if largest else np.argmin)(rows, axis=-1)
    vals = np.take_along_axis(rows, idx[..., None], axis=-1)[..., 0]
    shape = _reduced_shape(a.shape, dims, keepdim)
    return _c(vals.reshape(shape), dtype=a.dtype), _c(idx.reshape(shape), dtype=np.int64)


def var_mean(a, dims, correction=1, keepdim=False, take_sqrt=False):
    """Variance (std if ``take_sqrt``) and mean over ``dims``: ``sum((x - mean)^2) /
    max(R - correction, 0)``, two passes (NumPy's var). 0/0 gives NaN, x/0 inf, as PyTorch."""
    # >>> exercise 04.1: variance in two passes
    # hint: first the mean, then the mean of squared deviations from it: never E[x^2] - E[x]^2 (it cancels)
    # hint: accumulate float32 data in float64; divide by max(R - correction, 0) (0/0 is NaN, as PyTorch)
    dims = tuple(sorted(set(dims)))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        wide = np.float64 if a.dtype == np.float32 else a.dtype    # see sum(): accuracy over long axes
        mean = np.mean(a, axis=dims, keepdims=True, dtype=wide)
        r = int(np.prod([a.shape[d] for d in dims], dtype=np.int64))
        m2 = np.sum((a - mean) ** 2, axis=dims, keepdims=keepdim, dtype=wide)
        out = m2 / a.dtype.type(max(r - correction, 0))
        if take_sqrt:
            out = np.sqrt(out)
    if not keepdim:
        mean = mean.reshape(_reduced_shape(a.shape, dims, False))
    return _c(out, dtype=a.dtype), _c(mean, dtype=a.dtype)
    # <<< exercise


# ---- indexing: gather, scatter-add, strided assignment, nonzero ---------------------------------
# ``index`` arrays are int64 of any shape and strides; a negative index counts from the end. An
# index outside [-size, size) is never read: take() gives NaN (float), 0 (int64) or False there and
# the scatters skip it, like the kernels of index.cu (the Tensor layer raises before, on cpu).
def _wrap(index, size):
    w = np.where(index < 0, index + size, index)
    ok = (w >= 0) & (w < size)
    return np.where(ok, w, 0), ok


def _missing(dtype):
    return {"f": np.nan, "i": 0, "b": False}[dtype.kind]


def take(a, dim, index):
    """``a`` gathered along ``dim`` at ``index``: shape a.shape[:dim] + index.shape +
    a.shape[dim+1:], ``out[p, b, q] = a[p, index[b], q]`` (np.take with an axis)."""
    size = a.shape[dim]
    shape = a.shape[:dim] + index.shape + a.shape[dim + 1:]
    w, ok = _wrap(index, size)
    if size == 0:
        return np.full(shape, _missing(a.dtype), dtype=a.dtype)
    out = np.take(a, w, axis=dim)
    if not ok.all():
        out[(slice(None),) * dim + (~ok,)] = _missing(a.dtype)
    return _c(out, dtype=a.dtype)


def index_add_(dst, dim, index, src):
    """``dst[p, index[b], q] += src[p, b, q]`` in place (repeated indices add up); returns dst.
    ``src`` has shape dst.shape[:dim] + index.shape + dst.shape[dim+1:]."""
    w, ok = _wrap(index, dst.shape[dim])
    flat = src.reshape(src.shape[:dim] + (index.size,) + src.shape[dim + index.ndim:])
    keep = ok.reshape(-1)
    pre = (slice(None),) * dim
    np.add.at(dst, pre + (w.reshape(-1)[keep],), flat[pre + (keep,)])
    return dst


def scatter_add_(dst, dim, index, src):
    """``dst[i0, .., index[i], .., ik] += src[i]`` for every position i of ``index`` (PyTorch's
    scatter_add_): ``index`` and ``src`` share a shape, of dst's rank; returns dst."""
    w, ok = _wrap(index, dst.shape[dim])
    coords = list(np.indices(index.shape, sparse=False))
    coords[dim] = w
    np.add.at(dst, tuple(c[ok] for c in coords), src[ok])
    return dst


def copy_(dst, src):
    """Copy ``src`` (broadcast to dst's shape, same dtype) into the view ``dst``; returns dst."""
    dst[...] = src
    return dst


def nonzero(mask):
    """Coordinates of the true elements of a bool array, in row-major order: int64 [count, ndim]."""
    return _c(np.argwhere(mask), dtype=np.int64).reshape(-1, mask.ndim)


# ---- torch.gather, scatter_, index_copy_ (issue 13) ------------------------------------------------
def gather(a, dim, index):
    """``out[.., i, ..] = a[.., index[.., i, ..], ..]`` along ``dim`` (torch.gather): index's
    shape and a's dtype; ``index`` has a's rank and fits in ``a`` outside ``dim``."""
    w, ok = _wrap(index, a.shape[dim])
    if a.shape[dim] == 0:
        return np.full(index.shape, _missing(a.dtype), dtype=a.dtype)
    part = a[tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(index.shape))]
    out = np.take_along_axis(part, w, axis=dim)
    if not ok.all():
        out[~ok] = _missing(a.dtype)
    return _c(out, dtype=a.dtype)


def scatter_(dst, dim, index, src):
    """``dst[i0, .., index[i], .., ik] = src[i]`` for every position i of ``index`` (torch's
    scatter_; repeated indices: the last one stays); shapes as scatter_add_; returns dst."""
    w, ok = _wrap(index, dst.shape[dim])
    coords = list(np.indices(index.shape, sparse=False))
    coords[dim] = w
    dst[tuple(c[ok] for c in coords)] = src[ok]
    return dst


_SCATTER_UFUNC = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def scatter_reduce_(dst, dim, index, src, op):
    """``dst[i0, .., index[i], .., ik] = op(that element, src[i])`` for every position i of
    ``index``, in place (PyTorch's scatter_reduce_ with include_self=True); ``op``: "sum",
    "prod", "amax", "amin" (NaN propagates); shapes as scatter_add_; returns dst."""
    w, ok = _wrap(index, dst.shape[dim])
    coords = list(np.indices(index.shape, sparse=False))
    coords[dim] = w
    with np.errstate(invalid="ignore", over="ignore"):        # NaN and inf propagate quietly
        _SCATTER_UFUNC[op].at(dst, tuple(c[ok] for c in coords), src[ok])
    return dst


def index_copy_(dst, dim, index, src):
    """``dst[p, index[b], q] = src[p, b, q]`` in place (torch's index_copy_); shapes as index_add_."""
    w, ok = _wrap(index, dst.shape[dim])
    flat = src.reshape(src.shape[:dim] + (index.size,) + src.shape[dim + index.ndim:])
    keep = ok.reshape(-1)
    pre = (slice(None),) * dim
    dst[pre + (w.reshape(-1)[keep],)] = flat[pre + (keep,)]
    return dst
# ---- more reductions, scans, sorting, counting (cuda: reduce.cu fold, scan.cu, sort.cu, histogram.cu) --
def fold(op, a, dims, keepdim=False):
    """Reduce ``a`` over ``dims`` with ``op``: "prod", "amax", "amin", "all", "any",
    "count_nonzero", "norm1" (sum |x|), "norm2" (sqrt of sum x^2), "norminf" (max |x|, NaN
    propagates) or "logsumexp" (max + log(sum(exp(x - max))): no overflow). all/any give bool,
    count_nonzero int64, the rest ``a``'s dtype; an empty reduction gives the op's starting value."""
    dims = tuple(sorted(set(dims)))
    with np.errstate(all="ignore"):
        if op == "logsumexp":
            m = np.max(a, axis=dims, keepdims=True, initial=-np.inf)
            m = np.where(np.isinf(m), 0, m)          # all -inf, or an inf: exp(x - m) must not be NaN
            out = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
            out = out if keepdim else out.reshape(_reduced_shape(a.shape, dims, False))
            return _c(out, dtype=a.dtype)
        if op == "count_nonzero":
            return _c(np.sum(a != 0, axis=dims, keepdims=keepdim), dtype=np.int64)
        compute = {
            "prod": lambda: np.prod(a, axis=dims, keepdims=keepdim),
            "amax": lambda: np.max(a, axis=dims, keepdims=keepdim),
            "amin": lambda: np.min(a, axis=dims, keepdims=keepdim),
            "all": lambda: np.all(a, axis=dims, keepdims=keepdim),
            "any": lambda: np.any(a, axis=dims, keepdims=keepdim),
            "norm1": lambda: np.sum(np.abs(a), axis=dims, keepdims=keepdim),
            "norm2": lambda: np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim)),
            "norminf": lambda: np.max(np.abs(a), axis=dims, keepdims=keepdim, initial=0),
        }[op]()
    return _c(compute, dtype=np.bool_ if op in ("all", "any") else a.dtype)


def cumulative(op, a, dim):
    """Inclusive scan along ``dim``: "cumsum" (running sums) or "cumprod", in ``a``'s dtype."""
    return _c((np.cumsum if op == "cumsum" else np.cumprod)(a, axis=dim, dtype=a.dtype), dtype=a.dtype)


def sort(a, dim, descending=False):
    """``a`` sorted along ``dim`` and the int64 original positions: (values, indices). Stable
    (equal values keep their order, also when descending); NaN sorts as the largest."""
    if not descending:
        ids = np.argsort(a, axis=dim, kind="stable")
    else:   # a stable ascending sort of the reversed rows, reversed: equal keys stay in order
        n = a.shape[dim]
        ids = n - 1 - np.flip(np.argsort(np.flip(a, axis=dim), axis=dim, kind="stable"), axis=dim)
    return _c(np.take_along_axis(a, ids, axis=dim), dtype=a.dtype), _c(ids, dtype=np.int64)


def _heap_adjust(v, ids, first, hole, length, val, vid):
    """libstdc++'s __adjust_heap on v[first:first+length]: sift the hole down, then ``val`` up."""
    top = child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if v[first + child] < v[first + child - 1]:
            child -= 1
        v[first + hole], ids[first + hole] = v[first + child], ids[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole], ids[first + hole] = v[first + child - 1], ids[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and v[first + parent] < val:
        v[first + hole], ids[first + hole] = v[first + parent], ids[first + parent]
        hole, parent = parent, (parent - 1) // 2
    v[first + hole], ids[first + hole] = val, vid


def _heap_sort(v, ids, first, last):
    """libstdc++'s heap sort (make_heap, then sort_heap) of v[first:last]: introsort's fallback."""
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _heap_adjust(v, ids, first, parent, length, v[first + parent], ids[first + parent])
    while last - first > 1:
        last -= 1
        val, vid = v[last], ids[last]
        v[last], ids[last] = v[first], ids[first]
        _heap_adjust(v, ids, first, 0, last - first, val, vid)


def _introsort(v, ids):
    """Sort the list ``v`` in place, moving the positions ``ids`` along, exactly as libstdc++'s
    ``std::sort`` does (D. R. Musser, "Introspective sorting and selection algorithms", 1997): a
    quicksort with a median-of-three pivot down to ranges of 16, a heap sort past 2 log2(n)
    levels, then one insertion sort. Not stable: which of equal keys ends where is this exact
    sequence of swaps, which is why PyTorch's cpu ``mode`` index is reproduced by running it.
    The scans carry bounds checks libstdc++ omits (it relies on the pivot as a sentinel, which
    NaN keys can defeat); they never fire otherwise. The order ranges are processed in does
    not change the result (they are disjoint), so the larger waits on a stack."""
    n = len(v)
    stack = [(0, n, 2 * (n.bit_length() - 1) if n else 0)]
    while stack:
        first, last, depth = stack.pop()
        while last - first > 16:
            if depth == 0:
                _heap_sort(v, ids, first, last)
                break
            depth -= 1
            a, b, c = first + 1, first + (last - first) // 2, last - 1
            if v[a] < v[b]:
                m = b if v[b] < v[c] else (c if v[a] < v[c] else a)
            else:
                m = a if v[a] < v[c] else (c if v[b] < v[c] else b)
            v[first], v[m], ids[first], ids[m] = v[m], v[first], ids[m], ids[first]     # pivot first
            lo, hi = first + 1, last
            while True:            # Hoare partition around v[first]
                while lo < last - 1 and v[lo] < v[first]:
                    lo += 1
                hi -= 1
                while hi > first and v[first] < v[hi]:
                    hi -= 1
                if not lo < hi:
                    break
                v[lo], v[hi], ids[lo], ids[hi] = v[hi], v[lo], ids[hi], ids[lo]
                lo += 1
            if lo - first < last - lo:
                stack.append((lo, last, depth))
                last = lo
            else:
                stack.append((first, lo, depth))
                first = lo
    for i in range(1, n):          # insertion sort: every element is within 16 of its place
        val, vid, j = v[i], ids[i], i
        while j > 0 and val < v[j - 1]:
            v[j], ids[j] = v[j - 1], ids[j - 1]
            j -= 1
        v[j], ids[j] = val, vid


def mode(a, dim, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index
    PyTorch's cpu mode returns: it sorts (value, position) pairs by value with ``std::sort``
    (unstable) and takes the position that lands last in the modal run, so we run the same
    sort (:func:`_introsort`). One Python loop per row: slow on long rows."""
    rows, _ = _rows_last(a, (dim,))
    flat = rows.reshape(-1, a.shape[dim])
    out_v, out_i = np.empty(len(flat), a.dtype), np.empty(len(flat), np.int64)
    for o, row in enumerate(flat):
        v, ids = row.tolist(), list(range(len(row)))
        _introsort(v, ids)
        best = run = at = 0
        for i in range(len(v)):
            run += 1
            if i == len(v) - 1 or v[i] != v[i + 1]:          # i ends a run
                if run > best:
                    best, at = run, i
                run = 0
        out_v[o], out_i[o] = v[at], ids[at]
    shape = _reduced_shape(a.shape, (dim,), keepdim)
    return _c(out_v.reshape(shape), dtype=a.dtype), _c(out_i.reshape(shape), dtype=np.int64)


def unique(a, return_inverse=False, return_counts=False):
    """Distinct values of ``a`` ascending, and (None unless asked) each element's int64 position
    among them (``a``'s shape) and each value's int64 count. Every NaN is distinct."""
    vals, ids = sort(a.reshape(-1), 0)
    new = np.append(True, vals[1:] != vals[:-1])[:a.size]       # starts a new value
    starts, group = np.flatnonzero(new), np.cumsum(new) - 1
    inverse = None
    if return_inverse:
        inverse = np.empty(a.size, np.int64)
        inverse[ids] = group
        inverse = inverse.reshape(a.shape)
    counts = _c(np.diff(np.append(starts, a.size)), dtype=np.int64) if return_counts else None
    return _c(vals[starts], dtype=a.dtype), inverse, counts


def bincount(x, weights=None, minlength=0):
    """Occurrences of 0..max(x) in the 1-d int64 ``x`` (at least ``minlength``), or their weights'
    sums: int64, float32 for float32 weights, else float64.

    Raises:
        ValueError: a negative value.
    """
    if x.size and x.min() < 0:
        raise ValueError(f"bincount: input must be non-negative, found {x.min()}")
    out = np.bincount(x, weights, minlength)
    if weights is None:
        return _c(out, dtype=np.int64)
    return _c(out, dtype=np.float32 if weights.dtype == np.float32 else np.float64)


def histc(x, bins=100, min=0, max=0):
    """Histogram of the float ``x`` in ``bins`` equal bins over [min, max] (0, 0: the data's range;
    equal bounds widen by 1), computed in ``x``'s dtype as PyTorch; the last bin includes max."""
    flat = x.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi == 0 and flat.size:
        lo, hi = float(flat.min()), float(flat.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    T = x.dtype.type
    with np.errstate(invalid="ignore"):
        inside = flat[(flat >= T(lo)) & (flat <= T(hi))]
        b = ((inside - T(lo)) * T(bins) / (T(hi) - T(lo))).astype(np.int64)
    return _c(np.bincount(np.clip(b, 0, bins - 1), minlength=bins), dtype=x.dtype)


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


def randperm(n, generator, index=None):
    return generator.permutation(n).astype(np.int64)


def multinomial(probs, num_samples, replacement, generator):
    """Category indices drawn from each row of ``probs`` ([rows, n] non-negative weights):
    int64 [rows, num_samples]. The algorithms of the cuda backend (random.cu): with replacement
    the inverse CDF (the first category whose running sum exceeds u * total); without, the
    exponential race (the categories with the smallest Exp(1) / p)."""
    p = probs.astype(np.float64)
    rows, n = p.shape
    if replacement:
        cdf = np.cumsum(p, axis=1)
        target = (1 - generator.random((rows, num_samples))) * cdf[:, -1:]
        out = [np.searchsorted(cdf[r], target[r], side="right") for r in range(rows)]
        return np.minimum(np.array(out, dtype=np.int64).reshape(rows, num_samples), n - 1)
    with np.errstate(divide="ignore"):
        keys = generator.exponential(size=(rows, n)) / p          # p = 0: inf, never picked first
    return _c(np.argsort(keys, axis=1, kind="stable")[:, :num_samples], dtype=np.int64)


def joined_view(pieces, dim):
    """None: on the host a cat always copies. (The cuda backend returns a view when the pieces
    already lie where the cat would put them: cuda/array.py's joined_view.)"""
    return None
