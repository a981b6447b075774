# GENERATED from minitorch/ops/transformer.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""The transformer's layers: embedding lookup, layer normalization, GELU, one-hot.

* ``embedding``: ``out[..., :] = weight[index[...], :]``, a gather (index.cu's take). Its gradient
  adds each row of the upstream gradient into the row of ``weight`` it came from: atomicAdd, or,
  under ``minitorch.use_deterministic_algorithms(True)``, a sort of the indices and a fixed-order
  sum (embedding.cu). Row ``padding_idx`` gets no gradient.
* ``layer_norm`` (Ba, Kiros & Hinton, "Layer Normalization", arXiv:1607.06450): each row of the last
  ``len(normalized_shape)`` dimensions becomes ``(x - mean) / sqrt(var + eps) * weight + bias``,
  var biased. The statistics come from one pass (Welford's update; layernorm.cu). Backward is
  fused: with g = dy * weight and xhat the normalized input, ``dx = rstd * (g - mean(g) - xhat *
  mean(g * xhat))`` per row; dweight and dbias are column sums over rows.
* ``gelu`` (Hendrycks & Gimpel, arXiv:1606.08415): ``x * Phi(x)``, or its tanh approximation.
* ``one_hot``: int64 [..., num_classes] with a 1 at each value.

Double backward (``create_graph=True``) works through gelu; layer_norm's and embedding's backward
call their kernels directly and are not differentiable again.
"""
import math

from ..autograd import grad_mode as _grad_mode
from ..autograd.function import Function
from ..deterministic import are_deterministic_algorithms_enabled
from ..dtypes import int64
from ..tensor import Tensor


def _contiguous_raw(backend, data):
    return data if data.flags.c_contiguous else backend.contiguous(data)


def _check_float(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected a floating point input, got {input.dtype}; use .float() first")


# ---- embedding ------------------------------------------------------------------------------------
class Embedding(Function):
    """Rows of ``weight`` [V, D] at int64 ``index`` (any shape) -> index.shape + [D]."""

    @staticmethod
    def forward(ctx, weight, index, padding_idx):
        b = weight._backend
        ctx.index, ctx.shape, ctx.padding_idx = index._data, tuple(weight.shape), padding_idx
        return Tensor(b.take(weight._data, 0, index._data), weight.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        count, (V, D) = ctx.index.size, ctx.shape
        g = _contiguous_raw(b, grad._data).reshape(count, D)
        index = _contiguous_raw(b, ctx.index).reshape(count)
        dweight = b.embedding_backward(g, index, V, ctx.padding_idx, are_deterministic_algorithms_enabled())
        return Tensor(dweight, grad.device), None, None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up rows of ``weight``: ``out[i_0, .., i_k, :] = weight[input[i_0, .., i_k], :]``.

    Args:
        input: int64 indices in [0, V), any shape.
        weight: [V, D], a floating dtype, on input's device.
        padding_idx: a row (negative counts from the end) whose gradient stays 0, or None.
        max_norm, norm_type, scale_grad_by_freq, sparse: PyTorch's options; only their defaults
            are supported.
    Returns:
        input.shape + [D], weight's dtype.
    Raises:
        RuntimeError: input not int64, weight not 2-D or not floating, devices differ.
        ValueError: padding_idx outside [-V, V).
        IndexError: on cpu, an index outside [0, V). On cuda indices are not checked (that would
            wait for the GPU): keep them in [0, V).
        NotImplementedError: max_norm, scale_grad_by_freq or sparse set.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    _check_float("embedding", weight)
    if not isinstance(input, Tensor) or input.dtype is not int64:
        raise RuntimeError("embedding: expected input of int64 indices, got "
                           f"{input.dtype if isinstance(input, Tensor) else type(input).__name__}; use .long()")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D [num_embeddings, embedding_dim], got shape "
                           f"{tuple(weight.shape)}")
    if input.device != weight.device:
        raise RuntimeError(f"embedding: input is on {input.device} but weight is on {weight.device}")
    V = weight.shape[0]
    if padding_idx is not None:
        if not -V <= padding_idx < V:
            raise ValueError(f"embedding: padding_idx must be within num_embeddings ([{-V}, {V})), got {padding_idx}")
        padding_idx %= V
    if input.device.type == "cpu" and input.numel():      # cheap here; on cuda it would need a sync
        i = input._data
        bad = i[(i < 0) | (i >= V)]
        if bad.size:
            raise IndexError(f"embedding: index {int(bad.flat[0])} is out of range for {V} embeddings "
                             f"(valid indices are 0..{V - 1})")
    return Embedding.apply(weight, input, padding_idx)


# ---- layer normalization --------------------------------------------------------------------------
class LayerNorm(Function):
    """Normalize x viewed as [rows, n], n the product of its last ``dims`` sizes; weight and bias
    of n elements or None."""

    @staticmethod
    def forward(ctx, x, weight, bias, dims, eps):
        b = x._backend
        rows, n = math.prod(x.shape[:x.ndim - dims]), math.prod(x.shape[x.ndim - dims:])
        x2 = _contiguous_raw(b, x._data).reshape(rows, n)
        w = None if weight is None else _contiguous_raw(b, weight._data).reshape(n)
        bb = None if bias is None else _contiguous_raw(b, bias._data).reshape(n)
        y, mean, rstd = b.layer_norm(x2, w, bb, eps)
        ctx.x2, ctx.w, ctx.mean, ctx.rstd, ctx.has_bias = x2, w, mean, rstd, bias is not None
        ctx.shapes = tuple(x.shape), None if weight is None else tuple(weight.shape)
        return Tensor(y.reshape(*x.shape), x.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        x_shape, w_shape = ctx.shapes
        g2 = _contiguous_raw(b, grad._data).reshape(*ctx.x2.shape)
        dx, dw, db = b.layer_norm_backward(g2, ctx.x2, ctx.mean, ctx.rstd, ctx.w, ctx.has_bias)
        dx = Tensor(dx.reshape(*x_shape), grad.device)
        dw = None if dw is None else Tensor(dw.reshape(*w_shape), grad.device)
        db = None if db is None else Tensor(db.reshape(*w_shape), grad.device)
        return dx, dw, db, None, None


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def _check_param(name, p, shape, input):
    if p is None:
        return
    if not isinstance(p, Tensor):
        raise TypeError(f"layer_norm: {name} must be a Tensor or None, got {type(p).__name__}")
    if tuple(p.shape) != shape:
        raise RuntimeError(f"layer_norm: expected {name} of the same shape as normalized_shape, but got {name} of "
                           f"shape {list(p.shape)} and normalized_shape = {list(shape)}")
    if p.dtype != input.dtype or p.device != input.device:
        raise RuntimeError(f"layer_norm: {name} is {p.dtype} on {p.device} but input is {input.dtype} on "
                           f"{input.device}; they must match")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dimensions:
    ``(x - mean) / sqrt(var + eps) * weight + bias`` (var biased, as PyTorch).

    Args:
        input: [*, *normalized_shape], float32/float64/float16/bfloat16 (halves computed in float).
        normalized_shape: an int or a sequence of ints, the trailing shape to normalize over.
        weight, bias: tensors of shape normalized_shape (input's dtype and device), or None.
        eps: added to the variance.
    Returns:
        input's shape and dtype.
    Raises:
        RuntimeError: input's trailing shape is not normalized_shape, weight/bias of the wrong
            shape, dtype or device, integer input.
    """
    _check_float("layer_norm", input)
    shape = _normalized_shape(normalized_shape)
    if not shape or tuple(input.shape[input.ndim - len(shape):]) != shape or input.ndim < len(shape):
        raise RuntimeError(f"layer_norm: given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size {list(input.shape)}")
    _check_param("weight", weight, shape, input)
    _check_param("bias", bias, shape, input)
    if weight is None and bias is not None:          # the kernels sum dbias along with dweight
        return LayerNorm.apply(input, None, None, len(shape), float(eps)) + bias
    return LayerNorm.apply(input, weight, bias, len(shape), float(eps))


# ---- GELU -----------------------------------------------------------------------------------------
class Gelu(Function):
    """x * Phi(x) (op 'gelu') or its tanh form ('gelu_tanh'), elementwise; saves x."""

    @staticmethod
    def forward(ctx, x, op):
        ctx.save_for_backward(x)
        ctx.op = op
        return Tensor(x._backend.unary(op, x._data), x.device)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if _grad_mode._enabled:              # create_graph: the same formula from recorded ops
            return _gelu_grad_recorded(ctx.op, grad, x), None
        return Tensor(grad._backend.unary_backward(ctx.op, grad._data, x._data), grad.device), None


def _gelu_grad_recorded(op, grad, x):
    if op == "gelu":
        cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
        return grad * (cdf + x * (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi)))
    k = math.sqrt(2 / math.pi)
    t = ((x + x * x * x * 0.044715) * k).tanh()
    return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x))


