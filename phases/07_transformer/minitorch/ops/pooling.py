# GENERATED from minitorch/ops/pooling.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""2-D pooling: max (with the argmax indices), average, adaptive average.

Input ``[N, C, H, W]`` or ``[C, H, W]``; each H x W plane is pooled on its own. Output (oh, ow) of
max/average pooling reads the window of rows ``oh * stride - padding + k * dilation`` (k < kernel)
and columns alike; the output size per dimension is PyTorch's
``floor((H + 2 padding - dilation (kernel - 1) - 1) / stride) + 1`` (ceil instead of floor with
``ceil_mode``, as long as the last window starts inside the input or its left padding).

Backward: max pooling sends each output's gradient to the input element it took, recorded in
``indices`` (int64 positions ``h * W + w`` within the plane, PyTorch's convention); average
pooling spreads it evenly over the window. The cuda kernels (pooling.cu) compute it in the
gather form: each input element sums what reaches it, deterministically, without atomics.
Double backward is not supported (the backward passes call the kernels directly).
"""
from ..autograd.function import Function
from ..tensor import Tensor


def _contiguous_raw(backend, data):
    return data if data.flags.c_contiguous else backend.contiguous(data)


def _grad_raw(grad):
    return _contiguous_raw(grad._backend, grad._data)


# ---- the Functions: inputs [..., H, W]; sizes already checked ----------------------------------------
class MaxPool2d(Function):
    """Window maxima and their int64 positions; the gradient flows through the positions."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation, out_size):
        b = x._backend
        y, indices = b.max_pool2d(_contiguous_raw(b, x._data), kernel_size, stride, padding, dilation, out_size)
        ctx.indices, ctx.in_size = indices, tuple(x.shape[-2:])
        ctx.window = (kernel_size, stride, padding, dilation)
        # backward ignores the indices' gradient: None, not zeros (one int64 fill and one
        # allocation less per step; the indices never get a gradient anyway, being int64)
        ctx.set_materialize_grads(False)
        return Tensor(y, x.device), Tensor(indices, x.device)

    @staticmethod
    def backward(ctx, grad, _indices_grad=None):
        dx = grad._backend.max_pool2d_backward(_grad_raw(grad), ctx.indices, ctx.in_size, *ctx.window)
        return Tensor(dx, grad.device), None, None, None, None, None


class AvgPool2d(Function):
    """Window means; the gradient is spread evenly (grad / divisor) over each window."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, out_size, count_include_pad, divisor_override):
        b = x._backend
        ctx.args = (tuple(x.shape[-2:]), kernel_size, stride, padding, count_include_pad, divisor_override)
        y = b.avg_pool2d(_contiguous_raw(b, x._data), kernel_size, stride, padding, out_size, count_include_pad,
                         divisor_override)
        return Tensor(y, x.device)

    @staticmethod
    def backward(ctx, grad):
        dx = grad._backend.avg_pool2d_backward(_grad_raw(grad), *ctx.args)
        return (Tensor(dx, grad.device),) + (None,) * 6


class AdaptiveAvgPool2d(Function):
    """Means over PyTorch's adaptive windows (rows [floor(i H / OH), ceil((i + 1) H / OH)))."""

    @staticmethod
    def forward(ctx, x, out_size):
        b = x._backend
        ctx.in_size = tuple(x.shape[-2:])
        return Tensor(b.adaptive_avg_pool2d(_contiguous_raw(b, x._data), out_size), x.device)

    @staticmethod
    def backward(ctx, grad):
        dx = grad._backend.adaptive_avg_pool2d_backward(_grad_raw(grad), ctx.in_size)
        return Tensor(dx, grad.device), None


# ---- checks and sizes ------------------------------------------------------------------------------------
def _pair(value, what, name):
    """An int or a sequence of 1-2 ints as a (rows, columns) pair."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) in (1, 2) and all([isinstance(v, int) for v in value]):
        return (value[0], value[-1])
    raise TypeError(f"{what}: {name} must be an int or a tuple of 2 ints, got {value!r}")


def _check_input(what, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{what}: expected a floating point input, got {input.dtype}")
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"{what}: non-empty 3D or 4D (batch mode) tensor expected for input, "
                           f"got shape {tuple(input.shape)}")


def _out_len(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (pooling_output_shape)."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:     # the last window would start in the right padding
        out -= 1
    return out


def _window(what, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked (kernel, stride, padding, dilation) pairs and the output size (OH, OW)."""
    _check_input(what, input)
    k = _pair(kernel_size, what, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _pair(stride, what, "stride")
    p, d = _pair(padding, what, "padding"), _pair(dilation, what, "dilation")
    if min(k) <= 0:
        raise RuntimeError(f"{what}: kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"{what}: stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"{what}: dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if min(p) < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"{what}: pad should be at least 0 and at most half of kernel size, but got "
                           f"padH = {p[0]}, padW = {p[1]}, kH = {k[0]}, kW = {k[1]}")
    H, W = input.shape[-2:]
    out = (_out_len(H, k[0], s[0], p[0], d[0], ceil_mode), _out_len(W, k[1], s[1], p[1], d[1], ceil_mode))
    if min(out) < 1:
        raise RuntimeError(f"{what}: given input size {tuple(input.shape)}, the calculated output size "
                           f"{out} is too small (kernel {k}, stride {s}, padding {p}, dilation {d})")
    return k, s, p, d, out


# ---- public functions -------------------------------------------------------------------------------------
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maximum over each (dilated) window of each plane.

    Args:
        input: [N, C, H, W] or [C, H, W], floating (float16/bfloat16 compared in float32).
        kernel_size, stride (default: kernel_size), padding, dilation: ints or (rows, columns)
            pairs; padding (implicit -inf) at most half the kernel.
        ceil_mode: round the output size up (windows may run past the right/bottom edge).
        return_indices: also return the int64 positions ``h * W + w`` of the maxima in their
            plane (the first maximum on ties; a NaN wins), as PyTorch.
    Returns:
        [N, C, OH, OW] (or [C, OH, OW]), input's dtype; and the indices when asked.
    Raises:
        RuntimeError: not a non-empty 3-D/4-D floating tensor, a kernel/stride/dilation < 1,
            padding above half the kernel, or an output size below 1.
        TypeError: a size that is not an int or a pair of ints.
    """
    k, s, p, d, out = _window("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    y, indices = MaxPool2d.apply(input, k, s, p, d, out)
    return (y, indices) if return_indices else y


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over each window of each plane.

    Args:
        input, kernel_size, stride, padding, ceil_mode: as :func:`max_pool2d` (padding counts as 0).
        count_include_pad: divide by the window's size including padding (PyTorch's default), or
            by the number of input elements in it.
        divisor_override: a non-zero int to divide every window's sum by instead.
    Returns:
        [N, C, OH, OW] (or [C, OH, OW]), input's dtype.
    Raises:
        As :func:`max_pool2d`; RuntimeError also for ``divisor_override=0``.
    """
    k, s, p, _, out = _window("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool2d: divisor must be not zero")
    return AvgPool2d.apply(input, k, s, p, out, bool(count_include_pad), int(divisor_override or 0))


def adaptive_avg_pool2d(input, output_size):
    """Mean over windows that tile each plane into ``output_size`` (OH, OW): output row i averages
    input rows [floor(i H / OH), ceil((i + 1) H / OH)) (windows overlap when OH does not divide H).

    Args:
        input: [N, C, H, W] or [C, H, W], floating.
        output_size: an int or a pair; None in the pair keeps that input size.
    Returns:
        [N, C, OH, OW] (or [C, OH, OW]), input's dtype.
    Raises:
        RuntimeError: not a non-empty 3-D/4-D floating tensor.  ValueError: an output size < 0.
    """
    _check_input("adaptive_avg_pool2d", input)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    if not isinstance(output_size, (tuple, list)) or len(output_size) != 2:
        raise TypeError(f"adaptive_avg_pool2d: output_size must be an int or a pair, got {output_size!r}")
    out = tuple(n if o is None else int(o) for o, n in zip(output_size, input.shape[-2:]))
    if min(out) < 0:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be >= 0, got {tuple(output_size)}")
    return AdaptiveAvgPool2d.apply(input, out)
