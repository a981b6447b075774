# phase: 03
"""``minitorch.nn.functional`` (import as ``F``): layers and losses as plain functions."""
from .. import ops


def relu(input):
    return ops.relu(input)


def sigmoid(input):
    return ops.sigmoid(input)


def tanh(input):
    return ops.tanh(input)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``; input [..., in], weight [out, in], bias [out] -> [..., out].

    Raises:
        RuntimeError: if input's last dimension is not weight's in_features (naming both shapes).
    """
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear: input shape {tuple(input.shape)} does not match weight shape "
                           f"{tuple(weight.shape)} (expected input[..., {weight.shape[-1]}])")
    out = input @ weight.T
    return out + bias if bias is not None else out


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got '{reduction}'")


def mse_loss(input, target, reduction="mean"):
    """Squared error ``(input - target) ** 2``, reduced.

    Raises:
        ValueError: if input and target shapes differ (broadcasting them is almost always a bug).
    """
    if input.shape != target.shape:
        raise ValueError(f"mse_loss: input shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ; reshape one so they match")
    diff = input - target
    return _reduce(diff * diff, reduction)
# >>> phase 06


def softmax(input, dim, dtype=None):
    """Softmax along ``dim``; probabilities summing to 1 (see :func:`minitorch.ops.softmax.softmax`)."""
    return ops.softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """Log-softmax along ``dim``, computed stably (see :func:`minitorch.ops.softmax.log_softmax`)."""
    return ops.log_softmax(input, dim, dtype)


def cross_entropy(input, target, reduction="mean"):
    """Cross-entropy of logits ``input`` [N, C] (or [C], [N, C, d1, ...]) and int64 class indices
    ``target`` [N]: ``nll_loss(log_softmax(input, 1), target)``, fused (see
    :func:`minitorch.ops.softmax.cross_entropy` for shapes and errors)."""
    return ops.cross_entropy(input, target, reduction)


def nll_loss(input, target, reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` [N, C] and int64 class indices
    ``target`` [N] (see :func:`minitorch.ops.softmax.nll_loss`)."""
    return ops.nll_loss(input, target, reduction)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution: input [N, C, H, W] (or [C, H, W]), weight [K, C/groups, R, S], bias [K]
    -> [N, K, P, Q]; ``padding`` an int, a pair, 'valid' or 'same' (see
    :func:`minitorch.ops.conv.conv2d` for the formula and errors)."""
    return ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv2d_relu_max_pool2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                           return_indices=False):
    """MiniTorch's extension (not in PyTorch): ``max_pool2d(relu(conv2d(...)), 2)`` in one op, on
    cuda one kernel (see :func:`minitorch.ops.conv.conv2d_relu_max_pool2d`); equal, values, indices
    and gradients, to the composition."""
    from ..ops.conv import conv2d_relu_max_pool2d as fused
    return fused(input, weight, bias, stride, padding, dilation, groups, return_indices)
# <<< phase 06
# >>> phase 04


def l1_loss(input, target, reduction="mean"):
    """Absolute error ``|input - target|``, reduced ('mean', 'sum' or 'none'). Its gradient is
    ``sign(input - target)`` (0 where they are equal, as PyTorch), scaled by 1/N for 'mean'.

    Raises:
        ValueError: if input and target shapes differ, or an unknown reduction.
    """
    if input.shape != target.shape:
        raise ValueError(f"l1_loss: input shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ; reshape one so they match")
    return _reduce((input - target).abs(), reduction)
# <<< phase 04
# >>> phase 05


def linear(input, weight, bias=None):  # noqa: F811 - replaces phase 03's composition
    """``input @ weight.T + bias`` as one fused op: one GEMM with the bias added in its epilogue
    (see :func:`minitorch.ops.linear.linear`); input [..., in], weight [out, in], bias [out] or
    None -> [..., out].

    Raises:
        RuntimeError: if input's last dimension is not weight's in_features (naming both shapes).
    """
    return ops.linear(input, weight, bias)
# <<< phase 05
# >>> phase 06


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of [N, C, H, W] (or [C, H, W]); with ``return_indices`` also the int64
    argmax positions ``h * W + w`` (see :func:`minitorch.ops.pooling.max_pool2d`)."""
    return ops.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of [N, C, H, W] (or [C, H, W]) (see :func:`minitorch.ops.pooling.avg_pool2d`)."""
    return ops.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """Mean over windows that tile each plane into ``output_size``
    (see :func:`minitorch.ops.pooling.adaptive_avg_pool2d`)."""
    return ops.adaptive_avg_pool2d(input, output_size)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dimension 1) by the batch's statistics (training) or the running
    ones (see :func:`minitorch.ops.batchnorm.batch_norm`)."""
    return ops.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p``, scale the rest by 1 / (1 - p); identity when not training."""
    return ops.dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels [n, c] with probability ``p``, scale the rest by 1 / (1 - p)."""
    return ops.dropout2d(input, p, training, inplace)
# <<< phase 06
# >>> phase 07


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` [V, D] at int64 ``input`` -> input.shape + [D]; row ``padding_idx`` gets no
    gradient (see :func:`minitorch.ops.transformer.embedding`)."""
    return ops.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` (see :func:`minitorch.ops.transformer.layer_norm`)."""
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


def gelu(input, approximate="none"):
    """``x * Phi(x)``, or its tanh approximation with ``approximate='tanh'``."""
    return ops.gelu(input, approximate)


def one_hot(tensor, num_classes=-1):
    """int64 [*tensor.shape, num_classes] with a 1 at each value (see :func:`minitorch.ops.transformer.one_hot`)."""
    return ops.one_hot(tensor, num_classes)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """``softmax(query @ key^T * scale + mask) @ value``: FlashAttention kernels on cuda where they apply,
    else matmul, softmax, matmul (see :func:`minitorch.ops.attention.scaled_dot_product_attention`)."""
    return ops.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
# <<< phase 07
