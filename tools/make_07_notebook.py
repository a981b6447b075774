"""Generate phase 07's notebook: python tools/make_07_notebook.py [OUT.ipynb]

Default OUT: phases/07_transformer/07_transformer.ipynb (without outputs, as the other phases'
notebooks are committed). Then run ``python tools/sync_phases.py``. The notebook has a checkpoint
cell before each section that uses one of phase 07's exercises (07.1-07.9, graded by
tests/exercises/test_phase_07.py); run it in quick mode with
``papermill -p QUICK True phases/07_transformer/07_transformer.ipynb out.ipynb --cwd phases/07_transformer``.
"""
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

cells = []


def md(text):
    cells.append(new_markdown_cell(text.strip("\n")))


def code(text, tags=None):
    cell = new_code_cell(text.strip("\n"))
    cell.metadata["tags"] = tags or []
    cells.append(cell)


def exercises(text, *ids, note=""):
    """The "your exercises" paragraph (where each lives, what to write), then the checkpoint cell."""
    md(text)
    comment = f"   # {note}" if note else ""
    code(f'''from minitorch.utils.exercises import checkpoint

# your exercises for this section: a learner's workspace stops here until they are written
# (minitorch-course check 07 grades them); in this folder they are the reference
checkpoint({", ".join(f'"{i}"' for i in ids)}){comment}''')


md(r"""
# Phase 07 — The transformer: a character-level GPT on Tiny Shakespeare

Phase 06 classified images. Now the network **writes**: given the characters so far, it predicts
the next one, and sampling that prediction again and again produces text. The model is a **GPT**
(Radford et al. 2019), the decoder-only transformer of Vaswani et al. (2017), laid out exactly as
Karpathy's nanoGPT so that a PyTorch state_dict maps onto ours name for name. In this phase you
will build

* **7a — the data:** Tiny Shakespeare (1.1M characters), a character tokenizer, random windows;
* **7b — embeddings:** a lookup table that is secretly a one-hot matrix product;
* **7c — LayerNorm** and **7d — GELU**, the normalization and the nonlinearity of every block;
* **7e — attention:** causal self-attention, the mask, and the *online softmax* that makes
* **7f — FlashAttention** possible: attention without ever writing the T×T matrix to memory,
  and **7f+** the same algorithm on tensor cores in bfloat16, optimized step by step;
  **7f′** — attention with dropout: the softmax, mask and dropout fused into one kernel;
* **7g — the GPT**, **7h — training** the seed config, **7i — sampling**, **7j — a trained head's
  attention map**, **7k — where the time goes**, **the race** against PyTorch, and **nanoGPT's
  configuration** trained for 5000 steps on an H100, with a kernel-by-kernel profile of its step.
""")

code(r'''
# "auto" (cuda if a GPU is usable), "cuda" or "cpu"
DEVICE = "auto"
# None: read MINITORCH_QUICK from the environment (CI sets it); True: small sizes
QUICK = None
# minitorch.manual_seed for the initial weights, and the seed of the batches
SEED = 1337
# the seed config: layers, heads, embedding width, context length (characters)
N_LAYER, N_HEAD, N_EMBD, BLOCK_SIZE = 2, 4, 64, 64
# dropout after embeddings, attention and MLP (0: the race compares identical losses)
DROPOUT = 0.0
# windows per training step
BATCH_SIZE = 32
# optimizer steps; evaluate every EVAL_INTERVAL steps on EVAL_ITERS batches per split
MAX_ITERS, EVAL_INTERVAL, EVAL_ITERS = 1000, 100, 20
# AdamW and nanoGPT's schedule: warmup to LR, cosine down to MIN_LR at MAX_ITERS
LR, MIN_LR, WARMUP_ITERS, BETAS, WEIGHT_DECAY, GRAD_CLIP = 1e-3, 1e-4, 100, (0.9, 0.99), 0.1, 1.0
# characters to generate after training
SAMPLE_CHARS = 200
# training steps per timed run of the race, and timed runs per side
RACE_STEPS, RACE_REPEATS = 50, 3
# None: race.py decides: saved in the git-ignored out/results, not in quick/CI runs
SAVE_RESULTS = None
''', tags=["parameters"])

