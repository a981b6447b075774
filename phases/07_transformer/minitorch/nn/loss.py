# GENERATED from minitorch/nn/loss.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Loss functions as modules: ``nn.MSELoss()``."""
from . import functional as F
from .module import Module


class MSELoss(Module):
    """Mean squared error, ``mean((input - target) ** 2)`` (``reduction='mean'|'sum'|'none'``)."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(Module):
    """Cross-entropy of logits [N, C] and int64 class indices [N] (softmax and NLL fused);
    ``reduction='mean'|'sum'|'none'``. See :func:`minitorch.nn.functional.cross_entropy`."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.cross_entropy(input, target, reduction=self.reduction)


class NLLLoss(Module):
    """Negative log-likelihood of log-probabilities [N, C] (e.g. after ``nn.LogSoftmax(dim=1)``)
    and int64 class indices [N]; ``reduction='mean'|'sum'|'none'``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, reduction=self.reduction)


class L1Loss(Module):
    """Mean absolute error, ``mean(|input - target|)`` (``reduction='mean'|'sum'|'none'``): less
    swayed by a few huge errors than MSELoss. See :func:`minitorch.nn.functional.l1_loss`."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)
