# GENERATED from minitorch/data/mnist.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Load MNIST (LeCun, Cortes and Burges; CC BY-SA 3.0, see data/README.md) as NumPy arrays.

The four IDX files live in ``data/mnist/`` at the repository root::

    train-images-idx3-ubyte.gz   60000×28×28 uint8      train-labels-idx1-ubyte.gz   60000 uint8
    t10k-images-idx3-ubyte.gz    10000×28×28 uint8      t10k-labels-idx1-ubyte.gz    10000 uint8

Uncompressed copies (the same names without ``.gz``) are read too. :class:`MNIST` wraps a split
as a :class:`~minitorch.data.Dataset` (like ``torchvision.datasets.MNIST``).
"""
import numbers
from pathlib import Path

import numpy as np

from ..creation import from_numpy, tensor
from ..device import as_device
from ..utils.race import find_root
from . import idx
from .dataset import Dataset, TensorDataset

SPLITS = {
    True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGE_SHAPE = (28, 28)
NUM_CLASSES = 10


def repo_root():
    """The nearest directory above this file that holds ``pyproject.toml``, or None."""
    return find_root(Path(__file__).resolve().parent)


def _find(directory, name):
    """``directory/name`` (``.gz``), else its uncompressed twin, else None."""
    for candidate in (directory / name, directory / name.removesuffix(".gz")):
        if candidate.is_file():
            return candidate
    return None


def search_dirs(root):
    """The directories a relative ``root`` is tried in: as given (the current directory), then
    against the repository root (the directory holding ``pyproject.toml``), so code run from
    ``phases/NN_name/`` finds ``data/mnist``. An absolute ``root`` is the only one."""
    root = Path(root)
    candidates = [root]
    if not root.is_absolute():
        top = repo_root()
        if top is not None and (top / root).resolve() != root.resolve():
            candidates.append(top / root)
    return candidates


def find_files(names, directories, what):
    """``names`` (``.gz`` or uncompressed twins) all found in the first directory that holds them.

    Raises ``FileNotFoundError`` naming ``what``, the files and every directory tried.
    """
    for directory in directories:
        found = [_find(Path(directory), name) for name in names]
        if all(found):
            return tuple(found)
    tried = ", ".join(str(Path(d).resolve()) for d in directories)
    raise FileNotFoundError(f"{what} files {' and '.join(names)} not found in: {tried}")


def mnist_files(root="data/mnist", train=True):
    """Paths ``(images, labels)`` of one split.

    ``root`` is used as is when absolute. A relative ``root`` is tried against the current
    directory first, then against the repository root (see :func:`search_dirs`).

    Raises ``FileNotFoundError`` naming the files and every directory tried.
    """
    try:
        return find_files(SPLITS[bool(train)], search_dirs(root), f"MNIST {'train' if train else 'test'}")
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{e} (see data/README.md)") from None


def load_mnist_arrays(root="data/mnist", train=True, verify=False):
    """Load one MNIST split as NumPy arrays.

    Args:
        root: directory of the IDX files; relative paths are tried against the current directory,
            then the repository root (see ``mnist_files``).
        train: True for the 60,000 training examples, False for the 10,000 test examples.
        verify: also check the md5 of each file's uncompressed bytes against ``idx.MNIST_MD5``
            (reads each file twice; about a second more for the training set).

    Returns:
        ``(images, labels)``: images ``uint8`` of shape ``[N, 28, 28]`` (0 = background,
        255 = ink), labels ``int64`` of shape ``[N]`` with values 0..9.

    Raises:
        FileNotFoundError: the files are not found (message lists the directories tried).
        ValueError (naming the file(s)): a malformed IDX file (see ``idx.read_idx``); an md5
            mismatch with ``verify=True``; images not uint8 ``[N, 28, 28]``; labels not uint8
            ``[N]``; different counts of images and labels; a label outside 0..9.
    """
    images_path, labels_path = mnist_files(root, train)
    if verify:
        for path, name in zip((images_path, labels_path), SPLITS[bool(train)]):
            idx.verify(path, idx.MNIST_MD5[name])
    return read_split(images_path, labels_path)


def read_split(images_path, labels_path):
    """Read and check one split of an MNIST-format data set (MNIST, Fashion-MNIST).

    Returns ``(images, labels)``: images ``uint8 [N, 28, 28]``, labels ``int64 [N]`` in 0..9.
    Raises ``ValueError`` naming the file(s): see :func:`load_mnist_arrays`.
    """
    images = idx.read_idx(images_path)
    labels = idx.read_idx(labels_path)

    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != IMAGE_SHAPE:
        raise ValueError(f"{images_path}: expected uint8 images of shape [N, 28, 28], "
                         f"found {images.dtype} of shape {list(images.shape)}")
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(f"{labels_path}: expected uint8 labels of shape [N], "
                         f"found {labels.dtype} of shape {list(labels.shape)}")
    if len(images) != len(labels):
        raise ValueError(f"count mismatch: {images_path} has {len(images)} images but "
                         f"{labels_path} has {len(labels)} labels")
    if len(labels) and labels.max() >= NUM_CLASSES:
        bad = int(np.argmax(labels >= NUM_CLASSES))
        raise ValueError(f"{labels_path}: labels must be 0..{NUM_CLASSES - 1}, found "
                         f"{int(labels[bad])} at index {bad}")
    return images, labels.astype(np.int64)


class MNIST(Dataset):
    """MNIST as a :class:`~minitorch.data.Dataset`, like ``torchvision.datasets.MNIST`` (no download:
    the files ship in ``data/mnist/``).

        train = MNIST(train=True)                  # 60,000 examples
        image, label = train[0]                    # float32 tensor [1, 28, 28] in [0, 1], int 5
        loader = DataLoader(train.to_tensor_dataset("cuda"), batch_size=64, shuffle=True)

    Args:
        root: directory of the IDX files (see :func:`mnist_files`: relative paths are also tried
            against the repository root).
        train: True for the 60,000 training examples, False for the 10,000 test examples.
        verify: check the files' md5 sums first (see :func:`load_mnist_arrays`).

    Attributes:
        data: the images as a NumPy ``uint8`` array ``[N, 28, 28]`` (0 = background, 255 = ink),
            torchvision's ``.data``. It stays a NumPy array because minitorch has no ``uint8``
            dtype: an int64 tensor would take 8x the memory (376 MB for the training set).
        targets: the labels, an int64 cpu tensor ``[N]`` with values 0..9.
        classes: the class names, ``'0 - zero'`` ... ``'9 - nine'`` (torchvision's).

    Two ways to get examples out:

    * ``ds[i]``: one example ``(image, label)``, image a float32 cpu tensor ``[1, 28, 28]`` equal to
      ``data[i] / 255`` (torchvision's ``ToTensor()``), label a Python int. A DataLoader over ``ds``
      itself calls this once per example and stacks the batch: fine for a look, slow for training.
    * :meth:`to_tensor_dataset`: the whole split as two tensors on a device, one host-to-device copy;
      a DataLoader then gathers each batch on that device with one kernel per tensor.

    Raises:
        FileNotFoundError, ValueError: from :func:`load_mnist_arrays` (missing or malformed files).
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root="data/mnist", train=True, verify=False):
        self._keep(root, train, *load_mnist_arrays(root, train, verify))

    def _keep(self, root, train, images, labels):
        """Hold one loaded split (shared with the data sets in the same format: FashionMNIST)."""
        self.root = root
        self.train = bool(train)
        self.data = images
        self._labels = labels                     # int64 NumPy: ds[i] reads its label from here
        self.targets = from_numpy(labels)         # shares memory with _labels: no copy

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        """``(image, label)``: float32 tensor ``[1, 28, 28]`` (``data[index] / 255``), int 0..9.

        Raises:
            TypeError: ``index`` is not an integer.  IndexError: out of range (negative counts
                from the end).
        """
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"{type(self).__name__} indices must be integers, got {type(index).__name__}")
        n = len(self.data)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} {self._split} with {n} examples")
        image = self.data[index].astype(np.float32)[None] / np.float32(255)
        return from_numpy(image), int(self._labels[index])

    def to_tensor_dataset(self, device="cpu", flatten=False):
        """The whole split as a :class:`~minitorch.data.TensorDataset` ``(images, targets)`` on ``device``.

        The images are scaled on the host exactly as ``ds[i]`` scales them (``uint8 / 255`` in
        float32) and copied to the device in ONE host-to-device copy (188 MB for the training set);
        the DataLoader then batches them there without touching the host again.

        Args:
            device: ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or a ``minitorch.device``.
            flatten: images as ``[N, 784]`` (ready for a ``Linear``) instead of ``[N, 1, 28, 28]``.

        Returns:
            ``TensorDataset(images, targets)``: images float32 ``[N, 1, 28, 28]`` (or ``[N, 784]``)
            in [0, 1], targets int64 ``[N]``, both on ``device``.
        """
        images = self.data.astype(np.float32)
        images /= np.float32(255)
        images = images.reshape((len(images), -1) if flatten else (len(images), 1) + IMAGE_SHAPE)
        if as_device(device).type == "cpu":
            images, targets = from_numpy(images), tensor(self._labels)   # a fresh array: share it
        else:
            images, targets = tensor(images, device=device), tensor(self._labels, device=device)
        return TensorDataset(images, targets)

    @property
    def _split(self):
        return "Train" if self.train else "Test"

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n    Root location: {self.root}\n"
                f"    Split: {self._split}")
