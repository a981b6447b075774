# GENERATED from minitorch/ops/conv.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 06
"""``F.conv2d``: 2-D convolution (cross-correlation, as in PyTorch) with its backward, and the fused
``conv2d_relu`` (bias and ReLU in the convolution's epilogue: one kernel, one pass over y).

Shapes are cuDNN's: input [N, C, H, W] (or unbatched [C, H, W]), weight [K, C/groups, R, S],
bias [K], output [N, K, P, Q] with ``P = (H + pad_top + pad_bottom - dil*(R - 1) - 1) // stride + 1``.
The backend computes all three passes (``native/cpu.py``: im2col + matmul; ``native/cuda/conv.py``:
the ladder of kernels and its dispatch):

    dL/dx = the transposed convolution of dL/dy with the weight  (col2im(W^T @ dL/dy))
    dL/dW = sum over images of dL/dy @ im2col(x)^T
    dL/db = dL/dy summed over N, P, Q

``conv2d_relu`` saves its output y; dL/dy counts only where ``y > 0`` (the backend applies that mask,
on cuda inside the implicit-GEMM kernels as they load dy, and may compute dL/db in dL/dW's pass).

``conv2d_relu_max_pool2d`` (our extension: PyTorch has no such function) also runs MaxPool2d(2)
in the same op, on cuda in the implicit GEMM's epilogue: the full-size y is never stored, only the
pooled values and their argmax indices. Its backward routes dL/dpooled through the indices to the
window maxima (where the ReLU passed: pooled > 0), then runs the convolution's backward.
"""
from ..autograd.function import Function
from ..native.cpu import conv_out_size
from ..tensor import Tensor
from .elementwise import check_same_device

_TORCH_TYPE = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor"}


class Conv2d(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, activation):
        be = x._backend
        y = be.conv2d(x._data, weight._data, None if bias is None else bias._data,
                      stride, padding, dilation, groups, activation)
        ctx.save_for_backward(x, weight)
        # a fused ReLU's output, as the raw array (saving the output Tensor itself would make a
        # reference cycle output -> node -> ctx -> output, freed only by the garbage collector)
        ctx.relu_out = y if activation == "relu" else None
        ctx.geometry = (stride, padding, dilation, groups)
        ctx.has_bias = bias is not None
        return Tensor(y, x.device)

    @staticmethod
    def backward(ctx, grad):
        gx, gw, gb = _conv_backward(ctx, grad._backend, grad.contiguous()._data, ctx.relu_out)
        return gx, gw, gb, None, None, None, None, None


def _conv_backward(ctx, be, g, mask):
    """(dL/dx, dL/dweight, dL/dbias), each None where not needed, from dL/dy ``g`` (a contiguous
    raw array); ``mask``: a fused ReLU's saved output (dy counts where it is > 0) or None."""
    x, weight = ctx.saved_tensors
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    need_b = need_b and ctx.has_bias
    gx = gw = gb = None
    if need_x:
        gx = Tensor(be.conv2d_input_grad(g, weight._data, x._data.shape, *ctx.geometry, relu_out=mask), x.device)
    if need_w:                                   # the backend may add db to the same pass (bias_grad)
        out = be.conv2d_weight_grad(g, x._data, weight._data.shape, *ctx.geometry, relu_out=mask, bias_grad=need_b)
        gw, gb = (Tensor(out[0], x.device), Tensor(out[1], x.device)) if need_b else (Tensor(out, x.device), None)
    elif need_b:
        masked = g if mask is None else be.unary_backward("relu", g, mask)
        gb = Tensor(be.sum(masked, (0, 2, 3)), x.device)
    return gx, gw, gb


