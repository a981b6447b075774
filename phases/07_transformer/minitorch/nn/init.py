# GENERATED from minitorch/nn/init.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Weight initialisation, in place and without recording (``torch.nn.init``'s names)."""
import math

from ..autograd.grad_mode import no_grad
from ..creation import rand
import warnings

from ..creation import randn


@no_grad()
def uniform_(tensor, a=0.0, b=1.0):
    """Fill ``tensor`` with U(a, b) samples (cuRAND on cuda); returns it."""
    sample = rand(tensor.shape, dtype=tensor.dtype, device=tensor.device) * (b - a) + a
    tensor._data = sample._data
    return tensor


def kaiming_uniform_linear_(weight, bias, in_features):
    """PyTorch's default for ``Linear``: weight and bias ~ U(-sqrt(k), sqrt(k)), k = 1/in_features.

    (He et al., 2015, "Delving Deep into Rectifiers", with a = sqrt(5), reduces to this bound.)
    """
    bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
    uniform_(weight, -bound, bound)
    if bias is not None:
        uniform_(bias, -bound, bound)


# Every initialiser below writes into the tensor's own memory (``copy_``/``fill_``: our strided copy
# and fill kernels on cuda), so views of it and an optimizer holding it see the new values, and its
# version counter moves on. Draws come from ``rand``/``randn``: NumPy's generator on cpu, cuRAND on
# cuda, both reseeded by ``minitorch.manual_seed``.

@no_grad()
def uniform_(tensor, a=0.0, b=1.0):  # noqa: F811 - replaces phase 03's, which swapped the memory
    """Fill ``tensor`` in place with U(a, b) samples; returns it."""
    if tensor.numel() == 0:                 # nothing to draw (and nothing to write)
        return tensor
    return tensor.copy_(rand(tensor.shape, dtype=tensor.dtype, device=tensor.device) * (b - a) + a)


@no_grad()
def normal_(tensor, mean=0.0, std=1.0):
    """Fill ``tensor`` in place with N(mean, std^2) samples; returns it."""
    if tensor.numel() == 0:
        return tensor
    return tensor.copy_(randn(tensor.shape, dtype=tensor.dtype, device=tensor.device) * std + mean)


@no_grad()
def constant_(tensor, val):
    """Fill ``tensor`` in place with ``val``; returns it."""
    return tensor.fill_(val)


def zeros_(tensor):
    """Fill ``tensor`` in place with 0; returns it."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fill ``tensor`` in place with 1; returns it."""
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity, param=None):
    """The factor by which to scale weights so that ``nonlinearity`` keeps the activations' variance
    (PyTorch's table): 1 for linear/conv*/sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``, default 0.01), 3/4 for selu.

    Raises:
        ValueError: for an unknown nonlinearity, or a leaky_relu slope that is not a number.
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4      # Kaiming's gain does not fit selu; 3/4 is PyTorch's choice for self-normalising nets
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight: the inputs and outputs each output and input element
    connects to. A Linear weight is [out, in]; a conv weight [out, in, *kernel], each kernel element
    one more connection: fan_in = in * prod(kernel), fan_out = out * prod(kernel).

    Raises:
        ValueError: for a tensor of fewer than 2 dimensions (PyTorch's message).
    """
    # >>> exercise 05.8: fan-in and fan-out of a weight
    # hint: dimension 1 counts the input features (channels), dimension 0 the output ones
    # hint: every dimension after the first two is a kernel dimension: multiply both fans by their product
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field
    # <<< exercise


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)), in place (Glorot & Bengio, 2010,
    "Understanding the difficulty of training deep feedforward neural networks"); returns it.

    Raises:
        ValueError: for a tensor of fewer than 2 dimensions.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))   # U(-a, a) has std a / sqrt(3)
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)), in place (Glorot & Bengio, 2010).

    Raises:
        ValueError: for a tensor of fewer than 2 dimensions.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan): the std that keeps the variance of activations (``mode='fan_in'``) or of
    gradients (``'fan_out'``) through the layer (He et al., 2015, "Delving Deep into Rectifiers")."""
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-bound, bound) with bound = sqrt(3) * gain / sqrt(fan), in place; ``a`` is leaky_relu's
    negative slope. A zero-element tensor is left as it is (PyTorch warns). Returns it.

    Raises:
        ValueError: fewer than 2 dimensions, a mode other than 'fan_in'/'fan_out', an unknown nonlinearity.
    """
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, std^2) with std = gain / sqrt(fan), in place (see :func:`kaiming_uniform_`). Returns it.

    Raises:
        ValueError: fewer than 2 dimensions, a mode other than 'fan_in'/'fan_out', an unknown nonlinearity.
    """
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))
