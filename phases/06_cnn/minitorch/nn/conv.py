# GENERATED from minitorch/nn/conv.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 06
"""``nn.Conv2d``: a 2-D convolution layer with PyTorch's arguments, layout and initialisation, and
``ConvReLU2d``, the same layer with its ReLU fused into the convolution (PyTorch's
``torch.ao.nn.intrinsic.ConvReLU2d``): one kernel writes relu(conv + bias); and
``ConvReLUMaxPool2d`` (our extension), which also fuses a following MaxPool2d(2)."""
from ..creation import empty
from ..ops.conv import conv2d_relu, conv2d_relu_max_pool2d
from . import functional as F
from .init import kaiming_uniform_linear_
from .module import Module
from .parameter import Parameter


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


class Conv2d(Module):
    """``y = conv2d(x, weight, bias, stride, padding, dilation, groups)`` (see ``F.conv2d``).

    Shapes: input [N, in_channels, H, W] (or unbatched) -> [N, out_channels, P, Q]; ``weight`` is
    [out_channels, in_channels/groups, kH, kW] and ``bias`` [out_channels], both
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels/groups * kH * kW (PyTorch's default).
    ``padding``: int, pair, 'valid' or 'same'. Only ``padding_mode='zeros'``.

    Raises:
        ValueError: PyTorch's messages for groups that do not divide the channels, non-positive
            groups, an unknown padding string, 'same' with a stride.
        NotImplementedError: a padding_mode other than 'zeros'.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if not isinstance(groups, int) or groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and _pair(stride) != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r}: only 'zeros' is implemented")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.padding_mode = padding_mode
        kh, kw = self.kernel_size
        self.weight = Parameter(empty(out_channels, in_channels // groups, kh, kw, device=device, dtype=dtype))
        self.bias = Parameter(empty(out_channels, device=device, dtype=dtype)) if bias else None
        kaiming_uniform_linear_(self.weight, self.bias, in_channels // groups * kh * kw)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"          # 'same' prints bare, as in PyTorch
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvReLU2d(Conv2d):
    """``relu(conv2d(x))`` in one kernel: the bias and the ReLU run in the convolution's epilogue
    and the backward masks the gradient by the saved output. Same arguments as :class:`Conv2d`;
    a model (or a fusion pass) swaps ``Sequential(Conv2d, ReLU)`` for it, same parameters."""

    def forward(self, input):
        return conv2d_relu(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvReLUMaxPool2d(Conv2d):
    """``max_pool2d(relu(conv2d(x)), 2)`` as one op (MiniTorch's extension, see
    :func:`minitorch.ops.conv.conv2d_relu_max_pool2d`): on cuda one kernel writes the pooled
    output, never the full-size activation. Same arguments as :class:`Conv2d`; the pooling is
    MaxPool2d(2) (kernel 2, stride 2, no padding, floor mode)."""

    def forward(self, input):
        return conv2d_relu_max_pool2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                      self.groups)


def _is_max_pool_2x2(module):
    """Whether ``module`` is exactly MaxPool2d(2): kernel 2, stride 2, no padding or dilation,
    floor mode, no indices returned (what ConvReLUMaxPool2d computes)."""
    from .pooling import MaxPool2d
    return (type(module) is MaxPool2d and _pair(module.kernel_size) == (2, 2) and _pair(module.stride) == (2, 2)
            and _pair(module.padding) == (0, 0) and _pair(module.dilation) == (1, 1)
            and not module.ceil_mode and not module.return_indices)


def fuse_conv_relu(model, max_pool=False):
    """Fuse every ``Conv2d`` directly followed by a ``ReLU`` inside a ``Sequential`` of ``model``
    (searched recursively): the Conv2d becomes a :class:`ConvReLU2d` (the same object, its class
    changed: same parameters, so an optimizer holding them and ``state_dict`` keys are unaffected)
    and the ReLU an ``Identity``. With ``max_pool`` (our extension), a ``MaxPool2d(2)`` right after
    the ReLU joins too: the Conv2d becomes a :class:`ConvReLUMaxPool2d`, the pool an ``Identity``.
    Returns ``model``, changed in place. Outputs and gradients are those of the unfused model; the
    forward saves one kernel launch and one pass over each activation (two with the pool), the
    backward the ReLU's pass."""
    from .activation import ReLU
    from .container import Sequential
    from .linear import Identity
    for module in list(model.modules()):        # a list: the loop replaces children
        if not isinstance(module, Sequential):
            continue
        names = list(module._modules)
        for first, second, third in zip(names, names[1:], names[2:] + [None]):
            conv, relu = module._modules[first], module._modules[second]
            if type(conv) is Conv2d and type(relu) is ReLU:
                conv.__class__ = ConvReLU2d
                module._modules[second] = Identity()
                if max_pool and third is not None and _is_max_pool_2x2(module._modules[third]):
                    conv.__class__ = ConvReLUMaxPool2d
                    module._modules[third] = Identity()
    return model