code(r'''
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path.cwd()))   # this phase's own snapshot of minitorch comes first
import time

import numpy as np
import matplotlib.pyplot as plt

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.data.shakespeare import TinyShakespeare
from minitorch.models.gpt import GPT, GPTConfig, warmup_cosine
from minitorch.utils.notebook import md_table, show_markdown, start
from minitorch.utils.notebook import progress as tqdm

session = start(DEVICE, QUICK)
DEVICE, QUICK = session.device, session.quick
if QUICK:
    N_EMBD, BLOCK_SIZE, BATCH_SIZE = 32, 32, 8
    MAX_ITERS, EVAL_INTERVAL, EVAL_ITERS, WARMUP_ITERS = 20, 10, 2, 2
    SAMPLE_CHARS, RACE_STEPS, RACE_REPEATS = 50, 2, 1

import torch                                   # the reference in 7b-7e and the opponent in the race
torch.backends.cuda.matmul.allow_tf32 = False  # fp32 on both sides
torch.backends.cudnn.allow_tf32 = False
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7a — The data

**Tiny Shakespeare**: 1.1 million characters of speeches from ten plays (Coriolanus first), in the
layout of Karpathy's char-rnn corpus: a `Speaker:` line, the speech, a blank line. It is cut from
Project Gutenberg's public-domain texts by `tools/make_tiny_shakespeare.py`; `data/shakespeare/README.md`
says how, and why it is close to but not byte-identical with char-rnn's file.

A **character tokenizer** numbers the distinct characters in sorted order: the vocabulary is tiny
(71 tokens), every string of those characters can be encoded, and the model must learn spelling
itself. The first 90% of the text trains, the last 10% validates.
""")

code(r'''
data = TinyShakespeare()
tok = data.tokenizer
text = tok.decode(np.concatenate([data.train, data.val]))
print(f"{len(text):,} characters, {text.count(chr(10)):,} lines, vocabulary of {tok.vocab_size}:")
print(repr("".join(tok.itos)))
print(f"train {len(data.train):,} tokens, val {len(data.val):,} tokens\n")
print(text[:300])
''')

code(r'''
ids = tok.encode("To be, or not to be")
print(ids, "->", repr(tok.decode(ids)))
try:
    tok.encode("Ça ira")
except ValueError as e:
    print("ValueError:", e)
''')

md(r"""
**Batches.** A training example is a window of `BLOCK_SIZE + 1` characters at a random place:
the model reads the first `BLOCK_SIZE` (`x`) and must predict, at every position, the next
character (`y`, the same window shifted by one). One window therefore holds `BLOCK_SIZE` examples,
each with a different amount of context — which is why the attention must be **causal**: position
`t` may not look at `t + 1`, the answer.
""")

code(r'''
gen = minitorch.Generator().manual_seed(SEED)
x, y = data.get_batch("train", 4, 24, generator=gen, device=DEVICE)
print(f"x {tuple(x.shape)} {x.dtype} on {x.device}, y {tuple(y.shape)}")
for row_x, row_y in zip(x.cpu().numpy(), y.cpu().numpy()):
    print(f"x {tok.decode(row_x)!r:30}  y {tok.decode(row_y)!r}")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7b — Embeddings

A token id is a category, not a quantity: id 40 is not "twice" id 20. `nn.Embedding(V, C)` holds a
learned vector of `C` numbers per token, a `[V, C]` table, and looks rows up: `wte(idx)[b, t] =
W[idx[b, t]]`. That lookup is the product of a **one-hot** matrix with the table,
`one_hot(idx, V) @ W`, without multiplying by all those zeros; its gradient adds each upstream row
into the row of its token (a token seen twice gets two contributions).

The GPT adds a second table indexed by **position** (`wpe`, `[BLOCK_SIZE, C]`): attention by
itself does not know order, so each position gets its own learned vector. (`GPTConfig(position=
"sinusoidal")` uses Vaswani et al.'s fixed sines instead: below, after the lookup.)
""")

exercises(r"""
**Exercise 07.1 — the embedding's gradient** (`minitorch/native/cpu.py`, function
`embedding_backward`). The forward is a gather that already exists (`take`, phase 04). Write its
backward on the cpu: given the upstream gradient `grad [count, D]` (one row per looked-up position)
and the indices `index [count]`, return `dweight [num_weights, D]` whose row `v` is the **sum** of the
rows of `grad` at the positions where `index == v`, and 0 for tokens never seen and for row
`padding_idx`. Careful: `dweight[index] += grad` keeps only one of the rows of a repeated index
(NumPy's fancy assignment does not accumulate); `np.add.at` does. On cuda the same sum is an
`atomicAdd` per element (`index.cu`), or, under `minitorch.use_deterministic_algorithms(True)`, a sort
of the indices and a fixed-order sum (`embedding.cu`).
""", "07.1")

code(r'''
V, C = tok.vocab_size, 8
emb = nn.Embedding(V, C).to(DEVICE)
idx = minitorch.tensor([[5, 9, 5]], device=DEVICE)
looked_up = emb(idx)
as_matmul = F.one_hot(idx, V).float() @ emb.weight
print("lookup == one_hot @ W:", np.allclose(looked_up.detach().cpu().numpy(), as_matmul.detach().cpu().numpy()))
looked_up.sum().backward()
grad_rows = emb.weight.grad.cpu().numpy().sum(axis=1) / C
print("gradient rows (token: times seen):", {i: float(g) for i, g in enumerate(grad_rows) if g})
''')

md(r"""
**Sinusoidal positions, the option.** Vaswani et al. (2017, section 3.5) gave position $p$ the fixed
vector $PE_{p,2i} = \sin(p / 10000^{2i/C})$, $PE_{p,2i+1} = \cos(p / 10000^{2i/C})$: each pair of
features turns at its own frequency, from one turn every $2\pi$ positions down to one every
$2\pi \cdot 10000$. Nothing is learned, and $PE_{p+k}$ is a rotation of $PE_p$ that depends on $k$ only,
which makes relative offsets easy to read. `GPTConfig(position="sinusoidal")` puts this table
(`SinusoidalPositions`, a buffer) where the learned `wpe` was; GPT-2 and nanoGPT learn theirs.
""")

code(r'''
from minitorch.models.gpt import SinusoidalPositions

table = SinusoidalPositions(BLOCK_SIZE, N_EMBD)(minitorch.arange(BLOCK_SIZE)).numpy()
fig, axes = plt.subplots(1, 2, figsize=(10, 3), layout="constrained")
im = axes[0].imshow(table.T, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
axes[0].set(xlabel="position p", ylabel="feature", title=f"sinusoidal position table [{BLOCK_SIZE}, {N_EMBD}]")
fig.colorbar(im, ax=axes[0])
for f in (0, 2, 8, 16):
    axes[1].plot(table[:, f], label=f"feature {f}")
axes[1].set(xlabel="position p", title="a few features: ever slower sines"); axes[1].legend(fontsize=7)
similar = table @ table.T
print(f"the dot product of two positions depends on their distance only: <PE_5, PE_9> = {similar[5, 9]:.4f}, "
      f"<PE_20, PE_24> = {similar[20, 24]:.4f}")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7c — LayerNorm

Each token's vector is normalized on its own (Ba, Kiros and Hinton 2016): subtract its mean over the
`C` features, divide by its standard deviation, then scale and shift by learned `weight` and `bias`:

$$\mathrm{LN}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \odot \gamma + \beta,
\qquad \mu = \tfrac1C\textstyle\sum_c x_c,\quad \sigma^2 = \tfrac1C\textstyle\sum_c (x_c - \mu)^2$$

Unlike BatchNorm (phase 06) nothing depends on the other examples of the batch: training and
inference compute the same thing, and there are no running statistics. GPT-2 puts it **before**
each sublayer (pre-LN): `x + attn(ln_1(x))`, so the residual stream itself is never normalized.

**Backward.** With $\hat x = (x - \mu)\,r$, $r = 1/\sqrt{\sigma^2+\epsilon}$, and $g = \frac{\partial L}{\partial y}\odot\gamma$,
differentiating through $\mu$ and $\sigma^2$ (both depend on every $x_c$ of the row) gives

$$\frac{\partial L}{\partial x} = r\left(g - \overline{g} - \hat x\;\overline{g\,\hat x}\right),
\qquad \frac{\partial L}{\partial \gamma} = \sum_{\text{rows}} \frac{\partial L}{\partial y}\odot\hat x,
\qquad \frac{\partial L}{\partial \beta} = \sum_{\text{rows}} \frac{\partial L}{\partial y}$$

where the bars are means over the row: two row reductions, then one elementwise pass. The forward
saves $\mu$ and $r$ per row ([rows] each) so that the backward need not recompute them.

**One pass on the GPU.** `layernorm.cu` gives each row a team of threads (a warp for rows up to
1024). Each thread reads its share of the row once and keeps **Welford's** running count, mean and
$M_2 = \sum (x - \mu)^2$ (phase 06's batch norm merged such triples; here each thread also builds
its own, one value at a time); the team then merges the triples with shuffles. Adding a value $v$:

$$n \leftarrow n + 1,\qquad \delta = v - \mu,\qquad \mu \leftarrow \mu + \delta / n,\qquad M_2 \leftarrow M_2 + \delta\,(v - \mu_{\text{new}})$$

No $\sum x^2 - n\mu^2$: for a row around 1000 with a spread of 3, that difference of two numbers
near $10^6 n$ would lose the variance to float32 rounding. A row that fits is read once, into
registers, and the backward computes dx and its share of dγ, dβ in one pass too: in nanoGPT's training step
(rows of 384, at the end of this notebook) a call takes 16.5 µs forward and 37 µs backward on the
H100, PyTorch's 35 and 103 (`benchmarks/results/logs/07-nanogpt-profile-per-kernel-after.log`).
""")

exercises(r"""
**Exercise 07.2 — LayerNorm forward** (`minitorch/native/cpu.py`, `layer_norm`). For a contiguous
`x [rows, n]`, return `(y, mean, rstd)`: per row the mean and the biased variance (divide by n),
`rstd = 1 / sqrt(var + eps)`, `y = (x - mean) * rstd * weight + bias` (weight and bias may be
None). Compute in float64 for float64 input and float32 otherwise (`_acc`), return `y` in x's
dtype and `mean`, `rstd` in the computing dtype.

**Exercise 07.3 — Welford's update in the kernel** (`minitorch/cuda/layernorm.cu`, `push`, a
`__device__` function): add one value `v` to a running `Welford<A>` triple `w` (`n`, `mean`, `m2`)
with the update above. Every thread of a row's team calls it once per element it reads (graded on
a GPU only; on the cpu the kernel does not run).

**Exercise 07.4 — LayerNorm backward** (`minitorch/native/cpu.py`, `layer_norm_backward`): from
`grad`, `x` and the saved `mean`, `rstd`, return `(dx, dweight, dbias)` with the formulas above
(`dweight` and `dbias` only when `weight` is given; `dbias` only when `bias_grad`).
""", "07.2", "07.3", "07.4", note="07.3: the kernel nn.LayerNorm runs on cuda")

code(r'''
xs = np.random.default_rng(SEED).normal(3.0, 5.0, (2, 5, 64)).astype(np.float32)
ln, ln_t = nn.LayerNorm(64).to(DEVICE), torch.nn.LayerNorm(64)
ours = ln(minitorch.tensor(xs, device=DEVICE)).detach().cpu().numpy()
theirs = ln_t(torch.from_numpy(xs)).detach().numpy()
print(f"per-token mean after LN: {np.abs(ours.mean(-1)).max():.1e}, variance: {ours.var(-1).mean():.4f}")
print(f"max |ours - torch| = {np.abs(ours - theirs).max():.1e}")

# the backward: dx, dweight, dbias against PyTorch for one random upstream gradient
g = np.random.default_rng(SEED + 1).standard_normal(xs.shape).astype(np.float32)
x_ours = minitorch.tensor(xs, device=DEVICE, requires_grad=True)
x_theirs = torch.tensor(xs, requires_grad=True)
ln(x_ours).backward(minitorch.tensor(g, device=DEVICE))
ln_t(x_theirs).backward(torch.from_numpy(g))
for name, a, b in (("dx", x_ours.grad, x_theirs.grad), ("dweight", ln.weight.grad, ln_t.weight.grad),
                   ("dbias", ln.bias.grad, ln_t.bias.grad)):
    print(f"{name:8s} max |ours - torch| = {np.abs(a.cpu().numpy() - b.numpy()).max():.1e}")
''')

md(r"""
On `cuda` the statistics come from the kernel's `push` (your 07.3), called once per element by each
thread of a row's team, and merged across the team with Chan et al.'s formula (`merge`):
""")

code(r'''
from minitorch.utils.notebook import show_source

layernorm_cu = pathlib.Path(minitorch.__file__).parent / "cuda" / "layernorm.cu"
display(show_source(layernorm_cu, r"^// Welford's update", r"^}$"))
show_source(layernorm_cu, r"Welford<A> st = ", r"team::share\(mu, rs\)")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7d — GELU

The MLP of each block uses the **Gaussian Error Linear Unit** (Hendrycks and Gimpel 2016),
$\mathrm{GELU}(x) = x\,\Phi(x) = \tfrac{x}{2}\left(1 + \operatorname{erf}(x/\sqrt2)\right)$: like ReLU
for large |x|, but smooth at 0 and slightly negative just below it. GPT-2 used a tanh approximation
of it; `nn.GELU()` is the exact erf form (`approximate="tanh"` gives the approximation).

Its derivative, by the product rule with $\Phi' = \varphi$ (the standard normal density
$\varphi(x) = e^{-x^2/2}/\sqrt{2\pi}$):

$$\mathrm{GELU}'(x) = \Phi(x) + x\,\varphi(x)$$

which is 0.5 at 0, dips below 0 for $x < -0.75$ (to about −0.13 at $x = -\sqrt2$), and tends to
ReLU's 0 and 1 away from 0.
""")

exercises(r"""
**Exercise 07.5 — GELU's derivative** (`minitorch/native/cpu.py`, `_gelu_grad`, the `op == "gelu"`
branch): return `grad * (Phi(x) + x * phi(x))` for the erf form, with `Phi(x) = 0.5 (1 + erf(x /
sqrt 2))` (`_erf` is there) and `phi` the density above. The tanh form below it is given. On cuda
the same formula is one line of `elementwise.cu`.
""", "07.5")

code(r'''
grid = np.linspace(-4, 4, 401, dtype=np.float32)
gelu = nn.GELU()(minitorch.tensor(grid, device=DEVICE)).cpu().numpy()
print(f"max |ours - torch| = {np.abs(gelu - torch.nn.functional.gelu(torch.from_numpy(grid)).numpy()).max():.1e}")
fig, ax = plt.subplots(figsize=(5, 3), layout="constrained")
ax.plot(grid, np.maximum(grid, 0), label="ReLU", color="grey", ls="--")
ax.plot(grid, gelu, label="GELU (erf)")
xg = minitorch.tensor(grid, device=DEVICE, requires_grad=True)
nn.GELU()(xg).sum().backward()
tg = torch.tensor(grid, requires_grad=True)
torch.nn.functional.gelu(tg).sum().backward()
print(f"derivative: max |ours - torch| = {np.abs(xg.grad.cpu().numpy() - tg.grad.numpy()).max():.1e}; "
      f"GELU'(0) = {xg.grad.cpu().numpy()[200]:.3f}, its minimum {xg.grad.cpu().numpy().min():.3f} at x = {grid[xg.grad.cpu().numpy().argmin()]:.2f}")
ax.plot(grid, xg.grad.cpu().numpy(), label="GELU' (autograd)", color="C1", lw=1)
ax.set(xlabel="x", title="GELU against ReLU"); ax.legend(); ax.grid(alpha=0.3);
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7e — Attention

Each position emits a **query** $q$, a **key** $k$ and a **value** $v$ (one `Linear`, `c_attn`, makes
all three). Position $t$ scores every position $s$ by $q_t\cdot k_s/\sqrt{d}$, turns the scores into
weights with a softmax, and outputs the weighted mean of the values:

$$\mathrm{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt d} + M\Big)\,V,
\qquad M_{ts} = \begin{cases}0 & s \le t\\ -\infty & s > t\end{cases}$$

The **causal mask** $M$ sets the future's scores to $-\infty$, so their weights are exactly 0.
`F.scaled_dot_product_attention(q, k, v, is_causal=True)` does all of it on `[B, heads, T, d]`;
below, the decomposition — matmul, mask, softmax, matmul — against PyTorch's.
""")

exercises(r"""
**Exercise 07.6 — attention as matmul, mask, softmax, matmul** (`minitorch/ops/attention.py`,
`_math_attention`): with Tensor ops (so that autograd records every step and the backward comes
for free), compute `scores = query @ key.transpose(-2, -1) * scale` ([..., L, S]); when
`is_causal`, fill the scores above the diagonal with `-inf` (`masked_fill` with the negation of a
`tril` of ones [L, S]: key j is visible to query i iff j <= i); a **bool** `attn_mask` is True where
attention is *allowed* (fill the others with `-inf`), a float one is added to the scores; softmax
over the last dimension; `dropout(weights, dropout_p, True)` when `dropout_p > 0`; then `@ value`.
It is the path every cpu tensor takes. On cuda, where FlashAttention does not apply (dropout, an
explicit mask, another head size), the same decomposition runs with its middle — scale, mask,
softmax, dropout — fused into one kernel each way (`attention_softmax.cu`, section 7f′ below);
`minitorch.backends.cuda.enable_fused_softmax_sdp(False)` sends cuda through your step-by-step
version instead, as the demo below does (d = 16 is not a FlashAttention head size either).
""", "07.6")

code(r'''
rng = np.random.default_rng(SEED)
T, d = 12, 16
q, k, v = (rng.standard_normal((1, 1, T, d)).astype(np.float32) for _ in range(3))
scores = q[0, 0] @ k[0, 0].T / math.sqrt(d)
mask = np.tril(np.ones((T, T), dtype=bool))
weights = np.exp(np.where(mask, scores, -np.inf) - np.where(mask, scores, -np.inf).max(-1, keepdims=True))
weights /= weights.sum(-1, keepdims=True)
minitorch.backends.cuda.enable_fused_softmax_sdp(False)     # on cuda too: your 07.6, step by step
try:
    ours = F.scaled_dot_product_attention(*(minitorch.tensor(a, device=DEVICE) for a in (q, k, v)), is_causal=True)
finally:
    minitorch.backends.cuda.enable_fused_softmax_sdp(True)
theirs = torch.nn.functional.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=True)
print(f"max |ours - torch| = {np.abs(ours.cpu().numpy() - theirs.numpy()).max():.1e}; "
      f"decomposition vs torch: {np.abs(weights @ v[0, 0] - theirs.numpy()[0, 0]).max():.1e}")
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), layout="constrained")
axes[0].imshow(mask, cmap="Greys"); axes[0].set_title("causal mask: row t sees columns s <= t")
im = axes[1].imshow(weights, cmap="viridis"); axes[1].set_title("softmax weights (each row sums to 1)")
for ax in axes:
    ax.set(xlabel="key position s", ylabel="query position t")
fig.colorbar(im, ax=axes[1]);
''')

md(r"""
## The online softmax

Written as above, attention stores the whole `T×T` weight matrix: for nanoGPT's T = 256 and 6
heads × 64 windows that is 25M floats per layer, written and read back from GPU memory. The way
out (Milakov and Gimelshein 2018; used by FlashAttention) is to compute the softmax of a row **in
pieces**, keeping only a running maximum $m$ and a running sum $\ell$ of $e^{x - m}$: when a new
block raises the maximum to $m'$, the old sum is rescaled by $e^{m - m'}$. The same rescaling
applies to the running weighted sum of values, so the output comes out in one pass over K and V.
""")

code(r'''
row = rng.normal(0, 3, 32).astype(np.float64)
block = 8
m, l, trace = -np.inf, 0.0, []
for start_ in range(0, len(row), block):
    piece = row[start_:start_ + block]
    m_new = max(m, piece.max())
    l = l * math.exp(m - m_new) + np.exp(piece - m_new).sum()     # rescale the old sum, add the new block
    m = m_new
    trace.append((start_ + len(piece), m, l))
online = np.exp(row - m) / l
print(f"online softmax == softmax: max difference {np.abs(online - np.exp(row - row.max()) / np.exp(row - row.max()).sum()).max():.1e}")
fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
ax.plot(row, ".", color="grey", label="scores x")
ends, ms, ls = zip(*trace)
ax.step(ends, ms, where="pre", label="running max m")
ax2 = ax.twinx(); ax2.step(ends, ls, where="pre", color="C1", label="running sum l"); ax2.set_ylabel("l")
for e in ends[:-1]:
    ax.axvline(e - 0.5, color="k", lw=0.5, alpha=0.3)
ax.set(xlabel="position in the row (blocks of 8)", title="one pass, one block at a time"); ax.legend(loc="upper left");
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7f — FlashAttention

FlashAttention (Dao et al. 2022; FlashAttention-2, Dao 2023) is the online softmax turned into a
kernel: `minitorch/cuda/attention/01_flash_fp32.cu`, float32 on CUDA cores, the first rung of the
attention ladder. A block of 256 threads owns **64 query rows** of one (batch, head) and walks
over K and V in **tiles of 64 keys** staged in shared memory:

1. `S = Q Kᵀ` for the tile: each thread computes 4 × 4 scores from shared memory (rows `ty + 16i`,
   keys `tx + 16j`: the 16 threads of a half-warp read 16 different banks);
2. **the online-softmax update** of each row (your exercise): masked keys to −∞, the new running
   maximum over the tile (a half-warp shuffle), the rescale factor α = 2^(m − m′) for the old sum and
   the old output, the probabilities `p` written to shared memory, the running sum `l`;
3. `O += P V` for the tile, from the same shared buffer that held K (V replaces it);
4. at the end `O / l`, and the log-sum-exp `m + log l` per row, saved for the backward.

Scores are scaled by `scale · log₂e` so that `exp2f` (one instruction) replaces `expf`. With
`is_causal`, tiles entirely above the diagonal are **skipped**, not masked: half the work. The
backward (`flash_bwd_*`) recomputes P from the saved log-sum-exp instead of storing it: memory
O(L) per row instead of O(L·S). The T×T matrix never exists.

On `cuda`, `F.scaled_dot_product_attention` takes this algorithm for float32 without dropout or an
explicit mask, head dims 32, 64 and 128: rung 1b below (the same kernel register-tiled) when q, k and
v are 16-byte aligned, this rung otherwise (`minitorch.backends.cuda.enable_flash_sdp(False)` turns
both off). Every other case takes the decomposition: on cuda with its middle fused (7f′), on cpu
your 07.6. The check below compares the flash path with the decomposition on cuda (flash off).
""")

exercises(r"""
**Exercise 07.7 — the online-softmax update of one K/V tile** (`minitorch/cuda/attention/01_flash_fp32.cu`,
inside `flash_fwd`: the loop over a thread's 4 rows `i`, between the two `__syncthreads()` after the
scores). The thread holds scores `s[i][j]` of its rows `q = q0 + ty + 16 i` and keys `k = k0 + tx +
16 j`, and its rows' running `m[i]`, `l[i]` and outputs `acc[i][c]`. For each row: set masked scores
(`k >= S`, or `causal && k > q`) to `-inf` and the others to `s * scale2`; `m_new = max(m, the row's
max over the 16 threads: half_warp_max)`; `alpha = exp2f(m - m_new)` (subtract 0 instead while
`m_new` is still −∞, or −∞ − (−∞) makes NaN); write `p = exp2f(s - m_new)` to `Ps`; `l = l · alpha +
half_warp_sum(sum of p)`; `m = m_new`; multiply `acc` by `alpha`. Graded on a GPU
(`flash_attention` against a float64 softmax on ragged lengths); on the cpu it does not run.
""", "07.7", note="a kernel: it stops a workspace only where a GPU is usable")

code(r'''
flash_cu = pathlib.Path(minitorch.__file__).parent / "cuda" / "attention" / "01_flash_fp32.cu"
show_source(flash_cu, r"V replaces K in the same buffer", r"acc\[i\]\[c\] \*= alpha")
''')

