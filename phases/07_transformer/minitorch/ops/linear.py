# GENERATED from minitorch/ops/linear.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""``F.linear`` as one op: ``y = x @ W.T + b`` in a single GEMM, the bias added in its epilogue.

Phase 03 composed it from two ops (a matmul, then a broadcast add: one more kernel and one more
full pass over y, forward and backward). Here it is one :class:`Linear` node: forward is the
backend's ``linear`` (on cuda, GEMM layout 'nt' - W is read where it lies, transposed by its
strides - with the bias in the epilogue); backward is two GEMMs and a sum:

    dL/dx = dL/dy @ W          [..., out] @ [out, in]   layout 'nn'
    dL/dW = dL/dy^T @ x        [out, rows] @ [rows, in] layout 'tn', the batch dims flattened to rows
    dL/db = sum of dL/dy over every dimension but the last
"""
import math

from ..autograd.function import Function
from ..dtypes import promote_types
from ..tensor import Tensor
from .elementwise import _cast, check_same_device


class Linear(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        b = None if bias is None else bias._data
        return Tensor(x._backend.linear(x._data, weight._data, b), x.device)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        # >>> exercise 05.7: the fused Linear's backward
        # hint: three gradients (module docstring): dL/dx = grad @ W; dL/dW = grad^T @ x with x's and
        # hint: grad's leading dims flattened into rows (reshape; .T is a view, the GEMM reads it as 't');
        # hint: dL/db = grad summed over those rows. None for an input with no ctx.needs_input_grad
        need_x, need_w, need_b = ctx.needs_input_grad
        gx = grad @ weight if need_x else None
        gw = gb = None
        if need_w or need_b:
            rows = math.prod(x.shape[:-1])               # the batch dims flattened (1 for a 1-D x)
            g2 = grad.reshape(rows, grad.shape[-1])      # [rows, out]: a view of a contiguous grad
            gw = g2.T @ x.reshape(rows, x.shape[-1]) if need_w else None
            gb = g2.sum(0) if need_b else None
        return gx, gw, gb
        # <<< exercise


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` as one op (:class:`Linear`).

    Shapes: ``input`` [..., in] (any number of leading dimensions, or none), ``weight``
    [out, in], ``bias`` [out] or None -> [..., out]. Floating dtypes, promoted to the widest of
    the three (PyTorch requires them equal; phase 03's composition promoted, and so do we).
    A ``weight`` that is not 2-D or a ``bias`` that is not [out] goes through phase 03's
    composition (``input @ weight.T + bias``, broadcasting the bias).

    Raises:
        RuntimeError: a 0-d ``input``; ``input``'s last dimension is not ``weight``'s in_features
            (naming both shapes); tensors on different devices.
        TypeError: non-Tensor arguments, integer or bool tensors.
    """
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear(): argument '{name}' must be Tensor, not {type(t).__name__}")
    # the raw arrays' shapes: plain tuples, read once (every Linear's forward runs these checks)
    xs, ws = input._data.shape, weight._data.shape
    if not xs or not ws:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{len(xs)}D and {len(ws)}D")
    if xs[-1] != ws[-1]:
        raise RuntimeError(f"linear: input shape {xs} does not match weight shape "
                           f"{ws} (expected input[..., {ws[-1]}])")
    fused = len(ws) == 2 and (bias is None or (isinstance(bias, Tensor) and bias._data.shape == (ws[0],)))
    if not fused:
        out = input @ weight.T
        return out + bias if bias is not None else out
    tensors = (input, weight) if bias is None else (input, weight, bias)
    check_same_device("linear", *tensors)
    if not all([t.dtype.is_floating_point for t in tensors]):
        raise TypeError(f"linear: expected floating tensors, got {', '.join(str(t.dtype) for t in tensors)}")
    dtype = input.dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    return Linear.apply(_cast(input, dtype), _cast(weight, dtype), None if bias is None else _cast(bias, dtype))
