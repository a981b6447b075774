# GENERATED from minitorch/native/cuda/embedding.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""The gradient of an embedding lookup on ``DeviceArray``s: the cuda twin of ``embedding_backward``
in ``cpu.py``. The lookup itself is ``take`` (index.cu's gather).

Two ways to add the rows of ``grad`` into ``dweight``: index.cu's ``index_add_`` (atomicAdd: fast,
but repeated indices add in an order that changes between runs), or, when ``deterministic``, a
stable sort of the indices (sort.cu) followed by ``embedding.cu``, where one thread per (run of
equal indices, column) adds the run in its original order. Nothing here waits for the GPU.
"""
from ...cuda.array import empty
from .creation import fill_
from .indexing import index_add_
from .launch import SUFFIX, kernel, launch_stride
from .sort import sort

FILE = "embedding.cu"


def embedding_backward(grad, index, num_weights, padding_idx=None, deterministic=False):
    """dweight [num_weights, D] with row v = the sum of grad[i] over the positions i where
    index[i] == v; row ``padding_idx`` stays 0.

    ``grad``: contiguous [count, D], a float dtype; ``index``: contiguous int64 [count].
    ``deterministic``: the same bits every run (sorted), else atomicAdd.
    """
    count, dim = grad.shape
    idx = grad.device_id
    dweight = fill_(empty((num_weights, dim), grad.dtype, idx), 0)
    if count == 0 or dim == 0:
        return dweight
    if not deterministic:
        index_add_(dweight, 0, index, grad)
        if padding_idx is not None:
            fill_(dweight[padding_idx:padding_idx + 1], 0)    # a contiguous row: what fill_ needs
        return dweight
    ordered, perm = sort(index, 0)
    launch_stride(kernel(FILE, f"embedding_backward_sorted_{SUFFIX[grad.dtype]}", idx), count * dim, 1, idx,
                  (ordered, perm, grad, dweight, count, dim, num_weights, -1 if padding_idx is None else padding_idx))
    return dweight
