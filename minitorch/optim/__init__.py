# phase: 03
"""``minitorch.optim``: optimizers that update parameters from their ``.grad``."""
from .optimizer import Optimizer
from .sgd import SGD
