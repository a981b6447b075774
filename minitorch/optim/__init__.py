# phase: 03
"""``minitorch.optim``: optimizers that update parameters from their ``.grad``."""
from .optimizer import Optimizer
from .sgd import SGD
# >>> phase 05
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .rmsprop import RMSprop
# <<< phase 05
