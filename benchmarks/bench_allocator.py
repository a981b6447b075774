"""The caching allocator (minitorch/cuda/allocator.py) against PyTorch's, on the same GPU.

1. Throughput: microseconds per malloc+free pair over a mixed-size sequence (512 B to 16 MiB,
   a window of 20 blocks alive at once, as in a training step), for ours (the block-splitting
   allocator), phase 01's exact-size pool, and ``torch.empty(nbytes, dtype=torch.uint8,
   device='cuda')`` + ``del`` (PyTorch's CUDACachingAllocator behind a tensor). Host time only:
   no kernel runs. Ours is timed on the allocator alone and under ``minitorch.empty`` (bool: one
   byte per element), whose Tensor and DeviceArray headers make it comparable with torch.empty.
2. Fragmentation: peak reserved / peak allocated bytes over a few training steps of the MNIST MLP
   (784-128-10, batch 128, SGD; random data of MNIST's shape: the sizes, not the values, matter)
   and of a GPT-like model (token and position embeddings by index_select, 2 blocks of causal
   self-attention and a ReLU MLP with pre-normalization, cross-entropy), in minitorch and the
   same model in PyTorch. 1.0 would mean every reserved byte is in use at the peak.

    python benchmarks/bench_allocator.py [--quick] [--fake] [--out DIR]

``--fake`` times part 1 for ours on tests/fake_cuda.py (no GPU; "cudaMalloc" is a host buffer).
Prints a table and writes JSON (GPU name, versions, date) to benchmarks/results/.
"""
import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import minitorch  # noqa: E402
from minitorch.cuda import memory  # noqa: E402

MiB = 1 << 20
SIZES = [512, 4096, 40_000, 401_408, 2 * MiB, 6 * MiB, 16 * MiB]     # bytes; drawn uniformly


def size_sequence(n, seed=0):
    rng = np.random.default_rng(seed)
    return [int(s) for s in rng.choice(SIZES, n)]


def pair_us(malloc, sizes, window=20, rounds=5):
    """Median microseconds per malloc+free pair: each round allocates ``sizes`` in turn and frees
    the oldest block whenever more than ``window`` are alive. A first round warms the cache."""
    times = []
    for r in range(rounds + 1):
        held = []
        t0 = time.perf_counter()
        for n in sizes:
            held.append(malloc(n))
            if len(held) > window:
                del held[0]
        held.clear()
        if r:
            times.append((time.perf_counter() - t0) / len(sizes) * 1e6)
    return statistics.median(times)


class _Patch:
    """The two monkeypatch calls tests/fake_cuda.install makes, done for good."""

    def setattr(self, obj, name, value):
        setattr(obj, name, value)

    def setitem(self, mapping, key, value):
        mapping[key] = value


def throughput_fake(sizes):
    sys.path.insert(0, str(ROOT / "tests"))
    import fake_cuda
    fake, _ = fake_cuda.install(_Patch(), limit=1 << 40)
    out = {}
    for name, cls in (("minitorch (block-splitting)", memory.Pool),
                      ("minitorch phase 01 (exact size)", memory.DevicePool)):
        pool = cls(0, fake)
        out[name] = pair_us(lambda n: pool.malloc(n, 0), sizes)
    return out


def throughput_cuda(sizes):
    import cupy as cp
    import torch
    stream = cp.cuda.get_current_stream().ptr
    ours, exact = memory.pool(0, cp), memory.DevicePool(0, cp)
    out = {"minitorch (block-splitting)": pair_us(lambda n: ours.malloc(n, stream), sizes),
           "minitorch phase 01 (exact size)": pair_us(lambda n: exact.malloc(n, stream), sizes),
           "minitorch.empty bool (a Tensor on top)":
               pair_us(lambda n: minitorch.empty(n, dtype=minitorch.bool, device="cuda"), sizes),
           "torch.empty uint8 (CUDACachingAllocator)":
               pair_us(lambda n: torch.empty(n, dtype=torch.uint8, device="cuda"), sizes)}
    exact.empty_cache()
    return out


# ---- models: the same code for minitorch and torch (``lib`` is either module) -----------------------
def mnist_mlp(lib):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden, self.relu, self.out = nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)

        def forward(self, x):
            return self.out(self.relu(self.hidden(x)))

    return MLP()


