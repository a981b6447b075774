# GENERATED from minitorch/nn/flatten.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""``nn.Flatten``: merge dimensions into one, typically [N, C, H, W] -> [N, C*H*W] before a Linear."""
from .module import Module


class Flatten(Module):
    """Flatten dimensions ``start_dim..end_dim`` (inclusive; negative counts from the end) into one.

    The default keeps the batch dimension: [N, C, H, W] -> [N, C*H*W]. A view when the input is
    contiguous, else a copy (``reshape`` semantics), with gradients flowing back to the input shape.

    Raises:
        IndexError: if ``start_dim`` or ``end_dim`` is out of range for the input.
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
