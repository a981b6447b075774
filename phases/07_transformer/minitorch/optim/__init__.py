# GENERATED from minitorch/optim/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``minitorch.optim``: optimizers that update parameters from their ``.grad``."""
from .optimizer import Optimizer
from .sgd import SGD
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .rmsprop import RMSprop
