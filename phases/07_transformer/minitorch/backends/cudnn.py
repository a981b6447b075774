# GENERATED from minitorch/backends/cudnn.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""``minitorch.backends.cudnn``: PyTorch's cuDNN switches, kept so that scripts setting them run.

MiniTorch has no cuDNN: convolutions are our own kernels. ``enabled``, ``benchmark``,
``deterministic`` and ``allow_tf32`` are plain module attributes with PyTorch's defaults; nothing
reads them yet, and ``is_available()`` says False.
"""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True      # PyTorch's default for convolutions; unused until a conv uses tensor cores


def is_available():
    """False: MiniTorch does not use cuDNN."""
    return False
