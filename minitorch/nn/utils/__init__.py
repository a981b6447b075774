# phase: 05
"""``minitorch.nn.utils``: helpers around training, as ``torch.nn.utils``."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
