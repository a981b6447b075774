# GENERATED from minitorch/data/dataloader.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 04
"""``DataLoader``: mini-batches from a data set, reshuffled every epoch.

    loader = DataLoader(TensorDataset(x, y), batch_size=256, shuffle=True, seed=0)
    for epoch in range(10):
        for xb, yb in loader:          # a new order each epoch, the same orders on every run
            ...

How a batch is made depends on the data set:

* a :class:`~minitorch.data.TensorDataset` (or a :class:`~minitorch.data.Subset` of one, as
  ``random_split`` makes): the epoch's order - a permutation drawn on the host with NumPy,
  composed with the subset's indices - is copied to the tensors' device ONCE per epoch as an int64
  tensor (a few KB: one small host-to-device copy). Each batch is a slice of it (a view) and each
  tensor's batch is one ``index_select`` (the gather kernel of index.cu) on the device: no
  per-sample Python work and no data crossing to the host. Without shuffling and without a subset,
  batches are plain row slices of the tensors: views, no kernel at all.
* any other data set: ``dataset[i]`` for each index of the batch, then ``collate_fn`` (by default
  :func:`default_collate`, which stacks tensors with ``minitorch.stack``).
"""
import numbers

import numpy as np

from ..tensor import Tensor
from .dataset import Subset, TensorDataset, as_generator

__all__ = ["DataLoader", "default_collate"]


def default_collate(samples):
    """Merge a list of samples into a batch, as PyTorch's default_collate does: tensors are stacked
    along a new first dimension (``minitorch.stack``, on their device); NumPy arrays too; Python
    floats become a float64 tensor, ints int64, bools bool; tuples/lists and dicts are collated
    field by field; anything else (strings...) is returned as a list.

    Raises:
        RuntimeError: tensors of different shapes (from stack).  ValueError: samples whose
            tuples have different lengths.
    """
    # >>> exercise 04.4: collating samples into a batch
    # hint: tensors: minitorch.stack; NumPy arrays: stack then tensor(); Python bools/ints/floats: bool/int64/float64 tensors
    # hint: tuples, lists and dicts: collate field by field (recursively); anything else: a list
    from ..creation import tensor
    from ..ops import stack
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(samples)
    if isinstance(first, np.ndarray):
        return tensor(np.stack(samples))
    if isinstance(first, (bool, np.bool_)):
        return tensor(np.array(samples, dtype=np.bool_))
    if isinstance(first, numbers.Integral):
        return tensor(np.array(samples, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return tensor(np.array(samples, dtype=np.float64))
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(s) != len(first) for s in samples):
            raise ValueError("default_collate: every sample of a batch must have the same number of fields")
        return tuple(default_collate(list(field)) for field in zip(*samples))
    return list(samples)
    # <<< exercise


def _tensor_source(dataset):
    """(the TensorDataset under ``dataset``, its sample numbers as an int64 array or None for all)
    when ``dataset`` is a TensorDataset or Subsets of one; else (None, None)."""
    idx = None
    while isinstance(dataset, Subset):
        sub = np.asarray(dataset.indices, dtype=np.int64)
        idx = sub if idx is None else sub[idx]
        dataset = dataset.dataset
    return (dataset, idx) if isinstance(dataset, TensorDataset) else (None, None)


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    Args:
        dataset: anything with ``len`` and ``[i]``; TensorDatasets (and Subsets of them) are
            batched on their device (see the module docstring).
        batch_size: samples per batch (the last one may be smaller unless ``drop_last``).
        shuffle: draw a new random order at the start of every epoch (every ``iter(loader)``).
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        generator: a ``numpy.random.Generator`` to draw the orders from (or an int seed).
        seed: an int: the sequence of epoch orders is the same on every run.
            With neither, a seed is drawn from minitorch's global generator when the loader is
            made (so ``minitorch.manual_seed`` before makes it repeatable).
        collate_fn: merges a list of samples into a batch (generic data sets only);
            :func:`default_collate` by default.

    ``len(loader)`` is the number of batches per epoch. A TensorDataset gives each batch as a
    tuple with one tensor per tensor of the data set.

    Raises:
        ValueError: batch_size not a positive int, or both generator and seed.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None, seed=None,
                 collate_fn=None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn or default_collate
        if generator is None and seed is None:           # own stream, seeded from the global one
            seed = int(as_generator().integers(2**63))
        self.generator = as_generator(generator, seed)

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _bounds(self, n):
        # >>> exercise 04.3: the DataLoader's batches
        # hint: batches start at 0, batch_size, 2 * batch_size, ...; the last one may be short
        # hint: drop_last drops that short batch
        stop = n - n % self.batch_size if self.drop_last else n
        return [(a, min(a + self.batch_size, n)) for a in range(0, stop, self.batch_size)]
        # <<< exercise

    def __iter__(self):
        n = len(self.dataset)
        order = self.generator.permutation(n) if self.shuffle else None
        base, sub = _tensor_source(self.dataset)
        if base is not None:
            return self._tensor_batches(base, sub, order, n)
        return self._generic_batches(order, n)

    def _tensor_batches(self, base, sub, order, n):
        tensors = base.tensors
        if order is None and (sub is None or (sub.size and np.all(np.diff(sub) == 1) and sub[0] >= 0)):
            first = 0 if sub is None else int(sub[0])    # in order and contiguous: row slices (views)
            for a, b in self._bounds(n):
                yield tuple(t[first + a:first + b] for t in tensors)
            return
        from ..creation import tensor
        from ..ops import index_select
        rows = order if sub is None else (sub if order is None else sub[order])
        on_device = {}                                   # one copy of the epoch's order per device
        for t in tensors:
            if t.device not in on_device:
                on_device[t.device] = tensor(np.ascontiguousarray(rows, dtype=np.int64), device=t.device)
        for a, b in self._bounds(n):
            # one slice per device, a view of the raw array: the order needs no autograd, and
            # Tensor indexing would parse the key and record a view (~12 us a batch, on the host)
            picks = {dev: Tensor(r._data[a:b], dev) for dev, r in on_device.items()}
            yield tuple(index_select(t, 0, picks[t.device]) for t in tensors)

    def _generic_batches(self, order, n):
        for a, b in self._bounds(n):
            picks = range(a, b) if order is None else order[a:b]
            yield self.collate_fn([self.dataset[int(i)] for i in picks])

    def __repr__(self):
        return (f"DataLoader({self.dataset!r}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
                f"drop_last={self.drop_last}, {len(self)} batches)")
