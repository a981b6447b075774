# GENERATED from minitorch/ops/attention.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""Scaled dot-product attention, ``softmax(Q K^T * scale + mask) V`` (Vaswani et al. 2017,
"Attention Is All You Need", arXiv:1706.03762), by one of two paths:

* the decomposition: ``q @ k^T`` (our GEMM), scale, mask, softmax (``ops/softmax.py``), dropout,
  ``@ v``. Every step is a recorded op, so autograd comes for free, at the price of an [L, S]
  score matrix per (batch, head) in memory, written and read several times. On cuda the middle
  steps (scale, mask, softmax, dropout) run fused as ONE kernel each way (:class:`AttentionSoftmax`,
  ``minitorch/cuda/attention_softmax.cu``), which redraws dropout's keep mask in backward from a
  saved Philox seed; the step-by-step version stays for cpu and as the reference
  (``minitorch.backends.cuda.enable_fused_softmax_sdp(False)`` selects it on cuda too);
* FlashAttention (Dao et al. 2022, arXiv:2205.14135; FlashAttention-2, Dao 2023, arXiv:2307.08691):
  the kernels of ``minitorch/cuda/attention/01_flash_fp32.cu`` walk K/V tile by tile with an online
  softmax and keep only O(L) per row (the log-sum-exp the backward needs to recompute P); float32
  runs their register-tiled rewrite, ``01b_flash_fp32_tiled.cu`` (on sm_80+ as
  ``01c_flash_fp32_3xtf32.cu``: the same on TF32 tensor cores at float32 accuracy, "3xTF32", unless
  ``minitorch.backends.cuda.enable_flash_3xtf32_sdp(False)``), which also applies dropout inside
  the kernels and reads q, k, v and the output's gradient through their strides (a GPT block's head
  views of one projection are read where they lie; arrays whose rows are not contiguous and 16-byte
  aligned are copied), and writes the output and the gradients of q, k, v as PyTorch's flash does,
  in [B, L, heads, E] memory: the GPT's transpose back to [B, L, heads, E] is then free.