code(r'''
if session.needs_gpu("FlashAttention against the decomposition"):
    rng = np.random.default_rng(SEED)
    rows = []
    for B, H, T, d, causal in ((2, 4, 65, 32, True), (1, 6, 257, 64, True), (2, 2, 100, 128, False)):
        q, k, v = (minitorch.tensor(rng.standard_normal((B, H, T, d)).astype(np.float32), device="cuda", requires_grad=True)
                   for _ in range(3))
        flash = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        flash.sum().backward()
        flash_grads = [t.grad.cpu().numpy() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        minitorch.backends.cuda.enable_flash_sdp(False)
        try:
            math_path = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            math_path.sum().backward()
        finally:
            minitorch.backends.cuda.enable_flash_sdp(True)
        dgrad = max(np.abs(a - t.grad.cpu().numpy()).max() for a, t in zip(flash_grads, (q, k, v)))
        rows.append([f"[{B}, {H}, {T}, {d}]", causal, f"{np.abs(flash.detach().cpu().numpy() - math_path.detach().cpu().numpy()).max():.1e}",
                     f"{dgrad:.1e}"])
    show_markdown(md_table(rows, ["q, k, v [B, H, T, d]", "causal", "output: max abs difference", "dq, dk, dv: max abs difference"]))
''')

md(r"""
## Rung 1b: the float32 kernel written like a GEMM

Rung 1 is correct but slow: each thread's 4 × 4 tile of scores loads 8 numbers from shared memory
for 16 FMAs, so the **shared-memory loads**, not the arithmetic, set its pace (phase 05's GEMM
ladder met the same wall at its early rungs). `minitorch/cuda/attention/01b_flash_fp32_tiled.cu`
keeps the algorithm, the arguments and the outputs, and applies the GEMM's remedies:

* **register tiling**: a thread computes an **8 × 4** tile of S (rows `ty + 16 i`, keys `tx + 16 j`)
  with operands loaded as `float4` along d: 12 loads per 128 FMAs instead of 8 per 16;
* **bigger tiles**: 128 query rows per block (Q stays in shared memory), 64 keys per K/V tile;
* **`cp.async`** 16-byte copies straight from global to shared memory, pipelined as
  FlashAttention-2 does: V of tile j travels while `S = Q Kⱼᵀ` is computed, K of tile j + 1 while
  `O += P Vⱼ` is;
* the exponential as `exp2f`, O rescaled once per tile, masks evaluated only on tiles that cross the
  diagonal or the end of the keys, and with `is_causal` the blocks of the **last** query rows (the
  most tiles) launched first so that the short ones fill the tail of the grid.

The backward is register-tiled the same way. `F.scaled_dot_product_attention` runs rung 1b for
float32 whenever q, k and v are 16-byte aligned (it copies 16 bytes at a time), rung 1 otherwise.
""")

code(r'''
tiled_cu = pathlib.Path(minitorch.__file__).parent / "cuda" / "attention" / "01b_flash_fp32_tiled.cu"
display(show_source(tiled_cu, r"^// Threads and data\. A block of 256 threads", r"32 distinct banks\.$"))

# which scores one thread computes in one K/V tile: rung 1 (64 x 64 tile, 4 x 4), rung 1b (128 x 64, 8 x 4)
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), layout="constrained", gridspec_kw={"width_ratios": [1, 1, 1.1]})
for ax, (title, rows, rm, rn) in zip(axes, (("rung 1: 64 rows x 64 keys", 64, 4, 4), ("rung 1b: 128 rows x 64 keys", 128, 8, 4))):
    owned = np.zeros((rows, 64))
    for thread, (ty, tx) in enumerate(((0, 0), (1, 0), (0, 1))):       # three neighbouring threads
        for i in range(rm):
            for j in range(rn):
                owned[ty + 16 * i, tx + 16 * j] = thread + 1
    ax.imshow(owned, cmap=plt.cm.colors.ListedColormap(["whitesmoke", "C0", "C1", "C2"]), aspect="auto", interpolation="nearest")
    ax.set(title=f"{title}\nthreads (0,0), (1,0), (0,1): {rm} x {rn} scores each", xlabel="key in the tile", ylabel="query row")
loads = {"rung 1 (4 x 4, scalars)": 8 / 16, "rung 1b (8 x 4, float4)": 12 / 128}
axes[2].bar(list(loads), list(loads.values()), color=["grey", "C0"])
for i, v in enumerate(loads.values()):
    axes[2].annotate(f"{v:.3f}", (i, v), ha="center", va="bottom")
axes[2].set(ylabel="shared-memory loads per FMA", title="S = Q K^T: loads per multiply-add"); axes[2].tick_params(axis="x", labelsize=8);
''')

md(r"""
`benchmarks/probe_flash_fp32.py` checked both rungs against float64 and PyTorch's math backend
(forward and gradients, head dims 64 and 128, causal or not), then timed them on the H100 against
PyTorch's SDPA (B = 4, H = 8; CUDA events, L2 flushed, median of 10; TF32 off on PyTorch's side).
The ratio columns divide rung 1b by `torch mem-efficient`, the only PyTorch backend that takes float32
besides the math one:
""")

code(r'''
def tflops(row, key):
    """TFLOP/s of one timed case of a benchmark row (None if it was not timed)."""
    return (row.get(key) or {}).get("TFLOPs")


from minitorch.utils.race import reference_dir

fp32_probe_files = sorted((reference_dir() / "probes").glob("probe_flash_fp32-*.json"))
fp32_probe = json.loads(fp32_probe_files[-1].read_text()) if fp32_probe_files else None
if fp32_probe is None:
    print("no benchmarks/results/probes/probe_flash_fp32-*.json: run python benchmarks/probe_flash_fp32.py on a GPU")
else:
    print(f"{fp32_probe_files[-1].name}: {fp32_probe['gpu']}, torch {fp32_probe['torch']}; B {fp32_probe['batch']}, "
          f"H {fp32_probe['heads']}; {fp32_probe['timing']}; TF32 {fp32_probe['tf32']}; "
          f"checks: {'ok' if all(c.get('ok') for c in fp32_probe['check'].values()) else 'FAILED'}")
    fp32_rows = sorted(fp32_probe["rows"], key=lambda r: (r["d"], r["causal"], r["L"]))
    # rung 1c (3xTF32, the next section) where the probe timed it; the ratio columns take the best of our rungs
    best = {p: [max(tflops(r, f"{p} {n}") or 0 for n in ("tiled", "3xtf32")) for r in fp32_rows] for p in ("fwd", "fwdbwd")}
    ratios = {p: [b / tflops(r, f"{p} torch_efficient") for b, r in zip(best[p], fp32_rows)] for p in ("fwd", "fwdbwd")}
    cell = lambda r, key: round(tflops(r, key), 1) if tflops(r, key) else "-"  # noqa: E731
    show_markdown(md_table(
        [[r["d"], r["causal"], r["L"]] + [cell(r, f"fwd {n}") for n in ("rung1", "tiled", "3xtf32", "torch_efficient", "torch_math")]
         + [f"{ratios['fwd'][i]:.2f}x"] + [cell(r, f"fwdbwd {n}") for n in ("rung1", "tiled", "3xtf32", "torch_efficient")]
         + [f"{ratios['fwdbwd'][i]:.2f}x"] for i, r in enumerate(fp32_rows)],
        ["d", "causal", "L", "fwd rung 1", "fwd rung 1b", "fwd rung 1c", "fwd torch mem-efficient", "fwd torch math",
         "fwd best / mem-eff", "fwd+bwd rung 1", "fwd+bwd rung 1b", "fwd+bwd rung 1c", "fwd+bwd torch mem-efficient",
         "fwd+bwd best / mem-eff"]))
    for d_ in (64, 128):
        f, b = ([x for x, r in zip(ratios[p], fp32_rows) if r["d"] == d_] for p in ("fwd", "fwdbwd"))
        print(f"d {d_}: our best rung / torch mem-efficient, forward {min(f):.2f}x to {max(f):.2f}x, "
              f"forward + backward {min(b):.2f}x to {max(b):.2f}x")
    fig, ax = plt.subplots(figsize=(11, 3.5), layout="constrained")
    x = np.arange(len(fp32_rows))
    ax.bar(x - 0.2, ratios["fwd"], 0.4, label="forward"); ax.bar(x + 0.2, ratios["fwdbwd"], 0.4, label="forward + backward")
    ax.axhline(1.0, color="k", lw=0.8); ax.annotate("target: 1.0x (issue 15)", (len(x) - 0.5, 1.0), ha="right", va="bottom", fontsize=8)
    ax.set_xticks(x, [f"d {r['d']}\nL {r['L']}" + ("\ncausal" if r["causal"] else "") for r in fp32_rows], fontsize=7)
    ax.set(ylabel="our best rung / torch mem-efficient", title=f"float32 attention, {fp32_probe['gpu']}"); ax.legend(); ax.grid(axis="y", alpha=0.3);
''')

md(r"""
Rung 1b is 1.6× to 1.9× rung 1 at the long lengths and passes PyTorch's memory-efficient kernel in
the forward at d = 64, but at d = 128, and in forward + backward everywhere, it stays behind. The
race is not quite like for like: PyTorch's memory-efficient kernel (CUTLASS's, from xFormers)
computes float32 products on the **tensor cores** even with TF32 "off". Its float32 GEMMs use
CUTLASS's `OpMultiplyAddFastF32`, "3xTF32", which is the next rung.

## Rung 1c: float32 on the tensor cores, 3xTF32

A TF32 tensor-core `mma` reads a float32 operand with 10 of its 23 mantissa bits, so one TF32
product is about 2⁻¹¹ off: a thousand times float32's rounding. The trick is to **split** every
operand into two TF32 numbers,

$$x = \text{big} + \text{small},\qquad \text{big} = \mathrm{tf32}(x),\qquad \text{small} = x - \text{big},$$

and multiply

$$a\,b \approx \text{big}_a\text{big}_b + \text{big}_a\text{small}_b + \text{small}_a\text{big}_b .$$

Each TF32 × TF32 product is exact in the float32 accumulator. The two cross terms carry the bits
that plain TF32 drops, and the fourth term, small·small, is at most 2⁻²² of the product: the size
of float32's own rounding of the sum it joins. So three `mma`s give float32-level accuracy. On
the H100 the tensor cores do TF32 about 7× faster than the CUDA cores do float32 FMAs (495 against
67 TFLOP/s), so three `mma`s still beat one FFMA. `minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu`
is rung 1b's algorithm, arguments and outputs (strided operands, dropout, the same O and
log-sum-exp, so either rung's backward takes either rung's forward) with the four products of the
forward and backward done this way. Its split, three instructions per operand element:
""")

code(r'''
f32c_cu = pathlib.Path(minitorch.__file__).parent / "cuda" / "attention" / "01c_flash_fp32_3xtf32.cu"
display(show_source(f32c_cu, r"^// x = big \+ small as the mma", r"^}$"))
show_source(f32c_cu, r"^// d \+= a b as 3xTF32", r"^}$")
''')

md(r"""
The accuracy is checked, not assumed: `tests/test_flash_3xtf32.py` requires rung 1c's error against
a float64 reference to stay within a small factor of rung 1b's FFMA (it is 2 to 4 times), and
checks that a 1xTF32 build of the same kernel (`-DTF32_TERMS=1`, one `mma` per product) **fails** that
test (it is hundreds of times off). The probe's table above has rung 1c's columns. `F.scaled_dot_product_attention`
runs rung 1c for float32 on sm_80 and newer, as PyTorch runs its 3xTF32 kernel there.

Rung 1c's backward is **one pass** over the key tiles (FlashAttention-2's Algorithm 2): a block owns
a tile of keys, walks the query tiles, and computes dV and dK in registers as rung 1b's dK/dV kernel
does — and with the dS tile it has anyway, it also adds its share dQ += dS K straight into dq with
float32 atomic adds. That is five products per pair of tiles instead of seven (rung 1b recomputes S
and P in a second kernel for dQ), and one launch fewer. Atomic adds arrive in any order, so dq's last
bits can change from run to run; under `minitorch.use_deterministic_algorithms(True)` the two-kernel
backward runs instead (bitwise repeatable, 15-20% slower). The bfloat16 backward of 7f+ makes the
same choice.
""")

md(r"""
The float32 path through `F.scaled_dot_product_attention`, from `benchmarks/bench_attention.py` on
the H100, L up to 8192 (TFLOP/s against PyTorch's SDPA backends: `torch_mem_efficient` is the one
that takes float32; `torch_flash` and cuDNN refuse it: "n/a"; "skipped": a path through the [L, L]
scores whose memory would pass the run's limit). The last column divides our flash path by the
fastest of PyTorch's backends. `ours flash` is whatever rung `F.scaled_dot_product_attention` ran on
the day of the sweep, printed above the table: a sweep older than rung 1c (2026-11-25) shows rung 1 or
1b, and the probe's table above is then the current one. The next rung, on the tensor cores in half
precision, is 7f+ below:
""")

