# phase: 06
"""Load MNIST (LeCun, Cortes and Burges; CC BY-SA 3.0, see data/README.md) as NumPy arrays.

The four IDX files live in ``data/mnist/`` at the repository root::

    train-images-idx3-ubyte.gz   60000×28×28 uint8      train-labels-idx1-ubyte.gz   60000 uint8
    t10k-images-idx3-ubyte.gz    10000×28×28 uint8      t10k-labels-idx1-ubyte.gz    10000 uint8

Uncompressed copies (the same names without ``.gz``) are read too.
"""
from pathlib import Path

import numpy as np

from . import idx

SPLITS = {
    True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGE_SHAPE = (28, 28)
NUM_CLASSES = 10


def repo_root():
    """The nearest directory above this file that holds ``pyproject.toml``, or None."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return parent
    return None


def _find(directory, name):
    """``directory/name`` (``.gz``), else its uncompressed twin, else None."""
    for candidate in (directory / name, directory / name.removesuffix(".gz")):
        if candidate.is_file():
            return candidate
    return None


def mnist_files(root="data/mnist", train=True):
    """Paths ``(images, labels)`` of one split.

    ``root`` is used as is when absolute. A relative ``root`` is tried against the current
    directory first, then against the repository root (the directory holding
    ``pyproject.toml``), so code run from ``phases/NN_name/`` finds ``data/mnist``.

    Raises ``FileNotFoundError`` naming the files and every directory tried.
    """
    names = SPLITS[bool(train)]
    root = Path(root)
    candidates = [root]
    if not root.is_absolute():
        top = repo_root()
        if top is not None and (top / root).resolve() != root.resolve():
            candidates.append(top / root)
    for directory in candidates:
        found = [_find(directory, name) for name in names]
        if all(found):
            return tuple(found)
    tried = ", ".join(str(d.resolve()) for d in candidates)
    raise FileNotFoundError(f"MNIST {'train' if train else 'test'} files {' and '.join(names)} "
                            f"not found in: {tried} (see data/README.md)")


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

    images = idx.read_idx(images_path)
    labels = idx.read_idx(labels_path)

    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != IMAGE_SHAPE:
        raise ValueError(f"{images_path}: expected uint8 images of shape [N, 28, 28], "
                         f"found {images.dtype} of shape {list(images.shape)}")
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(f"{labels_path}: expected uint8 labels of shape [N], "
                         f"found {labels.dtype} of shape {list(labels.shape)}")
    if len(images) != len(labels):
        raise ValueError(f"MNIST count mismatch: {images_path} has {len(images)} images but "
                         f"{labels_path} has {len(labels)} labels")
    if len(labels) and labels.max() >= NUM_CLASSES:
        bad = int(np.argmax(labels >= NUM_CLASSES))
        raise ValueError(f"{labels_path}: labels must be 0..{NUM_CLASSES - 1}, found "
                         f"{int(labels[bad])} at index {bad}")
    return images, labels.astype(np.int64)
