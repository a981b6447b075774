"""Grading tests of phase 04 (sales): the DataLoader's batches, collating, max(dim)'s backward, a
two-pass variance, and Welford's update in the variance kernel.

Run by ``minitorch-course check 04`` against a workspace, and by pytest against the repository.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close  # noqa: E402

import minitorch as mt  # noqa: E402
from minitorch.utils.exercises import exercise  # noqa: E402


@exercise("04.3")
def test_dataloader_batches():
    from minitorch.data import DataLoader, TensorDataset
    x = mt.tensor(np.arange(30.0).reshape(10, 3))
    y = mt.tensor(np.arange(10))
    for drop_last, sizes in ((False, [4, 4, 2]), (True, [4, 4])):
        batches = list(DataLoader(TensorDataset(x, y), batch_size=4, drop_last=drop_last))
        assert [len(b[1]) for b in batches] == sizes, \
            f"batch_size=4, drop_last={drop_last} over 10 rows: batches of {[len(b[1]) for b in batches]}, expected {sizes}"
        seen = np.concatenate([b[1].numpy() for b in batches])
        assert list(seen) == list(range(sum(sizes))), f"rows in order should be 0..{sum(sizes) - 1}, got {list(seen)}"
    rows = np.concatenate([b[1].numpy() for b in DataLoader(TensorDataset(x, y), batch_size=3, shuffle=True, seed=0)])
    assert sorted(rows) == list(range(10)), f"a shuffled epoch must give every row once, got {list(rows)}"
    items = list(DataLoader(list("abcdefg"), batch_size=3, collate_fn=list))
    assert items == [list("abc"), list("def"), ["g"]], f"a list dataset in batches of 3 gave {items}"
    assert list(DataLoader(list("abcdefg"), batch_size=10, drop_last=True, collate_fn=list)) == [], \
        "drop_last with fewer rows than a batch gives no batch"


@exercise("04.4")
def test_default_collate():
    from minitorch.data.dataloader import default_collate
    b = default_collate([1.5, 2.5])
    assert isinstance(b, mt.Tensor) and b.dtype == mt.float64 and b.tolist() == [1.5, 2.5], \
        f"floats should collate to a float64 tensor, got {b!r}"
    b = default_collate([3, 4, 5])
    assert isinstance(b, mt.Tensor) and b.dtype == mt.int64, f"ints should collate to an int64 tensor, got {b!r}"
    b = default_collate([True, False])
    assert isinstance(b, mt.Tensor) and b.dtype == mt.bool, f"bools should collate to a bool tensor, got {b!r}"
    rows = [(mt.tensor([1.0, 2.0]), 0), (mt.tensor([3.0, 4.0]), 1)]
    xs, ys = default_collate(rows)
    assert tuple(xs.shape) == (2, 2) and xs.tolist() == [[1.0, 2.0], [3.0, 4.0]], f"tensors should stack, got {xs!r}"
    assert ys.tolist() == [0, 1], f"the labels of (tensor, int) samples should collate to [0, 1], got {ys!r}"
    d = default_collate([{"a": np.zeros(3), "name": "x"}, {"a": np.ones(3), "name": "y"}])
    assert tuple(d["a"].shape) == (2, 3) and d["name"] == ["x", "y"], f"dicts collate field by field, got {d!r}"


@exercise("04.5")
def test_max_dim_backward():
    rng = np.random.default_rng(43)
    x0 = rng.standard_normal((4, 6))
    for dim, keepdim in ((1, False), (0, False), (1, True)):
        x = mt.tensor(x0, requires_grad=True)
        w = rng.standard_normal(x0.max(axis=dim, keepdims=keepdim).shape)
        (x.max(dim=dim, keepdim=keepdim).values * mt.tensor(w)).sum().backward()
        tx = torch.tensor(x0, requires_grad=True)
        (tx.max(dim=dim, keepdim=keepdim).values * torch.tensor(w)).sum().backward()
        close(x.grad.numpy(), tx.grad.numpy(), f"x.grad through max(dim={dim}, keepdim={keepdim})")


@exercise("04.1")
def test_two_pass_variance():
    from minitorch.native import cpu
    rng = np.random.default_rng(44)
    a = rng.standard_normal((5, 7, 3))
    for dims, correction, keepdim in (((1,), 1, False), ((0, 2), 0, True), ((0, 1, 2), 1, False)):
        var, mean = cpu.var_mean(a, dims, correction, keepdim)
        close(var, a.var(axis=dims, ddof=correction, keepdims=keepdim), f"var over {dims} (correction {correction})")
        close(mean, a.mean(axis=dims, keepdims=keepdim), f"the mean returned with var over {dims}")
    std, _ = cpu.var_mean(a, (1,), 1, False, True)
    close(std, a.std(axis=1, ddof=1), "std (take_sqrt=True)")
    big = (1e4 + rng.standard_normal((3, 20000))).astype(np.float32)      # E[x^2] - E[x]^2 loses every digit here
    var, _ = cpu.var_mean(big, (1,), 1, False)
    assert var.dtype == np.float32, f"var of float32 data should be float32, got {var.dtype}"
    close(var, big.astype(np.float64).var(axis=1, ddof=1), "var of float32 data around 1e4 (two passes, float64 sums)",
          rtol=1e-4)
    var, _ = cpu.var_mean(np.ones((2, 1)), (1,), 1, False)
    assert np.isnan(var).all(), f"the variance of 1 element with correction 1 is 0/0 = NaN, got {var}"


@exercise("04.2", cuda=True)
def test_welford_variance_kernel():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(45)
    for shape, dims in [((100, 5000), (1,)), ((1_000_003,), (0,)), ((7, 33), (1,)), ((3000, 20), (0,))]:
        a = (1e3 + rng.standard_normal(shape)).astype(np.float32)
        var, mean = backend.var_mean(array.from_numpy(a, 0), dims, 1)
        ref = a.astype(np.float64)
        close(array.to_numpy(var), ref.var(axis=dims, ddof=1), f"var of a {shape} float32 array over {dims}", rtol=1e-3)
        close(array.to_numpy(mean), ref.mean(axis=dims), f"mean (from var_mean) of a {shape} array over {dims}", rtol=1e-5)
