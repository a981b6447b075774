# GENERATED from minitorch/nn/attention.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""``nn.MultiheadAttention`` (Vaswani et al. 2017, "Attention Is All You Need", Sec. 3.2.2):
project queries, keys and values, split the features into ``num_heads`` heads of
``embed_dim / num_heads``, attend in each head, concatenate, project again.

Parameters carry PyTorch's names and layouts (``in_proj_weight`` [3E, E] stacking the q, k, v
projections, ``in_proj_bias`` [3E], ``out_proj`` a Linear(E, E)), so a ``torch.nn.MultiheadAttention``
state_dict loads as it is.
"""
import math

from ..creation import empty, zeros
from ..tensor import Tensor
from . import functional as F
from .init import constant_, xavier_uniform_
from .linear import Linear
from .module import Module
from .parameter import Parameter


def _additive(mask, what, dtype):
    """A mask as numbers added to the scores: bool True (position NOT allowed, PyTorch's MHA
    convention, the opposite of scaled_dot_product_attention's) becomes -inf, False 0."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"MultiheadAttention: {what} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype.name == "bool":
        return zeros(*mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise RuntimeError(f"MultiheadAttention: only bool and floating {what} are supported, got {mask.dtype}")
    return mask.to(dtype=dtype)


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters, arguments and results.

    Args:
        embed_dim: features E of query, key and value; num_heads: heads (must divide E).
        dropout: dropout probability on the attention weights (training only).
        bias: whether the input and output projections have biases.
        batch_first: inputs and output [N, L, E] if True, else [L, N, E] (PyTorch's default, False).
    Shapes (batch_first): query [N, L, E], key and value [N, S, E] (or unbatched [L, E], [S, E]);
        output [N, L, E]; weights [N, L, S] averaged over heads, or [N, H, L, S].
    Raises:
        ValueError: embed_dim not divisible by num_heads.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, device=device, dtype=dtype))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, device=device, dtype=dtype)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        xavier_uniform_(self.in_proj_weight)                 # PyTorch's initialisation
        if bias:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)

    def _heads(self, x, n):
        """[N, len, E] -> [N, H, len, E / H]."""
        return x.reshape(n, x.shape[1], self.num_heads, self.head_dim).transpose(1, 2)

    def _mask(self, key_padding_mask, attn_mask, n, L, S, dtype):
        """One additive mask broadcasting to [N, H, L, S], or None."""
        mask = _additive(attn_mask, "attn_mask", dtype)
        if mask is not None and mask.ndim == 3:              # [N * H, L, S]
            mask = mask.reshape(n, self.num_heads, L, S)
        pad = _additive(key_padding_mask, "key_padding_mask", dtype)
        if pad is not None:
            pad = pad.reshape(n, 1, 1, S)
            mask = pad if mask is None else mask + pad
        return mask

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """(output, weights or None); see the class for shapes. ``is_causal`` is a hint, as in
        PyTorch: ``attn_mask`` must be given (the causal mask), and is then used as it is.

        Raises:
            RuntimeError: is_causal without attn_mask; inputs whose last dimension is not embed_dim.
        """
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: need attn_mask if specifying the is_causal hint")
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.shape[-1] != self.embed_dim:
                raise RuntimeError(f"MultiheadAttention: expected {name} with {self.embed_dim} features, "
                                   f"got shape {tuple(t.shape)}")
        n, L, S = query.shape[0], query.shape[1], key.shape[1]
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None,) * 3
        q = self._heads(F.linear(query, w_q, b_q), n)
        k = self._heads(F.linear(key, w_k, b_k), n)
        v = self._heads(F.linear(value, w_v, b_v), n)
        mask = self._mask(key_padding_mask, attn_mask, n, L, S, q.dtype)
        p = self.dropout if self.training else 0.0
        if need_weights:                                     # the weights are wanted: the decomposition
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
            weights = F.softmax(scores if mask is None else scores + mask, -1)
            weights = F.dropout(weights, p, self.training)
            out = weights @ v
            weights = weights.mean(1) if average_attn_weights else weights
        elif is_causal and key_padding_mask is None:      # trust the hint: the flash path may apply
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            weights = None
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            weights = None
        out = self.out_proj(out.transpose(1, 2).reshape(n, L, self.embed_dim))
        if unbatched:
            return out.squeeze(0), None if weights is None else weights.squeeze(0)
        return (out if self.batch_first else out.transpose(0, 1)), weights

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"
