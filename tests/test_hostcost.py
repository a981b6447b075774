"""Host-cost work of branch s8-hostcost that is not the allocator's or the GEMM dispatch's.

- The max-pooling Functions (MaxPool2d, and conv + ReLU + MaxPool2d(2) fused) ask for no zeros
  for their int64 indices' gradient (ctx.set_materialize_grads(False)): the engine used to fill
  one int64 array per call and backward, which the backward ignored. Gradients are unchanged.
- benchmarks/hostcost_step.py runs a training step on tests/fake_cuda.FakeGPU (its own process:
  the fake must be in place before the cuda backend is imported).
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

import minitorch
import minitorch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]


def test_pooling_nodes_ask_for_no_zero_index_gradients(device, rng):
    x = minitorch.tensor(rng.standard_normal((2, 3, 8, 8)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((4, 3, 3, 3)), device=device, requires_grad=True)
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    fused, fused_indices = F.conv2d_relu_max_pool2d(x, w, None, 1, 1, 1, 1, return_indices=True)
    for out in (pooled, fused):
        assert out.grad_fn.ctx.materialize_grads is False
    (pooled.sum() + fused.sum()).backward()
    tx = torch.tensor(x.detach().cpu().numpy(), requires_grad=True)
    tw = torch.tensor(w.detach().cpu().numpy(), requires_grad=True)
    want = (torch.nn.functional.max_pool2d(tx, 2).sum()
            + torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(tx, tw, padding=1)), 2).sum())
    want.backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_hostcost_step_runs_a_training_step_on_the_fake_gpu():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hostcost_step.py"), "--steps", "3",
                           "--repeats", "1", "--top", "3"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "fused seed CNN" in out and "seed CNN as written" in out and "MNIST MLP" in out, out
    assert out.count("under cProfile") == 3, out
    for name, least, most in (("fused seed CNN", 20, 30), ("seed CNN as written", 25, 40)):
        launches = float(out.split(f"{name}: ")[1].split(" launches")[0].rsplit(" ", 1)[-1])
        assert least <= launches <= most, out  # 26 and 32 on 2026-11-25: every launch of the step is counted


def test_hostcost_step_runs_a_nanogpt_step_on_the_fake_gpu():
    """The GPT's step (dropout's cuRAND draws, flash, AdamW) runs on the fake GPU too; every launch counts."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hostcost_step.py"), "--model", "gpt",
                           "--steps", "1", "--repeats", "1", "--top", "0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    launches = float(done.stdout.split(" launches")[0].rsplit(" ", 1)[-1])
    assert 250 <= launches <= 400, done.stdout     # 305 on 2026-11-25 (batch 16): kernels and cuRAND draws
