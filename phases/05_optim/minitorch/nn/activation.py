# GENERATED from minitorch/nn/activation.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
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
