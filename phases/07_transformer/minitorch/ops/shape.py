# GENERATED from minitorch/ops/shape.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Shape ops: views that change how memory is read, and the copy that makes a view compact.

A view shares its input's memory and only changes shape and strides (the step in elements to the
next index along each dimension). Transposing swaps two strides: no data moves. Kernels read
views through their strides; ``contiguous()`` is the one op here that launches a kernel, copying
a view into fresh row-major memory.
"""
import math

from ..autograd.function import Function
from ..tensor import Tensor, _unpack_ints, _wrap_dim


def _view(a, data):
    return Tensor(data, a.device)


class Permute(Function):
    """Reorder dimensions: ``out.shape[i] = a.shape[dims[i]]`` (a view)."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return _view(a, a._data.transpose(dims))

    @staticmethod
    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(*inverse), None


class Reshape(Function):
    """Same elements in row-major order, another shape; a view when the input is contiguous."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        a = contiguous(a)
        return _view(a, a._data.reshape(shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class Expand(Function):
    """Broadcast to a bigger shape without copying: stretched dimensions get stride 0."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        lead = len(shape) - a.ndim
        strides = [0] * lead + [0 if (s == 1 and n != 1) else st
                                for s, n, st in zip(a.shape, shape[lead:], a._data.strides)]
        return _view(a, a._backend.as_strided(a._data, shape, strides))

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import _sum_to
        return _sum_to(grad, ctx.shape), None


class Contiguous(Function):
    """A row-major copy of a view (the strided-copy kernel on cuda)."""

    @staticmethod
    def forward(ctx, a):
        return _view(a, a._backend.contiguous(a._data))

    @staticmethod
    def backward(ctx, grad):
        return grad


def _dims(a, dims):
    """Normalise a dims argument given as ints or one tuple/list."""
    return tuple(a._dim(d) for d in _unpack_ints(dims))


def permute(a, *dims):
    """Reorder dimensions (a view).

    Raises:
        RuntimeError: if ``dims`` is not a permutation of ``range(a.ndim)``.
    """
    dims = _dims(a, dims)
    if sorted(dims) != list(range(a.ndim)):
        raise RuntimeError(f"permute: dims {dims} are not a permutation of the {a.ndim} dimensions of shape {tuple(a.shape)}")
    return a if dims == tuple(range(a.ndim)) else Permute.apply(a, dims)


def transpose(a, dim0, dim1):
    """Swap two dimensions (a view)."""
    dims = list(range(a.ndim))
    d0, d1 = a._dim(dim0), a._dim(dim1)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(a, *dims)


def _resolved(a, shape):
    """``shape`` (ints or one tuple) with its -1 inferred from ``a``'s element count.

    Raises:
        RuntimeError: two -1, or an element count that differs from ``a``'s.
    """
    shape = list(_unpack_ints(shape))
    if shape.count(-1) > 1:
        raise RuntimeError("reshape: only one dimension can be inferred (-1)")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or a.numel() % known:
            raise RuntimeError(f"reshape: shape {tuple(shape)} is invalid for input of size {a.numel()}")
        shape[shape.index(-1)] = a.numel() // known
    elif known != a.numel():
        raise RuntimeError(f"reshape: shape {tuple(shape)} is invalid for input of shape "
                           f"{tuple(a.shape)} ({a.numel()} elements)")
    return tuple(shape)


def reshape(a, *shape):
    """Same elements, new shape; one dimension may be -1 (inferred).

    Raises:
        RuntimeError: if the element counts differ, naming both shapes.
    """
    shape = _resolved(a, shape)
    if shape == a.shape:
        return a
    if not a.is_contiguous():       # a view when strides allow one, as PyTorch's reshape; else a copy
        strides = _view_strides(a.shape, a.stride(), shape)
        if strides is not None:
            return View.apply(a, shape, strides)
    return Reshape.apply(a, shape)