code(r'''
import pandas as pd
from minitorch.utils.race import reference_dir

PATH_NAMES = {"ours_flash": "ours flash", "ours_decomposition": "ours decomposition", "torch_flash": "torch flash",
              "torch_mem_efficient": "torch mem-efficient", "torch_math": "torch math", "torch_cudnn": "cuDNN"}


def attention_sweeps(dtype):
    """[(path, result)] of the saved benchmarks/bench_attention.py runs in ``dtype``, by file name."""
    runs = [(path, json.loads(path.read_text())) for path in sorted(reference_dir().glob("bench_attention-*.json"))]
    return [(path, result) for path, result in runs if result.get("dtype", "float32") == dtype]


def sweep_table(result):
    """A DataFrame: a row per (d, causal, pass, L), a column of TFLOP/s per path ("n/a": the backend
    refused the case, "skipped": not run, see the file's "skipped"), and ours flash / the best of torch's."""
    def cell(entry):
        return round(entry["TFLOPs"], 1) if "TFLOPs" in entry else ("skipped" if "skipped" in entry else "n/a")

    rows = []
    for r in result["rows"]:
        paths = {name: entry for name, entry in r.items() if isinstance(entry, dict)}
        best_torch = max((e["TFLOPs"] for name, e in paths.items() if name.startswith("torch") and "TFLOPs" in e), default=None)
        ours = paths.get("ours_flash", {}).get("TFLOPs")
        rows.append({"d": r["d"], "causal": r["causal"], "pass": r["pass"], "L": r["L"],
                     **{PATH_NAMES.get(name, name): cell(e) for name, e in paths.items()},
                     "ours flash / best torch": f"{ours / best_torch:.2f}x" if ours and best_torch else "-"})
    return pd.DataFrame(rows).sort_values(["d", "causal", "pass", "L"], kind="stable")


def show_sweeps(dtype, command):
    sweeps = attention_sweeps(dtype)
    if not sweeps:
        show_markdown(f"*No saved {dtype} sweep (`benchmarks/results/bench_attention-*.json` of dtype {dtype}) yet: "
                      f"on a GPU, run `{command}`, then this cell again.*")
    for path, result in sweeps:
        env = result.get("env", {})
        print(f"{path.name}: {env.get('gpu_name')}, torch {env.get('torch_version')}, {result.get('date')}; "
              f"B {result.get('batch')}, H {result.get('heads')}; {result.get('timing')}")
        frame = sweep_table(result)
        show_markdown(md_table(frame.values.tolist(), list(frame.columns)))


show_sweeps("float32", "python benchmarks/bench_attention.py")
''')

md(r"""
**Memory.** The decomposition keeps [L, L] buffers per (batch, head): the scores, the softmax, and
in the backward their gradients, so its memory grows as L²; FlashAttention keeps q, k, v, the
output, the log-sum-exp and the gradients, all O(L). `benchmarks/bench_attention_memory.py`
measures the peak of one forward + backward on a GPU (B = 1, H = 8, d = 64, L up to 16384), each
library by its own allocator's counter (`minitorch.cuda.max_memory_allocated`,
`torch.cuda.max_memory_allocated`, less what was held before the inputs were made); the cell below
plots its saved run. On log-log axes a power law is a straight line
whose slope is the exponent: the dotted guides have slopes 1 and 2, and the table gives each line's
measured slope over its last three points.
""")

