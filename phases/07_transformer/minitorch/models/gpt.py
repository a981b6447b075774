# GENERATED from minitorch/models/gpt.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""A GPT: a decoder-only transformer language model (Radford et al. 2019, "Language Models are
Unsupervised Multitask Learners"), laid out as Karpathy's nanoGPT ``model.py`` so that its
parameter names, and so a nanoGPT (PyTorch) state_dict, map one to one::

    transformer.wte            Embedding [vocab_size, n_embd]   token embeddings (tied to lm_head)
    transformer.wpe            Embedding [block_size, n_embd]   learned position embeddings
    transformer.h.{i}.ln_1     LayerNorm                         pre-LN before attention
    transformer.h.{i}.attn.c_attn   Linear n_embd -> 3 n_embd    q, k, v in one GEMM
    transformer.h.{i}.attn.c_proj   Linear n_embd -> n_embd      heads mixed back
    transformer.h.{i}.ln_2     LayerNorm                         pre-LN before the MLP
    transformer.h.{i}.mlp.c_fc      Linear n_embd -> 4 n_embd
    transformer.h.{i}.mlp.c_proj    Linear 4 n_embd -> n_embd
    transformer.ln_f           LayerNorm                         after the last block
    lm_head                    Linear n_embd -> vocab_size, no bias, weight = wte.weight