def _view_strides(old_shape, old_strides, shape):
    """Strides (in elements) that read a tensor of ``old_shape``/``old_strides`` as ``shape``
    without moving data, or None when no such strides exist (PyTorch's ``computeStride``).

    Row-major order is what a reshape keeps. Split the old dims into chunks, each a run of
    dims that are contiguous among themselves (stride[d] == size[d+1] * stride[d+1]; size-1
    dims never break a run). A chunk reads like one flat dim of its element count with its
    last dim's stride, so the new dims can be laid over it iff they group, right to left, into
    runs with the same element counts as the chunks. (A transposed matrix is two chunks of one
    dim each: it views as [.., n, m] splits of either dim, never as one flat dim.)
    """
    numel = math.prod(old_shape)
    if numel == 0:                  # no element is ever read: any strides do
        if tuple(old_shape) == tuple(shape):
            return tuple(old_strides)
        return _contiguous_strides(shape)
    if not old_shape:               # a 0-d tensor: the new dims are all 1
        return (1,) * len(shape)
    new = [0] * len(shape)
    view_d = len(shape) - 1
    base = old_strides[-1]          # the stride of the current chunk's last dim
    chunk_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        chunk_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != chunk_numel * base):    # chunk ends at d
            while view_d >= 0 and (view_numel < chunk_numel or shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return None
            if d > 0:
                base, chunk_numel, view_numel = old_strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else None


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class View(Function):
    """``a``'s memory read with another shape and the given element strides (no copy)."""

    @staticmethod
    def forward(ctx, a, shape, strides):
        ctx.shape = a.shape
        item = a._data.itemsize
        return _view(a, a._backend.as_strided(a._data, shape, tuple(s * item for s in strides)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None, None


def view(a, *shape):
    """Like :func:`reshape` but never copies: the same memory read with new strides. Possible
    whenever each group of new dims covers whole chunks of old dims that are contiguous among
    themselves (:func:`_view_strides`, PyTorch's rule), e.g. any view of a contiguous tensor,
    splitting or merging the rows of a column slice, splitting a transposed dim.

    Raises:
        RuntimeError: element counts that differ, or a new dim spanning two chunks (PyTorch's
            message: use ``.reshape(...)``, which copies).
    """
    shape = _resolved(a, shape)
    if shape == a.shape:
        return a
    strides = _view_strides(a.shape, a.stride(), shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return View.apply(a, shape, strides)


def expand(a, *shape):
    """Broadcast to ``shape`` (``-1`` keeps a dimension) without copying.

    Raises:
        RuntimeError: if a dimension of size other than 1 would change.
    """
    shape = _unpack_ints(shape)
    lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(f"expand: target shape {tuple(shape)} has fewer dimensions than {tuple(a.shape)}")
    shape = tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    for s, n in zip(a.shape, shape[lead:]):
        if s != 1 and s != n:
            raise RuntimeError(f"expand: cannot expand shape {tuple(a.shape)} to {shape}")
    return a if shape == a.shape else Expand.apply(a, shape)


def contiguous(a):
    return a if a.is_contiguous() else Contiguous.apply(a)


def clone(a):
    """A copy of ``a`` in fresh row-major memory, always (``contiguous`` returns a compact ``a``
    itself); differentiable, the gradient passes through unchanged. Same shape and dtype."""
    return Contiguous.apply(a)


def unsqueeze(a, dim):
    """Insert a dimension of size 1 at ``dim`` (a view)."""
    dim = _wrap_dim(dim, a.ndim + 1)
    return reshape(a, a.shape[:dim] + (1,) + a.shape[dim:])


def squeeze(a, dim=None):
    """Remove dimensions of size 1 (all of them, or only ``dim``)."""
    if dim is None:
        return reshape(a, tuple(s for s in a.shape if s != 1))
    dim = a._dim(dim)
    return a if a.shape[dim] != 1 else reshape(a, a.shape[:dim] + a.shape[dim + 1:])


def flatten(a, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim..end_dim`` into one."""
    if a.ndim == 0:
        return reshape(a, 1)
    s, e = a._dim(start_dim), a._dim(end_dim)
    n = math.prod(a.shape[s:e + 1])
    return reshape(a, a.shape[:s] + (n,) + a.shape[e + 1:])
