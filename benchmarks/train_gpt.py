"""Train the character-level GPT of phase 07 on Tiny Shakespeare, ours or PyTorch's, and race them.

    python benchmarks/train_gpt.py                       # the seed config (2 layers, d 64) on cuda
    python benchmarks/train_gpt.py --config nanogpt      # nanoGPT's shakespeare_char (6 x 384, 5000 iters)
    python benchmarks/train_gpt.py --torch               # then the same model in PyTorch, for the race
    python benchmarks/train_gpt.py --torch-only          # the PyTorch twin alone (same initial weights):
                                                         # the race's two halves in two processes
    python benchmarks/train_gpt.py --device cpu --iters 20 --eval-iters 2   # a smoke test
    python benchmarks/train_gpt.py --config nanogpt --checkpoint ck.safetensors --time-limit 480
                                                         # stops at an evaluation after 480 s and
                                                         # saves; the same command resumes there

Both sides train the same model from the same initial weights (ours, copied by name into a PyTorch
twin with nanoGPT's layout) on the same batches (window starts from one seeded minitorch.Generator):
AdamW with decay/no-decay groups, nanoGPT's warmup + cosine learning rate, gradient clipping at
1.0, float32 everywhere, TF32 off on the PyTorch side. Only the dropout masks differ.

Every ``eval_interval`` steps: mean train and val loss over ``eval_iters`` batches (dropout off).
The batches and dropout masks of each stretch between evaluations come from generators seeded with
(seed + step), so a run stopped at an evaluation and resumed from its checkpoint (model, AdamW
moments, schedule, losses so far) trains exactly as one that never stopped.
ms/iter times the training steps only (synchronized at each evaluation, evaluations excluded).
Writes, per side, ``benchmarks/results/07-transformer__train-gpt-<config>__<side>__<device>.json``
(config, losses, ms/iter, a time breakdown of one step, device and versions) and a generated
sample (``... .sample.txt``).
"""
import argparse
import datetime
import json
import math
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import minitorch as mt  # noqa: E402
from minitorch.data.shakespeare import TinyShakespeare  # noqa: E402
from minitorch.models.gpt import GPT, GPTConfig, warmup_cosine  # noqa: E402
from minitorch.utils.race import slug  # noqa: E402

# nanoGPT's config/train_shakespeare_char.py (bias False and grad_clip 1.0 are train.py's defaults)
CONFIGS = {
    "seed": dict(n_layer=2, n_head=4, n_embd=64, block_size=64, batch_size=32, dropout=0.0, bias=False,
                 max_iters=1000, eval_interval=100, eval_iters=20, learning_rate=1e-3, min_lr=1e-4,
                 warmup_iters=100, beta1=0.9, beta2=0.99, weight_decay=0.1, grad_clip=1.0),
    "nanogpt": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, dropout=0.2, bias=False,
                    max_iters=5000, eval_interval=250, eval_iters=200, learning_rate=1e-3, min_lr=1e-4,
                    warmup_iters=100, beta1=0.9, beta2=0.99, weight_decay=0.1, grad_clip=1.0),
}
MODEL_KEYS = ("n_layer", "n_head", "n_embd", "block_size", "dropout", "bias")


# ---- the two sides: the same five operations ----------------------------------------------------

