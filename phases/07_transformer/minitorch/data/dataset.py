# GENERATED from minitorch/data/dataset.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Data sets as PyTorch's ``torch.utils.data`` defines them: anything with ``len(ds)`` and
``ds[i]`` (one sample), plus the splits made from them.

* :class:`Dataset` - the base class: subclass it and define ``__getitem__`` and ``__len__``.
* :class:`TensorDataset` - samples are rows of tensors that share their first dimension (features
  and targets); the tensors may live on the GPU, and the :class:`~minitorch.data.DataLoader` then
  gathers whole batches there with one kernel per tensor.
* :class:`Subset` - some samples of another data set, by index.
* :func:`random_split` - shuffled disjoint subsets of given lengths or fractions.
* :func:`split_first_fraction` - the first fraction / the rest, in order (no shuffling): the
  80 % train / 20 % test split of phase 04's sales table (sorted by time, so the test set is the
  last weeks: a model is judged on days it has not seen).

Randomness comes from a NumPy ``Generator`` (``generator=``), a seed (``seed=``), or else
minitorch's global generator (``minitorch.manual_seed`` makes it repeatable).
"""
import math
import numbers

import numpy as np

from .. import random
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "split_first_fraction"]


class Dataset:
    """A collection of samples: ``ds[i]`` for ``0 <= i < len(ds)``. Subclasses define both."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: row ``i`` of each tensor (views, no copies).

    Args:
        *tensors: one or more tensors with the same first dimension (the number of samples), on
            any devices (usually all on one).
    Raises:
        ValueError: no tensors, a 0-d tensor, or first dimensions that differ (naming the shapes).
        TypeError: an argument that is not a Tensor.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: a 0-d tensor has no first dimension to index samples by")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError("Size mismatch between tensors: TensorDataset needs the same first dimension, got "
                             + ", ".join(str(tuple(t.shape)) for t in tensors))
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def __repr__(self):
        return f"TensorDataset({', '.join(str(tuple(t.shape)) for t in self.tensors)})"


class Subset(Dataset):
    """The samples ``dataset[indices[0]], dataset[indices[1]], ...`` of another data set.

    ``indices``: a sequence of ints (a list, a range, a NumPy array).
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, (list, tuple)):
            return [self.dataset[int(self.indices[i])] for i in index]
        return self.dataset[int(self.indices[index])]

    def __len__(self):
        return len(self.indices)

    def __repr__(self):
        return f"Subset({len(self)} of {self.dataset!r})"


def as_generator(generator=None, seed=None):
    """A NumPy ``Generator`` from ``generator`` (a Generator, used as it is, or an int seed) or
    ``seed``; with neither, minitorch's global cpu generator (``minitorch.manual_seed``).

    Raises:
        ValueError: both given.  TypeError: a generator of another kind.
    """
    if generator is not None and seed is not None:
        raise ValueError("give generator= or seed=, not both")
    if isinstance(generator, np.random.Generator):
        return generator
    if generator is not None:
        if not isinstance(generator, numbers.Integral):
            raise TypeError(f"generator must be a numpy.random.Generator or an int seed, got {type(generator).__name__}")
        seed = generator
    return np.random.default_rng(seed) if seed is not None else random.cpu_generator()


def _lengths(n, lengths):
    """PyTorch's rule: fractions summing to 1 become floor(n * f) each, the remainder handed out
    one by one from the first subset on; otherwise the lengths must sum to n."""
    lengths = list(lengths)
    if lengths and all(isinstance(f, float) for f in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, f in enumerate(lengths):
            if not 0 <= f <= 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        return counts
    for x in lengths:
        if not isinstance(x, numbers.Integral) or x < 0:
            raise ValueError(f"random_split: lengths must be non-negative ints or fractions summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input "
                         f"dataset ({n})!")
    return [int(x) for x in lengths]


def random_split(dataset, lengths, generator=None, seed=None):
    """Shuffle ``dataset``'s samples and cut them into disjoint :class:`Subset` s of ``lengths``
    (ints summing to ``len(dataset)``, or fractions summing to 1, e.g. ``[0.8, 0.2]``).

    Reproducible from ``seed`` (or a NumPy ``generator``). The subsets of a TensorDataset on the GPU
    still batch on the GPU (the DataLoader composes the indices).

    Raises:
        ValueError: lengths that do not add up, or a fraction outside [0, 1].
    """
    counts = _lengths(len(dataset), lengths)
    perm = as_generator(generator, seed).permutation(len(dataset))
    bounds = np.cumsum([0] + counts)
    return [Subset(dataset, perm[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def split_first_fraction(dataset, fraction=0.8):
    """(the first ``floor(fraction * len)`` samples, the rest), in order: no shuffling.

    For a :class:`TensorDataset` both parts are TensorDatasets of views (row slices: no copy);
    otherwise :class:`Subset` s of ranges.

    Raises:
        ValueError: ``fraction`` outside [0, 1].
    """
    if not 0 <= fraction <= 1:
        raise ValueError(f"split_first_fraction: fraction must be in [0, 1], got {fraction}")
    n = len(dataset)
    k = int(math.floor(n * fraction))
    if isinstance(dataset, TensorDataset):
        return (TensorDataset(*(t[:k] for t in dataset.tensors)),
                TensorDataset(*(t[k:] for t in dataset.tensors)))
    return Subset(dataset, range(0, k)), Subset(dataset, range(k, n))
