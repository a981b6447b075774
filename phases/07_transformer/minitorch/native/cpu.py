# GENERATED from minitorch/native/cpu.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
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
    if dtype.numpy in HALF:
        # NumPy draws float32/float64 only: draw float32 and round; a draw that rounds up to 1.0
        # becomes the largest value below 1, so the interval stays half-open
        x = generator.random(shape, dtype=np.float32).astype(dtype.numpy)
        below_one = dtype.numpy.type(1 - ml_dtypes.finfo(dtype.numpy).epsneg)
        return np.where(x >= 1, below_one, x)
    return generator.random(shape, dtype=dtype.numpy)


def randn(shape, dtype, generator, index=None):
    """Standard normal."""
    if dtype.numpy in HALF:
        return generator.standard_normal(shape, dtype=np.float32).astype(dtype.numpy)
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


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` (``nn.Linear``): ``x`` [..., in], ``weight`` [out, in], ``bias``
    [out] or None, one floating dtype; returns a contiguous [..., out] array."""
    out = np.matmul(x, weight.T)
    if bias is not None:
        out += bias                  # in place: out is a fresh array of the same dtype
    return _c(out)
# ---- softmax, cross-entropy --------------------------------------------------------------------
# Each works on the last dimension of a C-contiguous 2-D array [rows, n] (the Tensor layer moves the
# dimension last and flattens the rest) and gives what softmax.cu gives, special values included:
# a class index outside [0, n) yields a NaN loss and a NaN gradient row (the Tensor layer raises
# before that on cpu, where checking is cheap).
def _row_max(x):
    """Row maxima [rows, 1] for the max trick, with -inf replaced by 0 (a row of -inf then gives
    exp(-inf) = 0 sums instead of exp(-inf + inf) = NaN inside logsumexp, as the kernel does)."""
    m = np.max(x, axis=1, keepdims=True)
    return np.where(np.isneginf(m), x.dtype.type(0), m)


def softmax(x):
    """``exp(x - max) / sum(exp(x - max))`` per row: the max trick keeps every exp <= 1."""
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    # >>> exercise 06.1: softmax with the max trick
    # hint: subtract each row's maximum (_row_max) before exp: every exponent is then <= 0
    # hint: divide by the row sums; return a C-contiguous array of x's dtype (_c)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        e = np.exp(x - _row_max(x))
        return _c(e / np.sum(e, axis=1, keepdims=True), dtype=x.dtype)
    # <<< exercise


def log_softmax(x):
    """``x - max - log(sum(exp(x - max)))`` per row."""
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    # >>> exercise 06.2: log-softmax
    # hint: log softmax(x) = x - max - log(sum(exp(x - max))): never take the log of a softmax that underflowed to 0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = _row_max(x)
        return _c(x - m - np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)), dtype=x.dtype)
    # <<< exercise


def softmax_backward(y, grad):
    """Gradient of softmax from its output ``y``: ``y * (grad - sum(grad * y))`` per row."""
    # >>> exercise 06.4: softmax backward
    # hint: dx_i = y_i * (g_i - sum_j g_j y_j), per row
    return _c(y * (grad - np.sum(grad * y, axis=1, keepdims=True)), dtype=y.dtype)
    # <<< exercise


def log_softmax_backward(y, grad):
    """Gradient of log-softmax from its output ``y`` (log-probabilities): ``grad - exp(y) * sum(grad)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _c(grad - np.exp(y) * np.sum(grad, axis=1, keepdims=True), dtype=y.dtype)


def _targets_ok(target, n):
    ok = (target >= 0) & (target < n)
    return ok, np.where(ok, target, 0)


def cross_entropy(logits, target):
    """Per-row ``logsumexp(x_r) - x_r[t_r]`` and the logsumexp: (loss [rows], lse [rows])."""
    rows, n = logits.shape
    dt = logits.dtype.type
    if rows == 0:
        return np.empty(0, logits.dtype), np.empty(0, logits.dtype)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if n:
            m = _row_max(logits)
            lse = (m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True)))[:, 0]
        else:
            lse = np.full(rows, -np.inf)
        ok, t = _targets_ok(target, n)
        picked = logits[np.arange(rows), t] if n else np.zeros(rows)
        loss = np.where(ok, lse - picked, np.nan)
    return _c(loss, dtype=dt), _c(lse, dtype=dt)


def _grad_rows(grad, rows, scale, dtype):
    """The upstream gradient per row times ``scale``, rounded to ``dtype`` like the kernel."""
    return (np.broadcast_to(grad, (rows,)) * dtype.type(scale)).astype(dtype)


def cross_entropy_backward(logits, target, logsumexp, grad, scale=1.0):
    """``(softmax(x_r) - onehot(t_r)) * grad_r * scale``; ``grad`` 0-d (every row) or [rows]."""
    # >>> exercise 06.5: cross-entropy backward
    # hint: dL/dx = softmax(x) - onehot(target), times the row's upstream gradient and scale
    # hint: softmax from the saved logsumexp: exp(x - lse); rows whose target is outside [0, n) are NaN
    rows, n = logits.shape
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.exp(logits - logsumexp[:, None])
        ok, t = _targets_ok(target, n)
        if n:
            p[np.arange(rows)[ok], t[ok]] -= 1
        out = p * _grad_rows(grad, rows, scale, logits.dtype)[:, None]
    out[~ok] = np.nan
    return _c(out, dtype=logits.dtype)
    # <<< exercise


def nll_loss(log_probs, target):
    """Per-row ``-log_probs[r, t_r]``: [rows]."""
    rows, n = log_probs.shape
    ok, t = _targets_ok(target, n)
    picked = log_probs[np.arange(rows), t] if n else np.zeros(rows, log_probs.dtype)
    return _c(np.where(ok, -picked, np.nan), dtype=log_probs.dtype)


def nll_loss_backward(target, grad, n, scale=1.0):
    """[rows, n] zeros with ``-grad_r * scale`` at column t_r; ``grad`` 0-d or [rows]."""
    rows = target.shape[0]
    out = np.zeros((rows, n), dtype=grad.dtype)
    ok, t = _targets_ok(target, n)
    out[np.arange(rows)[ok], t[ok]] = -_grad_rows(grad, rows, scale, grad.dtype)[ok]
    out[~ok] = np.nan
    return out
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
# ---- float16 and bfloat16: storage types, computed in float32 ------------------------------------
# NumPy has float16 (and ml_dtypes adds bfloat16) but computes some ops in the half type itself
# (a Python scalar is rounded to half before ``x * 0.1``; a float16 sum accumulates in float16). We
# want PyTorch's rule, which our kernels follow too: load as float32 ("opmath"), compute, round once
# on store, accumulate reductions in float32. So each function below converts its half inputs to
# float32, runs the float32 code above, and rounds its floating outputs back to the input's type.
# (In-place scatters, copies and fills work on the half arrays directly: they store, not compute.)
import functools  # noqa: E402 - phase 05 adds these
import ml_dtypes  # noqa: E402

HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _in_float32(fn, at):
    """``fn`` computing half-precision arrays in float32 and rounding its float32 results back.
    ``args[at]`` is the array whose dtype decides (one set lookup: the float32 path stays fast)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        half = args[at].dtype
        if half not in _HALF_SET:
            return fn(*args, **kwargs)
        # >>> exercise 05.6: half precision computed in float32 (_in_float32)
        # hint: call fn with every float16/bfloat16 array of args as float32 (other args as they are);
        # hint: round each float32 array it returns (one, or a tuple; int64 indices pass) back to `half`
        # hint: with _c(y, dtype=half), under np.errstate(over="ignore"): past 65504 float16 is inf
        out = fn(*(x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype in _HALF_SET else x
                   for x in args), **kwargs)
        with np.errstate(over="ignore"):      # beyond float16's 65504 is inf, as on the GPU
            back = (lambda y: _c(y, dtype=half) if y.dtype == np.float32 else y)
            return tuple(back(y) for y in out) if isinstance(out, tuple) else back(out)
        # <<< exercise
    return wrapper


_HALF_SET = frozenset(HALF)
# function -> position of the argument whose dtype decides
for _name, _at in (("binary", 1), ("binary_scalar", 1), ("unary", 1), ("unary_backward", 1), ("matmul", 0), ("linear", 0),
                   ("sum", 0), ("extreme", 0), ("var_mean", 0), ("take", 0), ("softmax", 0), ("log_softmax", 0),
                   ("softmax_backward", 0), ("log_softmax_backward", 0), ("cross_entropy", 0),
                   ("cross_entropy_backward", 0), ("nll_loss", 0), ("nll_loss_backward", 1)):
    if _name in globals():       # softmax and the losses exist from phase 06 on
        globals()[_name] = _in_float32(globals()[_name], _at)


def _sgd_step_in_float32(step):
    """sgd_step for half parameters: the update computed in float32 on float32 copies, then
    ``param`` (and the momentum buffer) rounded once and written back in place."""
    @functools.wraps(step)
    def wrapper(param, grad, buf, *args):
        if param.dtype not in _HALF_SET:
            return step(param, grad, buf, *args)
        p32, b32 = param.astype(np.float32), None if buf is None else buf.astype(np.float32)
        step(p32, grad.astype(np.float32), b32, *args)
        param[...] = p32
        if buf is not None:
            buf[...] = b32
    return wrapper


sgd_step = _sgd_step_in_float32(sgd_step)
nan_to_num = _in_float32(nan_to_num, 0)


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
# ---- 2-D convolution: im2col + matmul, col2im ---------------------------------------------------
# Shapes are cuDNN's: x [N, C, H, W], weight [K, C/groups, R, S], y [N, K, P, Q]. ``stride`` and
# ``dilation`` are (rows, cols) pairs, ``padding`` ((top, bottom), (left, right)): 'same' with an
# even kernel pads one more at the bottom/right, as PyTorch does. Each group of C/groups input
# channels makes K/groups output channels with its own slice of the weight.
def conv_out_size(h, w, kernel_size, stride, padding, dilation):
    """(P, Q): output rows and columns of a convolution (PyTorch's Conv2d formula)."""
    (r, s), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = kernel_size, stride, padding, dilation
    return (h + pt + pb - dh * (r - 1) - 1) // sh + 1, (w + pl + pr - dw * (s - 1) - 1) // sw + 1


def im2col(x, kernel_size, stride, padding, dilation):
    """The patches of ``x`` [N, C, H, W] as columns: [N, C*R*S, P*Q], row (c, r, s) holding input
    channel c at kernel offset (r, s) for every output position (p, q). Padding reads as zeros.
    A convolution is then one matrix product per image: weight [K, C*R*S] @ columns.
    (Chellapilla, Puri, Simard, "High Performance Convolutional Neural Networks for Document
    Processing", 2006.)"""
    # >>> exercise 06.6: im2col with stride tricks
    # hint: np.pad the two spatial dims with `padding`; then np.lib.stride_tricks.as_strided gives the
    # hint: 6-D view [N, C, R, S, P, Q] of the padded array: (r, s) step dilation rows/cols, (p, q) step
    # hint: stride rows/cols (multiply the padded array's byte strides); reshape copies it to [N, C*R*S, P*Q]
    (r, s), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = kernel_size, stride, padding, dilation
    n, c, h, w = x.shape
    p, q = conv_out_size(h, w, kernel_size, stride, padding, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    bn, bc, bh, bw = xp.strides
    view = np.lib.stride_tricks.as_strided(xp, (n, c, r, s, p, q), (bn, bc, bh * dh, bw * dw, bh * sh, bw * sw))
    return view.reshape(n, c * r * s, p * q)
    # <<< exercise


def col2im(cols, x_shape, kernel_size, stride, padding, dilation):
    """The adjoint of :func:`im2col`: ``cols`` [N, C*R*S, P*Q] summed back into an [N, C, H, W]
    array (every input element receives the column entries that read it)."""
    (r, s), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = kernel_size, stride, padding, dilation
    n, c, h, w = x_shape
    p, q = conv_out_size(h, w, kernel_size, stride, padding, dilation)
    xp = np.zeros((n, c, h + pt + pb, w + pl + pr), cols.dtype)
    cols = cols.reshape(n, c, r, s, p, q)
    for i in range(r):            # one strided slice per kernel offset: R*S adds of a whole array
        for j in range(s):
            xp[:, :, i * dh:i * dh + sh * (p - 1) + 1:sh, j * dw:j * dw + sw * (q - 1) + 1:sw] += cols[:, :, i, j]
    return xp[:, :, pt:pt + h, pl:pl + w]


def conv2d(x, weight, bias, stride, padding, dilation, groups, activation=None):
    """``y = weight * x (+ bias)``, then ``max(y, 0)`` when ``activation`` is 'relu' (the fused
    epilogue; None: none): [N, K, P, Q] of x's dtype.
    Per image and group, [K/G, C/G*R*S] @ im2col [C/G*R*S, P*Q] (one batched np.matmul)."""
    if activation not in (None, "relu"):
        raise ValueError(f"conv2d: activation must be None or 'relu', got {activation!r}")
    n, kout, crs = x.shape[0], weight.shape[0], weight[0].size               # crs = C/G*R*S
    cols = im2col(x, weight.shape[2:], stride, padding, dilation)          # [N, C*R*S, P*Q]
    p, q = conv_out_size(*x.shape[2:], weight.shape[2:], stride, padding, dilation)
    cols = cols.reshape(n, groups, crs, p * q)                              # the groups' rows are consecutive
    y = np.matmul(weight.reshape(groups, kout // groups, crs), cols).reshape(n, kout, p, q)
    if bias is not None:
        y += bias.reshape(kout, 1, 1)
    if activation == "relu":
        np.maximum(y, 0, out=y)
    return _c(y, dtype=x.dtype)


def _relu_masked(grad, relu_out):
    """dL/dy of a fused conv + ReLU: ``grad`` where the saved output is > 0, else 0."""
    return grad if relu_out is None else np.where(relu_out > 0, grad, grad.dtype.type(0))


def conv2d_input_grad(grad, weight, x_shape, stride, padding, dilation, groups, relu_out=None):
    """dL/dx [N, C, H, W] = col2im(weight^T @ grad), per group; ``relu_out``: a fused ReLU's output
    (the gradient passes only where it is > 0) or None."""
    grad = _relu_masked(grad, relu_out)
    n, kout, p, q = grad.shape
    wg = weight.reshape(groups, kout // groups, weight[0].size)            # [G, K/G, C/G*R*S]
    cols = np.matmul(wg.transpose(0, 2, 1), grad.reshape(n, groups, kout // groups, p * q))
    return _c(col2im(cols.reshape(n, groups * weight[0].size, p * q), x_shape, weight.shape[2:], stride, padding,
                     dilation))


def conv2d_weight_grad(grad, x, weight_shape, stride, padding, dilation, groups, relu_out=None, bias_grad=False):
    """dL/dweight [K, C/G, R, S] = sum over images of grad @ im2col(x)^T, per group; with
    ``bias_grad`` the tuple (dL/dweight, dL/dbias [K]). ``relu_out`` as for conv2d_input_grad."""
    grad = _relu_masked(grad, relu_out)
    n, kout, p, q = grad.shape
    crs = int(np.prod(weight_shape[1:]))
    cols = im2col(x, weight_shape[2:], stride, padding, dilation).reshape(n, groups, crs, p * q)
    g = grad.reshape(n, groups, kout // groups, p * q)
    dw = _c(np.einsum("ngkl,ngml->gkm", g, cols).reshape(weight_shape), dtype=x.dtype)
    return (dw, sum(grad, (0, 2, 3))) if bias_grad else dw


for _name in ("conv2d", "conv2d_input_grad", "conv2d_weight_grad"):     # half: computed in float32
    globals()[_name] = _in_float32(globals()[_name], 0)
# ---- optimizers and gradient clipping on lists of parameters ---------------------------------------
# The cuda backend updates a whole list of parameters in one kernel launch (multi_tensor.cu); here
# each function loops over the list and updates one parameter at a time, in place, with the same
# arithmetic in the same order as torch.optim's single-tensor ("for-loop") implementations
# (torch/optim/adam.py, rmsprop.py, adagrad.py: _single_tensor_*). Half parameters (and their
# state, of the parameter's dtype) are updated in float32 copies and rounded back once.
def _lerp_(a, b, weight):
    """a += weight * (b - a), in place: torch's lerp_ for weight < 0.5 (the betas of Adam and the
    alpha of RMSprop are close to 1, so weight = 1 - beta is small)."""
    a += weight * (b - a)


def _adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps,
                 weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """One Adam (or AdamW, ``decoupled_weight_decay``) update of one parameter, in place on
    ``param``, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq`` when ``amsgrad``); ``step``
    counts this update (1 on the first). Kingma & Ba, "Adam" (2014), Algorithm 1; AdamW: Loshchilov
    & Hutter, "Decoupled Weight Decay Regularization" (2017)."""
    # >>> exercise 05.9: the Adam update
    # hint: follow torch.optim.Adam's pseudo-code: g (negated if maximize), weight decay (p *= 1 - lr*wd when decoupled, else g += wd*p)
    # hint: exp_avg moves (1 - beta1) of the way to g (_lerp_), exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
    # hint: denom = sqrt(v) / sqrt(1 - beta2**step) + eps (v: the running max when amsgrad); param -= lr / (1 - beta1**step) * exp_avg / denom
    g = -grad if maximize else grad
    if weight_decay:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * param
    _lerp_(exp_avg, g, 1 - beta1)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * g * g
    v = exp_avg_sq
    if amsgrad:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        v = max_exp_avg_sq
    step_size = lr / (1 - beta1 ** step)
    denom = np.sqrt(v) / (1 - beta2 ** step) ** 0.5 + eps
    param -= step_size * (exp_avg / denom)
    # <<< exercise


def _each_in_float32(update, lists):
    """Run ``update`` on element k of every list in ``lists`` (None: an absent list), in place;
    half arrays go through float32 copies written back (rounded once) afterwards."""
    for arrays in zip(*(lst if lst is not None else [None] * len(lists[0]) for lst in lists)):
        if arrays[0].dtype not in _HALF_SET:
            update(*arrays)
            continue
        wide = [None if a is None else a.astype(np.float32) for a in arrays]
        update(*wide)
        for k, (a, w) in enumerate(zip(arrays, wide)):
            if a is not None and k != 1:          # arrays[1], the gradient, is only read
                a[...] = w


def adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step, lr, beta1, beta2, eps,
              weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """Adam/AdamW on lists of same-shaped arrays (params[k], grads[k], exp_avgs[k]...), in place;
    ``max_exp_avg_sqs`` is None unless ``amsgrad``; ``step`` is the update's number (>= 1), the
    same for every parameter of the list. Returns None."""
    _each_in_float32(lambda p, g, m, v, vmax: _adam_update(p, g, m, v, vmax, step, lr, beta1, beta2, eps,
                                                           weight_decay, amsgrad, maximize, decoupled_weight_decay),
                     (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs))


def _rmsprop_update(param, grad, square_avg, grad_avg, buf, lr, alpha, eps, weight_decay, momentum, centered,
                    maximize):
    """One RMSprop update (Hinton, Lecture 6e of "Neural Networks for Machine Learning", 2012;
    centered: Graves, "Generating Sequences With Recurrent Neural Networks", 2013), in place."""
    g = -grad if maximize else grad
    if weight_decay:
        g = g + weight_decay * param
    square_avg *= alpha
    square_avg += (1 - alpha) * g * g
    if centered:
        _lerp_(grad_avg, g, 1 - alpha)
        avg = np.sqrt(square_avg - grad_avg * grad_avg)
    else:
        avg = np.sqrt(square_avg)
    avg += eps
    if momentum > 0:
        buf *= momentum
        buf += g / avg
        param -= lr * buf
    else:
        param -= lr * (g / avg)


def rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha, eps, weight_decay, momentum,
                 centered, maximize):
    """RMSprop on lists of arrays, in place; ``grad_avgs`` is None unless ``centered``,
    ``momentum_buffers`` None unless ``momentum > 0``. Returns None."""
    _each_in_float32(lambda p, g, s, a, b: _rmsprop_update(p, g, s, a, b, lr, alpha, eps, weight_decay, momentum,
                                                           centered, maximize),
                     (params, grads, square_avgs, grad_avgs, momentum_buffers))


def _adagrad_update(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """One Adagrad update (Duchi, Hazan & Singer, JMLR 2011) with learning rate ``clr``, in place."""
    g = -grad if maximize else grad
    if weight_decay:
        g = g + weight_decay * param
    state_sum += g * g
    std = np.sqrt(state_sum) + eps
    param -= clr * (g / std)


def adagrad_step(params, grads, state_sums, step, lr, lr_decay, eps, weight_decay, maximize):
    """Adagrad on lists of arrays, in place; the learning rate of update ``step`` (>= 1) is
    lr / (1 + (step - 1) * lr_decay). Returns None."""
    clr = lr / (1 + (step - 1) * lr_decay)
    _each_in_float32(lambda p, g, s: _adagrad_update(p, g, s, clr, eps, weight_decay, maximize),
                     (params, grads, state_sums))


def sgd_step_list(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay, nesterov, maximize,
                  first_step):
    """sgd_step on each parameter of the lists (``momentum_buffers`` None when momentum is 0), in place."""
    for k, (param, grad) in enumerate(zip(params, grads)):
        sgd_step(param, grad, None if momentum_buffers is None else momentum_buffers[k], lr, momentum, dampening,
                 weight_decay, nesterov, maximize, first_step)


def grads_norm(grads, norm_type, max_norm):
    """(total, coef) for clip_grad_norm_: ``total`` the norm of all ``grads`` together as a 0-d array
    of grads[0]'s dtype (norm_type a float > 0 or inf), ``coef`` = min(1, max_norm / (total +
    1e-6)) as a 0-d float64 array. As torch.nn.utils.clip_grad_norm_: each array's norm, then the
    norm of those norms (empty arrays skipped: torch's inf norm raises for them)."""
    norms = np.array([np.linalg.norm(g.astype(np.float64).ravel(), norm_type) for g in grads if g.size])
    total = np.linalg.norm(norms, norm_type) if len(norms) else 0.0
    with np.errstate(over="ignore"):
        total = np.asarray(total, dtype=grads[0].dtype if grads else np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.float64(max_norm) / (np.float64(total) + 1e-6)
    return total, np.asarray(1.0 if coef > 1.0 else coef)      # NaN stays NaN, as torch.clamp


def grads_scale_(grads, coef):
    """grads[k] *= coef (a 0-d float64 array), in place; coef rounded to the grad's dtype first
    (float32 for half grads, which are scaled in float32 and rounded once)."""
    for g in grads:
        wide = np.float32 if g.dtype in _HALF_SET else g.dtype.type
        with np.errstate(invalid="ignore", over="ignore"):      # inf * 0 is NaN, as on the GPU
            g[...] = g.astype(wide) * wide(coef)


def grads_clamp_(grads, clip_value):
    """Clamp every gradient to [-clip_value, clip_value], in place (NaN stays NaN)."""
    for g in grads:
        np.clip(g, -clip_value, clip_value, out=g)
# ---- pooling, batch normalization, dropout (cuda twins: native/cuda/pooling.py, batchnorm.py, dropout.py) ----
# Pooling works on C-contiguous [..., H, W] arrays (a stack of planes); kernel_size, stride, padding,
# dilation are (rows, columns) pairs; the Tensor layer computes the output size (OH, OW).


def _pool_offsets(kernel_size, stride, dilation, out_size):
    """For each kernel offset (kh, kw): the slices of the PADDED plane that offset reads for all
    outputs at once (rows kh*DH, kh*DH + SH, ... : OH of them; columns alike), and the unpadded
    input coordinates h [OH, 1] and w [1, OW] they stand for (before subtracting the padding)."""
    (KH, KW), (SH, SW), (DH, DW), (OH, OW) = kernel_size, stride, dilation, out_size
    for kh in range(KH):
        for kw in range(KW):
            rows = slice(kh * DH, kh * DH + (OH - 1) * SH + 1, SH)
            cols = slice(kw * DW, kw * DW + (OW - 1) * SW + 1, SW)
            h = (np.arange(OH) * SH + kh * DH)[:, None]
            w = (np.arange(OW) * SW + kw * DW)[None, :]
            yield (Ellipsis, rows, cols), h, w


def _padded(x, kernel_size, stride, padding, dilation, out_size, fill=0):
    """x with PH/PW rows/columns of ``fill`` on each side, and more at the bottom/right when ceil
    mode's last window reaches past that."""
    (H, W), (KH, KW), (SH, SW), (PH, PW), (DH, DW), (OH, OW) = x.shape[-2:], kernel_size, stride, padding, dilation, out_size
    bottom = max(PH, (OH - 1) * SH + (KH - 1) * DH + 1 - H - PH)
    right = max(PW, (OW - 1) * SW + (KW - 1) * DW + 1 - W - PW)
    pad = [(0, 0)] * (x.ndim - 2) + [(PH, bottom), (PW, right)]
    return np.pad(x, pad, constant_values=fill)


def max_pool2d(x, kernel_size, stride, padding, dilation, out_size):
    """Window maxima [..., OH, OW] and int64 indices h * W + w into each input plane; the first
    maximum in window order wins ties and a NaN always wins, as in PyTorch and pooling.cu."""
    (H, W), (PH, PW) = x.shape[-2:], padding
    xp = _padded(x, kernel_size, stride, padding, dilation, out_size)
    best = np.full((*x.shape[:-2], *out_size), -np.inf, x.dtype)
    arg = np.full(best.shape, -1, np.int64)     # -1: no element yet; stays -1 where a window misses the plane
    for where, h, w in _pool_offsets(kernel_size, stride, dilation, out_size):
        h, w = h - PH, w - PW
        v = xp[where]
        inside = (h >= 0) & (h < H) & (w >= 0) & (w < W)
        take = inside & ((arg < 0) | (v > best) | np.isnan(v))
        best = np.where(take, v, best)
        arg = np.where(take, h * W + w, arg)
    return best, arg


def max_pool2d_backward(grad, indices, in_size, kernel_size, stride, padding, dilation, relu_out=None):
    """dx [..., H, W]: each output's gradient added at its saved argmax (indices [..., OH, OW],
    positions h * W + w in the plane; -1: none). Overlapping windows may add several into one element.
    ``relu_out`` [..., OH, OW] or None: the pooled output of a ReLU before the pooling (the fused
    conv + ReLU + pool): outputs where it is not > 0 pass no gradient (the ReLU's mask)."""
    if relu_out is not None:
        grad = np.where(relu_out > 0, grad, 0).astype(grad.dtype, copy=False)
    H, W = in_size
    planes = math.prod(grad.shape[:-2])
    g = _c(grad).reshape(planes, -1) if grad.size else np.zeros((planes, 0), grad.dtype)
    idx = _c(indices).reshape(g.shape)
    dx = np.zeros((planes, H * W), grad.dtype)
    # >>> exercise 06.8: max pooling backward through the saved indices
    # hint: dx[p, indices[p, o]] += grad[p, o] for every plane p and output o with indices[p, o] >= 0
    # hint: several outputs may pick one element (overlapping windows): np.add.at adds them all (dx[i] += g does not)
    plane = np.broadcast_to(np.arange(planes)[:, None], idx.shape)
    ok = idx >= 0
    np.add.at(dx, (plane[ok], idx[ok]), g[ok])
    # <<< exercise
    return dx.reshape(*grad.shape[:-2], H, W)


def _avg_divisor(in_size, kernel_size, stride, padding, out_size, count_include_pad, divisor_override):
    """[OH, OW] divisors of average pooling, PyTorch's rule (see pooling.cu's avg_divisor)."""
    (H, W), (KH, KW), (SH, SW), (PH, PW), (OH, OW) = in_size, kernel_size, stride, padding, out_size
    if divisor_override:
        return np.full((OH, OW), divisor_override, np.int64)
    hs, ws = np.arange(OH) * SH - PH, np.arange(OW) * SW - PW
    he, we = np.minimum(hs + KH, H + PH), np.minimum(ws + KW, W + PW)
    if not count_include_pad:
        hs, ws, he, we = np.maximum(hs, 0), np.maximum(ws, 0), np.minimum(he, H), np.minimum(we, W)
    return np.maximum(he - hs, 0)[:, None] * np.maximum(we - ws, 0)[None, :]


def avg_pool2d(x, kernel_size, stride, padding, out_size, count_include_pad, divisor_override):
    """Window means [..., OH, OW] (padding counts as zeros; divisor per PyTorch; 0: no override)."""
    xp = _padded(x, kernel_size, stride, padding, (1, 1), out_size)
    total = np.zeros((*x.shape[:-2], *out_size), x.dtype)
    for where, _, _ in _pool_offsets(kernel_size, stride, (1, 1), out_size):
        total += xp[where]
    d = _avg_divisor(x.shape[-2:], kernel_size, stride, padding, out_size, count_include_pad, divisor_override)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _c(np.where(d != 0, total / d, 0), dtype=x.dtype)


def avg_pool2d_backward(grad, in_size, kernel_size, stride, padding, count_include_pad, divisor_override):
    """dx [..., H, W]: grad / divisor added over each window (then the padding cut off)."""
    (H, W), (PH, PW), out_size = in_size, padding, grad.shape[-2:]
    d = _avg_divisor(in_size, kernel_size, stride, padding, out_size, count_include_pad, divisor_override)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(d != 0, grad / d, 0).astype(grad.dtype)
    dxp = _padded(np.zeros((*grad.shape[:-2], H, W), grad.dtype), kernel_size, stride, padding, (1, 1), out_size)
    for where, _, _ in _pool_offsets(kernel_size, stride, (1, 1), out_size):
        dxp[where] += share
    return _c(dxp[..., PH:PH + H, PW:PW + W])


def _adaptive_windows(n, out):
    """PyTorch's adaptive windows of ``n`` positions into ``out``: [floor(o n / out), ceil((o + 1) n / out))."""
    return [(o * n // out, -(-(o + 1) * n // out)) for o in range(out)]


def adaptive_avg_pool2d(x, out_size):
    """Means over adaptive windows: [..., OH, OW]."""
    y = np.empty((*x.shape[:-2], *out_size), x.dtype)
    for oh, (h0, h1) in enumerate(_adaptive_windows(x.shape[-2], out_size[0])):
        for ow, (w0, w1) in enumerate(_adaptive_windows(x.shape[-1], out_size[1])):
            y[..., oh, ow] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return y


def adaptive_avg_pool2d_backward(grad, in_size):
    """dx [..., H, W] of adaptive average pooling: each window's grad / its size, added over it."""
    dx = np.zeros((*grad.shape[:-2], *in_size), grad.dtype)
    for oh, (h0, h1) in enumerate(_adaptive_windows(in_size[0], grad.shape[-2])):
        for ow, (w0, w1) in enumerate(_adaptive_windows(in_size[1], grad.shape[-1])):
            dx[..., h0:h1, w0:w1] += grad[..., oh, ow, None, None] / ((h1 - h0) * (w1 - w0))
    return dx


# Batch normalization: x is a C-contiguous [N, C, L] array; per-channel arrays are [C].
def welford_merge(a, b):
    """Merge two partial statistics (count, mean, M2) (arrays of one shape) of disjoint sets into
    those of their union (Chan, Golub & LeVeque, 1979): n = na + nb, d = mean_b - mean_a,
    mean = mean_a + d nb / n, M2 = M2a + M2b + d^2 na nb / n. An empty part (count 0) changes nothing."""
    (na, ma, m2a), (nb, mb, m2b) = a, b
    # >>> exercise 06.9: merging two partial (count, mean, M2) statistics
    # hint: the mean moves towards mean_b by the fraction nb / n of the difference d
    # hint: M2 gains d^2 * na * nb / n; guard n = 0 (two empty parts), e.g. divide by max(n, 1)
    n = na + nb
    d = mb - ma
    frac = nb / np.maximum(n, 1)
    return n, ma + d * frac, m2a + m2b + d * d * na * frac
    # <<< exercise


def batch_norm_stats(x, running_mean=None, running_var=None, num_batches_tracked=None, momentum=0.1):
    """Per-channel mean and biased variance ([C] each, x's dtype) of x [N, C, L] (N * L > 0):
    each sample's partial statistics (L elements), merged pairwise over the batch with
    :func:`welford_merge`. Updates ``running_mean``/``running_var`` in place when given:
    ``(1 - f) * running + f * stat`` with the unbiased variance, f = momentum, or 1 /
    num_batches_tracked when momentum is None (a cumulative average)."""
    N, C, L = x.shape
    mean = x.mean(axis=2)
    stats = (np.full((N, C), L, x.dtype), mean, ((x - mean[..., None]) ** 2).sum(axis=2))
    while stats[0].shape[0] > 1:          # a tree: halves merged elementwise, an odd one carried
        k = stats[0].shape[0] // 2
        merged = welford_merge(tuple(s[:k] for s in stats), tuple(s[k:2 * k] for s in stats))
        stats = tuple(np.concatenate([m, s[2 * k:]]) for m, s in zip(merged, stats))
    M = N * L
    mean, var = _c(stats[1][0]), _c(stats[2][0] / M, dtype=x.dtype)
    if running_mean is not None:
        f = momentum if momentum is not None else 1.0 / int(num_batches_tracked)
        unbiased = stats[2][0] / (M - 1) if M > 1 else np.full(C, np.nan, x.dtype)
        running_mean[...] = (1 - f) * running_mean + f * mean
        running_var[...] = (1 - f) * running_var + f * unbiased
    return mean, var


def batch_norm_apply(x, mean, var, weight, bias, eps):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel of x [N, C, L]; weight/bias may be None."""
    y = (x - mean[:, None]) * (1 / np.sqrt(var + eps))[:, None]
    if weight is not None:
        y = y * weight[:, None]
    if bias is not None:
        y = y + bias[:, None]
    return _c(y, dtype=x.dtype)


def batch_norm_backward(grad, x, mean, var, weight, eps, training):
    """(dx, dweight, dbias): dbias = sum(dy), dweight = sum(dy * xhat) per channel; training:
    dx = w invstd (dy - sum(dy) / M - xhat sum(dy xhat) / M), else dx = w invstd dy."""
    N, C, L = x.shape
    invstd = (1 / np.sqrt(var + eps))[:, None]
    xhat = (x - mean[:, None]) * invstd
    dbias, dweight = grad.sum(axis=(0, 2)), (grad * xhat).sum(axis=(0, 2))
    scale = invstd * weight[:, None] if weight is not None else invstd
    if training:
        M = N * L
        dx = scale * (grad - dbias[:, None] / M - xhat * (dweight[:, None] / M))
    else:
        dx = scale * grad
    return _c(dx, dtype=x.dtype), _c(dweight, dtype=x.dtype), _c(dbias, dtype=x.dtype)


# Dropout: a bool keep-mask drawn from the generator, and the masked scaled copy.
def dropout_mask(shape, p, generator, index=None):
    """bool array of ``shape``: True (keep) with probability 1 - p (uniform float32 draws >= p, as dropout.cu)."""
    return generator.random(tuple(shape), dtype=np.float32) >= np.float32(p)


def masked_scale(x, mask, scale):
    """``x * scale`` where ``mask`` (a bool array whose shape is a prefix of x's) keeps, else 0."""
    m = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
    return _c(np.where(m, x * x.dtype.type(scale), x.dtype.type(0)), dtype=x.dtype)


for _name in ("max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d",
              "adaptive_avg_pool2d_backward", "masked_scale"):
    globals()[_name] = _in_float32(globals()[_name], 0)     # halves computed in float32 (phase 05)


def dropout(x, mask_shape, p, scale, generator, index=None):
    """(``x * scale`` where a fresh keep-mask of ``mask_shape`` keeps, else 0; that mask): the two
    steps above in one call, the same draws (the cuda backend fuses them into one kernel)."""
    mask = dropout_mask(mask_shape, p, generator)
    return masked_scale(x, mask, scale), mask
# ---- conv -> (ReLU) -> MaxPool2d(2) (ops/conv.py's conv2d_relu_max_pool2d) ------------------------
def conv2d_max_pool2d(x, weight, bias, stride, padding, dilation, groups, activation=None):
    """``max_pool2d(conv2d(...), 2)`` (kernel 2, stride 2, no padding; ``activation`` as conv2d's):
    (pooled [N, K, P//2, Q//2] of x's dtype, int64 indices p * Q + q into each P x Q plane of the
    convolution's output). Composed here; the cuda backend runs it as one kernel."""
    y = conv2d(x, weight, bias, stride, padding, dilation, groups, activation)
    p, q = y.shape[2:]
    return max_pool2d(y, (2, 2), (2, 2), (0, 0), (1, 1), (p // 2, q // 2))


# ---- the transformer's layers (phase 07) ----------------------------------------------------------
def _phi_cdf(x):
    """Phi(x) = 0.5 erfc(-x / sqrt 2): no cancellation for negative x, unlike 0.5 (1 + erf(x / sqrt 2))."""
    return 0.5 * np.asarray(np.frompyfunc(math.erfc, 1, 1)(-x / math.sqrt(2)), dtype=np.float64)


def _tanh_u(x):
    return math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)


def _gelu(x):
    """x * Phi(x), Phi the standard normal CDF (Hendrycks & Gimpel, arXiv:1606.08415)."""
    return x * _phi_cdf(x)


def _gelu_tanh(x):
    """GELU's tanh approximation 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as
    x sigmoid(2u) (the same number, without 1 + tanh's cancellation for negative x)."""
    return x * _sigmoid(2 * _tanh_u(x))


UNARY_OPS.update({"gelu": _gelu, "gelu_tanh": _gelu_tanh})
_unary_backward_before_gelu = unary_backward


def _gelu_grad(op, grad, x):
    """grad * gelu'(x): Phi(x) + x phi(x), or the derivative of the tanh form."""
    if op == "gelu":
        # >>> exercise 07.5: GELU's derivative
        # hint: d/dx [x Phi(x)] = Phi(x) + x phi(x): Phi the standard normal CDF (_phi_cdf),
        # hint: phi its density exp(-x^2 / 2) / sqrt(2 pi); return grad times that
        return grad * (_phi_cdf(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))
        # <<< exercise
    u = _tanh_u(x)
    s, s_neg = _sigmoid(2 * u), _sigmoid(-2 * u)     # 0.5 (1 + tanh u), 0.5 (1 - tanh u)
    return grad * (s + 2 * x * s * s_neg * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x))


def unary_backward(op, grad, saved):  # noqa: F811 - adds gelu and gelu_tanh (their saved tensor is x)
    """Gradient of a unary op from its saved tensor (see phase 03); gelu/gelu_tanh save their input."""
    if op not in ("gelu", "gelu_tanh"):
        return _unary_backward_before_gelu(op, grad, saved)
    with np.errstate(over="ignore", invalid="ignore"):
        return _c(_gelu_grad(op, grad, saved), dtype=grad.dtype)


unary_backward = _in_float32(unary_backward, 1)     # halves in float32, rounded once (phase 05)


def _acc(dtype):
    """The dtype a row is computed in: float64 for float64, float32 for the rest (as layernorm.cu)."""
    return np.float64 if dtype == np.float64 else np.float32


def layer_norm(x, weight, bias, eps):
    """(y, mean, rstd) of a contiguous [rows, n] array: ``y = (x - mean) * rstd * weight + bias``
    per row, rstd = 1 / sqrt(biased var + eps); weight/bias [n] or None. mean and rstd [rows] are
    float32 (float64 for float64 input); halves are computed in float32 and rounded once."""
    # >>> exercise 07.2: LayerNorm forward
    # hint: compute in acc = _acc(x.dtype); per row the mean and the biased variance (divide by n), rstd = 1 / sqrt(var + eps)
    # hint: y = (x - mean) * rstd, times weight and plus bias when given; return (_c(y, dtype=x.dtype), mean, rstd) of dtype acc
    acc = _acc(x.dtype)
    rows, n = x.shape
    if n == 0:
        return np.empty((rows, 0), x.dtype), np.full(rows, np.nan, acc), np.full(rows, np.nan, acc)
    xf = x.astype(acc)
    mean = xf.mean(axis=1)
    rstd = (1 / np.sqrt(xf.var(axis=1) + acc(eps))).astype(acc)
    y = (xf - mean[:, None]) * rstd[:, None]
    if weight is not None:
        y = y * weight.astype(acc)
    if bias is not None:
        y = y + bias.astype(acc)
    with np.errstate(over="ignore"):
        return _c(y, dtype=x.dtype), mean, rstd
    # <<< exercise


def layer_norm_backward(grad, x, mean, rstd, weight, bias_grad=True):
    """(dx, dweight or None, dbias or None) as layernorm.cu: with g = grad * weight and xhat =
    (x - mean) * rstd, ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` per row;
    dweight = sum over rows of grad * xhat, dbias = sum of grad (only when weight is given)."""
    # >>> exercise 07.4: LayerNorm backward
    # hint: xhat = (x - mean) * rstd from the saved statistics; g = grad * weight (grad alone without weight)
    # hint: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), the means over each row; dweight, dbias: column sums
    acc = _acc(x.dtype)
    gf, xhat = grad.astype(acc), (x.astype(acc) - mean[:, None]) * rstd[:, None]
    g = gf * weight.astype(acc) if weight is not None else gf
    n = max(x.shape[1], 1)
    dx = rstd[:, None] * (g - g.sum(axis=1, keepdims=True) / n - xhat * ((g * xhat).sum(axis=1, keepdims=True) / n))
    if weight is None:
        return _c(dx, dtype=x.dtype), None, None
    dweight = _c((gf * xhat).sum(axis=0, dtype=np.float64), dtype=x.dtype)     # float64: many rows
    return _c(dx, dtype=x.dtype), dweight, _c(gf.sum(axis=0, dtype=np.float64), dtype=x.dtype) if bias_grad else None
    # <<< exercise


def embedding_backward(grad, index, num_weights, padding_idx=None, deterministic=False):
    """dweight [num_weights, D]: row v is the sum of grad[i] over the positions where index[i] == v
    (np.add.at adds in order: the same bits every run, so ``deterministic`` changes nothing here);
    row ``padding_idx`` stays 0. grad [count, D] float, index [count] int64 in range."""
    # >>> exercise 07.1: the embedding's gradient, a scatter-add
    # hint: start from zeros [num_weights, D] in the accumulation dtype _acc(grad.dtype), add row grad[i] into row index[i]
    # hint: np.add.at adds every repeated index (dweight[index] += grad would keep only the last); zero row padding_idx
    acc = _acc(grad.dtype)
    dweight = np.zeros((num_weights, grad.shape[1]), acc)
    np.add.at(dweight, index, grad.astype(acc))
    if padding_idx is not None:
        dweight[padding_idx] = 0
    with np.errstate(over="ignore"):
        return _c(dweight, dtype=grad.dtype)
    # <<< exercise

# ---- attention's fused scale + mask + softmax + dropout (attention_softmax.cu's twin) -------------
# The same Philox4x32-10 words as the kernel (Salmon et al. 2011): with the same seed both devices
# drop the same elements. Arguments as native/cuda/attention_softmax.py describes.
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_U32 = np.uint64(0xFFFFFFFF)


def _philox_words(key, count):
    """The first ``count`` 32-bit words of Philox4x32-10 with ``key`` (uint64) and counters 0, 1, ...:
    word e is word e % 4 of philox(key, e // 4)."""
    blocks = np.arange((count + 3) // 4, dtype=np.uint64)
    c0, c1 = blocks & _U32, blocks >> np.uint64(32)
    c2, c3 = np.zeros_like(blocks), np.zeros_like(blocks)
    k0, k1 = np.uint64(int(key) & 0xFFFFFFFF), np.uint64(int(key) >> 32)
    m0, m1 = np.uint64(_PHILOX_M[0]), np.uint64(_PHILOX_M[1])
    for _ in range(10):
        p0, p1 = m0 * c0, m1 * c2                    # 32 x 32 -> 64 bits: exact in uint64
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & _U32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _U32
        k0, k1 = (k0 + np.uint64(_PHILOX_W[0])) & _U32, (k1 + np.uint64(_PHILOX_W[1])) & _U32
    return np.stack([c0, c1, c2, c3], axis=1).reshape(-1)[:count]


def attention_seed(generator, index=None):
    """One 64-bit Philox key drawn from ``generator``: a uint64 array of one element."""
    return generator.integers(0, 1 << 64, size=1, dtype=np.uint64)


def _attention_probs(s, L, scale, causal, mask):
    """(P, lse) in the compute dtype, from x = s * scale + mask (-inf past the causal cut)."""
    acc = np.float64 if s.dtype == np.float64 else np.float32
    rows, n = s.shape
    x = s.astype(acc) * acc(scale)
    if mask is not None:
        x = (x.reshape(rows // L, L, n) + mask.astype(acc)).reshape(rows, n)
    cut = np.zeros((rows, n), bool)
    if causal:                                       # key j > query i = row % L
        cut = np.arange(n)[None, :] > (np.arange(rows) % L)[:, None]
        x = np.where(cut, acc(-np.inf), x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = x.max(axis=1, keepdims=True) if n else np.full((rows, 1), -np.inf, acc)
        m = np.where(np.isfinite(m), m, acc(0))      # a row of -inf's: lse = log(0) = -inf, P NaN
        lse = m + np.log(np.exp(x - m).sum(axis=1, keepdims=True))
        p = np.where(cut, acc(0), np.exp(x - lse))   # past the cut exactly 0, as the kernel
    return p, lse[:, 0]


def attention_dropout_threshold(p):
    """(threshold, keep_scale) of the fused dropout, the same on both devices: keep an element iff
    its 24-bit uniform word (a Philox word >> 8) is >= threshold, i.e. with probability 1 - p; kept
    elements are multiplied by keep_scale = 1 / (1 - p) (0 when p == 1)."""
    return int(np.ceil(p * (1 << 24))), (1.0 / (1.0 - p) if p < 1 else 0.0)


def _attention_keep(shape, seed, p):
    """(keep [rows, n] bools, keep_scale) of the fused dropout (:func:`attention_dropout_threshold`)."""
    threshold, keep_scale = attention_dropout_threshold(p)
    words = _philox_words(seed[0], shape[0] * shape[1]).reshape(shape)
    return (words >> np.uint64(8)) >= np.uint64(threshold), keep_scale


def attention_softmax(s, L, scale, causal, mask, seed, p):
    """``Y = dropout(softmax(s * scale + mask))`` per row and the rows' logsumexp; see the module doc
    of native/cuda/attention_softmax.py. Returns (Y of s's dtype, lse float32 or float64)."""
    y, lse = _attention_probs(s, L, scale, causal, mask)
    if p > 0:
        keep, keep_scale = _attention_keep(s.shape, seed, p)
        y = np.where(keep, y * y.dtype.type(keep_scale), y.dtype.type(0))
    with np.errstate(over="ignore"):
        return _c(y, dtype=s.dtype), _c(lse)


def attention_softmax_backward(s, lse, grad, L, scale, causal, mask, seed, p):
    """dL/ds = ``scale * P * (G' - sum(P G'))`` per row, ``G' = grad * keep / (1 - p)``, P recomputed."""
    probs, _ = _attention_probs(s, L, scale, causal, mask)
    g = grad.astype(probs.dtype)
    if p > 0:
        keep, keep_scale = _attention_keep(s.shape, seed, p)
        g = np.where(keep, g * probs.dtype.type(keep_scale), probs.dtype.type(0))
    ds = probs.dtype.type(scale) * probs * (g - (probs * g).sum(axis=1, keepdims=True))
    with np.errstate(over="ignore"):
        return _c(ds, dtype=s.dtype)