class Ours:
    """minitorch: the GPT of minitorch.models.gpt."""
    name = "ours"

    def __init__(self, model_config, run, device):
        self.device = device
        self.model = GPT(model_config).to(device)
        self.opt = self.model.configure_optimizers(run["weight_decay"], run["learning_rate"],
                                                   (run["beta1"], run["beta2"]))
        self.sched = warmup_cosine(self.opt, run["warmup_iters"], run["max_iters"], run["min_lr"])
        self.clip = run["grad_clip"]

    def batch(self, x, y):
        return x.to(self.device), y.to(self.device)

    def forward(self, x, y):
        return self.model(x, y)[1]

    def backward(self, loss):
        loss.backward()

    def step(self):
        mt.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.sched.step()

    def sync(self):
        if self.device != "cpu":
            mt.cuda.synchronize()

    def seed(self, seed):
        mt.manual_seed(seed)

    def save(self, path, loop):
        mt.save({"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                 "scheduler": self.sched.state_dict(), "loop": loop}, path)

    def load(self, path):
        ckpt = mt.load(path, map_location=self.device)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.sched.load_state_dict(ckpt["scheduler"])
        return ckpt["loop"]

    def no_grad(self):
        return mt.no_grad()

    def generate(self, ids, n, generator_seed):
        context = mt.tensor([ids], dtype=mt.int64, device=self.device)
        out = self.model.generate(context, n, temperature=0.8, top_k=200,
                                  generator=mt.Generator(self.device).manual_seed(generator_seed))
        return out[0].tolist()


class Theirs(Ours):
    """PyTorch: nanoGPT's model written in torch.nn, initialized with our weights."""
    name = "torch"

    def __init__(self, model_config, run, device, initial_state):
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False        # a fair fp32 race: no TF32 on either side
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        self.torch, self.device = torch, device
        self.model = torch_gpt(model_config).to(device)
        state = {name: torch.from_numpy(np.array(t.numpy())) for name, t in initial_state.items()}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        assert set(missing) <= {"lm_head.weight"} and not unexpected, (missing, unexpected)   # tied
        params = list(self.model.parameters())
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": run["weight_decay"]},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        self.opt = torch.optim.AdamW(groups, lr=run["learning_rate"], betas=(run["beta1"], run["beta2"]))
        sched = torch.optim.lr_scheduler
        warm = run["warmup_iters"]
        self.sched = sched.SequentialLR(self.opt, [
            sched.LinearLR(self.opt, start_factor=1.0 / (warm + 1), end_factor=1.0, total_iters=warm),
            sched.CosineAnnealingLR(self.opt, T_max=run["max_iters"] - warm, eta_min=run["min_lr"])],
            milestones=[warm])
        self.clip = run["grad_clip"]

    def batch(self, x, y):
        t = self.torch
        return t.from_numpy(x.numpy()).to(self.device), t.from_numpy(y.numpy()).to(self.device)

    def forward(self, x, y):
        return self.model(x, y)

    def step(self):
        self.torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.sched.step()

    def sync(self):
        if self.device != "cpu":
            self.torch.cuda.synchronize()

    def seed(self, seed):
        self.torch.manual_seed(seed)

    def save(self, path, loop):
        self.torch.save({"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                         "scheduler": self.sched.state_dict(), "loop": loop}, path)

    def load(self, path):
        ckpt = self.torch.load(path, map_location=self.device, weights_only=False)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.sched.load_state_dict(ckpt["scheduler"])
        return ckpt["loop"]

    def no_grad(self):
        return self.torch.no_grad()

    def generate(self, ids, n, generator_seed):
        t = self.torch
        gen = t.Generator(self.device).manual_seed(generator_seed)
        idx = t.tensor([ids], dtype=t.int64, device=self.device)
        block = self.model.block_size
        with t.no_grad():
            for _ in range(n):
                logits = self.model(idx[:, -block:])[:, -1] / 0.8
                kth = logits.topk(min(200, logits.shape[-1]))[0][:, -1:]
                probs = t.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)
                idx = t.cat((idx, t.multinomial(probs, 1, generator=gen)), dim=1)
        return idx[0].tolist()


def torch_gpt(c):
    """nanoGPT's GPT (model.py) in torch.nn layers and its parameter names; forward(idx, targets)
    returns the loss, forward(idx) the logits."""
    import torch
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(c.n_embd, bias=c.bias), nn.LayerNorm(c.n_embd, bias=c.bias)
            self.attn = nn.Module()
            self.attn.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
            self.attn.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
            self.mlp = nn.Sequential()
            self.mlp.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
            self.mlp.gelu = nn.GELU()
            self.mlp.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
            self.mlp.dropout = nn.Dropout(c.dropout)
            self.resid_dropout = nn.Dropout(c.dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, c.n_head, C // c.n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=c.dropout if self.training else 0.0,
                                               is_causal=True)
            x = x + self.resid_dropout(self.attn.c_proj(y.transpose(1, 2).reshape(B, T, C)))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(nn.Module):
        block_size = c.block_size

        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(c.vocab_size, c.n_embd), wpe=nn.Embedding(c.block_size, c.n_embd),
                drop=nn.Dropout(c.dropout), h=nn.ModuleList([Block() for _ in range(c.n_layer)]),
                ln_f=nn.LayerNorm(c.n_embd, bias=c.bias)))
            self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return logits if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    return TorchGPT()


# ---- the loop -----------------------------------------------------------------------------------

def estimate_loss(side, data, run, seed):
    """Mean loss per split over ``eval_iters`` batches (the same batches for both sides), dropout off."""
    side.model.eval()
    out = {}
    with side.no_grad():
        for split in ("train", "val"):
            gen = mt.Generator().manual_seed(seed)
            losses = [side.forward(*side.batch(*data.get_batch(split, run["batch_size"], run["block_size"],
                                                               generator=gen))).item()
                      for _ in range(run["eval_iters"])]
            out[split] = float(np.mean(losses))
    side.model.train()
    return out


def time_breakdown(side, data, run, steps=10):
    """Milliseconds per phase of a training step (batch copy, forward, backward, optimizer step),
    each synchronized: medians over ``steps`` steps. Run after training (it takes optimizer steps)."""
    gen = mt.Generator().manual_seed(12345)
    parts = {"batch": [], "forward": [], "backward": [], "step": []}
    for _ in range(steps):
        x, y = data.get_batch("train", run["batch_size"], run["block_size"], generator=gen)
        side.sync()
        t0 = time.perf_counter()
        x, y = side.batch(x, y)
        side.sync()
        t1 = time.perf_counter()
        loss = side.forward(x, y)
        side.sync()
        t2 = time.perf_counter()
        side.backward(loss)
        side.sync()
        t3 = time.perf_counter()
        side.step()
        side.sync()
        t4 = time.perf_counter()
        for key, ms in zip(parts, np.diff([t0, t1, t2, t3, t4]) * 1e3):
            parts[key].append(float(ms))
    return {key: float(np.median(v)) for key, v in parts.items()}


def train(side, data, run, seed, log=print, checkpoint=None, time_limit=math.inf):
    """Train ``side`` for ``max_iters`` steps, evaluating every ``eval_interval`` and at the end.
    Returns ``{"history": [{"step", "train", "val"}...], "ms_per_iter", "train_seconds"}``, or None
    when ``time_limit`` seconds passed first: then the state at the last evaluation is saved to
    ``checkpoint`` (a path), and calling again with the same arguments resumes from it."""
    loop = {"history": [], "train_seconds": 0.0, "step": 0}
    if checkpoint is not None and Path(checkpoint).exists():
        loop = side.load(checkpoint)
        log(f"{side.name}: resumed at step {loop['step']} from {checkpoint}")
    history, it, last_loss, started = loop["history"], loop["step"], math.nan, time.perf_counter()
    start_step = it                                          # each call trains at least one stretch
    while True:
        if not history or history[-1]["step"] != it:        # a resumed run evaluated here already
            losses = estimate_loss(side, data, run, seed + 1)
            history.append({"step": it, **losses})
            ms = loop["train_seconds"] / it * 1e3 if it else math.nan
            log(f"{side.name:5s} step {it:5d}: train {losses['train']:.4f}, val {losses['val']:.4f}, "
                f"last batch {last_loss:.4f}, {ms:.1f} ms/iter")
        if it == run["max_iters"]:
            if checkpoint is not None:                      # finished: calling again only reports
                side.save(checkpoint, {**loop, "step": it})
            break
        if it > start_step and time.perf_counter() - started > time_limit and checkpoint is not None:
            side.save(checkpoint, {**loop, "step": it})
            log(f"{side.name}: {time_limit:.0f} s passed; saved step {it} to {checkpoint}")
            return None
        gen = mt.Generator().manual_seed(seed + it)          # batches and dropout: a function of the step
        side.seed(seed + it)
        steps = min(run["eval_interval"], run["max_iters"] - it)
        side.sync()
        t0 = time.perf_counter()
        for _ in range(steps):
            x, y = data.get_batch("train", run["batch_size"], run["block_size"], generator=gen)
            loss = side.forward(*side.batch(x, y))
            side.backward(loss)
            side.step()
        last_loss = loss.item()                     # synchronizes: the segment's time is complete
        loop["train_seconds"] += time.perf_counter() - t0
        it += steps
    return {"history": history, "ms_per_iter": loop["train_seconds"] / run["max_iters"] * 1e3,
            "train_seconds": loop["train_seconds"]}


def device_name(device):
    if device == "cpu":
        return platform.processor() or platform.machine() or "cpu"
    return mt.cuda.get_device_name()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="seed")
    p.add_argument("--device", default="cuda")
    p.add_argument("--torch", action="store_true", help="then train the PyTorch twin (the race)")
    p.add_argument("--torch-only", action="store_true",
                   help="train only the PyTorch twin (initialized from ours, which is built but not trained)")
    p.add_argument("--iters", type=int, help="override max_iters (the cosine ends there)")
    p.add_argument("--eval-interval", type=int)
    p.add_argument("--eval-iters", type=int)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--sample-chars", type=int, default=500)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    p.add_argument("--checkpoint", type=Path, help="save here when --time-limit passes; resume from it")
    p.add_argument("--time-limit", type=float, default=math.inf,
                   help="seconds of training before saving to --checkpoint and stopping (at an evaluation)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    run = dict(CONFIGS[args.config])
    for key in ("iters", "eval_interval", "eval_iters"):
        value = getattr(args, key)
        if value is not None:
            run["max_iters" if key == "iters" else key] = value
    run["warmup_iters"] = min(run["warmup_iters"], run["max_iters"] // 10)   # short runs warm up too
    data = TinyShakespeare()
    model_config = GPTConfig(vocab_size=data.tokenizer.vocab_size, **{k: run[k] for k in MODEL_KEYS})
    mt.manual_seed(args.seed)
    sides = [Ours(model_config, run, args.device)]
    initial = {name: t.cpu() for name, t in sides[0].model.state_dict().items()}
    if args.torch or args.torch_only:
        sides.append(Theirs(model_config, run, args.device, initial))
    parameters = sum(int(p.numel()) for p in sides[0].model.parameters())
    if args.torch_only:
        sides = sides[1:]
    args.out.mkdir(parents=True, exist_ok=True)
    for side in sides:
        checkpoint = args.checkpoint and args.checkpoint.with_suffix(f".{side.name}{args.checkpoint.suffix}")
        record = train(side, data, run, args.seed, checkpoint=checkpoint, time_limit=args.time_limit)
        if record is None:
            print(f"stopped after --time-limit: run the same command again to resume from {checkpoint}")
            return
        record["breakdown_ms"] = time_breakdown(side, data, run)
        # nanoGPT keeps the checkpoint of the lowest val loss (the model overfits this small corpus:
        # val rises again late in the run) and reports that loss: we report it beside the final one
        best = min(record["history"], key=lambda h: h["val"])
        record["best_val"] = {"step": best["step"], "val": best["val"], "train": best["train"]}
        side.model.eval()
        sample = data.tokenizer.decode(side.generate(data.tokenizer.encode("\n"), args.sample_chars, args.seed))
        stem = f"07-transformer__train-gpt-{args.config}__{side.name}__{slug(device_name(args.device))}"
        record.update(config=args.config, side=side.name, run=run, model=asdict(model_config),
                      parameters=parameters,
                      device=device_name(args.device), date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                      python=platform.python_version(), numpy=np.__version__, sample=sample,
                      notes="fp32; TF32 off on the torch side; same initial weights and batches; "
                            "ms_per_iter over training steps only (evaluations excluded)")
        if side.name == "torch":
            record["torch"] = side.torch.__version__
        (args.out / f"{stem}.json").write_text(json.dumps(record, indent=1))
        (args.out / f"{stem}.sample.txt").write_text(sample)
        print(f"{side.name}: {record['ms_per_iter']:.1f} ms/iter, final val {record['history'][-1]['val']:.4f}, "
              f"best val {best['val']:.4f} at step {best['step']}, "
              f"step breakdown (ms) {record['breakdown_ms']}\n{sample[:200]}\n-> {args.out / stem}.json")


if __name__ == "__main__":
    main()
