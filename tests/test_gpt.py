"""Phase 07: Tiny Shakespeare (tokenizer, split, batches) and the GPT of minitorch.models.gpt.

The GPT is checked against a PyTorch twin written here with torch.nn layers and nanoGPT's names:
same weights (copied by name), same logits, loss and gradients. The GPT tests skip while
nn.Embedding / nn.LayerNorm / nn.GELU / F.scaled_dot_product_attention are not in minitorch.
"""
import hashlib
import math

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.data.shakespeare import CharTokenizer, TinyShakespeare, load_text
from minitorch.models.gpt import GPT, GPTConfig

torch = pytest.importorskip("torch")

LAYERS = ("Embedding", "LayerNorm", "GELU")
needs_layers = pytest.mark.skipif(
    not all(hasattr(nn, name) for name in LAYERS)
    or not hasattr(nn.functional, "scaled_dot_product_attention"),
    reason="the GPT needs nn.Embedding, nn.LayerNorm, nn.GELU and F.scaled_dot_product_attention")

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 3


# ---- the corpus and the tokenizer -------------------------------------------------------------

def test_corpus_is_the_documented_cut():
    text = load_text()
    assert len(text) == 1_115_382 and len(set(text)) == 71
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert digest == "71f7ad4a13a30d1bfdfb60f67acbdefab6d1c3d727852047db4a2226456ffa1e"   # data/shakespeare/README.md
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\n")


def test_tokenizer_round_trip_and_sorted_vocabulary():
    tok = CharTokenizer(TEXT)
    assert tok.itos == sorted(set(TEXT)) and tok.vocab_size == len(set(TEXT))
    ids = tok.encode(TEXT)
    assert tok.decode(ids) == TEXT
    assert tok.decode(minitorch.tensor(ids)) == TEXT            # a tensor decodes too
    assert ids[:2] == [tok.stoi["F"], tok.stoi["i"]] and tok.stoi[" "] < tok.stoi["A"] < tok.stoi["a"]


def test_tokenizer_errors_name_the_culprits():
    tok = CharTokenizer(TEXT)
    with pytest.raises(ValueError, match=r"vocabulary of \d+: 'Q', 'x'$"):
        tok.encode("Quixote")
    with pytest.raises(ValueError, match=rf"\[-1, {tok.vocab_size}\]"):
        tok.decode([0, -1, tok.vocab_size])
    with pytest.raises(ValueError, match="non-empty"):
        CharTokenizer("")


def test_split_is_first_90_percent_then_the_rest():
    data = TinyShakespeare(TEXT)
    ids = np.array(data.tokenizer.encode(TEXT))
    cut = int(0.9 * len(ids))
    np.testing.assert_array_equal(data.train, ids[:cut])
    np.testing.assert_array_equal(data.val, ids[cut:])
    with pytest.raises(ValueError, match="'train' or 'val'"):
        data.split("test")


@pytest.mark.parametrize("split", ["train", "val"])
def test_get_batch_windows_are_shifted_by_one(split):
    data = TinyShakespeare(TEXT)
    ids = data.split(split)
    x, y = data.get_batch(split, 5, 7, generator=minitorch.Generator().manual_seed(1))
    assert x.shape == (5, 7) and y.shape == (5, 7) and x.dtype == minitorch.int64 == y.dtype
    x, y = x.numpy(), y.numpy()
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])
    for row_x, row_y in zip(x, y):                              # each row is a window of the split
        starts = [s for s in range(len(ids) - 7) if (ids[s:s + 7] == row_x).all() and ids[s + 7] == row_y[-1]]
        assert starts, "a row of x, y is not a window of the split"


def test_get_batch_is_reproducible_and_covers_the_split():
    data = TinyShakespeare(TEXT)
    a = data.get_batch("train", 4, 8, generator=minitorch.Generator().manual_seed(3))[0].numpy()
    b = data.get_batch("train", 4, 8, generator=minitorch.Generator().manual_seed(3))[0].numpy()
    np.testing.assert_array_equal(a, b)
    gen = minitorch.Generator().manual_seed(0)
    first = {tuple(data.get_batch("train", 64, 8, generator=gen)[0].numpy()[:, 0]) for _ in range(20)}
    assert len({v for row in first for v in row}) > 5           # starts vary


