# GENERATED from minitorch/ops/softmax.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Softmax, log-softmax, cross-entropy and NLL loss.

The backends work on the LAST dimension of a contiguous 2-D ``[rows, n]`` array (on cuda, the
kernels of ``minitorch/cuda/softmax.cu``); the public functions here bring any tensor to that
form: swap the dimension to the end, make it contiguous, flatten the rest into rows. Those steps
are ordinary recorded ops (transpose, reshape), so autograd carries gradients through them.

Numerics: softmax subtracts each row's maximum before exponentiating (the "max trick":
``softmax(x) = softmax(x - c)`` for any c, and with c = max every exp is in (0, 1], so logits of
+-1000 neither overflow nor turn into NaN). Log-softmax is computed directly as
``x - max - log(sum(exp(x - max)))``, never as ``log(softmax(x))``, which would give -inf for
probabilities that underflow. The cuda kernels get max and sum from one pass with the online
normalizer of Milakov & Gimelshein (2018), "Online normalizer calculation for softmax",
arXiv:1805.02867.

Cross-entropy is fused: ``loss_r = logsumexp(x_r) - x_r[t_r]`` from one read of the logits, and
its gradient ``(softmax(x_r) - onehot(t_r)) * grad_r`` in one more pass, without materialising
log-probabilities. Double backward (``create_graph=True``) through these ops is not supported: their
backward passes call the fused kernels directly.
"""
import math

from ..autograd.function import Function
from ..dtypes import as_dtype, from_numpy_dtype, int64
from ..tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def _contiguous_raw(backend, data):
    return data if data.flags.c_contiguous else backend.contiguous(data)


# ---- the Functions: inputs are 2-D, the reduced dimension last ----------------------------------
class Softmax(Function):
    """Softmax (or log-softmax when ``log``) over the rows of a 2-D tensor."""

    @staticmethod
    def forward(ctx, x, log):
        b = x._backend
        x2 = _contiguous_raw(b, x._data)
        y = b.log_softmax(x2) if log else b.softmax(x2)
        ctx.y, ctx.log = y, log                     # backward needs only the output
        return Tensor(y, x.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g = _contiguous_raw(b, grad.to(dtype=from_numpy_dtype(ctx.y.dtype))._data)
        dx = b.log_softmax_backward(ctx.y, g) if ctx.log else b.softmax_backward(ctx.y, g)
        return Tensor(dx, grad.device), None


def _reduce_rows(backend, loss, reduction):
    """Raw per-row losses reduced as asked: ('none', 'sum', 'mean'); 'mean' of 0 rows is NaN."""
    if reduction == "none":
        return loss
    rows = loss.shape[0]
    scale = 1.0 if reduction == "sum" else (1.0 / rows if rows else float("nan"))
    return backend.sum(loss, (0,), False, scale)


def _grad_scale(reduction, rows):
    return 1.0 / rows if reduction == "mean" and rows else 1.0


class CrossEntropy(Function):
    """Fused log-softmax + NLL over logits [N, C] and int64 targets [N]."""

    @staticmethod
    def forward(ctx, logits, target, reduction):
        b = logits._backend
        x = _contiguous_raw(b, logits._data)
        t = _contiguous_raw(b, target._data)
        loss, lse = b.cross_entropy(x, t)
        ctx.x, ctx.t, ctx.lse, ctx.reduction = x, t, lse, reduction
        return Tensor(_reduce_rows(b, loss, reduction), logits.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g = grad.to(dtype=from_numpy_dtype(ctx.x.dtype))._data        # 0-d ('mean'/'sum') or [N] of any strides
        dx = b.cross_entropy_backward(ctx.x, ctx.t, ctx.lse, g, _grad_scale(ctx.reduction, ctx.x.shape[0]))
        return Tensor(dx, grad.device), None, None


class NLLLoss(Function):
    """``-log_probs[r, t_r]`` over log-probabilities [N, C] and int64 targets [N], reduced."""

    @staticmethod
    def forward(ctx, log_probs, target, reduction):
        b = log_probs._backend
        x = _contiguous_raw(b, log_probs._data)
        t = _contiguous_raw(b, target._data)
        ctx.t, ctx.n, ctx.reduction = t, x.shape[1], reduction
        return Tensor(_reduce_rows(b, b.nll_loss(x, t), reduction), log_probs.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        dx = b.nll_loss_backward(ctx.t, grad._data, ctx.n, _grad_scale(ctx.reduction, ctx.t.shape[0]))
        return Tensor(dx, grad.device), None, None


# ---- public functions: checks, then any shape to [rows, n] ---------------------------------------
def _check_float(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected a floating point input, got {input.dtype}; use .float() first")


def _softmax(name, input, dim, log, dtype):
    if dtype is not None and isinstance(input, Tensor):
        input = input.to(dtype=as_dtype(dtype))
    _check_float(name, input)
    if dim is None:
        raise TypeError(f"{name}: dim is required (PyTorch's implicit choice of dim is deprecated)")
    if input.ndim == 0:
        input._dim(dim)                                     # 0 and -1 are valid, as in PyTorch
        return Softmax.apply(input.reshape(1, 1), log).reshape(())
    d = input._dim(dim)
    last = input.ndim - 1
    x = input if d == last else input.transpose(d, last)
    shape = x.shape
    y = Softmax.apply(x.reshape(math.prod(shape[:-1]), shape[-1]), log).reshape(shape)
    return y if d == last else y.transpose(d, last).contiguous()


def softmax(input, dim, dtype=None):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim``: probabilities that sum to 1 along ``dim``.

    Args:
        input: a floating point tensor of any shape (float16 and bfloat16 compute in float32).
        dim: the dimension to normalise (negative counts from the end).
        dtype: if given, ``input`` is converted to it first (as in PyTorch).
    Returns:
        A contiguous tensor of ``input``'s shape and dtype.
    Raises:
        RuntimeError: for integer or bool input.  IndexError: ``dim`` out of range.
    """
    return _softmax("softmax", input, dim, False, dtype)


