"""Issue 13's name audit (benchmarks/check_api_gaps.py --names) as a test: every name of section 1
exists as minitorch.X / Tensor.X wherever PyTorch has it, runs, and gives PyTorch's values, on cpu
and (through the ``device`` fixture) on cuda. Then oracle tests of the names the audit found
missing: Tensor.where, Tensor.multinomial, Tensor.bernoulli, and the module-level torch.zero_,
fill_, clamp_ and index_put_."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import minitorch as mt
from oracle import check_op


def _audit_module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "check_api_gaps.py"
    spec = importlib.util.spec_from_file_location("check_api_gaps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_name_of_issue_13_exists_runs_and_matches_pytorch(device):
    rows, gaps = _audit_module().audit_names(device)
    assert len(rows) > 90, "the audit lists every name of issue 13, section 1"
    bad = [row for row in rows if row[1] in gaps]
    assert not gaps, f"names missing or differing from PyTorch on {device}: {bad}"


def test_tensor_where_is_where_with_self_as_input(device, rng):
    mask = rng.random((3, 4)) < 0.5

    def fn(lib, x, y):
        m = mt.tensor(mask, device=device) if lib is mt else torch.tensor(mask)
        return x.where(m, y) + x.where(m, 0.5)
    check_op(fn, [(3, 4), (4,)], device, rng)
    check_op(fn, [(3, 4), (3, 1)], device, rng, dtype="float32", layout="transposed")


def test_tensor_multinomial_and_bernoulli_are_the_module_functions(device):
    w = mt.tensor([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0]], device=device)
    ours = w.multinomial(2, generator=mt.Generator(device=device).manual_seed(3))
    again = mt.multinomial(w, 2, generator=mt.Generator(device=device).manual_seed(3))
    assert ours.dtype is mt.int64 and ours.shape == (2, 2) and ours.tolist() == again.tolist()
    assert sorted(ours.tolist()[0]) == [1, 2] and sorted(ours.tolist()[1]) == [0, 2], \
        "multinomial draws only categories of weight > 0"
    with_replacement = w.multinomial(50, replacement=True)
    assert set(with_replacement.flatten().tolist()) <= {0, 1, 2} and 0 not in with_replacement[0].tolist()
    p = mt.tensor([0.0, 1.0, 0.0, 1.0], device=device)
    assert p.bernoulli().tolist() == [0.0, 1.0, 0.0, 1.0] and p.bernoulli().dtype is mt.float32
    assert p.bernoulli(0.0).tolist() == [0.0] * 4 and p.bernoulli(1.0).tolist() == [1.0] * 4
    g1, g2 = mt.Generator(device=device).manual_seed(5), mt.Generator(device=device).manual_seed(5)
    q = mt.full((1000,), 0.3, device=device)
    assert q.bernoulli(generator=g1).tolist() == mt.bernoulli(q, generator=g2).tolist()
    with pytest.raises(RuntimeError):
        mt.tensor([1, 0], device=device).bernoulli()      # integer probabilities: PyTorch raises too


def test_module_level_in_place_names(device, rng):
    rows = np.array([2, 0, 2])

    def fn(lib, x, v):
        i = mt.tensor(rows, device=device) if lib is mt else torch.tensor(rows)
        y = x * 1
        a, b, c, d = y.clone(), y.clone(), y.clone(), y.clone()
        assert lib.zero_(a) is a and lib.fill_(b, 2.5) is b and lib.clamp_(c, -0.5, 0.5) is c
        assert lib.index_put_(d, (i,), v, accumulate=True) is d
        return a + b * x + c + d
    check_op(fn, [(3, 4), (4,)], device, rng)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        mt.zero_(mt.ones(2, device=device, requires_grad=True))
