# GENERATED from minitorch/nn/__init__.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
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
from .container import ModuleDict, ModuleList, Sequential
from .linear import Identity
