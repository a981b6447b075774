"""Host cost of one training step, without a GPU: the seed CNN (fused and as written) and an MNIST MLP on the
fake GPU of tests/fake_cuda.py, whose kernels are stubs and whose launches only count.

    python benchmarks/hostcost_step.py [--steps 300] [--repeats 7] [--model cnn|mlp|both|gpt] [--top 25]

The loop is race_cnn_epoch.py's (``--profile``): zero_grad, forward, cross-entropy, backward,
SGD with momentum, batch 64 drawn by a shuffling DataLoader from random data of MNIST's shape;
the CNN is the seed's, fused by ``fuse_conv_relu(max_pool=True)`` as in the race, and as written
(separate Conv2d, ReLU and MaxPool2d layers, the race's other row); the MLP is
784-128-10 with ReLU. Every kernel of that step is dispatched, allocated for and launched as on
the H100 (the fake says sm_90 and 132 SMs, so the same rungs are picked), but nothing runs: what
is timed is the Python between the launches, which is all of a step's time on the H100 host
(the GPU work of a step is a few microseconds). The profile then shows where it goes.

Prints, per model: microseconds per step (the minimum over ``--repeats`` runs of ``--steps``
steps, of CPU time and of wall time: on a shared machine only the minimum is repeatable, and CPU
time leaves out the time other processes ran), launches and allocations per step, then the cProfile top ``--top`` by own time per step. To compare two checkouts, run the
same copy of this script beside each (it imports the ``minitorch`` next to its own folder).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import minitorch  # noqa: E402
import fake_cuda  # noqa: E402

FAKE = fake_cuda.install_gpu()             # before the cuda backend is first imported

from minitorch import nn  # noqa: E402
from minitorch.data import DataLoader, TensorDataset  # noqa: E402
from minitorch.nn.conv import fuse_conv_relu  # noqa: E402
import race_cnn_epoch  # noqa: E402  (the race's model and training loop)

BATCH, LR, MOMENTUM, SEED, SAMPLES = 64, 0.05, 0.9, 0, 6400


def seed_cnn():
    """The race's seed CNN, on the fake cuda, fused conv+ReLU+pool as the race fuses it."""
    model = race_cnn_epoch.seed_cnn(minitorch).to("cuda")
    fuse_conv_relu(model, max_pool=True)
    return model, (1, 28, 28)


def seed_cnn_as_written():
    """The race's seed CNN as written: Conv2d, ReLU and MaxPool2d as separate layers."""
    return race_cnn_epoch.seed_cnn(minitorch).to("cuda"), (1, 28, 28)


def mnist_mlp():
    """784-128-10 with ReLU, on flattened images."""
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda"), (784,)


def trainer(make):
    """A function that runs ``steps`` training steps of the model ``make`` builds."""
    minitorch.manual_seed(SEED)
    model, shape = make()
    rng = np.random.default_rng(SEED)
    x = minitorch.tensor(rng.standard_normal((SAMPLES,) + shape, dtype=np.float32), device="cuda")
    y = minitorch.tensor(rng.integers(0, 10, SAMPLES), device="cuda")
    loader = DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=True, seed=SEED)
    optimizer = minitorch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = nn.CrossEntropyLoss()

    return lambda steps: race_cnn_epoch.train_steps(model, loader, optimizer, loss_fn, steps)


def nanogpt_trainer(batch=16):
    """``steps`` training steps of nanoGPT's shakespeare-char model as benchmarks/train_gpt.py runs
    it (AdamW, gradient clipping, dropout 0.2, flash attention), on random tokens: the model's own
    shapes but ``batch`` sequences (the race's 64 would need ~4x the host memory the fake backs
    its "device" with; the host work per step barely depends on it, the split-K choices a little)."""
    import train_gpt
    from minitorch.models.gpt import GPTConfig
    run = dict(train_gpt.CONFIGS["nanogpt"], batch_size=batch)
    config = GPTConfig(vocab_size=65, **{k: run[k] for k in train_gpt.MODEL_KEYS})
    minitorch.manual_seed(SEED)
    ours = train_gpt.Ours(config, run, "cuda")
    rng = np.random.default_rng(SEED)
    x, y = (minitorch.tensor(rng.integers(0, 65, (batch, run["block_size"])), device="cuda") for _ in range(2))

    def steps_of(steps):
        for _ in range(steps):
            ours.backward(ours.forward(x, y))
            ours.step()
    return steps_of


def measure(name, make, steps, repeats, top):
    run = make() if make is nanogpt_trainer else trainer(make)
    run(steps)                                           # warm-up: caches, plans, free lists
    pool = minitorch.cuda.memory.pool(0, FAKE)
    launches, mallocs = FAKE.launches, pool.loaned[0].count_added
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        run(steps)
        cpu.append((time.process_time() - c0) / steps * 1e6)
        times.append((time.perf_counter() - t0) / steps * 1e6)
    per_run = repeats * steps
    print(f"\n{name}: {min(cpu):.1f} us/step of CPU time, {min(times):.1f} us/step wall (min of {repeats} runs "
          f"of {steps} steps; median wall {sorted(times)[repeats // 2]:.1f}); "
          f"{(FAKE.launches - launches) / per_run:.1f} launches, "
          f"{(pool.loaned[0].count_added - mallocs) / per_run:.1f} allocations per step")
    if top <= 0:
        return min(cpu)
    race_cnn_epoch.print_profile(lambda: run(steps), steps, top)
    return min(cpu)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--model", choices=("cnn", "mlp", "both", "gpt"), default="both",
                   help="cnn: the seed CNN fused and as written; both: cnn and mlp; gpt: nanoGPT's step (batch 16), by itself")
    p.add_argument("--top", type=int, default=25, help="rows of the profile (0: no profile)")
    args = p.parse_args(argv)
    print(f"minitorch from {Path(minitorch.__file__).parent}; fake GPU (tests/fake_cuda.py); batch {BATCH} (cnn, mlp)")
    models = {"cnn": [("fused seed CNN", seed_cnn), ("seed CNN as written", seed_cnn_as_written)], "mlp": [("MNIST MLP 784-128-10", mnist_mlp)],
              "gpt": [("nanoGPT shakespeare-char, batch 16", nanogpt_trainer)]}
    chosen = models["cnn"] + models["mlp"] if args.model == "both" else models[args.model]
    for name, make in chosen:
        measure(name, make, args.steps, args.repeats, args.top)


if __name__ == "__main__":
    main()
