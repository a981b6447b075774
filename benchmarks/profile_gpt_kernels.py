"""GPU time of one nanoGPT training step, kernel by kernel, ours and PyTorch's, on cuda.

torch.profiler (CUPTI) records every kernel the process launches, CuPy's (ours) as well as
PyTorch's. Both sides are nanoGPT's shakespeare-char model (benchmarks/train_gpt.py, ``nanogpt``)
from the same initial weights on the same batches, float32, TF32 off on the PyTorch side. Each
side runs 5 warm-up steps, then 5 profiled ones; the table gives the kernel time per step (ms) and
calls per step, largest first. Kernel time only: the host's Python and launch time is not in it.

    python benchmarks/profile_gpt_kernels.py [--steps 5] [--top 45] > profile.log

The printed format (``==== <side>: GPU kernel time per step <ms> ms``, then ``<ms> ms <calls>x
<kernel>`` lines) is what the 07 notebook's "where the time goes" section reads from
benchmarks/results/logs/07-nanogpt-profile-per-kernel*.log.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import minitorch as mt  # noqa: E402
import train_gpt  # noqa: E402
from minitorch.data.shakespeare import TinyShakespeare  # noqa: E402
from minitorch.models.gpt import GPTConfig  # noqa: E402

from torch.profiler import ProfilerActivity, profile  # noqa: E402


def kernel_times(side, data, run, steps):
    """[(ms per step, calls per step, kernel name)] of ``steps`` profiled training steps, largest first."""
    generator = mt.Generator().manual_seed(3)

    def step():
        x, y = data.get_batch("train", run["batch_size"], run["block_size"], generator=generator)
        side.backward(side.forward(*side.batch(x, y)))
        side.step()

    for _ in range(5):                 # warm-up: kernels compiled, allocator caches filled
        step()
    side.sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        side.sync()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if us > 0:
            rows.append((us / steps / 1e3, e.count // steps, e.key[:110]))
    return sorted(rows, reverse=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--top", type=int, default=45)
    args = p.parse_args()
    run, data = dict(train_gpt.CONFIGS["nanogpt"]), TinyShakespeare()
    config = GPTConfig(vocab_size=data.tokenizer.vocab_size, **{k: run[k] for k in train_gpt.MODEL_KEYS})
    mt.manual_seed(1)
    ours = train_gpt.Ours(config, run, "cuda")
    initial = {name: t.cpu() for name, t in ours.model.state_dict().items()}
    theirs = train_gpt.Theirs(config, run, "cuda", initial)
    for side in (ours, theirs):
        rows = kernel_times(side, data, run, args.steps)
        print(f"\n==== {side.name}: GPU kernel time per step {sum(r[0] for r in rows):.2f} ms")
        for ms, calls, name in rows[:args.top]:
            print(f"{ms:8.3f} ms {calls:4d}x  {name}")


if __name__ == "__main__":
    main()
