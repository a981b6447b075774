"""Phase 04 data: Dataset, TensorDataset, Subset, random_split, split_first_fraction, DataLoader
(every sample once per epoch, a new order each epoch, reproducible from a seed, drop_last,
batches gathered on the tensors' device), default_collate, and nn.L1Loss against PyTorch."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch.data import (DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split,
                            split_first_fraction)

from helpers import to_np


def _ids(n, device):
    """A data set whose sample i is (i, 2i, [i, -i]): easy to check what a batch holds."""
    i = np.arange(n)
    return TensorDataset(mt.tensor(i, device=device), mt.tensor(2.0 * i, device=device),
                         mt.tensor(np.stack([i, -i], 1), device=device))


def _epoch(loader):
    return [[to_np(t) for t in batch] for batch in loader]


# ---- TensorDataset / Subset -------------------------------------------------------------------------------
def test_tensor_dataset(device):
    ds = _ids(5, device)
    assert len(ds) == 5
    i, two_i, pair = ds[3]
    assert i.item() == 3 and two_i.item() == 6.0 and pair.tolist() == [3, -3]
    assert ds[1:3][0].tolist() == [1, 2]
    assert "TensorDataset((5,), (5,), (5, 2))" == repr(ds)


def test_tensor_dataset_errors(device):
    with pytest.raises(ValueError, match=r"Size mismatch between tensors.*\(3,\), \(4, 2\)"):
        TensorDataset(mt.zeros(3, device=device), mt.zeros(4, 2, device=device))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(mt.tensor(1.0, device=device))
    with pytest.raises(TypeError, match="takes tensors"):
        TensorDataset(np.zeros(3))


def test_subset_and_dataset_base(device):
    ds = _ids(10, device)
    sub = Subset(ds, [7, 2, 2])
    assert len(sub) == 3 and sub[0][0].item() == 7 and [s[0].item() for s in sub[[1, 2]]] == [2, 2]
    with pytest.raises(NotImplementedError):
        Dataset()[0]


# ---- splits ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lengths,sizes", [([7, 3], [7, 3]), ([0.8, 0.2], [8, 2]), ([0.5, 0.3, 0.2], [5, 3, 2]),
                                           ([1 / 3] * 3, [4, 3, 3]), ([10, 0], [10, 0])])
def test_random_split_sizes_cover_and_seed(device, lengths, sizes):
    ds = _ids(10, device)
    parts = random_split(ds, lengths, seed=3)
    assert [len(p) for p in parts] == sizes
    seen = sorted(int(p[j][0].item()) for p in parts for j in range(len(p)))
    assert seen == list(range(10))                                     # disjoint, everything once
    again = random_split(ds, lengths, seed=3)
    assert [list(p.indices) for p in parts] == [list(p.indices) for p in again]
    assert [len(p) for p in random_split(ds, lengths, generator=np.random.default_rng(0))] == sizes


def test_random_split_errors(device):
    ds = _ids(10, device)
    with pytest.raises(ValueError, match="does not equal the length of the input dataset"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(ds, [1.5, -0.5])
    with pytest.raises(ValueError, match="not both"):
        random_split(ds, [5, 5], generator=np.random.default_rng(0), seed=1)
    mt.manual_seed(5)
    a = random_split(ds, [5, 5])[0].indices
    mt.manual_seed(5)
    assert list(random_split(ds, [5, 5])[0].indices) == list(a)       # the global seed repeats it


def test_split_first_fraction(device):
    ds = _ids(10, device)
    train, test = split_first_fraction(ds, 0.8)
    assert isinstance(train, TensorDataset) and len(train) == 8 and len(test) == 2
    assert train.tensors[0].tolist() == list(range(8)) and test.tensors[0].tolist() == [8, 9]
    assert train.tensors[0].data_ptr() == ds.tensors[0].data_ptr()     # views: no copy
    a, b = split_first_fraction(Subset(ds, range(5)), 0.6)
    assert isinstance(a, Subset) and [a[j][0].item() for j in range(len(a))] == [0, 1, 2] and len(b) == 2
    with pytest.raises(ValueError, match=r"fraction must be in \[0, 1\]"):
        split_first_fraction(ds, 1.2)


# ---- DataLoader -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,batch,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False),
                                               (7, 7, False), (100, 16, False)])
def test_every_sample_once_per_epoch_and_a_new_order_each_epoch(device, n, batch, drop_last):
    loader = DataLoader(_ids(n, device), batch_size=batch, shuffle=True, drop_last=drop_last, seed=0)
    expect_batches = n // batch if drop_last else -(-n // batch)
    assert len(loader) == expect_batches
    orders = []
    for _ in range(3):
        epoch = _epoch(loader)
        assert len(epoch) == expect_batches
        ids = np.concatenate([b[0] for b in epoch]) if epoch else np.zeros(0, int)
        for i, two_i, pair in epoch:                                   # rows stay together
            assert len(i) == batch or (not drop_last and i is epoch[-1][0])
            np.testing.assert_array_equal(two_i, 2.0 * i)
            np.testing.assert_array_equal(pair, np.stack([i, -i], 1))
        if drop_last:
            assert len(ids) == n - n % batch and len(set(ids)) == len(ids)
        else:
            assert sorted(ids) == list(range(n))
        orders.append(list(ids))
    if n >= 10:
        assert orders[0] != orders[1] != orders[2]                     # reshuffled every epoch


def test_batches_are_on_the_tensors_device(device):
    for shuffle in (False, True):
        for xb, yb, pb in DataLoader(_ids(10, device), batch_size=4, shuffle=shuffle, seed=1):
            assert xb.device == mt.device(device) and pb.device == mt.device(device)
            assert xb.dtype == mt.int64 and yb.dtype == mt.float64 and pb.shape[1:] == (2,)


def test_reproducible_from_a_seed(device):
    ds = _ids(50, device)
    one = [_epoch(DataLoader(ds, 8, shuffle=True, seed=7)) for _ in range(2)]
    loader = DataLoader(ds, 8, shuffle=True, seed=7)
    two = [_epoch(loader), _epoch(loader)]
    again = DataLoader(ds, 8, shuffle=True, seed=7)
    assert [[b[0].tolist() for b in e] for e in [_epoch(again), _epoch(again)]] == \
           [[b[0].tolist() for b in e] for e in two]
    assert [b[0].tolist() for b in one[0]] == [b[0].tolist() for b in two[0]]
    other = _epoch(DataLoader(ds, 8, shuffle=True, seed=8))
    assert [b[0].tolist() for b in other] != [b[0].tolist() for b in two[0]]
    gen = DataLoader(ds, 8, shuffle=True, generator=np.random.default_rng(7))
    assert [b[0].tolist() for b in _epoch(gen)] == [b[0].tolist() for b in two[0]]
    mt.manual_seed(3)
    a = _epoch(DataLoader(ds, 8, shuffle=True))
    mt.manual_seed(3)
    assert [b[0].tolist() for b in _epoch(DataLoader(ds, 8, shuffle=True))] == [b[0].tolist() for b in a]


def test_unshuffled_batches_are_views_in_order(device):
    ds = _ids(10, device)
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[1][0].data_ptr() == ds.tensors[0].data_ptr() + 4 * 8


def test_subsets_batch_on_the_device_too(device):
    ds = _ids(20, device)
    train, test = random_split(ds, [0.75, 0.25], seed=0)
    got = np.concatenate([b[0] for b in _epoch(DataLoader(test, 2))])
    np.testing.assert_array_equal(got, np.asarray(test.indices))       # in the subset's order
    nested = Subset(train, [3, 0, 1])
    got = [b[0].tolist() for b in DataLoader(nested, 2)]
    assert got == [[int(train.indices[3]), int(train.indices[0])], [int(train.indices[1])]]
    seen = np.concatenate([b[1] for b in _epoch(DataLoader(train, 4, shuffle=True, seed=0))])
    np.testing.assert_array_equal(np.sort(seen), np.sort(2.0 * np.asarray(train.indices)))
    head = Subset(ds, range(5, 12))                                    # a contiguous range: slices
    assert [b[0].tolist() for b in DataLoader(head, 4)] == [[5, 6, 7, 8], [9, 10, 11]]


class Squares(Dataset):
    """A generic data set: (x, x^2 as a float, a label string)."""

    def __init__(self, n, device):
        self.n, self.device = n, device

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return mt.tensor([float(i), float(-i)], device=self.device), float(i * i), f"item{i}"


def test_generic_datasets_are_collated(device):
    loader = DataLoader(Squares(5, device), batch_size=2, shuffle=True, seed=0)
    seen = []
    for x, sq, names in loader:
        assert x.device == mt.device(device) and x.shape[1] == 2 and sq.dtype == mt.float64
        np.testing.assert_array_equal(to_np(sq), to_np(x)[:, 0] ** 2)
        assert names == [f"item{int(v)}" for v in to_np(x)[:, 0]]
        seen += to_np(x)[:, 0].tolist()
    assert sorted(seen) == [0, 1, 2, 3, 4] and len(loader) == 3
    b = default_collate([{"a": 1, "b": np.ones(2)}, {"a": 2, "b": np.zeros(2)}])
    assert b["a"].tolist() == [1, 2] and b["a"].dtype == mt.int64 and b["b"].shape == (2, 2)
    assert default_collate([True, False]).dtype == mt.bool


def test_dataloader_errors(device):
    ds = _ids(4, device)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            DataLoader(ds, batch_size=bad)
    with pytest.raises(ValueError, match="not both"):
        DataLoader(ds, generator=np.random.default_rng(0), seed=1)


def test_a_training_loop_over_the_loader(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 3))
    y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.1
    ds = TensorDataset(mt.tensor(x, dtype=mt.float32, device=device), mt.tensor(y, dtype=mt.float32, device=device))
    train, test = split_first_fraction(ds, 0.8)
    model = mt.nn.Linear(3, 1).to(device)
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = mt.nn.L1Loss()
    for _ in range(20):
        for xb, yb in DataLoader(train, batch_size=32, shuffle=True, seed=0):
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    xt, yt = test.tensors
    assert loss_fn(model(xt), yt).item() < 0.1


# ---- nn.L1Loss --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_loss_matches_pytorch(device, reduction):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    b[0, 0] = a[0, 0]                                                  # |0|: gradient 0, as PyTorch
    ours = mt.tensor(a, device=device, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    y = mt.nn.L1Loss(reduction)(ours, mt.tensor(b, device=device))
    ty = torch.nn.L1Loss(reduction=reduction)(theirs, torch.tensor(b))
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), rtol=1e-12)
    (y.sum() if reduction == "none" else y).backward()
    (ty.sum() if reduction == "none" else ty).backward()
    np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="l1_loss: input shape"):
        mt.nn.functional.l1_loss(ours, mt.zeros(3, device=device))