class Conv2dMaxPool2d(Function):
    """conv2d (+ bias, ReLU) then MaxPool2d(2) as one backend call; outputs the pooled values and
    the int64 argmax indices (``p * Q + q`` in each P x Q plane of the convolution's output)."""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, activation):
        be = x._backend
        y, indices = be.conv2d_max_pool2d(x._data, weight._data, None if bias is None else bias._data,
                                          stride, padding, dilation, groups, activation)
        ctx.save_for_backward(x, weight)
        # the ReLU's mask at each window's maximum is pooled > 0 (the maximum IS the ReLU's output
        # there); the other elements of a window get no gradient from the pooling anyway
        ctx.relu_out = y if activation == "relu" else None
        ctx.indices = indices
        ctx.conv_size = conv_out_size(*x._data.shape[2:], weight._data.shape[2:], stride, padding, dilation)
        ctx.geometry = (stride, padding, dilation, groups)
        ctx.has_bias = bias is not None
        # backward ignores the indices' gradient: None, not zeros (one int64 fill and one
        # allocation less per step; the indices never get a gradient anyway, being int64)
        ctx.set_materialize_grads(False)
        return Tensor(y, x.device), Tensor(indices, x.device)

    @staticmethod
    def backward(ctx, grad, _indices_grad=None):
        be = grad._backend
        g = grad.contiguous()._data
        # the ReLU's mask (pooled > 0) is applied by the pooling's backward as it routes the gradient
        dy = be.max_pool2d_backward(g, ctx.indices, ctx.conv_size, (2, 2), (2, 2), (0, 0), (1, 1),
                                    relu_out=ctx.relu_out)
        gx, gw, gb = _conv_backward(ctx, be, dy, None)
        return gx, gw, gb, None, None, None, None, None


def _pair(name, value):
    """``value`` as a (rows, cols) pair of ints: an int repeats, a sequence must have two."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 1:
        return (int(value[0]),) * 2
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return (int(value[0]), int(value[1]))
    shown = list(value) if isinstance(value, (tuple, list)) else value
    raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values to match "
                       f"the convolution dimensions, but got {name}={shown}")


def _padding(padding, kernel_size, stride, dilation):
    """((top, bottom), (left, right)) from an int, a pair, 'valid' or 'same' (PyTorch's rule: the
    total d*(k-1) split in two, the odd one at the bottom/right)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        sides = []
        for k, d in zip(kernel_size, dilation):
            total = d * (k - 1)
            sides.append((total // 2, total - total // 2))
        return tuple(sides)
    ph, pw = _pair("padding", padding)
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return ((ph, ph), (pw, pw))


def _check(input, weight, bias, stride, dilation, groups):
    """PyTorch's checks and messages for conv2d's arguments."""
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"conv2d(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"conv2d(): argument 'bias' must be Tensor, not {type(bias).__name__}")
    xs, ws = input._data.shape, weight._data.shape     # plain tuples, read once: every conv runs this
    if len(xs) not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                           f"size: {list(xs)}")
    if len(ws) != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight [out_channels, in_channels/groups, kH, kW], "
                           f"got size {list(ws)}")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    tensors = (input, weight) if bias is None else (input, weight, bias)
    check_same_device("conv2d", *tensors)
    dtypes = [t.dtype for t in tensors]
    for dt in dtypes:
        if not dt.is_floating_point:
            raise TypeError(f"conv2d: expected floating tensors, got {', '.join(str(d) for d in dtypes)}")
    if dtypes[1] is not dtypes[0] or (bias is not None and dtypes[2] is not dtypes[0]):
        other = weight if dtypes[1] is not dtypes[0] else bias
        raise RuntimeError(f"Input type ({_TORCH_TYPE[dtypes[0].name]}) and "
                           f"{'weight' if other is weight else 'bias'} type ({_TORCH_TYPE[other.dtype.name]}) "
                           f"should be the same")
    k, cg = ws[:2]
    if k % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(ws)}] instead")
    if xs[-3] != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected input"
                           f"{list(xs)} to have {cg * groups} channels, but got {xs[-3]} "
                           f"channels instead")
    if bias is not None and bias._data.shape != (k,):
        raise RuntimeError(f"Given weight of size {list(ws)}, expected bias to be 1-dimensional with "
                           f"{k} elements, but got bias of size {list(bias.shape)} instead")