def test_get_batch_on_the_device_equals_the_cpu_batch(device):
    data = TinyShakespeare(TEXT)
    x, y = data.get_batch("train", 6, 9, generator=minitorch.Generator().manual_seed(5), device=device)
    cx, cy = data.get_batch("train", 6, 9, generator=minitorch.Generator().manual_seed(5))
    assert x.device == minitorch.device(device) and y.device == minitorch.device(device)
    assert x.is_contiguous() and y.is_contiguous()
    np.testing.assert_array_equal(x.cpu().numpy(), cx.numpy())
    np.testing.assert_array_equal(y.cpu().numpy(), cy.numpy())


def test_get_batch_rejects_a_block_longer_than_the_split():
    data = TinyShakespeare(TEXT)
    with pytest.raises(ValueError, match="too few"):
        data.get_batch("val", 2, len(data.val))


# ---- the GPT against a PyTorch twin -----------------------------------------------------------

class TorchBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(c.n_embd, bias=c.bias)
        self.attn = torch.nn.Module()
        self.attn.c_attn = torch.nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.attn.c_proj = torch.nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.ln_2 = torch.nn.LayerNorm(c.n_embd, bias=c.bias)
        self.mlp = torch.nn.Sequential()
        self.mlp.c_fc = torch.nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.mlp.gelu = torch.nn.GELU()
        self.mlp.c_proj = torch.nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.n_head = c.n_head

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln_2(x))


class TorchGPT(torch.nn.Module):
    """nanoGPT's model in torch.nn layers (dropout 0), weights tied as there."""

    def __init__(self, c):
        super().__init__()
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(c.vocab_size, c.n_embd), wpe=torch.nn.Embedding(c.block_size, c.n_embd),
            h=torch.nn.ModuleList([TorchBlock(c) for _ in range(c.n_layer)]),
            ln_f=torch.nn.LayerNorm(c.n_embd, bias=c.bias)))
        self.lm_head = torch.nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1]))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return logits, torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


def twins(**overrides):
    config = GPTConfig(**{**dict(block_size=12, vocab_size=13, n_layer=2, n_head=2, n_embd=16, bias=True),
                          **overrides})
    minitorch.manual_seed(0)
    ours = GPT(config)
    theirs = TorchGPT(config)
    state = {name: torch.from_numpy(t.numpy().copy()) for name, t in ours.state_dict().items()}
    missing, unexpected = theirs.load_state_dict(state, strict=False)
    assert set(missing) <= {"lm_head.weight"} and not unexpected     # tied: wte.weight is lm_head.weight
    return config, ours, theirs


@needs_layers
@pytest.mark.parametrize("bias", [True, False])
def test_gpt_matches_torch_logits_loss_and_gradients(bias, rng):
    config, ours, theirs = twins(bias=bias)
    idx = rng.integers(0, config.vocab_size, (3, config.block_size))
    targets = rng.integers(0, config.vocab_size, (3, config.block_size))
    logits, loss = ours(minitorch.tensor(idx), minitorch.tensor(targets))
    t_logits, t_loss = theirs(torch.from_numpy(idx), torch.from_numpy(targets))
    assert logits.shape == (3, config.block_size, config.vocab_size)
    np.testing.assert_allclose(logits.numpy(), t_logits.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-5)
    loss.backward()
    t_loss.backward()
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-3, atol=1e-6,
                                   err_msg=name)


@needs_layers
def test_gpt_without_targets_scores_the_last_position(rng):
    config, ours, theirs = twins()
    idx = rng.integers(0, config.vocab_size, (2, 5))
    logits, loss = ours(minitorch.tensor(idx))
    t_logits, _ = theirs(torch.from_numpy(idx), torch.from_numpy(idx))
    assert loss is None and logits.shape == (2, 1, config.vocab_size)
    np.testing.assert_allclose(logits.numpy(), t_logits[:, -1:].detach().numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="block_size is 12"):
        ours(minitorch.zeros(1, 13, dtype=minitorch.int64))


