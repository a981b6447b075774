# GENERATED from minitorch/ops/matmul.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Matrix multiplication, ``a @ b``, with PyTorch's rules for 1-D and batched operands.

The kernel computes C[..., M, N] = A[..., M, K] @ B[..., K, N] with one thread per output element
(``matmul.cu``); batch dimensions broadcast. 1-D operands are lifted to matrices and the added
dimension removed again, exactly as ``torch.matmul`` documents.
"""
from ..autograd.function import Function
from ..tensor import Tensor
from .elementwise import _cast, check_broadcast, check_same_device
from ..dtypes import promote_types


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return Tensor(a._backend.matmul(a._data, b._data), a.device)

    @staticmethod
    def backward(ctx, grad):
        # >>> exercise 03.2: MatMul backward (Linear's backward)
        # hint: for C = A @ B: dL/dA = grad @ B^T and dL/dB = A^T @ grad (transpose(-1, -2))
        # hint: compute only what ctx.needs_input_grad asks for; _sum_to folds broadcast batch dimensions
        # dL/dA = dL/dC @ B^T and dL/dB = A^T @ dL/dC, then fold broadcast batch dims back
        from .elementwise import _sum_to
        a, b = ctx.saved_tensors
        ga = _sum_to(grad @ b.transpose(-1, -2), a.shape) if ctx.needs_input_grad[0] else None
        gb = _sum_to(a.transpose(-1, -2) @ grad, b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb
        # <<< exercise


def matmul(a, b):
    """``a @ b``: dot product (1-D @ 1-D), matrix-vector, matrix-matrix or batched.

    Shapes: ``[..., M, K] @ [..., K, N] -> [..., M, N]`` with broadcast batch dims; a 1-D ``a``
    is treated as ``[1, K]`` and a 1-D ``b`` as ``[K, 1]``, and that dimension is dropped.
    Dtypes: float32 or float64 (promoted to the wider).

    Raises:
        RuntimeError: for 0-d operands, mismatched inner dimensions or batch shapes (naming both
            shapes), tensors on different devices.
        TypeError: for integer or bool tensors.
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"matmul: expected two Tensors, got {type(a).__name__} and {type(b).__name__}")
    sa, sb = a._data.shape, b._data.shape     # plain tuples, read once: each backward of a Linear runs this twice
    if not sa or not sb:
        raise RuntimeError(f"matmul: both arguments need at least 1 dimension, got shapes {sa} and {sb}")
    check_same_device("matmul", a, b)
    da, db = a.dtype, b.dtype
    if not (da.is_floating_point and db.is_floating_point):
        raise TypeError(f"matmul: expected floating tensors, got {da} and {db}")
    a2 = a.unsqueeze(0) if len(sa) == 1 else a
    b2 = b.unsqueeze(-1) if len(sb) == 1 else b
    sa2, sb2 = a2._data.shape, b2._data.shape
    if sa2[-1] != sb2[-2]:
        raise RuntimeError(f"matmul: shapes {sa} and {sb} cannot be multiplied "
                           f"({sa2[-1]} columns vs {sb2[-2]} rows)")
    check_broadcast("matmul (batch dimensions)", sa2[:-2], sb2[:-2])
    dtype = promote_types(da, db)
    out = MatMul.apply(_cast(a2, dtype), _cast(b2, dtype))   # the kernel reads any strides: W.T is not copied
    if len(sb) == 1:
        out = out.squeeze(-1)
    if len(sa) == 1:
        out = out.squeeze(-2 if len(sb) > 1 else -1)
    return out
