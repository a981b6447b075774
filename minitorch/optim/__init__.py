# phase: 03
"""``minitorch.optim``: optimizers that update parameters from their ``.grad``."""
from .optimizer import Optimizer
from .sgd import SGD
# >>> phase 05
from . import lr_scheduler
# <<< phase 05
