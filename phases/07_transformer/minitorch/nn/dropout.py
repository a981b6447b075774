# GENERATED from minitorch/nn/dropout.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""``nn.Dropout`` and ``nn.Dropout2d``: random zeroing in training mode, identity in eval mode
(see :mod:`minitorch.ops.dropout`)."""
from . import functional as F
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability p and scale the rest by 1 / (1 - p); any shape."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of [N, C, H, W] (or [N, C, L]) with probability p, scale the rest by 1 / (1 - p)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
