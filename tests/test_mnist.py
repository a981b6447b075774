"""``minitorch.data.MNIST``: the torchvision-like Dataset, its fast path to the device, and loaders."""
import math

import numpy as np
import pytest

import minitorch
from minitorch.data import MNIST, DataLoader, Subset, TensorDataset

from helpers import TEST_COUNTS, TRAIN_COUNTS

# first labels of each split (the well-known 5 0 4 1 9 ... and 7 2 1 0 4 ...)
TRAIN_FIRST = [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
TEST_FIRST = [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]


@pytest.fixture(scope="module")
def train():
    return MNIST(train=True)


@pytest.fixture(scope="module")
def test():
    return MNIST(train=False)


def test_attributes_and_repr(train, test):
    for ds, n, counts, first in ((train, 60000, TRAIN_COUNTS, TRAIN_FIRST), (test, 10000, TEST_COUNTS, TEST_FIRST)):
        assert len(ds) == n
        assert isinstance(ds.data, np.ndarray) and ds.data.dtype == np.uint8 and ds.data.shape == (n, 28, 28)
        assert ds.data.min() == 0 and ds.data.max() == 255
        assert isinstance(ds.targets, minitorch.Tensor)
        assert ds.targets.dtype == minitorch.int64 and tuple(ds.targets.shape) == (n,)
        assert ds.targets.device == minitorch.device("cpu")
        assert np.bincount(ds.targets.numpy(), minlength=10).tolist() == counts
        assert ds.targets.numpy()[:10].tolist() == first
        assert isinstance(ds, minitorch.data.Dataset)
    assert train.classes == ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
                             "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]
    assert repr(train).splitlines() == ["Dataset MNIST", "    Number of datapoints: 60000",
                                        "    Root location: data/mnist", "    Split: Train"]
    assert repr(test).splitlines()[-1] == "    Split: Test"


@pytest.mark.parametrize("index", [0, 1, 7777, 9999, -1, -10000, np.int64(42)])
def test_item_types_shapes_and_scaling(test, index):
    image, label = test[index]
    assert isinstance(image, minitorch.Tensor) and image.device == minitorch.device("cpu")
    assert image.dtype == minitorch.float32 and tuple(image.shape) == (1, 28, 28)
    assert type(label) is int and 0 <= label <= 9
    assert label == int(test.targets.numpy()[index])
    pixels = image.numpy()
    assert pixels.min() >= 0 and pixels.max() <= 1
    expected = test.data[index].astype(np.float64) / 255                  # ToTensor(): uint8 / 255
    np.testing.assert_allclose(pixels[0], expected, rtol=1e-7, atol=0)
    assert np.array_equal(pixels[0] == 1, test.data[index] == 255)          # 255 maps to exactly 1


def test_item_errors(test):
    with pytest.raises(IndexError, match="out of range"):
        test[10000]
    with pytest.raises(IndexError, match="out of range"):
        test[-10001]
    with pytest.raises(TypeError, match="integers"):
        test[1.5]
    with pytest.raises(TypeError, match="integers"):
        test[True]


def test_missing_files_raise(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        MNIST(root=tmp_path / "nowhere")


@pytest.mark.parametrize("split", ["train", "test"])
def test_fast_path_equals_items(device, split, request):
    ds = request.getfixturevalue(split)
    n = len(ds)
    td = ds.to_tensor_dataset(device)
    assert isinstance(td, TensorDataset) and len(td) == n
    images, targets = td.tensors
    assert images.device == minitorch.device(device) and targets.device == minitorch.device(device)
    assert images.dtype == minitorch.float32 and tuple(images.shape) == (n, 1, 28, 28)
    assert targets.dtype == minitorch.int64 and tuple(targets.shape) == (n,)
    for i in (0, 1, 4321, n - 1):
        image, label = ds[i]
        assert np.array_equal(images[i].cpu().numpy(), image.numpy())       # bit for bit
        assert targets[i].item() == label
    assert np.array_equal(targets.cpu().numpy(), ds.targets.numpy())
    flat, _ = ds.to_tensor_dataset(device, flatten=True).tensors
    assert tuple(flat.shape) == (n, 784)
    assert np.array_equal(flat[n - 1].cpu().numpy(), ds[n - 1][0].numpy().ravel())


def test_fast_path_does_not_alias_the_raw_data(test):
    images, targets = test.to_tensor_dataset("cpu").tensors
    targets.numpy()[0] = 3
    assert test.targets.numpy()[0] == 7 and test[0][1] == 7


def _fingerprints(images, labels):
    """One number per (image, label) pair: which example it is, whatever the order."""
    weights = np.random.default_rng(0).standard_normal(784)
    return np.sort(images.reshape(len(images), -1).astype(np.float64) @ weights + 1000 * labels)


def test_loader_yields_the_split_once_per_epoch(device, test):
    n = len(test)
    loader = DataLoader(test.to_tensor_dataset(device), batch_size=64, shuffle=True, drop_last=False, seed=0)
    assert len(loader) == math.ceil(n / 64) == 157
    expected = _fingerprints(test.data / np.float32(255), test.targets.numpy())
    orders = []
    for _ in range(2):
        sizes, xs, ys = [], [], []
        for xb, yb in loader:
            assert xb.device == minitorch.device(device) and yb.device == minitorch.device(device)
            assert xb.dtype == minitorch.float32 and xb.shape[1:] == (1, 28, 28) and yb.dtype == minitorch.int64
            sizes.append(xb.shape[0])
            xs.append(xb.cpu().numpy())
            ys.append(yb.cpu().numpy())
        assert sizes == [64] * 156 + [n - 64 * 156]                         # the last batch, 16, is kept
        labels = np.concatenate(ys)
        assert np.bincount(labels, minlength=10).tolist() == TEST_COUNTS
        np.testing.assert_allclose(_fingerprints(np.concatenate(xs), labels), expected, rtol=0, atol=1e-6)
        orders.append(labels)
    assert not np.array_equal(orders[0], orders[1])                         # reshuffled every epoch


def test_loader_drop_last_and_no_shuffle(test):
    td = test.to_tensor_dataset("cpu")
    assert len(DataLoader(td, batch_size=64, drop_last=True)) == 156
    first, = [yb for _, yb in [next(iter(DataLoader(td, batch_size=10)))]]
    assert first.tolist() == TEST_FIRST


def test_loader_over_items_collates(test):
    loader = DataLoader(Subset(test, range(10)), batch_size=4)
    batches = list(loader)
    assert [xb.shape[0] for xb, _ in batches] == [4, 4, 2]
    xb, yb = batches[0]
    assert xb.dtype == minitorch.float32 and tuple(xb.shape) == (4, 1, 28, 28)
    assert yb.dtype == minitorch.int64 and yb.tolist() == TEST_FIRST[:4]
    images, _ = test.to_tensor_dataset("cpu").tensors
    assert np.array_equal(np.concatenate([b.numpy() for b, _ in batches]), images[:10].numpy())
