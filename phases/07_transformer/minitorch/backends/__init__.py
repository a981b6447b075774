# GENERATED from minitorch/backends/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""PyTorch's ``torch.backends``: switches that choose how an op runs, never what it computes.

``minitorch.backends.cuda.matmul.allow_tf32`` lets float32 matrix products use TF32 tensor cores
(10-bit mantissa products, float32 sums): off by default, as in PyTorch since 1.12.
``minitorch.backends.cudnn`` holds PyTorch's cuDNN switches so that scripts setting them run
unchanged; MiniTorch never calls cuDNN (its convolutions are our kernels), so they only record
the choice.

The implementations themselves live in ``minitorch.native``.
"""
from . import cuda, cudnn