def gelu(input, approximate="none"):
    """GELU ``x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))`` elementwise, or with ``approximate='tanh'``
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``. Any shape; a floating dtype kept.

    Raises:
        RuntimeError: approximate not 'none' or 'tanh'; integer input.
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate argument must be either 'none' or 'tanh', got {approximate!r}")
    _check_float("gelu", input)
    return Gelu.apply(input, "gelu" if approximate == "none" else "gelu_tanh")


# ---- one-hot ----------------------------------------------------------------------------------------
def one_hot(tensor, num_classes=-1):
    """int64 [*tensor.shape, num_classes]: 1 at ``[..., tensor[...]]``, 0 elsewhere.

    ``num_classes=-1`` takes ``tensor.max() + 1``: the output's size depends on the data, so that
    one case waits for the GPU (``.item()``), as in PyTorch.

    Raises:
        RuntimeError: tensor not int64; num_classes -1 with an empty tensor; on cpu, a negative value
            or one >= num_classes (on cuda not checked, which would wait for the GPU: such a row is
            all zeros).
    """
    if not isinstance(tensor, Tensor) or tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor (int64), got "
                           f"{tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__}")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("one_hot: can not infer the total number of classes from an empty tensor")
        num_classes = int(tensor.max().item()) + 1
    if num_classes < 0:
        raise RuntimeError(f"one_hot: num_classes must be -1 or non-negative, got {num_classes}")
    if tensor.device.type == "cpu" and tensor.numel():
        if tensor._data.min() < 0:
            raise RuntimeError("one_hot: class values must be non-negative")
        if tensor._data.max() >= num_classes:
            raise RuntimeError(f"one_hot: class values must be smaller than num_classes ({num_classes})")
    from ..creation import arange            # creation imports the ops: import it when called
    classes = arange(num_classes, dtype=int64, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