code(r'''
memory_files = sorted(reference_dir().glob("bench_attention_memory-*.json"))
if not memory_files:
    show_markdown("*No saved memory measurements (`benchmarks/results/bench_attention_memory-*.json`) yet: "
                  "on a GPU, run `python benchmarks/bench_attention_memory.py`, then this cell again.*")
else:
    memory = json.loads(memory_files[-1].read_text())
    env = memory["env"]
    print(f"{memory_files[-1].name}: {env['gpu_name']}, torch {env['torch_version']}, {memory['date']}; "
          f"B {memory['batch']}, H {memory['heads']}, d {memory['head_dim']}, causal {memory['causal']}")
    fig, ax = plt.subplots(figsize=(9, 6.5), layout="constrained")
    table = []
    for name, case in memory["cases"].items():
        rows = [r for r in memory["rows"] if r["case"] == name]
        done = [(r["L"], r["peak_bytes"] / 2**20) for r in rows if "peak_bytes" in r]
        not_run = [r["L"] for r in rows if "peak_bytes" not in r]
        label = f"{name} ({case['dtype']})" + (f", not run at L = {', '.join(map(str, not_run))}" if not_run else "")
        if done:
            ax.loglog(*zip(*done), "-" if case["library"] == "minitorch" else "--", marker="o", label=label)
        slope = None
        if len(done) >= 2:
            last = np.log(np.array(done[-3:]))
            slope = round(np.polyfit(last[:, 0], last[:, 1], 1)[0], 2)
        table.append([name, case["dtype"], case["path"], slope]
                     + [next((f"{r['peak_bytes'] / 2**20:.1f}" if "peak_bytes" in r else "skipped")
                             for r in rows if r["L"] == L) for L in memory["lengths"]])
    L = np.array(memory["lengths"], dtype=float)
    low = min((r["peak_bytes"] for r in memory["rows"] if "peak_bytes" in r), default=2**20) / 2**20
    for power, text in ((1, "∝ L (slope 1)"), (2, "∝ L² (slope 2)")):
        ax.loglog(L, low * (L / L[0]) ** power, ":", color="gray")
        ax.annotate(text, (L[-1], low * (L[-1] / L[0]) ** power), color="gray", ha="right", va="bottom")
    ax.axhline(memory["memory_limit_gb"] * 1e9 / 2**20, color="red", lw=0.8, alpha=0.5)
    ax.annotate(f"the run's limit for [L, L] paths ({memory['memory_limit_gb']:g} GB)",
                (L[-1], memory["memory_limit_gb"] * 1e9 / 2**20), color="red", ha="right", va="bottom", fontsize=8)
    ax.set_xticks(L, [str(int(x)) for x in L])
    ax.set(xlabel="sequence length L", ylabel="peak memory of forward + backward (MiB)",
           title=f"attention memory, B {memory['batch']}, H {memory['heads']}, d {memory['head_dim']}, {env['gpu_name']}")
    ax.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.12)); ax.grid(alpha=0.3, which="both")
    show_markdown(md_table(table, ["path", "dtype", "kind", "slope (last 3 points)"] + [f"L {x} (MiB)" for x in memory["lengths"]]))
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7f+ — FlashAttention on tensor cores

Rungs 1 and 1b computed every product on CUDA cores in float32. `minitorch/cuda/attention/02_flash_mma.cu`
is the same algorithm — online softmax over K/V tiles, log-sum-exp saved, a backward that recomputes
P — in **bfloat16 and float16 on the tensor cores** (`mma.sync` m16n8k16, as phase 05's half-precision
GEMM), FlashAttention-2's layout (Dao 2023): a block owns BQ query rows, each warp 16 of them (one
mma's M), and the warps never exchange anything. For each tile of BKV keys a warp computes its
16 × BKV scores `S = Q Kᵀ` in registers, runs the online softmax on them in float32, and multiplies
`P V` **with P straight from registers**: the accumulator layout of two 16 × 8 score tiles is exactly
the A operand of one 16 × 16 k-step, so P never touches shared memory. On `cuda`,
`F.scaled_dot_product_attention` takes it for bfloat16 and float16 under the same conditions as
the float32 rung.

As with the GEMM in phase 05, the kernel is walked as a **ladder**: each step is a compile-time
option of the same file (NVRTC `-DSWIZZLE=1`...), so each can be timed alone. `LADDER` lists them
in order, `TUNED` is what `scaled_dot_product_attention` runs:
""")

code(r'''
attention_py = pathlib.Path(minitorch.__file__).parent / "native" / "cuda" / "attention.py"
show_source(attention_py, r"^TUNED = ", r"^TILE_CHOICES = ", language="python")
''')

md(r"""
## Step 1: bank conflicts and the XOR swizzle

Shared memory has 32 **banks** of 4 bytes; a warp's access is served in one pass only if its
addresses fall in different banks. `ldmatrix`, which feeds the mma, reads an 8 × 8 matrix as
**8 rows of 16 bytes** (one 16-byte chunk per row, 4 banks each): the 8 chunks fill the 32 banks
only if they lie in 8 different *bank groups* (byte address / 16, mod 8). A K tile stored plainly
has rows of d = 128 bf16 = 256 bytes — a multiple of 128, so chunk q of **every** row sits in the
same bank group: the 8 reads queue one behind the other (an 8-way conflict). The **swizzle** stores
chunk q of row r at position q XOR (r mod 8): a permutation inside each row (nothing is wasted, no
padding), and the same chunk of 8 consecutive rows now lands in 8 different groups. The writes
(`cp.async`) and every `ldmatrix` address go through the same function, `Rows::at`:
""")

code(r'''
mma_cu = pathlib.Path(minitorch.__file__).parent / "cuda" / "attention" / "02_flash_mma.cu"
display(show_source(mma_cu, r"^// Element offset of chunk q", r"^};$"))

D_ = 128                                              # bf16 elements per row of a K tile (256 bytes)
r_, q_ = np.arange(8)[:, None], np.arange(8)[None, :]  # 8 consecutive rows, their 8 first chunks


def bank_group(element):                              # 2-byte elements -> which 16-byte group of banks
    return (2 * element // 16) % 8


layouts = {"plain: r·D + 8q": bank_group(r_ * D_ + 8 * q_),
           "swizzled: r·D + 8 (q XOR r mod 8)": bank_group(r_ * D_ + 8 * (q_ ^ (r_ & 7)))}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
for ax, (title, groups) in zip(axes, layouts.items()):
    ways = max(np.bincount(groups[:, c]).max() for c in range(8))   # ldmatrix reads one column of this
    ax.imshow(groups, cmap="tab10", vmin=0, vmax=9)
    for (i, j), g in np.ndenumerate(groups):
        ax.text(j, i, g, ha="center", va="center", color="white", fontsize=8)
    ax.set(xlabel="chunk q (16 bytes) of the row", ylabel="row r", title=f"{title}\n" + (f"{ways}-way conflict" if ways > 1 else "no conflict") + " per ldmatrix read")
fig.suptitle("bank group of each chunk (d = 128, bfloat16)");
''')

md(r"""
## Step 2: double buffering K and V

With one K/V buffer, each tile is *load, wait, compute*: while the copies of tile j + 1 travel from
global memory (hundreds of cycles), the tensor cores idle. With **two** buffers, the block issues
the asynchronous copies (`cp.async`, which go from global to shared memory without passing through
registers) of tile j + 1 **before** computing tile j, and waits only for tile j's group
(`cp_async_wait<1>`: all but the newest): the load latency hides behind the mmas. The price is
twice the shared memory for K and V.
""")

code(r'''
show_source(mma_cu, r"for \(int j = 0; j < ntiles; \+\+j\)", r"__syncthreads\(\);")
''')

md(r"""
## Step 3: the exponential as one FMA and one `ex2`

Each score costs an exponential: $p = e^{\text{scale}\,(s - m)}$. Since $e^x = 2^{x \log_2 e}$,

$$p = 2^{\,s\cdot(\text{scale}\log_2 e) \;-\; m\cdot(\text{scale}\log_2 e)}$$

and with `sl2 = scale · log₂e` a constant and `msub = m · sl2` computed **once per row per tile**,
each score is one fused multiply-add and one `exp2f` (the hardware's `MUFU.EX2`), where `expf`
compiles to a multiply, a subtraction and an `ex2` wrapped in range fixes. `EXP2_FMA` switches only
the exponential: the two other savings of this step are in every rung of this file, the baseline
included — the output is rescaled by α = e^{scale(m_old − m_new)} **once per K/V tile** (not once per
key), and the row sums `l` stay per-lane partial sums until the end (the 4 lanes of a row share α),
so the only shuffles per tile are the 2 of the row maximum.
""")

code(r'''
show_source(mma_cu, r"// 2\. online softmax", r"// 3\. O \+= P V")
''')

md(r"""
## Step 4: the tile sizes

* **BQ** (64 or 128 query rows, 4 or 8 warps) — every K/V tile brought into shared memory serves
  BQ rows: BQ = 128 reads K and V half as often as 64.
* **BKV** (32, 64 or 128 keys) — more independent mmas between two barriers, and the per-tile fixed
  costs (the barrier, the max shuffles, rescaling O) spread over more keys. The price is registers
  (a thread holds BKV / 2 scores, beside D / 2 outputs and its Q fragments: `nvcc --resource-usage`
  gives 168 registers for 64 × 32 at d = 128, 238 for 128 × 128, sm_90) and shared memory:
""")

code(r'''
tile_rows = []
for bq, bkv in ((64, 32), (64, 64), (64, 128), (128, 64), (128, 128)):
    smem = 2 * 128 * (bq + 2 * 2 * bkv)      # Q [BQ][d] + K, V [2 buffers][BKV][d], 2 bytes each, d = 128
    tile_rows.append([f"{bq} x {bkv}", bq // 16, bkv // 2, f"{smem / 1024:.0f} KB", 228 * 1024 // smem])
show_markdown(md_table(tile_rows, ["BQ x BKV", "warps", "scores per thread", "shared memory (d = 128)",
                                   "blocks per SM by shared memory (228 KB)"]))
''')

md(r"""
## The ladder on the H100

`benchmarks/probe_flash_mma.py` checked every configuration against float64 references (forward:
output and log-sum-exp, head dims 32/64/128, ragged and causal; backward in bfloat16 and float16),
then timed the forward of each step in bfloat16, 16384 tokens × 2048 channels per call
(B = 16384 / L, H = 2048 / d), L2 flushed before each call, median of 9; PyTorch's SDPA with its
flash backend (FlashAttention-2) and cuDNN's on the same shapes. The last step is the best of the
five tile sizes for each shape (`tiles_BQxBKV`).
""")

code(r'''
def best_tile(row):
    name = max(mma_probe["tiles"], key=lambda n: tflops(row, f"fwd {n}") or 0)
    return name.removeprefix("tiles_").replace("x", " x "), tflops(row, f"fwd {name}")


def shape_label(row):
    return f"d {row['d']}, L {row['L']}" + (", causal" if row["causal"] else "")


probe_files = sorted((reference_dir() / "probes").glob("probe_flash_mma-*.json"))
mma_probe = json.loads(probe_files[-1].read_text()) if probe_files else None
if mma_probe is None:
    print("no benchmarks/results/probes/probe_flash_mma-*.json: run python benchmarks/probe_flash_mma.py on a GPU")
else:
    STEPS = ("baseline", "swizzle", "double_buffer", "exp2_fma")
    print(f"{probe_files[-1].name}: {mma_probe['gpu']}, torch {mma_probe['torch']}; {mma_probe['timing']}; "
          f"checks passed: {sum(c['ok'] for c in mma_probe['check'].values())} of {len(mma_probe['check'])}")
    table, bars = [], []
    for row in mma_probe["rows"]:
        tiles, best = best_tile(row)
        ours = [tflops(row, f"fwd {s}") for s in STEPS] + [best]
        theirs = [tflops(row, "fwd torch_flash"), tflops(row, "fwd torch_cudnn")]
        bars.append(ours + theirs)
        table.append([shape_label(row)] + [f"{x:.0f}" for x in ours[:-1]] + [f"{best:.0f} ({tiles})"]
                     + [f"{x:.0f}" if x else "-" for x in theirs] + [f"{best / theirs[0]:.2f}x"])
    show_markdown(md_table(table, ["bf16 forward, TFLOP/s", "baseline", "+ swizzle", "+ double buffer",
                                   "+ exp2/FMA", "+ best tiles (BQ x BKV)", "torch flash", "cuDNN", "ours / flash"]))
    names = ["baseline", "+ swizzle", "+ double buffer", "+ exp2/FMA", "+ best tiles", "torch flash", "cuDNN"]
    colors = list(plt.cm.Blues(np.linspace(0.3, 1.0, 5))) + ["tab:orange", "tab:red"]
    fig, ax = plt.subplots(figsize=(11, 4), layout="constrained")
    x, width = np.arange(len(bars)), 0.12
    for i, (name, color) in enumerate(zip(names, colors)):
        ax.bar(x + (i - 3) * width, [b[i] or 0 for b in bars], width, label=name, color=color)
    ax.set_xticks(x, [shape_label(r).replace(", c", "\nc") for r in mma_probe["rows"]], fontsize=8)
    ax.set(ylabel="TFLOP/s", title=f"attention forward, bfloat16, {mma_probe['gpu']}")
    ax.legend(ncol=7, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18)); ax.grid(axis="y", alpha=0.3);
''')

md(r"""
## Rung 3: `wgmma` and TMA, the Hopper way (FlashAttention-3)

`mma.sync` is an Ampere instruction: on the H100 it reaches about two thirds of the tensor cores'
peak, and every warp must first copy its operands from shared memory into registers (`ldmatrix`)
— rung 2's warps each re-read the whole K and V tile for only 16 query rows. Hopper's **`wgmma`**
(warpgroup mma, phase 05's GEMM rungs 12 and 13) is issued by a *warpgroup* of 4 warps for a
64-row tile and reads its B operand, and optionally A, **straight from shared memory** through a
64-bit descriptor of a 128-byte-swizzled tile; it runs asynchronously, so the warps can compute
the softmax while the tensor cores work. `minitorch/cuda/attention/03_flash_wgmma.cu` builds the
forward of FlashAttention-3 (Shah et al. 2024) from the same pieces:

* a block of 2 consumer warpgroups owns 128 query rows (64 each); `S = Q Kᵀ` is a `wgmma` with both
  operands in shared memory;
* `O += P V` takes **P from registers**: the float32 accumulator layout of `S`, rounded to bf16 in
  pairs, is exactly `wgmma`'s A-register fragment, as with `mma.sync` in rung 2; V is read from
  shared memory in its natural [keys, d] layout (the "transpose" bit of the B descriptor);
* the default variant adds a **producer warpgroup** that only issues **TMA** copies of the K/V tiles
  (the copy engine moves a whole tile from one instruction) and **mbarriers** in place of
  `__syncthreads`: the consumers wait for a tile's bytes to land, the producer waits for a buffer to
  be released — FlashAttention-3's warp specialization. A cp.async variant without the producer is
  kept (`TMA=0`) as the step between.

Rung 3 writes the same O and log-sum-exp as rung 2, so rung 2's backward runs on its output.
`F.scaled_dot_product_attention` runs it on sm_90 for head dims 64 and 128 (rung 2 elsewhere, or with
`MINITORCH_FLASH_RUNG=2`).
""")

code(r'''
if mma_probe is not None:
    RUNG3 = [("wgmma_cp_async", "rung 3, cp.async"), ("wgmma", "rung 3, TMA + producer (default)")]
    rows3 = []
    for r in mma_probe["rows"]:
        ours2, flash, cudnn = tflops(r, "fwd tuned"), tflops(r, "fwd torch_flash"), tflops(r, "fwd torch_cudnn")
        ours3 = [tflops(r, f"fwd {n}") for n, _ in RUNG3]
        rows3.append([shape_label(r), f"{ours2:.0f}"] + [f"{x:.0f}" if x else "-" for x in ours3]
                     + [f"{flash:.0f}", f"{cudnn:.0f}" if cudnn else "-",
                        f"{max(x or 0 for x in ours3) / flash:.2f}x" if any(ours3) else "-"])
    show_markdown(md_table(rows3, ["bf16 forward, TFLOP/s", "rung 2 (tuned)"] + [label for _, label in RUNG3]
                           + ["torch flash", "cuDNN", "rung 3 / flash"]))
''')

md(r"""
## The backward in one pass

The first backward was "correctness first": one kernel per key tile for dK and dV, and a second
kernel per query tile for dQ, which recomputes S and dP — 7 tile products where FlashAttention-2's
Algorithm 2 does 5, and every output written once by one warp: deterministic. The default backward
now does it in **one pass** over key tiles: for each query tile it computes S, P, dP and dS once,
accumulates dV and dK in registers, and **adds** the tile's share of dQ = dS K into a float32 buffer in
global memory with atomic reductions (`red.global.add`); a last small kernel scales dQ and rounds it
to bf16. Fewer products and one read of Q, K, V and dO instead of two, at a price: the float32 sums
of dQ arrive in whatever order the blocks finish, so its last bits can differ from run to run.
PyTorch's flash backward makes the same trade. `minitorch.use_deterministic_algorithms(True)` selects
the two-kernel path, as PyTorch's flag selects its deterministic kernels.
""")

code(r'''
backward_files = sorted((reference_dir() / "probes").glob("probe_flash_mma_backward-*.json"))
if not backward_files:
    print("no benchmarks/results/probes/probe_flash_mma_backward-*.json: run python benchmarks/probe_flash_mma.py --backward on a GPU")
else:
    bwd_probe = json.loads(backward_files[-1].read_text())
    print(f"{backward_files[-1].name}: {bwd_probe['gpu']}, torch {bwd_probe['torch']}; B {bwd_probe['B']}, H {bwd_probe['H']}; "
          f"{bwd_probe['timing']}")
    show_markdown(md_table(
        [[shape_label(r)] + [f"{r['ms'][k]:.2f}" for k in ("fwd", "bwd_det", "bwd_1pass", "t_bwd", "fb_1pass", "t_fb")]
         + [f"{r['ms']['t_fb'] / r['ms']['fb_1pass']:.2f}x"] for r in bwd_probe["rows"]],
        ["bf16, ms", "our forward", "backward, two kernels (deterministic)", "backward, one pass", "torch flash backward",
         "ours forward + backward", "torch flash forward + backward", "ours / torch (speed)"]))
''')

md(r"""
The same kernels through `F.scaled_dot_product_attention`, as a model calls them: the bfloat16 sweep
of `benchmarks/bench_attention.py --dtype bfloat16` (B = 4, H = 8, L = 512 to 8192, head dims 64 and
128, causal and not, forward and forward + backward; CUDA events, median; no L2 flush, unlike the
probe above), against every SDPA backend of PyTorch that takes bfloat16. "skipped": a path through
the [L, L] scores whose memory would pass the run's limit; "n/a": the backend refused the case.
""")

code(r'''
show_sweeps("bfloat16", "python benchmarks/bench_attention.py --dtype bfloat16")
''')

md(r"""
## Against the targets

Issue 15 set the targets in the table below; the cell computes each ratio from the saved probes
(one run each, ratios within a run). In the saved run (H100, 2026-11-25): the bfloat16 forward
at d = 128, L = 4096 runs at about 1.5× FlashAttention-2 with rung 3 (met), but about 0.8× cuDNN's
Hopper kernel (the stretch, not met); forward + backward reaches about 0.85× (met: rung 3's forward
and the one-pass backward; the backward alone is still about 0.74× FlashAttention-2's). In float32,
rung 1c passes PyTorch's memory-efficient kernel in the forward (about 1.07× at d = 128, 1.35× at
d = 64, L = 4096) and, since its backward went one-pass too (below), in forward + backward (about
1.2× at d = 128, 1.3× at d = 64). Each number is one run of one lease: the same kernel timed twice
differs by a few percent.
""")

code(r'''
if mma_probe is None or fp32_probe is None or not backward_files:
    print("the saved probes are missing (benchmarks/results/probes): no comparison")
else:
    def find(rows, **want):
        return next(r for r in rows if all(r.get(k) == v for k, v in want.items()))

    big = find(mma_probe["rows"], d=128, L=4096, causal=False)
    big_b = find(bwd_probe["rows"], d=128, L=4096, causal=False)
    rung3 = tflops(big, "fwd wgmma")                                     # rung 3 as dispatched
    f32 = {d_: find(fp32_probe["rows"], d=d_, L=4096, causal=False) for d_ in (64, 128)}
    best32 = lambda r, p: max(tflops(r, f"{p} {n}") or 0 for n in ("tiled", "3xtf32"))  # noqa: E731
    targets = [
        ("bf16 forward, d 128, L 4096 (rung 3)", "torch flash", 1.0, rung3 / tflops(big, "fwd torch_flash")),
        ("bf16 forward + backward, d 128, L 4096 (default paths)", "torch flash", 0.8,
         big_b["ms"]["t_fb"] / big_b["ms"]["fb_1pass"]),
        ("bf16 forward, d 128, L 4096 (rung 3)", "cuDNN (stretch)", 1.0, rung3 / tflops(big, "fwd torch_cudnn")),
    ] + [(f"float32 {'forward' if p == 'fwd' else 'forward + backward'}, d {d_}, L 4096 (best rung)", "torch memory-efficient",
          1.0, best32(r, p) / tflops(r, f"{p} torch_efficient")) for p in ("fwd", "fwdbwd") for d_, r in f32.items()]
    show_markdown(md_table([[what, against, f">= {t:.1f}x", f"{ratio:.2f}x", "met" if ratio >= t else "not met"]
                            for what, against, t, ratio in targets],
                           ["case", "against", "target (issue 15)", "ours", ""]))
''')

md(r"""
On a GPU, the check that matters before any speed: bfloat16 attention through
`F.scaled_dot_product_attention` (the tensor-core kernels) against the float64 decomposition (your
07.6, on the cpu, from the same bf16-rounded inputs), output and gradients, relative errors (norm of
the difference over the norm of the reference; bfloat16 keeps 8 bits of mantissa, so about 1e-2 is
its scale):
""")

code(r'''
if session.needs_gpu("bfloat16 FlashAttention on tensor cores against the float64 decomposition"):
    import ml_dtypes

    rng = np.random.default_rng(SEED)

    def rel(ours, ref):
        return np.linalg.norm(np.asarray(ours, np.float64) - ref) / np.linalg.norm(ref)

    rows = []
    for B, H, L, S, d, causal in ((2, 4, 65, 65, 32, True), (1, 6, 257, 257, 64, True), (2, 2, 100, 300, 128, False)):
        inputs = [rng.uniform(-2, 2, (B, H, n, d)).astype(ml_dtypes.bfloat16) for n in (L, S, S)]
        w = rng.uniform(-1, 1, (B, H, L, d)).astype(ml_dtypes.bfloat16)
        ours_in = [minitorch.tensor(x, device="cuda").requires_grad_(True) for x in inputs]
        ref_in = [minitorch.tensor(x.astype(np.float64)).requires_grad_(True) for x in inputs]
        ours = F.scaled_dot_product_attention(*ours_in, is_causal=causal)
        (ours * minitorch.tensor(w, device="cuda")).sum().backward()
        ref = F.scaled_dot_product_attention(*ref_in, is_causal=causal)
        (ref * minitorch.tensor(w.astype(np.float64))).sum().backward()
        errs = [rel(ours.detach().cpu().numpy(), ref.detach().numpy())]
        errs += [rel(a.grad.cpu().numpy(), b.grad.numpy()) for a, b in zip(ours_in, ref_in)]
        rows.append([f"[{B}, {H}, {L}, {d}], S = {S}", causal] + [f"{e:.1e}" for e in errs]
                    + ["ok" if errs[0] < 1.5e-2 and max(errs[1:]) < 3e-2 else "TOO LARGE"])
    show_markdown(md_table(rows, ["q [B, H, L, d]", "causal", "output", "dq", "dk", "dv",
                                 "within bf16 tolerance (1.5e-2 output, 3e-2 gradients)"]))
''')

code(r'''
# Re-timing the ladder on this GPU: one shape (d = 128, L = 4096), each step's NVRTC module compiled
# first (tens of seconds); skipped in quick mode. The probe's own helpers time it (L2 flushed, median).
if session.needs_gpu("re-timing the ladder on this GPU"):
    if QUICK:
        print("quick mode: the saved H100 numbers above only")
    else:
        sys.path.insert(0, str(reference_dir().parent))       # benchmarks/: the probe and its timing helpers
        from gemm_common import time_ms
        from probe_flash_mma import flops
        from minitorch.native import cuda as N
        from minitorch.native.cuda import attention as NA

        L_, d_ = 4096, 128
        bh = (16384 // L_) * (2048 // d_)
        q_, k_, v_ = (minitorch.randn(bh, L_, d_, device="cuda", dtype=minitorch.bfloat16)._data for _ in range(3))
        timed = []
        for name, config in NA.LADDER:
            ms = time_ms(lambda: N.flash_attention_mma(q_, k_, v_, 1 / d_ ** 0.5, False, config))
            timed.append([name, f"{ms:.3f}", f"{flops(bh, L_, d_, False, False) / ms / 1e9:.0f}"])
        if torch.cuda.is_available():
            from torch.nn.attention import SDPBackend, sdpa_kernel
            tq = torch.randn(16384 // L_, 2048 // d_, L_, d_, device="cuda", dtype=torch.bfloat16)

            def torch_flash():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    torch.nn.functional.scaled_dot_product_attention(tq, tq, tq)
            ms = time_ms(torch_flash)
            timed.append(["torch flash", f"{ms:.3f}", f"{flops(bh, L_, d_, False, False) / ms / 1e9:.0f}"])
        show_markdown(md_table(timed, [f"bf16 forward, d {d_}, L {L_}, this GPU", "ms", "TFLOP/s"]))
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7f′ — Attention with dropout: the middle of the decomposition in one kernel

Our FlashAttention kernels have **no dropout** (FlashAttention itself can have it; ours do not yet),
so `_flash_applies` refuses `dropout_p > 0` — and nanoGPT trains with dropout 0.2 on the attention
weights. Every attention of its training steps therefore takes the **decomposition**: `q @ kᵀ`,
scale, causal mask, softmax, dropout, `@ v`. Step by step (your 07.6), each of the middle steps is a
pass over the [B, heads, T, T] scores — at nanoGPT's shape 64 × 6 × 256 × 256 = 25M floats, 100 MB
per pass and per layer — and dropout alone is three: uniform random numbers (cuRAND), a compare,
a scaled select; the backward as many again.

`minitorch/cuda/attention_softmax.cu` (`AttentionSoftmax` in `ops/attention.py`) does the middle
in **one pass each way**, one warp per row of scores:

* forward: read S once, keep an online (max, sum) per lane (the online softmax of 7e), write
  `Y = dropout(softmax(S · scale + mask))` and save only each row's log-sum-exp;
* backward: recompute P from S and the log-sum-exp, and **redraw** the same dropout mask instead of
  storing it: `dS = scale · P · (G' − Σⱼ Pⱼ G'ⱼ)` with `G' = G · keep / (1 − p)`.

Redrawing works because the random numbers come from **Philox4x32-10** (Salmon et al. 2011), a
*counter-based* generator: it has no state, the 4 words of `philox(key, counter)` are a pure
function of a 64-bit key and a counter. Element e of the scores uses word e mod 4 of
`philox(key, e / 4)` and is kept when its top 24 bits, as a uniform u in [0, 1), pass `u ≥ p`. The
key is drawn once per call from our generator and saved: any thread can compute the word of any
element, forward and backward agree without a stored mask, and `native/cpu.py` computes the same
words with NumPy, so both devices drop the same elements for the same key.
`minitorch.backends.cuda.enable_fused_softmax_sdp(False)` brings back the step-by-step path on cuda.
""")

code(r'''
from minitorch.native import cpu as cpu_backend

T_, p_ = 16, 0.2
s_ = np.random.default_rng(SEED).standard_normal((T_, T_)).astype(np.float32)       # one head's scores [L, S]
key_ = cpu_backend.attention_seed(np.random.default_rng(SEED))                      # the saved Philox key
y_, lse_ = cpu_backend.attention_softmax(s_, T_, 1.0, True, None, key_, p_)
y_again, _ = cpu_backend.attention_softmax(s_, T_, 1.0, True, None, key_, p_)
visible = np.tril(np.ones((T_, T_), dtype=bool))
keep_ = y_ > 0                                       # what forward kept (softmax weights are > 0 where visible)
g_ = np.random.default_rng(SEED + 1).standard_normal((T_, T_)).astype(np.float32)
ds_ = cpu_backend.attention_softmax_backward(s_, lse_, g_, T_, 1.0, True, None, key_, p_)   # redraws the mask
probs = np.where(visible, np.exp(s_ - lse_[:, None]), 0)
g_kept = np.where(keep_, g_ / (1 - p_), 0)           # the formula with forward's mask, as if it had been stored
expected = probs * (g_kept - (probs * g_kept).sum(1, keepdims=True))
print(f"the same key draws the same mask: {np.array_equal(y_, y_again)}; kept {keep_[visible].mean():.2f} of the "
      f"visible weights (expected {1 - p_}); backward with the redrawn mask vs forward's mask: "
      f"max difference {np.abs(ds_ - expected).max():.1e}")
words = cpu_backend._philox_words(key_[0], 8)
print("the first words: " + ", ".join(f"philox(key, {e // 4})[{e % 4}] = {w:#010x}" for e, w in enumerate(words[:4])))
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), layout="constrained")
axes[0].imshow(np.where(visible, keep_, np.nan), cmap="Greens", vmin=-0.5, vmax=1)
axes[0].set_title(f"keep mask (p = {p_}): white dropped, grey the future")
axes[0].imshow(np.where(visible, np.nan, 0.5), cmap="Greys", vmin=0, vmax=1)
im = axes[1].imshow(y_, cmap="viridis"); axes[1].set_title("Y = dropout(softmax): kept weights x 1 / (1 - p)")
for ax in axes:
    ax.set(xlabel="key s", ylabel="query t")
fig.colorbar(im, ax=axes[1]);
''')

md(r"""
`benchmarks/bench_sdpa_dropout.py` timed `F.scaled_dot_product_attention` at nanoGPT's attention
shape (B 64, 6 heads, T 256, d 64, causal, float32, TF32 off) on the H100, forward and forward +
backward, the contenders taking turns: step by step (`enable_fused_softmax_sdp(False)`), with the
fused softmax, FlashAttention (rung 1b, dropout drawn inside the kernel), and through SDPA as a model
calls it, against PyTorch's default (its memory-efficient kernel, which also draws dropout inside).
"contiguous": q, k, v made contiguous first; "gpt_split": as nanoGPT builds them, views of one
[B, T, 3C] projection split and transposed:
""")

code(r'''
sdpa_files = sorted(reference_dir().glob("bench_sdpa_dropout-*.json"))
if not sdpa_files:
    print("no benchmarks/results/bench_sdpa_dropout-*.json: run python benchmarks/bench_sdpa_dropout.py on a GPU")
else:
    sdpa = json.loads(sdpa_files[-1].read_text())
    shape = sdpa["shape"]
    print(f"{sdpa_files[-1].name}: {sdpa['env']['gpu_name']}, torch {sdpa['env']['torch_version']}; "
          f"[{shape['B']}, {shape['heads']}, {shape['T']}, {shape['D']}] {sdpa['dtype']}, causal {sdpa['causal']}, "
          f"TF32 {sdpa['tf32']}; median of {sdpa['repeats']}; checks {'ok' if sdpa['checks']['ok'] else 'FAILED'} "
          f"(keep rate {sdpa['checks']['keep_rate']:.4f})")
    path_names = {"ours_unfused": "ours, step by step", "ours_fused": "ours, fused softmax", "ours_flash": "ours, FlashAttention",
                  "ours_sdpa": "ours, F.scaled_dot_product_attention", "torch_default": "PyTorch SDPA"}
    rows = [r for r in sdpa["results"] if r.get("mode", "fwd+bwd") == "fwd+bwd"]
    cols = sorted({(r.get("layout", "contiguous"), r["dropout_p"]) for r in rows}, key=lambda c: (c[0], -c[1]))
    ms = {(r["path"], r.get("layout", "contiguous"), r["dropout_p"]): r for r in rows}
    cell = lambda r: f"{r['ms']:.2f} ms ({r['ratio_to_torch']:.2f}x)" if r else "-"
    show_markdown(md_table([[name] + [cell(ms.get((path, *c))) for c in cols] for path, name in path_names.items()],
                           ["forward + backward (x PyTorch's time)"] + [f"{lay}, dropout_p = {p}" for lay, p in cols]))
    fig, ax = plt.subplots(figsize=(8, 3.4), layout="constrained")
    x = np.arange(len(path_names))
    drop = [c for c in cols if c[1] > 0]
    for i, c in enumerate(drop):
        ax.barh(x + (i - (len(drop) - 1) / 2) * 0.8 / len(drop), [ms[path, *c]["ms"] if (path, *c) in ms else 0 for path in path_names],
                0.8 / len(drop), label=f"{c[0]}, dropout_p = {c[1]}")
    ax.set_yticks(x, list(path_names.values())); ax.invert_yaxis()
    ax.set(xlabel="ms, forward + backward", title="attention at nanoGPT's shape, H100"); ax.legend(); ax.grid(axis="x", alpha=0.3);
''')

md(r"""
In the saved run (2026-11-24 22:50 UTC), with dropout 0.2 and contiguous q, k, v: step by step 2.17 ms,
the fused softmax 0.87, FlashAttention with dropout in the kernel 0.76, PyTorch 0.78 (ours 0.97×
its time). The mask is the fused path's (the same Philox words for the same key), so the two agree
to float32 rounding (3e-7, the check above). As nanoGPT calls it (split-and-transposed views) ours
took 1.76 ms against PyTorch's 0.88 in that run: rung 1b then read contiguous [B·H, T, d] arrays, so
q, k, v and the incoming gradient were copied first, and those strided copies cost more than the
attention itself. Since 2026-11-25 rung 1b reads every operand through its (batch, head, row)
strides and writes O, dq, dk and dv in PyTorch flash's [B, T, H, D] memory layout (so
`y.transpose(1, 2).contiguous()` in the block is free), and `split` is one autograd node whose
backward is one cat: nanoGPT's whole attention sub-block (split, views, SDPA, transpose back),
forward + backward, queued as in training, takes 1.07 ms against PyTorch's 0.74 (1.23 with the old
copies; `benchmarks/bench_gpt_attention.py`). On a GPU, the fused path against the step-by-step one:
""")

code(r'''
if session.needs_gpu("the fused attention softmax against the step-by-step decomposition"):
    rng = np.random.default_rng(SEED)

    def sdpa_on_cuda(fused, dropout_p, q, k, v):
        """Output and dq, dk, dv of the decomposition (flash off), fused or step by step."""
        for t in (q, k, v):
            t.grad = None
        minitorch.backends.cuda.enable_flash_sdp(False)
        minitorch.backends.cuda.enable_fused_softmax_sdp(fused)
        try:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
            out.sum().backward()
        finally:
            minitorch.backends.cuda.enable_flash_sdp(True)
            minitorch.backends.cuda.enable_fused_softmax_sdp(True)
        return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (q, k, v)]

    q, k, v = (minitorch.tensor(rng.standard_normal((2, 3, 70, 32)).astype(np.float32), device="cuda", requires_grad=True)
               for _ in range(3))
    fused, steps = sdpa_on_cuda(True, 0.0, q, k, v), sdpa_on_cuda(False, 0.0, q, k, v)
    print("dropout 0: max |fused - step by step| of output, dq, dk, dv:",
          ", ".join(f"{np.abs(a - b).max():.1e}" for a, b in zip(fused, steps)))
    ones = minitorch.ones(2, 3, 70, 32, device="cuda", requires_grad=True)
    kept = sdpa_on_cuda(True, 0.2, q, k, ones)[0]      # value = 1: each output is the row's kept weights / (1 - p)
    print(f"dropout 0.2, value = 1: mean output {kept.mean():.3f} (dropout keeps the expectation: 1), "
          f"{(kept[..., 0] < 1e-12).sum()} of {kept[..., 0].size} rows with every weight dropped")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7g — The GPT

`minitorch/models/gpt.py`: token and position embeddings, `n_layer` pre-LN blocks
(`x + attn(ln_1(x))`, `x + mlp(ln_2(x))`), a final LayerNorm and `lm_head`, a Linear back to the
vocabulary whose weight **is** the token table (weight tying, Press and Wolf 2017). Init as
nanoGPT: weights N(0, 0.02), biases 0, and the residual projections `c_proj` N(0, 0.02/√(2·n_layer))
so the 2·n_layer branches do not inflate the residual stream. Untrained, every character is about
equally likely: the loss should start near ln(V).

Inside a block, `CausalSelfAttention` makes q, k and v with one Linear (`c_attn`, C → 3C), splits
the C features into `n_head` heads of `C / n_head` (`[B, T, C] → [B, nh, T, hs]`), runs your
attention on every head at once, puts the heads side by side again and mixes them (`c_proj`). The
MLP widens to 4C, applies GELU and comes back to C. Each block adds the two sublayers' outputs to
the **residual stream** x, each reading a normalized copy of it:

    x = x + attn(ln_1(x))
    x = x + mlp(ln_2(x))

The original transformer normalized *after* adding (post-LN, `ln(x + attn(x))`); GPT-2 moved the
LayerNorm before the sublayer, so that the gradient reaches the first layers through additions
only and deep stacks train without a careful warmup.
""")

exercises(r"""
**Exercise 07.8 — the pre-LN residual block** (`minitorch/models/gpt.py`, `Block.forward`): the two
lines above, with the block's modules `self.ln_1`, `self.attn`, `self.ln_2`, `self.mlp`. Its test
swaps the sublayers for stand-ins, so that only the wiring is graded.
""", "07.8")

code(r'''
config = GPTConfig(vocab_size=tok.vocab_size, block_size=BLOCK_SIZE, n_layer=N_LAYER, n_head=N_HEAD,
                   n_embd=N_EMBD, dropout=DROPOUT, bias=False)
minitorch.manual_seed(SEED)
model = GPT(config).to(DEVICE)
initial_state = {name: t.cpu().numpy().copy() for name, t in model.state_dict().items()}
print(config)
print(f"{sum(p.numel() for p in model.parameters()):,} parameters; tied: {model.lm_head.weight is model.transformer.wte.weight}")
for name, p in list(model.named_parameters())[:8]:
    print(f"  {name:40s} {tuple(p.shape)}")
x, y = data.get_batch("train", BATCH_SIZE, BLOCK_SIZE, generator=minitorch.Generator().manual_seed(SEED), device=DEVICE)
logits, loss = model(x, y)
print(f"logits {tuple(logits.shape)}; loss at init {loss.item():.4f} (ln V = {math.log(tok.vocab_size):.4f})")
''')

code(r'''
optimizer = model.configure_optimizers(WEIGHT_DECAY, LR, BETAS)
scheduler = warmup_cosine(optimizer, WARMUP_ITERS, MAX_ITERS, MIN_LR)
for group in optimizer.param_groups:
    print(f"{len(group['params'])} tensors, {sum(p.numel() for p in group['params']):,} numbers, weight_decay {group['weight_decay']}")
probe = GPT(config).configure_optimizers(WEIGHT_DECAY, LR, BETAS)     # a throwaway, to draw the schedule
probe_schedule = warmup_cosine(probe, WARMUP_ITERS, MAX_ITERS, MIN_LR)
lrs = []
for _ in range(MAX_ITERS):
    lrs.append(probe.param_groups[0]["lr"]); probe_schedule.step()
fig, ax = plt.subplots(figsize=(5, 2.5), layout="constrained")
ax.plot(lrs); ax.set(xlabel="step", ylabel="lr", title="linear warmup, cosine decay");
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7h — Training the seed config

AdamW, the schedule above, gradients clipped to norm 1.0. Every `EVAL_INTERVAL` steps the mean loss
over `EVAL_ITERS` fresh batches of each split, dropout off.
""")

code(r'''
def estimate_loss(model, seed):
    model.eval()
    out = {}
    with minitorch.no_grad():
        for split in ("train", "val"):
            g = minitorch.Generator().manual_seed(seed)
            out[split] = float(np.mean([model(*data.get_batch(split, BATCH_SIZE, BLOCK_SIZE, generator=g, device=DEVICE))[1].item()
                                        for _ in range(EVAL_ITERS)]))
    model.train()
    return out

history, batches = [], minitorch.Generator().manual_seed(SEED)
start_time = time.perf_counter()
for it in tqdm(range(MAX_ITERS + 1), desc="training"):
    if it % EVAL_INTERVAL == 0 or it == MAX_ITERS:
        history.append({"step": it, **estimate_loss(model, SEED + 1)})
    if it == MAX_ITERS:
        break
    x, y = data.get_batch("train", BATCH_SIZE, BLOCK_SIZE, generator=batches, device=DEVICE)
    _, loss = model(x, y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    scheduler.step()
seconds = time.perf_counter() - start_time
print(f"{MAX_ITERS} steps in {seconds:.1f} s (evaluations included); final train {history[-1]['train']:.4f}, val {history[-1]['val']:.4f}")
fig, ax = plt.subplots(figsize=(5, 3), layout="constrained")
for split in ("train", "val"):
    ax.plot([h["step"] for h in history], [h[split] for h in history], "o-", label=split)
ax.set(xlabel="step", ylabel="cross-entropy (nats/char)", title="the seed GPT on Tiny Shakespeare"); ax.legend(); ax.grid(alpha=0.3);
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7i — Sampling

`model.generate` feeds the last `BLOCK_SIZE` characters, divides the last logits by a
**temperature** (below 1: more conservative), keeps the `top_k` most likely, and draws the next
character with `multinomial`. **Top-k** cuts the long tail: each of the ~60 unlikely characters has
a tiny probability, but together they are drawn now and then, and one bad character derails the
words after it. Keeping the k best and renormalizing among them (softmax over logits where the rest
are −∞) removes that tail.
""")

exercises(r"""
**Exercise 07.9 — top-k filtering** (`minitorch/models/gpt.py`, `GPT.generate`, inside `if top_k is
not None`): `logits` is `[B, vocab]`. Find each row's k-th largest logit (`logits.topk(k, dim=-1)`
returns values sorted in descending order; k at most the vocabulary size) and set every logit below
it to `-inf` with `masked_fill`. The softmax after it then gives those tokens probability exactly 0.
""", "07.9")

md("Starting from a newline:")

code(r'''
model.eval()
start_ids = minitorch.tensor([tok.encode("\n")], device=DEVICE)
out = model.generate(start_ids, SAMPLE_CHARS, temperature=0.8, top_k=20, generator=minitorch.Generator(DEVICE).manual_seed(SEED))
print(tok.decode(out[0].cpu()))
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7j — What a trained head looks at

The attention weights of layer 0, each head, on a piece of the validation text: row t is where
position t looks. Heads often specialize: one looks at the previous character, one back to the
start of the word or line.
""")

code(r'''
def attention_weights(model, ids, layer=0):
    """[heads, T, T] softmax weights of one layer, recomputed from its inputs (no hooks needed)."""
    with minitorch.no_grad():
        idx = minitorch.tensor([ids], device=DEVICE)
        T = len(ids)
        h = model.transformer.wte(idx) + model.transformer.wpe(minitorch.arange(T, device=DEVICE))
        for block in model.transformer.h[:layer]:
            h = block(h)
        blk = model.transformer.h[layer]
        q, k, _ = blk.attn.c_attn(blk.ln_1(h)).split(config.n_embd, dim=2)
        hs = config.n_embd // config.n_head
        q, k = (t.reshape(1, T, config.n_head, hs).transpose(1, 2) for t in (q, k))
        scores = (q @ k.transpose(-2, -1)).cpu().numpy()[0] / math.sqrt(hs)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True)

snippet = tok.decode(data.val[:min(32, BLOCK_SIZE)])
maps = attention_weights(model, tok.encode(snippet))
fig, axes = plt.subplots(1, config.n_head, figsize=(3.2 * config.n_head, 3.4), layout="constrained")
labels = [repr(c)[1:-1] for c in snippet]
for head, ax in enumerate(np.atleast_1d(axes)):
    ax.imshow(maps[head], cmap="magma")
    ax.set_xticks(range(len(labels)), labels, fontsize=6); ax.set_yticks(range(len(labels)), labels, fontsize=6)
    ax.set_title(f"layer 0, head {head}")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# 7k — Where the time goes

One training step split into its parts, the host waiting for the device after each (so the parts
add up to a step, slower than the unsynchronized loop above).
""")

code(r'''
def sync():
    if DEVICE == "cuda":
        minitorch.cuda.synchronize()

def breakdown(steps=10):
    model.train()
    parts = {"batch": [], "forward": [], "backward": [], "clip + AdamW": []}
    g = minitorch.Generator().manual_seed(SEED + 2)
    for _ in range(steps):
        sync(); t0 = time.perf_counter()
        x, y = data.get_batch("train", BATCH_SIZE, BLOCK_SIZE, generator=g, device=DEVICE); sync(); t1 = time.perf_counter()
        _, loss = model(x, y); sync(); t2 = time.perf_counter()
        loss.backward(); sync(); t3 = time.perf_counter()
        nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP); optimizer.step(); optimizer.zero_grad(); sync(); t4 = time.perf_counter()
        for key, ms in zip(parts, np.diff([t0, t1, t2, t3, t4]) * 1e3):
            parts[key].append(ms)
    return {key: float(np.median(v)) for key, v in parts.items()}

parts = breakdown(3 if QUICK else 20)
show_markdown(md_table([[k, f"{v:.2f}", f"{100 * v / sum(parts.values()):.0f}%"] for k, v in parts.items()], ["part", "ms", "share"]))
if session.needs_gpu("the device memory of a training step"):
    minitorch.cuda.reset_peak_memory_stats()
    breakdown(1)
    weights = sum(p.numel() for p in model.parameters()) * 4
    print(f"peak device memory over one step: {minitorch.cuda.max_memory_allocated() / 2**20:.1f} MiB "
          f"(weights {weights / 2**20:.2f} MiB, + gradients and AdamW's two moments: 4x that; the rest is activations)")
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# The race

`RACE_STEPS` training steps of the seed GPT per timed run, ours against the same model in PyTorch
(`torch.nn` layers with nanoGPT's names, initialized with **our** initial weights; the same batches
in the same order; AdamW with the same decay/no-decay groups at a constant learning rate `LR`;
gradients clipped to 1.0; float32, TF32 off on both sides; dropout `DROPOUT`). The settings are
printed before the race. `benchmarks/train_gpt.py --torch` runs the full-length version of this
race with nanoGPT's schedule (and `--config nanogpt`, the 6-layer, 384-wide model: its 5000-step
run is the last section of this notebook).

Results go where the race harness puts them: the git-ignored `out/results/` from an interactive
run, nothing in quick mode, and the committed `benchmarks/results/07-transformer__*.json` from
`minitorch-course 07 --save-results` (the reference run the table at the end shows).
""")

code(r'''
def torch_gpt(c):
    """nanoGPT's model.py in torch.nn layers; forward(idx, targets) -> loss."""
    tnn, tF = torch.nn, torch.nn.functional

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = tnn.LayerNorm(c.n_embd, bias=c.bias), tnn.LayerNorm(c.n_embd, bias=c.bias)
            self.attn = tnn.Module()
            self.attn.c_attn = tnn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
            self.attn.c_proj = tnn.Linear(c.n_embd, c.n_embd, bias=c.bias)
            self.mlp = tnn.Sequential()
            self.mlp.c_fc, self.mlp.gelu = tnn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias), tnn.GELU()
            self.mlp.c_proj, self.mlp.dropout = tnn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias), tnn.Dropout(c.dropout)
            self.resid_dropout = tnn.Dropout(c.dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, c.n_head, C // c.n_head).transpose(1, 2) for t in (q, k, v))
            y = tF.scaled_dot_product_attention(q, k, v, dropout_p=c.dropout if self.training else 0.0, is_causal=True)
            x = x + self.resid_dropout(self.attn.c_proj(y.transpose(1, 2).reshape(B, T, C)))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = tnn.ModuleDict(dict(
                wte=tnn.Embedding(c.vocab_size, c.n_embd), wpe=tnn.Embedding(c.block_size, c.n_embd),
                drop=tnn.Dropout(c.dropout), h=tnn.ModuleList([Block() for _ in range(c.n_layer)]),
                ln_f=tnn.LayerNorm(c.n_embd, bias=c.bias)))
            self.lm_head = tnn.Linear(c.n_embd, c.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1], device=idx.device)))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return tF.cross_entropy(logits.flatten(0, 1), targets.flatten())

    return TorchGPT()