def gpt_like(lib, vocab=512, dim=256, heads=4, layers=2, seq=128):
    nn = lib.nn

    def norm(x):                                    # layer norm without its affine part
        mu = x.mean(-1, keepdim=True)
        centred = x - mu
        return centred / ((centred * centred).mean(-1, keepdim=True) + 1e-5).sqrt()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.up, self.relu, self.down = nn.Linear(dim, 4 * dim), nn.ReLU(), nn.Linear(4 * dim, dim)

        def forward(self, x, mask):
            b, t, _ = x.shape
            qkv = self.qkv(norm(x)).reshape(b, t, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
            q, k, v = (qkv[i].contiguous() for i in range(3))          # [b, heads, t, dim/heads]
            scores = q.matmul(k.transpose(-2, -1)) * (1.0 / (dim // heads) ** 0.5) + mask[:t, :t]
            att = scores.softmax(-1).matmul(v).permute(0, 2, 1, 3).contiguous().reshape(b, t, dim)
            x = x + self.proj(att)
            return x + self.down(self.relu(self.up(norm(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Parameter(lib.randn(vocab, dim) * 0.02)
            self.positions = nn.Parameter(lib.randn(seq, dim) * 0.02)
            for i in range(layers):
                setattr(self, f"block{i}", Block())
            self.head = nn.Linear(dim, vocab)

        def forward(self, idx, mask):
            b, t = idx.shape
            x = self.tokens.index_select(0, idx.reshape(b * t)).reshape(b, t, dim) + self.positions[:t]
            for i in range(layers):
                x = getattr(self, f"block{i}")(x, mask)
            return self.head(norm(x)).reshape(b * t, vocab)

    return GPT()


def training_peaks(lib, name, device, steps):
    """(peak allocated, peak reserved) bytes over ``steps`` SGD steps of model ``name`` on ``device``;
    None on cpu (no allocator to read)."""
    rng = np.random.default_rng(0)
    if name == "mnist_mlp":
        model = mnist_mlp(lib)
        batch = [lib.tensor(rng.standard_normal((128, 784)).astype(np.float32), device=device),
                 lib.tensor(rng.integers(0, 10, 128), device=device)]
    else:
        model = gpt_like(lib)
        tokens = rng.integers(0, 512, (16, 129))
        mask = np.triu(np.full((128, 128), -1e9, np.float32), 1)
        batch = [lib.tensor(tokens[:, :-1], device=device), lib.tensor(mask, device=device),
                 lib.tensor(tokens[:, 1:].reshape(-1), device=device)]
    model = model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    cuda = lib.cuda if device == "cuda" else None
    if cuda is not None:
        cuda.synchronize()
        cuda.empty_cache()
        cuda.reset_peak_memory_stats()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(*batch[:-1]), batch[-1])
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    if cuda is None:
        return None, losses
    cuda.synchronize()
    return (int(cuda.max_memory_allocated()), int(cuda.max_memory_reserved())), losses


def fragmentation(steps):
    import torch
    out = {}
    for name in ("mnist_mlp", "gpt_like"):
        for lib in (minitorch, torch):
            (allocated, reserved), _ = training_peaks(lib, name, "cuda", steps)
            out[f"{name} / {lib.__name__}"] = {"peak_allocated_bytes": allocated, "peak_reserved_bytes": reserved,
                                               "reserved_over_allocated": reserved / allocated}
    out["minitorch memory_stats after gpt_like"] = {k: v for k, v in minitorch.cuda.memory_stats().items()
                                                   if ".all." in k or k.startswith("num_")}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="shorter sequences and fewer training steps")
    p.add_argument("--fake", action="store_true", help="time ours on tests/fake_cuda.py (no GPU)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = p.parse_args()
    sizes = size_sequence(500 if args.quick else 5000)
    steps = 3 if args.quick else 10
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "sizes_bytes": SIZES, "pairs": len(sizes), "window": 20, "training_steps": steps}
    if args.fake:
        from minitorch.utils.race import environment
        result["environment"] = environment("cpu")
        result["throughput_us_per_pair_fake_gpu"] = throughput_fake(sizes)
        tag = "fake-gpu"
    else:
        import torch
        from minitorch.utils.race import environment
        result["environment"] = environment("cuda", torch)
        result["throughput_us_per_pair"] = throughput_cuda(sizes)
        result["fragmentation"] = fragmentation(steps)
        tag = result["environment"]["gpu_name"].lower().replace(" ", "-")
    for section in ("throughput_us_per_pair", "throughput_us_per_pair_fake_gpu"):
        if section in result:
            print(f"\nmalloc+free, us per pair ({len(sizes)} pairs, sizes {SIZES}, 20 alive):")
            for name, us in result[section].items():
                print(f"  {name:<44} {us:8.2f}")
    if "fragmentation" in result:
        print(f"\npeak reserved / peak allocated over {steps} training steps:")
        print(f"  {'model / library':<28} {'allocated MiB':>14} {'reserved MiB':>13} {'ratio':>7}")
        for name, row in result["fragmentation"].items():
            if "reserved_over_allocated" in row:
                print(f"  {name:<28} {row['peak_allocated_bytes'] / MiB:14.2f} "
                      f"{row['peak_reserved_bytes'] / MiB:13.2f} {row['reserved_over_allocated']:7.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_allocator-{tag}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
