"""IDX reader (minitorch.data.idx) and MNIST loader (minitorch.data.mnist)."""
import gzip
import shutil
import struct

import numpy as np
import pytest

from minitorch.data import idx, mnist
from minitorch.data.idx import md5_of_uncompressed, read_idx, verify

from helpers import TEST_COUNTS, TRAIN_COUNTS

ROOT = mnist.repo_root()
MNIST_DIR = ROOT / "data" / "mnist"

CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
         np.float64: 0x0E}


def idx_bytes(array, code=None, ndim=None, extra=b"", cut=0):
    """IDX bytes of ``array``, written by hand (independent of the reader)."""
    array = np.asarray(array)
    code = CODES[array.dtype.type] if code is None else code
    ndim = array.ndim if ndim is None else ndim
    head = bytes([0, 0, code, ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    body = array.astype(array.dtype.newbyteorder(">")).tobytes()
    data = head + body + extra
    return data[: len(data) - cut]


def write(path, data, gz=False):
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (0,), (4, 0, 3)])
def test_round_trip(tmp_path, gz, dtype, shape):
    rng = np.random.default_rng(0)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    else:
        a = (rng.standard_normal(shape) * 1e3).astype(dtype)
    path = write(tmp_path / "a.idx", idx_bytes(a), gz=gz)
    b = read_idx(path)
    assert b.dtype == np.dtype(dtype) and b.dtype.isnative
    assert b.shape == shape
    assert b.flags.c_contiguous and b.flags.writeable
    np.testing.assert_array_equal(a, b)


