# GENERATED from minitorch/nn/linear.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Linear``: y = x W^T + b, PyTorch's layout and initialisation."""
from ..creation import empty
from . import functional as F
from .init import kaiming_uniform_linear_
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """Applies ``y = x @ weight.T + bias``.

    Shapes: input [..., in_features] -> output [..., out_features]; ``weight`` is
    [out_features, in_features] and ``bias`` [out_features], both U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        self.bias = Parameter(empty(out_features, device=device, dtype=dtype)) if bias else None
        kaiming_uniform_linear_(self.weight, self.bias, in_features)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    """Returns its input unchanged (any arguments to the constructor are ignored, as in PyTorch):
    a placeholder where a layer is optional, e.g. ``head = nn.Linear(...) if n else nn.Identity()``."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
