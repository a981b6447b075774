"""``minitorch.data.FashionMNIST``: search locations, download from a loopback HTTP server (md5
checks, atomic writes, mirrors, errors), and the real files where Debian's package put them."""
import functools
import gzip
import hashlib
import http.server
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch.data import MNIST, FashionMNIST, fashion_mnist
from minitorch.data.mnist import SPLITS

N_TRAIN, N_TEST = 7, 3
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")


def idx_gz(array):
    """gzip-compressed IDX bytes of a uint8 array, written by hand (independent of the reader)."""
    head = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return gzip.compress(head + array.tobytes(), mtime=0)


@pytest.fixture
def fixture_files(tmp_path, monkeypatch):
    """Small Fashion-MNIST look-alikes served over HTTP from 127.0.0.1; GZ_MD5 set to their sums,
    SYSTEM_DIRS emptied (so that the real files, when installed, are not found instead).

    Yields ``(base_url, {name: array}, served_dir, requests)``: ``requests`` lists the paths asked for.
    """
    rng = np.random.default_rng(0)
    served = tmp_path / "served"
    served.mkdir()
    arrays = {}
    for train, n in ((True, N_TRAIN), (False, N_TEST)):
        images_name, labels_name = SPLITS[train]
        arrays[images_name] = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        arrays[labels_name] = rng.integers(0, 10, n, dtype=np.uint8)
    sums = {}
    for name, array in arrays.items():
        (served / name).write_bytes(idx_gz(array))
        sums[name] = hashlib.md5((served / name).read_bytes()).hexdigest()

    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):   # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=served))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setattr(fashion_mnist, "MIRRORS", [base])
    monkeypatch.setattr(fashion_mnist, "GZ_MD5", sums)
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", [])
    yield base, arrays, served, requests
    server.shutdown()
    server.server_close()


def test_download_reads_the_served_files(tmp_path, fixture_files):
    base, arrays, _, requests = fixture_files
    root = tmp_path / "fm"
    for train, n in ((True, N_TRAIN), (False, N_TEST)):
        ds = FashionMNIST(root, train=train, download=True)
        images_name, labels_name = SPLITS[train]
        assert len(ds) == n, f"the served {'train' if train else 'test'} split has {n} examples, FashionMNIST has {len(ds)}"
        np.testing.assert_array_equal(ds.data, arrays[images_name])
        np.testing.assert_array_equal(ds.targets.numpy(), arrays[labels_name].astype(np.int64))
        assert (root / images_name).is_file() and (root / labels_name).is_file()
    assert sorted(p.name for p in root.iterdir()) == sorted(arrays), "only the four files are left (no .part files)"
    assert sorted(requests) == sorted("/" + name for name in arrays), requests

    again = FashionMNIST(root, train=False, download=True)   # found: nothing fetched
    assert len(requests) == 4 and len(again) == N_TEST


def test_dataset_behaves_like_mnist(tmp_path, fixture_files):
    _, arrays, _, _ = fixture_files
    ds = FashionMNIST(tmp_path / "fm", train=True, download=True)
    assert isinstance(ds, MNIST) and isinstance(ds, minitorch.data.Dataset)
    assert ds.classes == ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
    image, label = ds[1]
    assert image.dtype == minitorch.float32 and tuple(image.shape) == (1, 28, 28)
    np.testing.assert_allclose(image.numpy()[0], arrays["train-images-idx3-ubyte.gz"][1] / np.float32(255))
    assert label == int(arrays["train-labels-idx1-ubyte.gz"][1])
    assert repr(ds).splitlines()[0] == "Dataset FashionMNIST"
    with pytest.raises(IndexError, match="FashionMNIST Train"):
        ds[N_TRAIN]
    images, targets = ds.to_tensor_dataset().tensors
    assert tuple(images.shape) == (N_TRAIN, 1, 28, 28) and tuple(targets.shape) == (N_TRAIN,)


def test_checksum_mismatch_keeps_nothing(tmp_path, fixture_files, monkeypatch):
    base, _, _, _ = fixture_files
    name = "t10k-images-idx3-ubyte.gz"
    wrong = "0" * 32
    actual = fashion_mnist.GZ_MD5[name]
    monkeypatch.setitem(fashion_mnist.GZ_MD5, name, wrong)
    root = tmp_path / "fm"
    with pytest.raises(ValueError) as e:
        FashionMNIST(root, train=False, download=True)
    msg = str(e.value)
    assert name in msg and wrong in msg and actual in msg and base + name in msg, msg
    assert not (root / name).exists() and not any(p.name.endswith(".part") for p in root.iterdir())