def test_gzip_decided_by_magic_not_suffix(tmp_path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    gz_named_plain = write(tmp_path / "a.idx", idx_bytes(a), gz=True)
    plain_named_gz = write(tmp_path / "b.idx.gz", idx_bytes(a), gz=False)
    np.testing.assert_array_equal(read_idx(gz_named_plain), a)
    np.testing.assert_array_equal(read_idx(str(plain_named_gz)), a)  # str paths too


def test_big_endian_on_disk(tmp_path):
    path = write(tmp_path / "a.idx", bytes([0, 0, 0x0C, 1, 0, 0, 0, 2]) + b"\x00\x00\x01\x02\xff\xff\xff\xfe")
    np.testing.assert_array_equal(read_idx(path), np.array([258, -2], dtype=np.int32))
    path = write(tmp_path / "f.idx", bytes([0, 0, 0x0D, 1, 0, 0, 0, 1]) + b"\x3f\xc0\x00\x00")
    np.testing.assert_array_equal(read_idx(path), np.array([1.5], dtype=np.float32))


# ---------------------------------------------------------------- malformed files

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_truncated(tmp_path, gz):
    a = np.zeros((5, 28, 28), np.uint8)
    path = write(tmp_path / "images.idx", idx_bytes(a, cut=100), gz=gz)
    with pytest.raises(ValueError) as e:
        read_idx(path)
    msg = str(e.value)
    assert str(path) in msg and "truncated" in msg
    assert "5×28×28 = 3920 bytes of uint8, found 3820" in msg


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_trailing_bytes(tmp_path, gz):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = write(tmp_path / "a.idx", idx_bytes(a, extra=b"\0\0\0"), gz=gz)
    with pytest.raises(ValueError, match="trailing bytes") as e:
        read_idx(path)
    assert str(path) in str(e.value)
    assert "2×3 = 24 bytes of float32, found 27" in str(e.value)


@pytest.mark.parametrize("magic", [b"\x01\x00\x08\x01", b"\x00\x02\x08\x01", b"\x89PNG"])
def test_wrong_magic(tmp_path, magic):
    path = write(tmp_path / "bad.idx", magic + b"\0\0\0\1" + b"\0")
    with pytest.raises(ValueError, match="magic number") as e:
        read_idx(path)
    assert str(path) in str(e.value) and "0x00 0x00" in str(e.value)


@pytest.mark.parametrize("code", [0x00, 0x07, 0x0A, 0x0F, 0xFF])
def test_unknown_dtype_code(tmp_path, code):
    path = write(tmp_path / "bad.idx", bytes([0, 0, code, 1]) + b"\0\0\0\1" + b"\0" * 8)
    with pytest.raises(ValueError, match=f"unknown IDX dtype code 0x{code:02x}") as e:
        read_idx(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("ndim", [0, 5])
def test_bad_ndim(tmp_path, ndim):
    path = write(tmp_path / "bad.idx", bytes([0, 0, 8, ndim]) + b"\0\0\0\1" * ndim + b"\0")
    with pytest.raises(ValueError, match=f"ndim {ndim}") as e:
        read_idx(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("data", [b"", b"\0\0", b"\0\0\x08\x03\0\0\0\x05"], ids=["empty", "2B", "short-dims"])
def test_short_header(tmp_path, data):
    path = write(tmp_path / "short.idx", data)
    with pytest.raises(ValueError, match="too short|truncated header") as e:
        read_idx(path)
    assert str(path) in str(e.value)


def test_damaged_gzip(tmp_path):
    blob = gzip.compress(idx_bytes(np.arange(1000, dtype=np.int32)), mtime=0)
    path = tmp_path / "cut.idx.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="gzip") as e:
        read_idx(path)
    assert str(path) in str(e.value)
    with pytest.raises(ValueError, match="gzip"):
        md5_of_uncompressed(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nope.idx")


# ---------------------------------------------------------------- md5

def test_md5_and_verify_small(tmp_path):
    import hashlib
    data = idx_bytes(np.arange(10, dtype=np.uint8))
    plain = write(tmp_path / "a.idx", data)
    packed = write(tmp_path / "a.idx.gz", data, gz=True)
    want = hashlib.md5(data).hexdigest()
    assert md5_of_uncompressed(plain) == md5_of_uncompressed(packed) == want
    assert verify(packed, want) == want
    assert verify(packed, want.upper()) == want
    with pytest.raises(ValueError) as e:
        verify(packed, "0" * 32)
    assert str(packed) in str(e.value) and "0" * 32 in str(e.value) and want in str(e.value)
    with pytest.raises(ValueError, match="MNIST_MD5"):
        verify(packed)  # not an MNIST name, no expected sum


# ---------------------------------------------------------------- MNIST loader on fake files

def fake_split(directory, n_images, n_labels, labels=None, image_shape=(28, 28), gz=True,
               train=True):
    directory.mkdir(parents=True, exist_ok=True)
    images_name, labels_name = mnist.SPLITS[train]
    if not gz:
        images_name, labels_name = images_name[:-3], labels_name[:-3]
    images = np.arange(n_images * np.prod(image_shape), dtype=np.int64).astype(np.uint8)
    images = images.reshape(n_images, *image_shape)
    labels = np.arange(n_labels, dtype=np.uint8) % 10 if labels is None else np.asarray(labels, np.uint8)
    write(directory / images_name, idx_bytes(images), gz=gz)
    write(directory / labels_name, idx_bytes(labels), gz=gz)
    return directory / images_name, directory / labels_name, images, labels


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "test"])
def test_load_fake(tmp_path, gz, train):
    _, _, images, labels = fake_split(tmp_path / "m", 13, 13, gz=gz, train=train)
    x, y = mnist.load_mnist_arrays(tmp_path / "m", train=train)
    assert x.dtype == np.uint8 and x.shape == (13, 28, 28)
    assert y.dtype == np.int64 and y.shape == (13,)
    np.testing.assert_array_equal(x, images)
    np.testing.assert_array_equal(y, labels)


def test_label_count_mismatch(tmp_path):
    images_path, labels_path, _, _ = fake_split(tmp_path / "m", 12, 11)
    with pytest.raises(ValueError) as e:
        mnist.load_mnist_arrays(tmp_path / "m")
    msg = str(e.value)
    assert str(images_path) in msg and str(labels_path) in msg
    assert "12 images" in msg and "11 labels" in msg


def test_label_out_of_range(tmp_path):
    _, labels_path, _, _ = fake_split(tmp_path / "m", 3, 3, labels=[1, 10, 2])
    with pytest.raises(ValueError, match="0..9") as e:
        mnist.load_mnist_arrays(tmp_path / "m")
    assert str(labels_path) in str(e.value) and "10 at index 1" in str(e.value)


def test_wrong_image_shape(tmp_path):
    images_path, _, _, _ = fake_split(tmp_path / "m", 3, 3, image_shape=(28, 27))
    with pytest.raises(ValueError, match=r"\[N, 28, 28\]") as e:
        mnist.load_mnist_arrays(tmp_path / "m")
    assert str(images_path) in str(e.value) and "[3, 28, 27]" in str(e.value)


def test_missing_split(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte.gz"):
        mnist.load_mnist_arrays(tmp_path / "empty", train=False)


def test_root_relative_to_repo_when_not_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/mnist here: falls back to the repo root
    images_path, labels_path = mnist.mnist_files("data/mnist", train=False)
    assert images_path == MNIST_DIR / "t10k-images-idx3-ubyte.gz"
    assert labels_path == MNIST_DIR / "t10k-labels-idx1-ubyte.gz"
    fake_split(tmp_path / "data" / "mnist", 2, 2, train=False)  # now the cwd copy wins
    x, _ = mnist.load_mnist_arrays("data/mnist", train=False)
    assert x.shape == (2, 28, 28)


# ---------------------------------------------------------------- the real MNIST

@pytest.mark.parametrize("train, n, counts", [(True, 60000, TRAIN_COUNTS),
                                              (False, 10000, TEST_COUNTS)], ids=["train", "test"])
def test_real_mnist(train, n, counts):
    x, y = mnist.load_mnist_arrays(MNIST_DIR, train=train)
    assert x.shape == (n, 28, 28) and x.dtype == np.uint8
    assert y.shape == (n,) and y.dtype == np.int64
    assert np.bincount(y, minlength=10).tolist() == counts
    assert x.min() == 0 and x.max() == 255


def test_real_mnist_from_default_root(monkeypatch):
    monkeypatch.chdir(ROOT / "tests")
    x, y = mnist.load_mnist_arrays(train=False)
    assert x.shape == (10000, 28, 28) and y.shape == (10000,)


@pytest.mark.parametrize("name", sorted(idx.MNIST_MD5))
def test_real_mnist_md5(name):
    assert verify(MNIST_DIR / name, idx.MNIST_MD5[name]) == idx.MNIST_MD5[name]
    assert verify(MNIST_DIR / name) == idx.MNIST_MD5[name]  # looked up by name


def test_real_mnist_verify_flag():
    x, y = mnist.load_mnist_arrays(MNIST_DIR, train=False, verify=True)
    assert len(x) == len(y) == 10000


def test_verify_fails_on_corrupted_copy(tmp_path):
    name = "t10k-labels-idx1-ubyte.gz"
    raw = bytearray(gzip.decompress((MNIST_DIR / name).read_bytes()))
    raw[-1] = (raw[-1] + 1) % 10  # one label changed: still a valid IDX file
    bad = tmp_path / "m" / name
    bad.parent.mkdir()
    bad.write_bytes(gzip.compress(bytes(raw), mtime=0))
    with pytest.raises(ValueError) as e:
        verify(bad, idx.MNIST_MD5[name])
    msg = str(e.value)
    assert str(bad) in msg and idx.MNIST_MD5[name] in msg and md5_of_uncompressed(bad) in msg
    # and the loader checks it with verify=True (the images file is a good copy)
    shutil.copy(MNIST_DIR / "t10k-images-idx3-ubyte.gz", tmp_path / "m")
    mnist.load_mnist_arrays(tmp_path / "m", train=False)  # loads fine without verify
    with pytest.raises(ValueError, match="md5 mismatch"):
        mnist.load_mnist_arrays(tmp_path / "m", train=False, verify=True)
