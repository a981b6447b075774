# phase: 03
"""``minitorch.nn``: layers as modules with parameters, losses, and the functional forms."""
from . import functional, init
from .activation import ReLU, Sigmoid, Tanh
from .linear import Linear
from .loss import MSELoss
from .module import Module
from .parameter import Parameter
# >>> phase 04
from .loss import L1Loss
# <<< phase 04
# >>> phase 05
from . import utils
# <<< phase 05
# >>> phase 06
from .activation import LogSoftmax, Softmax
from .flatten import Flatten
from .loss import CrossEntropyLoss, NLLLoss
from .conv import Conv2d
# <<< phase 06
# >>> phase 05
from .container import ModuleDict, ModuleList, Sequential
from .linear import Identity
# <<< phase 05
# >>> phase 06
from .batchnorm import BatchNorm1d, BatchNorm2d
from .dropout import Dropout, Dropout2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
# <<< phase 06
# >>> phase 07
from .activation import GELU
from .normalization import LayerNorm
from .sparse import Embedding
from .attention import MultiheadAttention
# <<< phase 07