def log_softmax(input, dim, dtype=None):
    """``x_i - log(sum_j exp(x_j))`` along ``dim``, computed stably (not as log(softmax)).

    Same arguments, shapes and errors as :func:`softmax`.
    """
    return _softmax("log_softmax", input, dim, True, dtype)


def _loss_rows(name, input, target, reduction):
    """Checks; returns (input as [N, C], target as [N], output shape for 'none')."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: expected target to be a Tensor, got {type(target).__name__}")
    _check_float(name, input)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if target.dtype is not int64:
        raise RuntimeError(f"{name}: expected target of int64 class indices, got {target.dtype}; "
                           "use target.long() (class probabilities are not supported)")
    if input.device != target.device:
        raise RuntimeError(f"{name}: input is on {input.device} but target is on {target.device}")
    if input.ndim == 0:
        raise ValueError(f"{name}: input must have a class dimension: shape [C], [N, C] or [N, C, d1, ...], "
                         "got a 0-d tensor")
    expected = () if input.ndim == 1 else (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(f"{name}: input of shape {tuple(input.shape)} needs a target of shape {expected} "
                         f"(one class index per row), got target of shape {tuple(target.shape)}")
    C = input.shape[0] if input.ndim == 1 else input.shape[1]
    if input.device.type == "cpu" and target.numel():     # cheap here; on cuda it would need a sync
        t = target._data
        bad = t[(t < 0) | (t >= C)]
        if bad.size:
            raise IndexError(f"{name}: target {int(bad.flat[0])} is out of bounds for {C} classes "
                             f"(valid class indices are 0..{C - 1})")
    if input.ndim == 1:
        return input.reshape(1, C), target.reshape(1), ()
    if input.ndim == 2:
        return input, target, (input.shape[0],)
    # [N, C, d1, ...]: classes last, the rest in order, so that rows line up with target's elements
    x = input.permute(0, *range(2, input.ndim), 1)
    rows = target.numel()
    return x.reshape(rows, C), target.reshape(rows), tuple(target.shape)


def cross_entropy(input, target, reduction="mean"):
    """Cross-entropy between logits and class indices: ``logsumexp(x_r) - x_r[t_r]`` per row,
    i.e. ``nll_loss(log_softmax(input, 1), target)`` fused into one kernel per pass.

    Args:
        input: logits of a floating dtype, shape [N, C], [C], or [N, C, d1, ...] (classes on dim 1).
        target: int64 class indices in [0, C), shape [N], [] or [N, d1, ...].
        reduction: 'mean' (average over rows), 'sum', or 'none' (one loss per row, target's shape).
    Returns:
        A 0-d tensor for 'mean'/'sum', else target's shape; input's dtype.
    Raises:
        ValueError: target shape does not match input (both named), or an unknown reduction.
        RuntimeError: target not int64, input not floating point, tensors on different devices.
        IndexError: on cpu, a target outside [0, C). On cuda targets are not checked (that would
            wait for the GPU): such a row's loss and gradient are NaN.
    """
    x, t, shape = _loss_rows("cross_entropy", input, target, reduction)
    out = CrossEntropy.apply(x, t, reduction)
    return out.reshape(shape) if reduction == "none" else out


def nll_loss(input, target, reduction="mean"):
    """Negative log-likelihood ``-input[r, t_r]`` of log-probabilities (e.g. from log_softmax).

    Same shapes, reductions and errors as :func:`cross_entropy`; ``input`` holds log-probabilities.
    """
    x, t, shape = _loss_rows("nll_loss", input, target, reduction)
    out = NLLLoss.apply(x, t, reduction)
    return out.reshape(shape) if reduction == "none" else out
