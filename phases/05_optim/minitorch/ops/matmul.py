# GENERATED from minitorch/ops/matmul.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Matrix multiplication, ``a @ b``, with PyTorch's rules for 1-D and batched operands.

The kernel computes C[..., M, N] = A[..., M, K] @ B[..., K, N] with one thread per output element
(``matmul.cu``); batch dimensions broadcast. 1-D operands are lifted to matrices and the added
dimension removed again, exactly as ``torch.matmul`` documents.
"""
import math

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
        a, b = ctx.saved_tensors
        if b.ndim == 2 and a.ndim > 2 and ctx.needs_input_grad[1]:
            return MatMul._backward_shared_weight(a, b, grad, ctx.needs_input_grad[0])
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

    @staticmethod
    def _backward_shared_weight(a, b, grad, need_a):
        """x [..., M, K] @ W [K, N] (a layer applied to every position): dL/dW = x^T @ dL/dC summed
        over the batch is ONE product over all rows, [K, rows] @ [rows, N] in layout 'tn', rather
        than a batch of products then a sum (an extra [..., K, N] in memory)."""
        from .elementwise import _sum_to
        rows = math.prod(a.shape[:-1])
        gb = a.reshape(rows, a.shape[-1]).T @ grad.reshape(rows, grad.shape[-1])
        ga = _sum_to(grad @ b.transpose(-1, -2), a.shape) if need_a else None
        return ga, gb


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


_TORCH_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool",
                "float16": "Half", "bfloat16": "BFloat16"}     # PyTorch's scalar type names in errors


def bmm(input, mat2):
    """Batched matrix product, strictly 3-D as ``torch.bmm``: ``[B, N, M] @ [B, M, P] -> [B, N, P]``.

    Unlike :func:`matmul` nothing broadcasts and dtypes are not promoted. On cuda it runs the
    rung the dispatch chooses, all B products in one launch (blockIdx.z); its backward uses the
    transposed layouts directly (``grad @ mat2^T`` is 'nt', ``input^T @ grad`` is 'tn').

    Raises:
        RuntimeError: PyTorch's messages: "batch1 must be a 3D tensor" (input), "batch2 must be
            a 3D tensor" (mat2), "Expected size for first two dimensions of batch2 tensor to be:
            [B, M] but got: [..]." and "expected scalar type Float but found Double"; tensors on
            different devices.
        TypeError: non-Tensor arguments; integer or bool tensors (no integer GEMM here).
    """
    for i, (name, t) in enumerate((("input", input), ("mat2", mat2))):
        if not isinstance(t, Tensor):
            raise TypeError(f"bmm(): argument '{name}' (position {i + 1}) must be Tensor, not {type(t).__name__}")
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, m = input.shape
    if tuple(mat2.shape[:2]) != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {m}] "
                           f"but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if input.dtype is not mat2.dtype:
        name = _TORCH_NAMES.get
        raise RuntimeError(f"expected scalar type {name(input.dtype.name, input.dtype.name)} "
                           f"but found {name(mat2.dtype.name, mat2.dtype.name)}")
    check_same_device("bmm", input, mat2)
    if not input.dtype.is_floating_point:
        raise TypeError(f"bmm: expected floating tensors, got {input.dtype} and {mat2.dtype}")
    return MatMul.apply(input, mat2)
