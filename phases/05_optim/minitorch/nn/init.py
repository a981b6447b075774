# GENERATED from minitorch/nn/init.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Weight initialisation, in place and without recording (``torch.nn.init``'s names)."""
import math

from ..autograd.grad_mode import no_grad
from ..creation import rand


@no_grad()
def uniform_(tensor, a=0.0, b=1.0):
    """Fill ``tensor`` with U(a, b) samples (cuRAND on cuda); returns it."""
    sample = rand(tensor.shape, dtype=tensor.dtype, device=tensor.device) * (b - a) + a
    tensor._data = sample._data
    return tensor


def kaiming_uniform_linear_(weight, bias, in_features):
    """PyTorch's default for ``Linear``: weight and bias ~ U(-sqrt(k), sqrt(k)), k = 1/in_features.

    (He et al., 2015, "Delving Deep into Rectifiers", with a = sqrt(5), reduces to this bound.)
    """
    bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
    uniform_(weight, -bound, bound)
    if bias is not None:
        uniform_(bias, -bound, bound)
