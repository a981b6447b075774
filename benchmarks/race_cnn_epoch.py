"""Phase 06's epoch races in a plain Python process: the seed CNN and LeNet-5 on MNIST, one epoch of
SGD with momentum per timed run, minitorch against PyTorch eager with cuDNN (TF32 off on both sides).

    python benchmarks/race_cnn_epoch.py [--repeats 3] [--out DIR]
    python benchmarks/race_cnn_epoch.py --profile 300     # host cost of one step, < 1 minute

``--profile STEPS`` races nothing: it times STEPS steps of the fused seed CNN (the race's loop on
random data of MNIST's shape, so no data set is needed) on both sides, then runs them again under
cProfile and prints, per step, the calls and host microseconds of the costliest functions. To
compare two checkouts, run the same script from each (a copy of this file beside the other
checkout's ``minitorch``): the script imports the ``minitorch`` next to its own folder.

The notebook (phases/06_cnn) runs the same races inside a Jupyter kernel; this script runs them
without one, so that the two can be compared. Each model is raced twice on our side: as written
(Conv2d, ReLU, MaxPool2d as separate layers) and after ``minitorch.nn.conv.fuse_conv_relu(model,
max_pool=True)``, which runs conv + bias + ReLU + 2x2 max-pool as one implicit-GEMM launch (the
same outputs and gradients; tests/test_conv_fused.py). PyTorch runs the model as written.

Same for both sides: initial weights (ours, copied into the twin), batch 64, learning rate 0.05,
momentum 0.9, the full 60,000 training images on the device, a fresh shuffle each epoch (ours:
minitorch.data.DataLoader(shuffle=True); PyTorch: a permutation copied to the device, one gather per
batch, as the notebook does). Timing is minitorch.utils.race.race's (CUDA events around each epoch,
warm-up epoch first). JSON per race goes to --out (default benchmarks/results).
"""
import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import minitorch  # noqa: E402
from minitorch import nn  # noqa: E402
from minitorch.data import MNIST, DataLoader  # noqa: E402
from minitorch.nn.conv import fuse_conv_relu  # noqa: E402
from minitorch.utils.race import race  # noqa: E402

import torch  # noqa: E402

BATCH, LR, MOMENTUM, SEED = 64, 0.05, 0.9, 0


def seed_cnn(lib):
    """The seed's CNN in ``lib.nn`` (minitorch or torch): the same layers, so the same parameters."""
    L = lib.nn
    return L.Sequential(L.Conv2d(1, 8, 3, padding=1), L.ReLU(), L.MaxPool2d(2),
                        L.Conv2d(8, 16, 3, padding=1), L.ReLU(), L.MaxPool2d(2),
                        L.Flatten(), L.Linear(784, 64), L.ReLU(), L.Linear(64, 10))


def lenet5(lib):
    L = lib.nn
    return L.Sequential(L.Conv2d(1, 6, 5, padding=2), L.ReLU(), L.MaxPool2d(2),
                        L.Conv2d(6, 16, 5), L.ReLU(), L.MaxPool2d(2),
                        L.Flatten(), L.Linear(400, 120), L.ReLU(), L.Linear(120, 84), L.ReLU(), L.Linear(84, 10))


def twins(make, fused):
    """(ours on cuda, PyTorch's on cuda) from the same initial weights."""
    minitorch.manual_seed(SEED)
    ours = make(minitorch)
    theirs = make(torch)
    with torch.no_grad():
        for p, q in zip(theirs.parameters(), ours.parameters(), strict=True):
            p.copy_(torch.from_numpy(q.detach().numpy()))
    ours = ours.to("cuda")
    if fused:
        fuse_conv_relu(ours, max_pool=True)
    return ours, theirs.cuda()


def our_epoch(model, loader, optimizer, loss_fn):
    model.train()
    total = None
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total = loss.detach() if total is None else total + loss.detach()
    return total.item()


def torch_epoch(model, X, Y, orders, optimizer, loss_fn):
    model.train()
    order = torch.from_numpy(orders.permutation(len(Y))).cuda()
    total = None
    for a in range(0, len(order), BATCH):
        index = order[a:a + BATCH]
        optimizer.zero_grad()
        loss = loss_fn(model(X[index]), Y[index])
        loss.backward()
        optimizer.step()
        total = loss.detach() if total is None else total + loss.detach()
    return total.item()


