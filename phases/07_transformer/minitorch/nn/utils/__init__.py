# GENERATED from minitorch/nn/utils/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""``minitorch.nn.utils``: helpers around training, as ``torch.nn.utils``."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
