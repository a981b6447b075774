# GENERATED from minitorch/nn/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``minitorch.nn``: layers as modules with parameters, losses, and the functional forms."""
from . import functional, init
from .activation import ReLU, Sigmoid, Tanh
from .linear import Linear
from .loss import MSELoss
from .module import Module
from .parameter import Parameter
from .loss import L1Loss
from . import utils
from .activation import LogSoftmax, Softmax
from .flatten import Flatten
from .loss import CrossEntropyLoss, NLLLoss
from .conv import Conv2d
from .container import ModuleDict, ModuleList, Sequential
from .linear import Identity
from .batchnorm import BatchNorm1d, BatchNorm2d
from .dropout import Dropout, Dropout2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .activation import GELU
from .normalization import LayerNorm
from .sparse import Embedding
from .attention import MultiheadAttention