def _conv2d(input, weight, bias, stride, padding, dilation, groups, activation, pool=False):
    stride, dilation = _pair("stride", stride), _pair("dilation", dilation)
    _check(input, weight, bias, stride, dilation, groups)
    kernel = weight._data.shape[2:]
    pads = _padding(padding, kernel, stride, dilation)
    h, w = input._data.shape[-2:]
    padded = (h + pads[0][0] + pads[0][1], w + pads[1][0] + pads[1][1])
    reach = (dilation[0] * (kernel[0] - 1) + 1, dilation[1] * (kernel[1] - 1) + 1)    # the kernel's extent
    if padded[0] < reach[0] or padded[1] < reach[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel size: "
                           f"({reach[0]} x {reach[1]}). Kernel size can't be greater than actual input size")
    unbatched = input._data.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    args = (x.contiguous(), weight.contiguous(), None if bias is None else bias.contiguous(),
            stride, pads, dilation, groups, activation)
    if not pool:
        out = Conv2d.apply(*args)
        return out.squeeze(0) if unbatched else out
    size = conv_out_size(h, w, kernel, stride, pads, dilation)
    if min(size) < 2:
        raise RuntimeError(f"max_pool2d: given input size {tuple(input.shape[:-3]) + (weight.shape[0],) + size}, "
                           f"the calculated output size {(size[0] // 2, size[1] // 2)} is too small (kernel (2, 2), "
                           f"stride (2, 2), padding (0, 0), dilation (1, 1))")
    outs = Conv2dMaxPool2d.apply(*args)
    return tuple(o.squeeze(0) for o in outs) if unbatched else outs


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution, ``torch.nn.functional.conv2d``: ``y[n, k] = bias[k] + sum over c, r, s of
    weight[k, c, r, s] * x[n, g*C/G + c, p*stride + r*dilation - pad, ...]`` (cross-correlation).

    Shapes: input [N, C, H, W] or [C, H, W], weight [K, C/groups, R, S], bias [K] or None ->
    [N, K, P, Q] (or [K, P, Q]). ``stride``, ``dilation``: int or pair; ``padding``: int, pair,
    'valid' (none) or 'same' (output as large as the input; stride 1 only). One floating dtype.

    Raises:
        RuntimeError: PyTorch's messages for a 2-D or 5-D input, channels that do not match the
            weight, groups that do not divide the channels, a kernel larger than the padded input,
            non-positive stride/dilation/groups, negative padding, a bad padding string, 'same'
            with a stride, dtypes that differ, a bias that is not [K]; tensors on different devices.
        TypeError: non-Tensor arguments, integer or bool tensors.
    """
    return _conv2d(input, weight, bias, stride, padding, dilation, groups, None)


def conv2d_relu(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``relu(conv2d(...))`` fused: the bias and the ReLU are the convolution's epilogue (one
    kernel, y written once) and the backward masks dL/dy by the saved output. Same arguments,
    shapes and errors as :func:`conv2d`; equal to the unfused composition."""
    return _conv2d(input, weight, bias, stride, padding, dilation, groups, "relu")


def conv2d_relu_max_pool2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                           return_indices=False):
    """``max_pool2d(relu(conv2d(input, weight, bias, stride, padding, dilation, groups)), 2)`` as
    one op: MiniTorch's extension (PyTorch has no such function), the seed CNN's and LeNet-5's
    conv -> ReLU -> MaxPool2d(2) block. On cuda the implicit-GEMM rung pools in its epilogue: one
    launch, and the full-size activation is never written. Values, indices and gradients are
    those of the unfused composition.

    Shapes: as :func:`conv2d` up to y [N, K, P, Q], then [N, K, P // 2, Q // 2] (kernel 2,
    stride 2, no padding: an odd last row or column is dropped, as MaxPool2d floors).
    ``return_indices``: also return the int64 positions ``p * Q + q`` of the maxima in their
    P x Q plane (max_pool2d's convention: the first maximum of a window wins ties, a NaN wins).

    Raises:
        As :func:`conv2d`; RuntimeError also when P or Q is below 2 (the pooled size would be 0).
    """
    y, indices = _conv2d(input, weight, bias, stride, padding, dilation, groups, "relu", pool=True)
    return (y, indices) if return_indices else y