race_ours = GPT(config).to(DEVICE)
race_ours.load_state_dict({k: minitorch.tensor(v) for k, v in initial_state.items()})
race_theirs = torch_gpt(config).to(DEVICE)
race_theirs.load_state_dict({k: torch.from_numpy(v) for k, v in initial_state.items()}, strict=False)  # lm_head is tied
opt_ours = race_ours.configure_optimizers(WEIGHT_DECAY, LR, BETAS)
opt_theirs = torch.optim.AdamW([{"params": [p for p in race_theirs.parameters() if p.dim() >= 2], "weight_decay": WEIGHT_DECAY},
                                {"params": [p for p in race_theirs.parameters() if p.dim() < 2], "weight_decay": 0.0}], lr=LR, betas=BETAS)
race_gen = minitorch.Generator().manual_seed(SEED + 3)                     # one generator: RACE_STEPS different batches
race_batches = [data.get_batch("train", BATCH_SIZE, BLOCK_SIZE, generator=race_gen) for _ in range(RACE_STEPS)]
ours_batches = [(x.to(DEVICE), y.to(DEVICE)) for x, y in race_batches]
theirs_batches = [(torch.from_numpy(x.numpy()).to(DEVICE), torch.from_numpy(y.numpy()).to(DEVICE)) for x, y in race_batches]