def epoch_race(name, make, fused, train, X, Y, repeats, out):
    ours, theirs = twins(make, fused)
    opt = minitorch.optim.SGD(ours.parameters(), lr=LR, momentum=MOMENTUM)
    topt = torch.optim.SGD(theirs.parameters(), lr=LR, momentum=MOMENTUM)
    loader = DataLoader(train, batch_size=BATCH, shuffle=True, seed=SEED)
    orders = np.random.default_rng(SEED)
    loss_fn, tloss_fn = nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    workload = f"{name}{' fused conv+relu+pool' if fused else ''} SGD, 1 epoch, plain process"
    return race(lambda: our_epoch(ours, loader, opt, loss_fn), lambda: torch_epoch(theirs, X, Y, orders, topt, tloss_fn),
                phase="06_cnn", workload=workload, device="cuda", warmup=1, repeats=repeats,
                sizes={"train": len(train), "batch": BATCH, "fused": fused}, save=True, results_dir=out)


def train_steps(model, loader, optimizer, loss_fn, steps):
    """``steps`` training steps of the race's loop (epoch boundaries included), then a sync."""
    done = 0
    while done < steps:
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
    minitorch.cuda.synchronize()


def _torch_steps(model, X, Y, optimizer, loss_fn, steps):
    order = torch.randperm(len(Y), device="cuda")
    for i in range(steps):
        index = order[(i * BATCH) % (len(Y) - BATCH + 1):][:BATCH]
        optimizer.zero_grad()
        loss_fn(model(X[index]), Y[index]).backward()
        optimizer.step()
    torch.cuda.synchronize()


def profile(steps, samples=60_000, top=30):
    """Host cost per step of the fused seed CNN: wall time both sides (best of 3), then our loop
    under cProfile, printed per step (calls and microseconds of the costliest functions)."""
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((samples, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, samples)
    train = minitorch.data.TensorDataset(minitorch.tensor(x, device="cuda"), minitorch.tensor(y, device="cuda"))
    X, Y = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    ours, theirs = twins(seed_cnn, fused=True)
    opt = minitorch.optim.SGD(ours.parameters(), lr=LR, momentum=MOMENTUM)
    topt = torch.optim.SGD(theirs.parameters(), lr=LR, momentum=MOMENTUM)
    loader = DataLoader(train, batch_size=BATCH, shuffle=True, seed=SEED)
    loss_fn, tloss_fn = nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    run_ours = lambda: train_steps(ours, loader, opt, loss_fn, steps)           # noqa: E731
    run_theirs = lambda: _torch_steps(theirs, X, Y, topt, tloss_fn, steps)      # noqa: E731
    print(f"minitorch from {Path(minitorch.__file__).parent}; {steps} steps of batch {BATCH}")
    for name, run in (("ours", run_ours), ("torch", run_theirs)):
        run()                                                                  # warm-up: compiles, caches
        best = min(_wall(run) for _ in range(3))
        print(f"{name:6s} {best / steps * 1e3:7.3f} ms/step (best of 3 runs of {steps} steps)")
    print()
    print_profile(run_ours, steps, top)


def print_profile(run, steps, top):
    """Run ``run()`` (``steps`` training steps) under cProfile and print, per step, the host time
    and the ``top`` costliest functions by their own time (calls, own and cumulative us)."""
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(row[2] for row in stats.stats.values())
    print(f"under cProfile: {total / steps * 1e6:.0f} us of host time per step (the profiler adds its own)")
    print(f"{'calls/step':>10s} {'self us/step':>12s} {'cum us/step':>11s}  function")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    for (file, line, name), (_cc, ncalls, tottime, cumtime, _callers) in rows:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        print(f"{ncalls / steps:10.1f} {tottime / steps * 1e6:12.1f} {cumtime / steps * 1e6:11.1f}  {where}({name})")


def _wall(run):
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    p.add_argument("--profile", type=int, metavar="STEPS", help="profile STEPS steps instead of racing")
    args = p.parse_args(argv)                       # (race() switches PyTorch's TF32 off)
    if args.profile:
        return profile(args.profile)
    train = MNIST(train=True).to_tensor_dataset("cuda")
    X, Y = (torch.from_numpy(t.cpu().numpy()).cuda() for t in train.tensors)
    rows = []
    for name, make in (("MNIST seed CNN", seed_cnn), ("MNIST LeNet-5", lenet5)):
        for fused in (False, True):
            result = epoch_race(name, make, fused, train, X, Y, args.repeats, args.out)
            ours, theirs = (result.times[s]["median_ms"] / 1e3 for s in ("ours", "theirs"))
            rows.append((name, "fused" if fused else "as written", ours, theirs, ours / theirs))
    print(f"\n{'model':16s} {'ours':11s} {'ours s':>7s} {'torch s':>8s} {'ours/torch':>10s}")
    for name, how, ours, theirs, ratio in rows:
        print(f"{name:16s} {how:11s} {ours:7.2f} {theirs:8.2f} {ratio:10.2f}")


if __name__ == "__main__":
    main()
