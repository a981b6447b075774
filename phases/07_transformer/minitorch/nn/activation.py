# GENERATED from minitorch/nn/activation.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Activation functions as modules (no parameters): ``nn.ReLU()``, ``nn.Sigmoid()``, ``nn.Tanh()``."""
from . import functional as F
from .module import Module


class ReLU(Module):
    """max(x, 0) elementwise; any shape."""

    def forward(self, input):
        return F.relu(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise; any shape."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """tanh(x) elementwise; any shape."""

    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    """Softmax along ``dim``: non-negative values summing to 1 along it; any shape."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim`` (stable; pair it with ``nn.NLLLoss``); any shape."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x) elementwise (``approximate='tanh'``: the tanh form); any shape."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"