@needs_layers
def test_gpt_names_tying_and_init_follow_nanogpt():
    config = GPTConfig(block_size=8, vocab_size=50, n_layer=4, n_head=2, n_embd=64)
    model = GPT(config)
    assert model.lm_head.weight is model.transformer.wte.weight
    names = dict(model.named_parameters())
    assert {"transformer.h.3.attn.c_attn.weight", "transformer.h.0.mlp.c_fc.bias", "transformer.ln_f.weight",
            "transformer.wpe.weight"} <= names.keys()
    std = lambda name: float(names[name].numpy().std())       # noqa: E731
    assert abs(std("transformer.h.1.attn.c_attn.weight") / 0.02 - 1) < 0.05
    assert abs(std("transformer.h.1.mlp.c_proj.weight") / (0.02 / math.sqrt(8)) - 1) < 0.05
    assert not names["transformer.h.1.attn.c_attn.bias"].numpy().any()
    assert (names["transformer.ln_f.weight"].numpy() == 1).all()
    assert model.get_num_params() == sum(p.numel() for p in model.parameters()) - 8 * 64


@needs_layers
def test_configure_optimizers_decays_matrices_only():
    model = GPT(GPTConfig(block_size=8, vocab_size=11, n_layer=1, n_head=2, n_embd=8))
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=3e-4, betas=(0.9, 0.95))
    assert isinstance(opt, minitorch.optim.AdamW)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() == 2 for p in decay["params"]) and all(p.dim() == 1 for p in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
    assert decay["lr"] == 3e-4 and decay["betas"] == (0.9, 0.95)


@needs_layers
def test_sinusoidal_positions_are_vaswanis_table():
    config = GPTConfig(block_size=10, vocab_size=11, n_layer=1, n_head=2, n_embd=8, position="sinusoidal")
    model = GPT(config)
    table = model.transformer.wpe.table.numpy()
    p, i = np.arange(10)[:, None], np.arange(4)[None, :]
    np.testing.assert_allclose(table[:, 0::2], np.sin(p / 10000 ** (2 * i / 8)), atol=1e-6)
    np.testing.assert_allclose(table[:, 1::2], np.cos(p / 10000 ** (2 * i / 8)), atol=1e-6)
    assert "transformer.wpe.weight" not in dict(model.named_parameters())
    assert model(minitorch.zeros(2, 10, dtype=minitorch.int64))[0].shape == (2, 1, 11)
    with pytest.raises(ValueError, match="'learned' or 'sinusoidal'"):
        GPT(GPTConfig(block_size=4, vocab_size=5, n_layer=1, n_head=1, n_embd=4, position="rotary"))


# ---- generation ------------------------------------------------------------------------------

@needs_layers
def test_generate_appends_tokens_past_the_block_size(rng):
    config, ours, _ = twins()
    ours.eval()
    idx = minitorch.tensor(rng.integers(0, config.vocab_size, (2, 4)))
    out = ours.generate(idx, 20, generator=minitorch.Generator().manual_seed(0))   # 24 > block_size 12
    assert out.shape == (2, 24) and out.dtype == minitorch.int64
    np.testing.assert_array_equal(out.numpy()[:, :4], idx.numpy())
    assert ((0 <= out.numpy()) & (out.numpy() < config.vocab_size)).all()


@needs_layers
def test_generate_top_k_1_is_greedy_and_top_k_keeps_the_k_best(rng):
    config, ours, theirs = twins()
    ours.eval()
    idx = rng.integers(0, config.vocab_size, (3, 4))
    out = ours.generate(minitorch.tensor(idx), 15, top_k=1).numpy()
    greedy = torch.from_numpy(idx)
    for _ in range(15):                                          # the twin, greedy, cropped to block_size
        logits, _ = theirs(greedy[:, -config.block_size:], greedy[:, -config.block_size:])
        greedy = torch.cat((greedy, logits[:, -1].argmax(-1, keepdim=True)), dim=1)
    np.testing.assert_array_equal(out, greedy.numpy())
    context = np.repeat(idx[:1], 200, axis=0)                    # 200 draws of one next token
    drawn = ours.generate(minitorch.tensor(context), 1, temperature=2.0, top_k=3,
                          generator=minitorch.Generator().manual_seed(1)).numpy()[:, -1]
    best3 = set(np.argsort(ours(minitorch.tensor(idx[:1]))[0].numpy()[0, -1])[-3:].tolist())
    assert set(drawn.tolist()) == best3                          # each of the 3 best, nothing else