def ours_steps():
    for x, y in ours_batches:
        loss = race_ours(x, y)[1]
        loss.backward()
        nn.utils.clip_grad_norm_(race_ours.parameters(), GRAD_CLIP)
        opt_ours.step(); opt_ours.zero_grad(set_to_none=True)
    return loss

def theirs_steps():
    for x, y in theirs_batches:
        loss = race_theirs(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(race_theirs.parameters(), GRAD_CLIP)
        opt_theirs.step(); opt_theirs.zero_grad(set_to_none=True)
    return loss

settings = {"device": DEVICE, "dtype": "float32", "torch": torch.__version__,
            "torch TF32 (matmul, cudnn)": (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32),
            "minitorch TF32 (matmul)": minitorch.backends.cuda.matmul.allow_tf32,
            "model": f"{N_LAYER} layers, {N_HEAD} heads, n_embd {N_EMBD}, block {BLOCK_SIZE}, vocab {tok.vocab_size}, dropout {DROPOUT}",
            "batch": BATCH_SIZE, "steps per run": RACE_STEPS, "runs": RACE_REPEATS,
            "AdamW": f"lr {LR} (constant), betas {BETAS}, weight decay {WEIGHT_DECAY} on matrices, clip {GRAD_CLIP}"}
show_markdown(md_table([[k, v] for k, v in settings.items()], ["setting", "value"]))
first_ours, first_theirs = ours_steps().item(), theirs_steps().item()    # the same steps from the same weights
print(f"loss after {RACE_STEPS} steps from the same weights: ours {first_ours:.5f}, torch {first_theirs:.5f}")
''')

code(r'''
from minitorch.utils.race import race

result = race(ours_steps, theirs_steps, phase="07_transformer",
              workload=f"GPT {N_LAYER}x{N_EMBD} T{BLOCK_SIZE} B{BATCH_SIZE} AdamW, {RACE_STEPS} steps",
              device=DEVICE, warmup=1, repeats=RACE_REPEATS,
              sizes={"n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD, "block": BLOCK_SIZE, "batch": BATCH_SIZE, "steps": RACE_STEPS},
              metrics={"ours": {"val loss (trained above)": history[-1]["val"]}}, save=SAVE_RESULTS)
print(f"ms per training step: minitorch {result.times['ours']['median_ms'] / RACE_STEPS:.2f}, "
      f"PyTorch {result.times['theirs']['median_ms'] / RACE_STEPS:.2f}")
''')

code(r'''
from minitorch.utils.notebook import show_races

show_races("07_transformer", result)
''')

# ---------------------------------------------------------------------------------------------
md(r"""
# nanoGPT's configuration: 5000 steps on the H100

The seed model is small. `benchmarks/train_gpt.py --config nanogpt --torch` trains nanoGPT's
shakespeare-char model — 6 layers, 6 heads, 384 wide, context 256, batch 64, dropout 0.2, AdamW with
lr 1e-3 cosine to 1e-4 after 100 warmup steps, 5000 iterations — and, with `--torch`, its PyTorch
twin from the same initial weights on the same batches (float32, TF32 off). Every 250 steps both
are evaluated on 100 batches of each split (nanoGPT takes 200: halved so that both runs fit one
ten-minute lease of the GPU, one after the other in two processes — times from one machine are the
only fair race). Logs: `benchmarks/results/logs/s10-nanogpt-5000-{ours,torch}.log`; results:
`benchmarks/results/07-transformer__train-gpt-nanogpt__{ours,torch}__nvidia-h100-80gb-hbm3.json`.

**Which loss counts.** Both models **overfit** after about 2000 steps: the training loss keeps
falling while the validation loss turns up. nanoGPT's `train.py` saves a checkpoint only when the
validation loss improves (`always_save_checkpoint = False` in its shakespeare-char config), so the
1.47 it reports is its *best* evaluation's. We read ours the same way — the **best validation loss
over the evaluations** (the model one would keep) — and show the final one beside it.
""")

code(r'''
import re


def stretch_ms(log):
    """[(step, ms/iter of the steps since the previous evaluation)] from a train_gpt.py log, whose
    evaluation lines give the mean ms/iter since step 0 (empty if the log is missing)."""
    if not log.exists():
        return []
    points = [(int(m.group(1)), float(m.group(2))) for m in
              re.finditer(r"step +(\d+):.*?([\d.]+) ms/iter", log.read_text())]
    return [(b, (mb * b - ma * a) / (b - a)) for (a, ma), (b, mb) in zip([(0, 0.0)] + points, points) if b > a]


nano = {}
for side in ("ours", "torch"):
    found = sorted(reference_dir().glob(f"07-transformer__train-gpt-nanogpt__{side}__*.json"))
    if found:
        nano[side] = json.loads(found[-1].read_text())
if len(nano) < 2:
    print("no saved nanoGPT runs (benchmarks/results/07-transformer__train-gpt-nanogpt__*.json): on a GPU, run "
          "python benchmarks/train_gpt.py --config nanogpt --torch")
else:
    run = nano["ours"]["run"]
    print(f"{nano['ours']['device']}, {nano['ours']['parameters']:,} parameters; {run['n_layer']} layers, {run['n_head']} heads, "
          f"{run['n_embd']} wide, block {run['block_size']}, batch {run['batch_size']}, dropout {run['dropout']}, "
          f"{run['max_iters']} iterations; {nano['ours']['notes']}")
    fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
    for side, color in (("ours", "C0"), ("torch", "C1")):
        h = nano[side]["history"]
        steps = [e["step"] for e in h]
        ax.plot(steps, [e["train"] for e in h], "--", color=color, label=f"{side} train")
        ax.plot(steps, [e["val"] for e in h], "-", color=color, label=f"{side} val")
        best = nano[side]["best_val"]
        ax.plot(best["step"], best["val"], "*", color=color, ms=14, label=f"{side} best val {best['val']:.4f} (step {best['step']})")
    ax.axhline(1.50, color="grey", lw=0.8, ls=":"); ax.annotate("target 1.50 (issue 15)", (run["max_iters"], 1.50), ha="right", va="bottom", fontsize=8)
    ax.set(xlabel="step", ylabel="cross-entropy (nats/char)", ylim=(0.5, 2.2), title="nanoGPT shakespeare-char, ours and PyTorch, same weights and batches")
    ax.legend(fontsize=8, ncol=2); ax.grid(alpha=0.3)
    rows = []
    for side in ("ours", "torch"):
        r, best = nano[side], nano[side]["best_val"]
        rows.append([side, f"{best['val']:.4f} (step {best['step']})", f"{r['history'][-1]['val']:.4f}", f"{r['history'][-1]['train']:.4f}",
                     f"{r['ms_per_iter']:.1f}"] + [f"{r['breakdown_ms'][k]:.1f}" for k in ("forward", "backward", "step")])
    show_markdown(md_table(rows, ["", "best val (step)", "final val", "final train", "ms/iter",
                                  "forward ms", "backward ms", "AdamW step ms"]))
    # the logs print the mean ms/iter since step 0 at every evaluation: per stretch, the differences
    stretch = {side: stretch_ms(reference_dir() / "logs" / f"s10-nanogpt-5000-{side}.log") for side in ("ours", "torch")}
    ours_best, ratio = nano["ours"]["best_val"]["val"], nano["ours"]["ms_per_iter"] / nano["torch"]["ms_per_iter"]
    rows = [["val loss <= 1.50 (nanoGPT reports 1.47)", f"best {ours_best:.4f}, final {nano['ours']['history'][-1]['val']:.4f}",
             "met (best val)" if ours_best <= 1.50 else "not met"],
            ["ms/iter <= PyTorch eager fp32, all steps", f"{nano['ours']['ms_per_iter']:.1f} vs {nano['torch']['ms_per_iter']:.1f} ({ratio:.2f}x)",
             "met" if ratio <= 1 else "not met"]]
    if all(stretch.values()):
        later = {side: np.mean([ms for step, ms in stretch[side] if step > 250]) for side in stretch}
        first = {side: stretch[side][0][1] for side in stretch}
        rows += [["the same, steps 250-5000 (ours compiled by then)", f"{later['ours']:.1f} vs {later['torch']:.1f} "
                  f"({later['ours'] / later['torch']:.2f}x)", "met" if later["ours"] <= later["torch"] else "not met"]]
        print(f"ms/iter of the first 250 steps: ours {first['ours']:.1f}, torch {first['torch']:.1f}: ours compiles "
              f"its kernels (NVRTC) as they are first launched, once per machine (then CuPy's disk cache)")
    show_markdown(md_table(rows, ["target (issue 15)", "ours", ""]))
    print(nano["ours"]["sample"][:600])
''')

md(r"""
The two curves lie on each other: the same model, the same numbers up to float32 rounding and
dropout's different random draws. Best validation 1.3895 (ours, step 2000) and 1.3892 (PyTorch, step
2250): the issue's target of 1.50 is **met** by the best checkpoint, not by the last one (1.587 and
1.566). nanoGPT's 1.47 is not directly comparable: its text is char-rnn's file (65 distinct
characters), ours is cut from Project Gutenberg (71, `data/shakespeare/README.md`), so the two
validation sets differ.

**Speed** (run of 2026-11-25, H100): over all 5000 steps 34.5 ms per iteration against PyTorch's
33.7 (1.02×, **not met** as a whole), because our first 250 steps average 61 ms: a fresh machine
compiles each of our kernels (NVRTC) the first time it is launched, about 7 s in all, once per
machine (CuPy caches the binaries on disk). From step 250 on, **33.1 against 33.6 ms (0.98×, met)**.
The first 5000-step run (session 7) took 57.6 ms per iteration: the sections below say where the
24 ms went. The sample above is the first 600 characters of the one `train_gpt.py` drew from our
**final** (overfit) model, temperature 0.8, starting from a newline: speakers, blank lines and
mostly real words, the grammar of a dream.

## Where a nanoGPT step's GPU time goes

`torch.profiler` (CUPTI) sees every kernel on the GPU, ours included: one training step of each
side, kernel by kernel (`benchmarks/profile_gpt_kernels.py`), at three points of the course's
history: before the fused attention softmax of 7f′ and the one-pass LayerNorm kernels of 7c
(`benchmarks/results/logs/07-nanogpt-profile-per-kernel.log`), right after them (`...-after.log`),
and now (`...-20261125.log`). Kernel time only: the host's own time (Python, launches) is not in it.
""")

code(r'''
import re

KERNEL_GROUPS = (("GEMM", r"gemm|sgemm|splitKreduce"),
                 ("attention softmax / flash", r"softmax|fmha|flash"),
                 ("dropout and random numbers", r"dropout|Philox|masked_scale|one_minus"),
                 ("LayerNorm", r"layer_norm|GammaBeta"),
                 ("GELU", r"gelu|Gelu"),
                 ("AdamW, clipping", r"adam|multi_tensor_apply|grads_"))


def kernel_group(name):
    return next((group for group, pattern in KERNEL_GROUPS if re.search(pattern, name)), "other elementwise, copies, fills")


def read_profile(path):
    """{side: (GPU ms a step, [(ms, calls, kernel name)])} from a per-kernel profile log."""
    sides, side = {}, None
    for line in path.read_text().splitlines():
        head = re.match(r"==== (\w+): GPU kernel time per step ([\d.]+) ms", line)
        row = re.match(r"\s+([\d.]+) ms\s+(\d+)x\s+(.+)", line)
        if head:
            side = head.group(1)
            sides[side] = (float(head.group(2)), [])
        elif row and side:
            sides[side][1].append((float(row.group(1)), int(row.group(2)), row.group(3).strip()))
    return sides


logs = reference_dir() / "logs"
profiles = {when: logs / f"07-nanogpt-profile-per-kernel{suffix}.log"
            for when, suffix in (("before", ""), ("after", "-after"), ("now", "-20261125"))}
if not all(path.exists() for path in profiles.values()):
    print("no saved profiles (benchmarks/results/logs/07-nanogpt-profile-per-kernel*.log)")
else:
    before, after, now = (read_profile(path) for path in profiles.values())
    columns = {"ours, before": before["ours"], "ours, after 7f′": after["ours"], "ours, now": now["ours"],
               "PyTorch": now["torch"]}
    groups = [g for g, _ in KERNEL_GROUPS] + ["other elementwise, copies, fills"]
    by_group = {col: {g: sum(ms for ms, _, name in kernels if kernel_group(name) == g) for g in groups}
                for col, (_, kernels) in columns.items()}
    show_markdown(md_table([[g] + [f"{by_group[col][g]:.2f}" for col in columns] for g in groups]
                           + [["**GPU time a step**"] + [f"**{total:.2f}**" for total, _ in columns.values()]],
                           ["ms of kernel time a step"] + list(columns)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained", gridspec_kw={"width_ratios": [1, 1.6]})
    left = np.zeros(len(columns))
    for i, g in enumerate(groups):
        widths = [by_group[col][g] for col in columns]
        axes[0].barh(list(columns), widths, left=left, label=g, color=plt.cm.tab10(i))
        left += widths
    axes[0].invert_yaxis(); axes[0].legend(fontsize=7, loc="lower right")
    axes[0].set(xlabel="ms of GPU time a step", title="one nanoGPT training step, H100")
    top = [(f"ours: {name[:40]}", ms) for ms, _, name in now["ours"][1][:8]] + \
          [(f"torch: {name[:40]}", ms) for ms, _, name in now["torch"][1][:8]]
    axes[1].barh([t[0] for t in top], [t[1] for t in top], color=["C0"] * 8 + ["C1"] * 8)
    axes[1].invert_yaxis(); axes[1].tick_params(axis="y", labelsize=7)
    axes[1].set(xlabel="ms a step", title="the 8 largest kernels of each side (now)")
    show_markdown(md_table([[f"{ms:.3f}", calls, name[:70]] for ms, calls, name in now["ours"][1][:12]],
                           ["ms", "calls", "ours, now: kernel"]))
    show_markdown(md_table([[f"{ms:.3f}", calls, name[:70]] for ms, calls, name in now["torch"][1][:12]],
                           ["ms", "calls", "PyTorch: kernel"]))
''')

md(r"""
* **Then** (session 7, "ours, after 7f′"): about 40 ms of our 49 ms of GPU time were GEMMs, against
  about 23 ms of PyTorch's 32 — the same products (QKV, attention's two, the projections, the MLP,
  the tied head, each three times with backward), in float32 on CUDA cores on both sides (TF32 off):
  phase 05's GEMM against cuBLAS and CUTLASS. The fused attention softmax had just replaced the
  step-by-step middle of the attention (mask, scale, softmax, cuRAND's uniforms, the dropout compare
  and select, and their backward) by one kernel each way: 56.5 → 49.0 ms.
* **Since then**: phase 05's dispatcher learned split-K by waves for the weight gradients (one
  buffer, one reduction) and 64-wide tiles for narrow products, and its large tiles got faster; the
  flash kernels read nanoGPT's strided q, k, v in place and write dq, dk, dv as pieces of one buffer
  that the q/k/v split's backward takes whole (no copies); attention moved to rung 1c (3xTF32 on the
  tensor cores) with a one-pass backward; dropout's kernels went to 16-byte vectors.
* **Now** (2026-11-25): **32.7 ms of GPU time a step against PyTorch's 32.1**. The GEMMs are still
  the difference (25.7 ms against 23.3: our float32 kernels take 10% longer than cuBLAS's on these
  shapes). Attention is faster than PyTorch's memory-efficient kernels (3.1 ms against 3.7), so are
  LayerNorm (0.7 against 1.8) and AdamW with clipping (0.2 against 0.4); GELU (1.07 against 1.01) and
  dropout (0.8 against 0.5) are still slower. The host's work per
  step (Python, launches: about 17 ms) hides under the GPU's, so the step takes about as long as
  its kernels: 33.1 ms per iteration against PyTorch's 33.6 in the 5000-step run above.
""")

code(r'''
if all(path.exists() for path in profiles.values()):
    def per_call(kernels, pattern, calls_of):
        """µs a call: the summed time of the kernels matching ``pattern`` over the calls of ``calls_of``'s."""
        total = sum(ms for ms, _, name in kernels if re.search(pattern, name))
        calls = next(n for _, n, name in kernels if re.search(calls_of, name))
        return 1e3 * total / calls

    ln_rows = [["forward", per_call(before["ours"][1], "layer_norm_forward", "layer_norm_forward"),
                per_call(after["ours"][1], "layer_norm_forward", "layer_norm_forward"),
                per_call(after["torch"][1], "vectorized_layer_norm", "vectorized_layer_norm")],
               ["backward (dx, dweight; all its kernels)", per_call(before["ours"][1], "layer_norm_backward", "layer_norm_backward_warp"),
                per_call(after["ours"][1], "layer_norm_backward", "layer_norm_backward_warp"),
                per_call(after["torch"][1], "layer_norm_grad_input|GammaBeta", "layer_norm_grad_input")]]
    show_markdown(md_table([[what] + [f"{us:.1f}" for us in vals] + [f"{vals[2] / vals[1]:.1f}x"] for what, *vals in ln_rows],
                           ["LayerNorm [16384, 384], µs a call", "ours, before", "ours, after (one pass)", "PyTorch", "PyTorch / ours"]))
''')

md(r"""
LayerNorm (13 calls a step: two per block and `ln_f`, on B·T = 16384 rows of 384) is one of the
places where ours is now ahead: the one-pass kernels of `layernorm.cu` (a row in a warp's
registers, read once; the backward's dx and its dweight/dbias partials in the same pass, a small
column-sum stage after it) take 16.5 µs forward and 37 µs backward a call, PyTorch's 35 and 103.
""")

code("session.report()")

def keep_ids(cells, old_path):
    """Give each cell the id of the cell of ``old_path`` with the same type and source (first unused
    one), so that regenerating changes the ids of the edited cells only: small diffs."""
    if not Path(old_path).exists():
        return
    unused = {}
    for cell in nbformat.read(old_path, as_version=4).cells:
        unused.setdefault((cell.cell_type, cell.source), []).append(cell.id)
    for cell in cells:
        ids = unused.get((cell.cell_type, cell.source))
        if ids:
            cell.id = ids.pop(0)


nb = new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                         "language_info": {"name": "python"}})
out = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "phases" / "07_transformer" / "07_transformer.ipynb"
keep_ids(cells, out)
nbformat.write(nb, out)
print(f"wrote {out}: {len(cells)} cells")
