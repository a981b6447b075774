# GENERATED from minitorch/nn/normalization.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""``nn.LayerNorm``: normalization over the trailing dimensions of each sample, with a learnable
elementwise scale and shift (see :mod:`minitorch.ops.transformer` for the maths and the kernels)."""
from ..creation import ones, zeros
from . import functional as F
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)`` dims.

    Parameters (when ``elementwise_affine``): ``weight`` (ones) and ``bias`` (zeros, absent with
    ``bias=False``), both of shape ``normalized_shape``.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, device=device, dtype=dtype))
            self.bias = Parameter(zeros(*self.normalized_shape, device=device, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None

    def reset_parameters(self):
        if self.weight is not None:
            self.weight.data.fill_(1)
        if self.bias is not None:
            self.bias.data.zero_()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
