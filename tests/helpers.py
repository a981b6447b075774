"""Small helpers shared by the tests: building tensors, reading them back, comparing gradients
with PyTorch, and the MNIST facts the data tests check against."""
import numpy as np
import torch

import minitorch as mt

# images per class (digits 0-9) in the MNIST training and test splits
TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def tensor(x, device, dtype=None, requires_grad=False):
    """A minitorch tensor of ``x`` (a list, NumPy array or scalar); dtype None: inferred from ``x``.
    Named ``tensor``, not ``t``: the tests call their tensors ``t``."""
    return mt.tensor(np.asarray(x), dtype=dtype, device=device, requires_grad=requires_grad)


def to_np(x):
    """A minitorch tensor's values as a NumPy array on the host."""
    return x.detach().cpu().numpy()


def backward_both(y, ty, w, device, dtype=None):
    """Backpropagate ``sum(y * w)`` through ours (``y``) and ``sum(ty * w)`` through PyTorch's
    (``ty``). Random weights ``w`` make every output element's gradient count, not only their sum.
    ``dtype``: a minitorch dtype for ``w`` on both sides (None: inferred from ``w``)."""
    (y * tensor(w, device, dtype)).sum().backward()
    (ty * torch.tensor(w, dtype=None if dtype is None else getattr(torch, dtype.name))).sum().backward()