:func:`scaled_dot_product_attention` takes the flash path on cuda for float32 without an explicit
mask (``is_causal`` is fine; dropout too: the kernels drop, with the same Philox key and rule, the
elements the fused softmax drops), head dimension 32, 64 or 128 shared by q, k and v, and equal
batch dimensions, unless ``minitorch.backends.cuda.enable_flash_sdp(False)``; else the decomposition.
bfloat16 and float16 under the same conditions, without dropout and with scale > 0, take the
tensor-core kernels of ``minitorch/cuda/attention/02_flash_mma.cu`` (FlashAttention-2 with mma.sync,
float32 statistics); on an sm_90 GPU (H100) the forward of head dimensions 64 and 128 runs
``03_flash_wgmma.cu`` (the same forward on Hopper's wgmma), whose output rung 2's backward takes.
Their backward, and float32's on rung 1c, adds dq with float32 atomics (as PyTorch's flash backward)
unless ``minitorch.use_deterministic_algorithms(True)``, which selects the slower kernels that give
the same bits every run.
"""
import math

from .. import backends, random
from ..broadcast import broadcast_shape
from ..deterministic import are_deterministic_algorithms_enabled
from ..autograd.function import Function
from ..dtypes import bool as bool_
from ..dtypes import from_numpy_dtype
from ..tensor import Tensor
from .dropout import dropout
from .shape import _view_strides
from .softmax import softmax

FLASH_HEAD_DIMS = (32, 64, 128)
FLASH_MMA_DTYPES = ("bfloat16", "float16")     # tensor-core flash (sm_80 and later)


def _dropout_seed(b, device, p):
    """The Philox key of one attention's dropout (None when ``p`` is 0), drawn from ``device``'s
    generator: the flash and the fused-softmax paths both take it from here, so that after the same
    ``manual_seed`` they drop the same elements."""
    return b.attention_seed(random.engine(None, device), index=device.index) if p > 0 else None


class FlashAttention(Function):
    """Attention of float32 q [B, H, L, D], k, v [B, H, S, D] on cuda with the flash kernels of rung 1c
    (3xTF32 on the tensor cores, where it runs and ``backends.cuda.flash_3xtf32_sdp_enabled()``, as
    the forward found it) or rung 1b, which read q, k, v (and the gradient) through their strides
    where their rows are contiguous and 16-byte aligned (else a contiguous copy, :func:`_rows_aligned`), and write the output and dq, dk, dv
    as [B, L, H, D] memory seen as [B, H, L, D] (PyTorch flash's layout: a GPT's transpose back is free).
    Dropout p inside the kernels: the Philox key is drawn as :class:`AttentionSoftmax` draws it, so both
    paths drop the same elements after the same ``manual_seed``; backward redraws the mask from the
    saved key."""

    @staticmethod
    def forward(ctx, q, k, v, scale, causal, p):
        b, device = q._backend, q.device
        q, k, v = (_rows_aligned(x, b) for x in (q, k, v))
        seed = _dropout_seed(b, device, p)
        tensor_cores = backends.cuda.flash_3xtf32_sdp_enabled()
        out, lse = b.flash_attention(q, k, v, scale, causal, seed=seed, p=p, tensor_cores=tensor_cores)
        ctx.saved = (q, k, v, out, lse)
        ctx.args = (scale, causal, seed, p, tensor_cores)
        return Tensor(out, device)

    @staticmethod
    def backward(ctx, grad):
        scale, causal, seed, p, tensor_cores = ctx.args
        # rung 1c: one pass with float32 atomics for dq (fast), or dq by its own kernel: the same bits every run
        dq, dk, dv = grad._backend.flash_attention_backward(*ctx.saved, _rows_aligned(grad, grad._backend), scale,
                                                            causal, seed=seed, p=p, tensor_cores=tensor_cores,
                                                            deterministic=are_deterministic_algorithms_enabled())
        return Tensor(dq, grad.device), Tensor(dk, grad.device), Tensor(dv, grad.device), None, None, None


def _rows_aligned(x, b):
    """x's array where the float32 flash kernels read it in place (rows contiguous and 16-byte aligned:
    ``flash_rows_aligned``), else a fresh contiguous copy (our allocator's blocks are aligned)."""
    a = x._data
    return a if b.flash_rows_aligned(a) else b.contiguous(a)


def _aligned(x, b):
    """x's array if it is C-contiguous and 16-byte aligned (the tensor-core kernels copy rows in
    16-byte pieces), else a fresh contiguous copy (our allocator's blocks are aligned)."""
    a = x._data
    return a if a.flags.c_contiguous and a.ptr % 16 == 0 else b.contiguous(a)


class FlashAttentionMMA(Function):
    """Attention of bfloat16/float16 q [BH, L, D], k, v [BH, S, D] on cuda with the tensor-core
    kernels of ``minitorch/cuda/attention/02_flash_mma.cu`` (float32 accumulation and statistics)."""

    @staticmethod
    def forward(ctx, q, k, v, scale, causal):
        b, device = q._backend, q.device
        q, k, v = (_aligned(x, b) for x in (q, k, v))
        out, lse = b.flash_attention_mma(q, k, v, scale, causal)
        ctx.saved = (q, k, v, out, lse)
        ctx.scale, ctx.causal = scale, causal
        return Tensor(out, device)

    @staticmethod
    def backward(ctx, grad):
        # one pass with float32 atomics for dq (fast), or dq by its own kernel: the same bits every run
        dq, dk, dv = grad._backend.flash_attention_mma_backward(*ctx.saved, _aligned(grad, grad._backend),
                                                                ctx.scale, ctx.causal,
                                                                are_deterministic_algorithms_enabled())
        return Tensor(dq, grad.device), Tensor(dk, grad.device), Tensor(dv, grad.device), None, None


def _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale):
    """The decomposition, on any device and floating dtype; batch dimensions broadcast."""
    # >>> exercise 07.6: attention as matmul, mask, softmax, matmul
    # hint: scores = q @ k^T * scale; is_causal: masked_fill the scores above the diagonal (tril of ones(L, S)) with -inf
    # hint: a bool attn_mask is True where attention is allowed (fill the others with -inf); a float one is added
    # hint: softmax over the keys (the last dim), dropout(weights, dropout_p, True) when dropout_p > 0, then @ value
    scores = (query @ key.transpose(-2, -1)) * scale
    L, S = scores.shape[-2], scores.shape[-1]
    if is_causal:       # key j is visible to query i iff j <= i (top-left aligned, as PyTorch)
        from ..creation import ones     # here: creation imports the ops
        keep = ones(L, S, dtype=bool_, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value
    # <<< exercise


class AttentionSoftmax(Function):
    """``dropout(softmax(scores * scale + mask), p)`` over the rows of scores [rows, S], fused
    (``attention_softmax`` of the backends). Row r is query ``r % L``: the causal cut and the additive
    float mask [rows // L or 1, L or 1, S or 1] (no gradient) follow from it. Saves the scores, each row's
    logsumexp and the dropout seed: backward recomputes the probabilities and redraws the same mask."""

    @staticmethod
    def forward(ctx, scores, mask, scale, causal, p, L):
        b, device = scores._backend, scores.device
        s = b.contiguous(scores._data) if not scores._data.flags.c_contiguous else scores._data
        m = mask._data if mask is not None else None
        seed = _dropout_seed(b, device, p)
        y, lse = b.attention_softmax(s, L, scale, causal, m, seed, p)
        ctx.saved = (s, lse, m, seed)
        ctx.args = (L, scale, causal, p)
        return Tensor(y, device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        s, lse, m, seed = ctx.saved
        L, scale, causal, p = ctx.args
        g = grad.to(dtype=from_numpy_dtype(s.dtype))._data
        g = g if g.flags.c_contiguous else b.contiguous(g)
        ds = b.attention_softmax_backward(s, lse, g, L, scale, causal, m, seed, p)
        return Tensor(ds, grad.device), None, None, None, None, None


def _fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale):
    """The decomposition with scale, mask, softmax and dropout fused (:class:`AttentionSoftmax`);
    the same arguments and results as :func:`_math_attention` (dropout draws other random numbers)."""
    from ..creation import zeros     # here: creation imports the ops
    scores = query @ key.transpose(-2, -1)
    L, S = scores.shape[-2], scores.shape[-1]
    mask = None
    if attn_mask is not None:
        if attn_mask.dtype is bool_:     # True where allowed: 0 there, -inf elsewhere, added
            attn_mask = zeros(attn_mask.shape, dtype=query.dtype, device=query.device).masked_fill(
                attn_mask.logical_not(), float("-inf"))
        shape = broadcast_shape(tuple(scores.shape), tuple(attn_mask.shape))
        scores = scores.expand(*shape)      # a mask with more batch dims widens the scores (rare)
        mask = _batches_flattened(attn_mask.expand(*shape))
    weights = AttentionSoftmax.apply(scores.reshape(-1, S), mask, float(scale), bool(is_causal),
                                     float(dropout_p), L)
    return weights.reshape(scores.shape) @ value


def _batches_flattened(mask):
    """[..., L, S] as [batch, L, S]: a view (no copy) where the batch dims merge, as for a mask
    broadcast over all of them (stride 0); else a copy."""
    shape = (math.prod(mask.shape[:-2]),) + tuple(mask.shape[-2:])
    if _view_strides(mask.shape, mask.stride(), shape) is not None:
        return mask.view(*shape)
    return mask.reshape(*shape)


def _fused_applies(query, key, attn_mask):
    """cuda (unless ``backends.cuda.enable_fused_softmax_sdp(False)``), at least one query and one key,
    and a mask that needs no gradient (the fused backward gives none)."""
    return (query.device.type == "cuda" and backends.cuda.fused_softmax_sdp_enabled()
            and query.shape[-2] > 0 and key.shape[-2] > 0
            and (attn_mask is None or not attn_mask.requires_grad))


def _flash_attention(query, key, value, is_causal, scale, dropout_p=0.0):
    """The flash path. float32: q, k, v as [B, H, len, E] (views: the kernels read strided heads, such as
    a GPT block's transposed head split, where they lie); bfloat16/float16: batch dimensions flattened
    to one and each tensor made contiguous (recorded ops: copies where the heads are strided)."""
    L, E = query.shape[-2:]
    S = key.shape[-2]
    if query.dtype.name == "float32":
        q, k, v = (_as_heads(t) for t in (query, key, value))
        out = FlashAttention.apply(q, k, v, float(scale), bool(is_causal), float(dropout_p))
        return out if query.ndim == 4 else out.reshape(query.shape)
    q = query.reshape(-1, L, E).contiguous()
    k = key.reshape(-1, S, E).contiguous()
    v = value.reshape(-1, S, E).contiguous()
    out = FlashAttentionMMA.apply(q, k, v, float(scale), bool(is_causal))
    return out.reshape(query.shape)


def _as_heads(t):
    """[..., H, len, E] as [B, H, len, E] (batch dimensions merged: a view unless they cannot merge);
    [BH, len, E] and [len, E] as [BH or 1, 1, len, E] (one head: the output stays contiguous)."""
    if t.ndim == 4:
        return t
    if t.ndim > 4:
        return t.reshape((-1,) + tuple(t.shape[-3:]))
    return t.reshape((-1, 1) + tuple(t.shape[-2:]))


def _flash_applies(query, key, value, attn_mask, dropout_p, scale=1.0):
    """float32 takes 01b_flash_fp32_tiled.cu, dropout included; bfloat16/float16 take the tensor cores
    (02_flash_mma.cu), without dropout, whose running max is kept unscaled and so needs scale > 0."""
    dtype = query.dtype.name
    return (query.device.type == "cuda" and backends.cuda.flash_sdp_enabled()
            and dtype == key.dtype.name == value.dtype.name
            and (dtype == "float32" or (dtype in FLASH_MMA_DTYPES and scale > 0 and dropout_p == 0))
            and attn_mask is None
            and query.shape[-1] in FLASH_HEAD_DIMS and value.shape[-1] == query.shape[-1]
            and query.shape[:-2] == key.shape[:-2] == value.shape[:-2]
            and query.numel() > 0 and key.shape[-2] > 0)


def _check(query, key, value, attn_mask, dropout_p, is_causal):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention: expected {name} to be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must have at least 2 dimensions "
                               f"(..., len, features), got shape {tuple(t.shape)}")
    if not (query.dtype is key.dtype is value.dtype) or not query.dtype.is_floating_point:
        raise RuntimeError("scaled_dot_product_attention: expected query, key and value of one floating dtype, "
                           f"got {query.dtype}, {key.dtype} and {value.dtype}")
    if not query.device == key.device == value.device:
        raise RuntimeError("scaled_dot_product_attention: expected query, key and value on one device, got "
                           f"{query.device}, {key.device} and {value.device}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and "
                           f"value {tuple(value.shape)} do not fit: expected (..., L, E), (..., S, E), (..., S, Ev)")
    if not 0 <= dropout_p <= 1:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got {dropout_p}")
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor):
            raise TypeError(f"scaled_dot_product_attention: attn_mask must be a Tensor, got {type(attn_mask).__name__}")
        if is_causal:
            raise RuntimeError("scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True")
        if attn_mask.dtype is not bool_ and attn_mask.dtype is not query.dtype:
            raise RuntimeError(f"scaled_dot_product_attention: expected a bool attn_mask or one of query's dtype "
                               f"{query.dtype}, got {attn_mask.dtype}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """``softmax(query @ key^T * scale + mask) @ value``, PyTorch's ``F.scaled_dot_product_attention``.

    Args:
        query: [..., L, E]; key: [..., S, E]; value: [..., S, Ev]; one floating dtype and device
            (batch dimensions broadcast on the decomposition path).
        attn_mask: None; a bool tensor broadcasting to [..., L, S], True where attention is ALLOWED;
            or a float tensor of query's dtype, added to the scores.
        dropout_p: probability of dropping each attention weight (always applied when > 0, as PyTorch).
        is_causal: query i sees keys 0..i only (a lower-triangular [L, S] mask aligned top-left).
        scale: multiplies the scores; default 1 / sqrt(E).
    Returns:
        [..., L, Ev] of query's dtype. A row with every key masked out is NaN (softmax of -inf's).
    Raises:
        RuntimeError: mismatched shapes, dtypes or devices (all named); attn_mask with is_causal.
        ValueError: dropout_p outside [0, 1].
    """
    _check(query, key, value, attn_mask, dropout_p, is_causal)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if _flash_applies(query, key, value, attn_mask, dropout_p, scale):
        return _flash_attention(query, key, value, is_causal, scale, dropout_p)
    if _fused_applies(query, key, attn_mask):
        return _fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
