# GENERATED from minitorch/data/fashion_mnist.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017, arXiv:1708.07747; MIT licence): 70,000 28×28
grey images of clothes in ten classes, in MNIST's exact format (the same IDX files and names).

The files are not in the repository. They are looked for in ``root`` (tried like MNIST's: the
current directory, then the repository root), then where Debian's ``dataset-fashion-mnist``
package installs them (``apt-get install dataset-fashion-mnist``: ``/usr/share/datasets/fashion-mnist``).
``download=True`` fetches the four ``.gz`` files into ``root`` from Zalando's own location (the
links of the dataset's README, also torchvision's), falling back to the copy in Zalando's GitHub
repository, and checks each against the md5 Zalando publishes before keeping it.
"""
import hashlib
import os
import tempfile
import urllib.request
from pathlib import Path

from . import idx
from .mnist import MNIST, SPLITS, find_files, read_split, repo_root, search_dirs

# where Zalando's README links the files (torchvision downloads from here too), then the copy in
# the dataset's GitHub repository; tried in this order
MIRRORS = [
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
]

# md5 of the .gz files as Zalando publishes them (its README; torchvision's list): checked on download
GZ_MD5 = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}

# md5 of the *uncompressed* bytes (checked by verify=True): the same for any gzip of the files.
# Debian recompressed its copies, so only these sums match both Debian's files and Zalando's.
RAW_MD5 = {
    "train-images-idx3-ubyte.gz": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
    "train-labels-idx1-ubyte.gz": "9018921c3c673c538a1fc5bad174d6f9",
    "t10k-images-idx3-ubyte.gz": "8181f5470baa50b63fa0f6fddb340f0a",
    "t10k-labels-idx1-ubyte.gz": "15d484375f8d13e6eb1aabb0c3f46965",
}

# Debian's dataset-fashion-mnist package installs the four .gz files here
SYSTEM_DIRS = [Path("/usr/share/datasets/fashion-mnist")]

TIMEOUT_S = 60


def download_dir(root):
    """Where ``download=True`` writes: ``root`` if absolute, else under the repository root (the
    second place :func:`search_dirs` looks, so every phase folder finds it), else the current
    directory outside a repository."""
    root = Path(root)
    top = repo_root()
    return root if root.is_absolute() or top is None else top / root


def fetch(name, directory):
    """Download ``name`` into ``directory`` from the first mirror that answers; return its path.

    The bytes go to a temporary file in ``directory``, are checked against ``GZ_MD5[name]``, and
    only then renamed to ``name`` (an atomic replace): an interrupted or corrupt download never
    leaves a file under the real name.

    Raises:
        ValueError: the downloaded bytes have the wrong md5 (naming the file, the URL, both sums).
        OSError: no mirror could be read (naming every URL tried and its error).
    """
    directory.mkdir(parents=True, exist_ok=True)
    errors = []
    for base in MIRRORS:
        url = base + name
        handle, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
        try:
            md5 = hashlib.md5()
            with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
                while chunk := response.read(1 << 20):
                    md5.update(chunk)
                    out.write(chunk)
            if md5.hexdigest() != GZ_MD5[name]:
                raise ValueError(f"{name} downloaded from {url}: md5 mismatch: expected {GZ_MD5[name]}, "
                                 f"found {md5.hexdigest()} (corrupt or different file; nothing kept)")
            os.replace(partial, directory / name)
            return directory / name
        except OSError as e:          # URLError, HTTPError (404...) and timeouts are all OSErrors
            errors.append(f"{url} ({e})")
        finally:
            if os.path.exists(partial):
                os.remove(partial)
    raise OSError(f"could not download {name}: " + "; ".join(errors))


def fashion_mnist_files(root="data/fashion-mnist", train=True, download=False):
    """Paths ``(images, labels)`` of one split: in ``root`` (see :func:`~minitorch.data.mnist.search_dirs`),
    else in ``SYSTEM_DIRS``; with ``download=True`` and neither, fetched into :func:`download_dir`.

    Raises:
        FileNotFoundError: not found and ``download=False`` (naming every directory tried and the
            two ways to get the files).
        ValueError, OSError: from :func:`fetch`.
    """
    names = SPLITS[bool(train)]
    what = f"Fashion-MNIST {'train' if train else 'test'}"
    try:
        return find_files(names, search_dirs(root) + SYSTEM_DIRS, what)
    except FileNotFoundError as e:
        if not download:
            raise FileNotFoundError(f"{e}. Install Debian's dataset-fashion-mnist package "
                                    f"(apt-get install dataset-fashion-mnist) or pass download=True") from None
    return tuple(fetch(name, download_dir(root)) for name in names)


def load_fashion_mnist_arrays(root="data/fashion-mnist", train=True, download=False, verify=False):
    """One Fashion-MNIST split as NumPy arrays: images ``uint8 [N, 28, 28]``, labels ``int64 [N]``
    in 0..9 (see ``FashionMNIST.classes``); N is 60,000 (train) or 10,000 (test).

    ``verify=True`` also checks the md5 of each file's uncompressed bytes (``RAW_MD5``).

    Raises:
        FileNotFoundError, OSError, ValueError: see :func:`fashion_mnist_files`; a malformed file
            (see :func:`~minitorch.data.mnist.read_split`); an md5 mismatch with ``verify=True``.
    """
    images_path, labels_path = fashion_mnist_files(root, train, download)
    if verify:
        for path, name in zip((images_path, labels_path), SPLITS[bool(train)]):
            idx.verify(path, RAW_MD5[name])
    return read_split(images_path, labels_path)


class FashionMNIST(MNIST):
    """Fashion-MNIST as a :class:`~minitorch.data.Dataset`, like ``torchvision.datasets.FashionMNIST``:
    everything of :class:`~minitorch.data.MNIST` (``ds[i]``, ``.data``, ``.targets``,
    ``to_tensor_dataset``), other files and class names.

        train = FashionMNIST(train=True)            # 60,000 examples
        image, label = train[0]                     # float32 tensor [1, 28, 28] in [0, 1], int 9
        train.classes[label]                        # 'Ankle boot'

    Args:
        root: directory of the IDX files, tried like MNIST's (current directory, then repository
            root), then ``SYSTEM_DIRS`` (Debian's package).
        train: True for the 60,000 training examples, False for the 10,000 test examples.
        download: fetch the files into ``root`` when they are found nowhere (see :func:`fetch`).
        verify: check the md5 of the files' uncompressed bytes first.

    Raises:
        FileNotFoundError, OSError, ValueError: see :func:`load_fashion_mnist_arrays`.
    """

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

    def __init__(self, root="data/fashion-mnist", train=True, download=False, verify=False):
        self._keep(root, train, *load_fashion_mnist_arrays(root, train, download, verify))