def test_network_error_names_every_url(tmp_path, fixture_files, monkeypatch):
    dead = ["http://127.0.0.1:9/", "http://127.0.0.1:9/mirror/"]   # port 9 (discard): refused
    monkeypatch.setattr(fashion_mnist, "MIRRORS", dead)
    root = tmp_path / "fm"
    with pytest.raises(OSError) as e:
        FashionMNIST(root, train=False, download=True)
    msg = str(e.value)
    assert "t10k-images-idx3-ubyte.gz" in msg
    assert all(url + "t10k-images-idx3-ubyte.gz" in msg for url in dead), msg
    assert not any(root.iterdir()), "a failed download leaves no file"


def test_http_404_falls_back_to_the_next_mirror(tmp_path, fixture_files, monkeypatch):
    base, arrays, _, requests = fixture_files
    monkeypatch.setattr(fashion_mnist, "MIRRORS", [base + "missing/", base])
    ds = FashionMNIST(tmp_path / "fm", train=False, download=True)
    np.testing.assert_array_equal(ds.data, arrays["t10k-images-idx3-ubyte.gz"])
    assert requests == ["/missing/t10k-images-idx3-ubyte.gz", "/t10k-images-idx3-ubyte.gz",
                        "/missing/t10k-labels-idx1-ubyte.gz", "/t10k-labels-idx1-ubyte.gz"], requests


def test_missing_without_download(tmp_path, fixture_files):
    with pytest.raises(FileNotFoundError) as e:
        FashionMNIST(tmp_path / "nowhere", train=True)
    msg = str(e.value)
    assert "train-images-idx3-ubyte.gz" in msg and str(tmp_path / "nowhere") in msg
    assert "apt-get install dataset-fashion-mnist" in msg and "download=True" in msg


def test_system_dir_is_searched_after_root(tmp_path, fixture_files, monkeypatch):
    _, arrays, served, requests = fixture_files
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", [served])
    ds = FashionMNIST(tmp_path / "nowhere", train=False, download=True)   # found there: no download
    np.testing.assert_array_equal(ds.data, arrays["t10k-images-idx3-ubyte.gz"])
    assert requests == [] and not (tmp_path / "nowhere").exists()


def test_verify_uses_uncompressed_sums(tmp_path, fixture_files, monkeypatch):
    _, arrays, served, _ = fixture_files
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", [served])
    raw = {name: hashlib.md5(gzip.decompress((served / name).read_bytes())).hexdigest() for name in arrays}
    monkeypatch.setattr(fashion_mnist, "RAW_MD5", raw)
    FashionMNIST(train=False, verify=True, root=tmp_path / "nowhere")
    monkeypatch.setitem(fashion_mnist.RAW_MD5, "t10k-labels-idx1-ubyte.gz", "f" * 32)
    with pytest.raises(ValueError, match="f" * 32):
        FashionMNIST(train=False, verify=True, root=tmp_path / "nowhere")


def test_relative_root_downloads_under_the_repository(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    top = fashion_mnist.repo_root()
    assert fashion_mnist.download_dir("data/fashion-mnist") == top / "data/fashion-mnist"
    assert fashion_mnist.download_dir(tmp_path / "x") == tmp_path / "x"


# ---------------------------------------------------------------- the real files (Debian's package)

@pytest.mark.skipif(not DEBIAN_DIR.is_dir(), reason="Debian's dataset-fashion-mnist is not installed "
                    "(apt-get install dataset-fashion-mnist)")
def test_debian_files():
    test = FashionMNIST(DEBIAN_DIR, train=False, verify=True)
    assert test.data.shape == (10000, 28, 28) and test.data.dtype == np.uint8
    assert np.bincount(test.targets.numpy(), minlength=10).tolist() == [1000] * 10
    assert test.targets.numpy()[:5].tolist() == [9, 2, 1, 1, 6]   # ankle boot, pullover, trouser, trouser, shirt
    train = FashionMNIST(train=True)                                # found through SYSTEM_DIRS
    assert train.data.shape == (60000, 28, 28)
    assert np.bincount(train.targets.numpy(), minlength=10).tolist() == [6000] * 10
    assert train.targets.numpy()[:5].tolist() == [9, 0, 0, 3, 0]