Shapes: B batch, T time (<= block_size), C = n_embd, nh = n_head, hs = C / nh.
"""
import math
from dataclasses import dataclass

import numpy as np

from .. import nn
from ..autograd import no_grad
from ..creation import arange, from_numpy, multinomial
from ..nn import functional as F
from ..ops import cat
from ..optim import AdamW
from ..optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR


@dataclass
class GPTConfig:
    """nanoGPT's defaults are GPT-2 small's; ``position="sinusoidal"`` swaps the learned position
    table for Vaswani et al.'s fixed sines (a buffer, no parameter)."""
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True           # biases in Linears and LayerNorms (GPT-2: True)
    position: str = "learned"   # or "sinusoidal"


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where position t sees positions <= t only.

    ``[B, T, C] -> [B, T, C]``: one Linear makes q, k, v; each head attends with
    ``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` on ``[B, nh, T, hs]``.
    """

    def __init__(self, config):
        super().__init__()
        if config.n_embd % config.n_head:
            raise ValueError(f"n_embd ({config.n_embd}) must be a multiple of n_head ({config.n_head})")
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)              # 3 x [B, T, C]
        # view, no copy: splitting the last dim of a column slice keeps strides; the GEMMs of the
        # attention read these [B, nh, T, hs] views as they are (strided batches)
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in (q, k, v))  # [B, nh, T, hs]
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)                # heads side by side again
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """``[B, T, C] -> [B, T, C]``: Linear to 4C, GELU (exact, erf), Linear back, dropout."""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A pre-LN transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))`` (GPT-2 moved
    the LayerNorm before each sublayer, so the residual path stays an identity)."""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        # >>> exercise 07.8: the pre-LN residual block
        # hint: normalize a copy, run the sublayer on it, add its output to x: x + attn(ln_1(x)); then the same with ln_2 and mlp
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))
        # <<< exercise


class SinusoidalPositions(nn.Module):
    """Fixed position codes (Vaswani et al. 2017, section 3.5): ``[T] positions -> [T, C]``,
    ``PE[p, 2i] = sin(p / 10000^(2i/C))`` and ``PE[p, 2i+1] = cos(...)``. C must be even."""

    def __init__(self, block_size, n_embd):
        super().__init__()
        if n_embd % 2:
            raise ValueError(f"sinusoidal positions need an even n_embd, got {n_embd}")
        position = np.arange(block_size)[:, None]
        frequency = np.exp(-math.log(10000.0) * np.arange(0, n_embd, 2) / n_embd)
        table = np.empty((block_size, n_embd), dtype=np.float32)
        table[:, 0::2], table[:, 1::2] = np.sin(position * frequency), np.cos(position * frequency)
        self.register_buffer("table", from_numpy(table))

    def forward(self, pos):
        return self.table[: pos.shape[0]]       # pos is arange(T): the first T rows


class GPT(nn.Module):
    """``forward(idx [B, T] int64, targets [B, T] int64 or None) -> (logits, loss)``.

    With targets: logits ``[B, T, vocab_size]`` and the mean cross-entropy over all B*T positions.
    Without: logits ``[B, 1, vocab_size]`` for the last position only (all generation needs) and
    loss None. Raises ``ValueError`` if T > block_size.
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        if config.position not in ("learned", "sinusoidal"):
            raise ValueError(f"position must be 'learned' or 'sinusoidal', got {config.position!r}")
        wpe = (nn.Embedding(config.block_size, config.n_embd) if config.position == "learned"
               else SinusoidalPositions(config.block_size, config.n_embd))
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=wpe,
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying (Press & Wolf 2017): one [vocab, C] matrix reads tokens in and scores them out
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        # GPT-2's scaled init: each residual branch's last projection gets std 0.02 / sqrt(2 n_layer),
        # so the variance the 2 n_layer branches add to the residual stream does not grow with depth
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        """nanoGPT's init: Linear and Embedding weights N(0, 0.02), Linear biases 0."""
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def get_num_params(self, non_embedding=True):
        """Parameter count; without the position table by default (as nanoGPT; wte counts once,
        as lm_head's weight)."""
        n = sum(p.numel() for p in self.parameters())
        if non_embedding and self.config.position == "learned":
            n -= self.transformer.wpe.weight.numel()
        return n

    def forward(self, idx, targets=None):
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"cannot forward a sequence of length {T}: block_size is {self.config.block_size}")
        pos = arange(0, T, dtype=idx.dtype, device=idx.device)                 # [T]
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))  # [B, T, C]
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, -1:, :]), None                            # [B, 1, vocab]
        logits = self.lm_head(x)                                                # [B, T, vocab]
        loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        """AdamW with two groups: matrices (Linear weights, embeddings) decay by ``weight_decay``;
        vectors (biases, LayerNorm gains) do not, as nanoGPT and GPT-2."""
        params = list(self.parameters())
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return AdamW(groups, lr=learning_rate, betas=betas)

    @no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        """``idx [B, T]`` followed by ``max_new_tokens`` sampled tokens: ``[B, T + max_new_tokens]``.

        Each step feeds the last ``block_size`` tokens, divides the last logits by ``temperature``,
        keeps the ``top_k`` largest (the others get probability 0) and draws one token from the
        softmax with ``multinomial`` (on ``generator`` if given). Call ``model.eval()`` first to
        turn dropout off.
        """
        for _ in range(max_new_tokens):
            context = idx if idx.shape[1] <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(context)
            logits = logits[:, -1, :] / temperature                            # [B, vocab]
            if top_k is not None:
                # >>> exercise 07.9: top-k filtering before sampling
                # hint: the k-th largest logit of each row (topk, at most vocab_size of them) is the threshold
                # hint: logits below it become -inf (masked_fill), so softmax gives them probability 0
                kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1)[0][:, -1:]  # [B, 1]
                logits = logits.masked_fill(logits < kth, float("-inf"))
                # <<< exercise
            probs = F.softmax(logits, dim=-1)
            idx = cat((idx, multinomial(probs, 1, generator=generator)), dim=1)
        return idx


def warmup_cosine(optimizer, warmup_iters, max_iters, min_lr):
    """nanoGPT's learning-rate schedule as a scheduler (call ``step()`` after each optimizer step):
    linear warmup from lr / (warmup_iters + 1) to lr over ``warmup_iters`` steps, then half a
    cosine down to ``min_lr`` at ``max_iters``. Every group must have the same base lr."""
    lr = optimizer.param_groups[0]["lr"]
    if not 0 < min_lr <= lr:
        raise ValueError(f"min_lr must be in (0, lr = {lr}], got {min_lr}")
    warmup = LinearLR(optimizer, start_factor=1.0 / (warmup_iters + 1), end_factor=1.0, total_iters=warmup_iters)
    decay = CosineAnnealingLR(optimizer, T_max=max_iters - warmup_iters, eta_min=min_lr)
    return SequentialLR(optimizer, [warmup, decay], milestones=[warmup_iters])
