# GENERATED from minitorch/ops/rearrange.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Cutting, reordering and repeating tensors: ``split``, ``chunk``, ``unbind``, ``narrow``,
``movedim``, ``diagonal`` (views: no kernel runs), ``flip``, ``roll``, ``repeat``, ``tile``,
``tril``, ``triu`` (copies, made by kernels that already exist).

A view is the same memory read with another shape, strides and first element. Slicing a
dimension (narrow, split, chunk, unbind) moves the first element and shortens that dimension;
``movedim`` reorders strides; ``diagonal`` walks two dimensions at once, so its stride is the sum
of theirs. The copies are strided copies: ``flip`` reads through a view with NEGATIVE strides
(the last element first), ``roll`` copies two slices of each rolled dimension into swapped places,
``repeat`` copies a view that is expanded (stride 0) along new dimensions, and ``tril``/``triu``
keep the elements where a row/column comparison is true (``where``).

The gradients follow from that: a view's gradient is ``grad`` copied into the viewed positions of
zeros (split's pieces are one node, whose gradient joins theirs with one ``cat``); flip and roll
undo themselves (flip again, roll back); repeat sums the copies (expand's gradient); tril/triu pass
``grad`` where they kept the element (where's gradient).
"""
import math

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, _unpack_ints, _wrap_dim
from .indexing import cat
from .shape import clone, permute


def _zeros(shape, like):
    return like._backend.full(tuple(shape), 0, like.dtype, like.device.index)


# ---- views: narrow, split, chunk, unbind, movedim, diagonal --------------------------------------------
def narrow(input, dim, start, length):
    """``input`` restricted to ``start .. start+length-1`` along ``dim`` (a view); ``start`` may
    be negative (counting from the end).

    Raises:
        RuntimeError: a 0-d input, a negative length, or ``start + length`` past the end.
        IndexError: ``dim`` or ``start`` out of range (PyTorch's messages).
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = input._dim(dim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along ``dim``: of ``split_size_or_sections`` elements each (the
    last may be shorter), or of the listed sizes (which must add up to the dimension).

    Raises:
        RuntimeError: a 0-d input, a split size of 0 on a non-empty dimension (or negative), or
            sizes that do not add up. IndexError: ``dim`` out of range.
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = tensor._dim(dim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = list(split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
    else:
        s = split_size_or_sections
        if s < 0 or (s == 0 and n != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                               if s == 0 else f"split expects split_size be non-negative, but got split_size={s}")
        sizes = [min(s, n - start) for start in range(0, n, s)] if n else [0]
    keys = _split_keys(d, sizes)
    pieces = Split.apply(tensor, d, tuple(sizes), keys)
    for k, (piece, key) in enumerate(zip(pieces, keys)):
        if is_grad_enabled():           # a view of tensor, as narrow's: writes into it move tensor's version
            piece._view_of, piece._view_version = (tensor, key), tensor._version
        piece._split_output = k         # autograd refuses to record a write into it (Tensor._before_write)
    return pieces


def _split_keys(dim, sizes):
    """The ``x[key]`` keys of consecutive pieces of ``sizes`` elements along ``dim``."""
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    return tuple((slice(None),) * dim + (slice(b, b + n),) for b, n in zip(starts, sizes))


class Split(Function):
    """The pieces ``a[key]`` (views: no kernel) of :func:`split`, ONE node for all of them, as PyTorch's
    SplitBackward: backward is one ``cat`` of the pieces' gradients along ``dim`` (zeros only for the
    pieces that got none), instead of one zero-filled copy of ``a`` per piece, all added up."""

    @staticmethod
    def forward(ctx, a, dim, sizes, keys):
        ctx.set_materialize_grads(False)
        ctx.dim, ctx.shapes = dim, tuple(a.shape[:dim] + (n,) + a.shape[dim + 1:] for n in sizes)
        return tuple(Tensor(a._data[key], a.device) for key in keys)

    @staticmethod
    def backward(ctx, *grads):
        some = next(g for g in grads if g is not None)
        if all(g is not None for g in grads):
            joined = some._backend.joined_view([g._data for g in grads], ctx.dim)
            if joined is not None:          # the gradients already lie where cat would copy them
                return Tensor(joined, some.device), None, None, None
        grads = [g if g is not None else Tensor(_zeros(shape, some), some.device)
                 for g, shape in zip(grads, ctx.shapes)]
        return cat(grads, ctx.dim), None, None, None


def chunk(input, chunks, dim=0):
    """At most ``chunks`` views along ``dim``, each ``ceil(size / chunks)`` long (the last may be
    shorter, and fewer come back when the size runs out first, as in PyTorch).

    Raises:
        RuntimeError: ``chunks`` <= 0 or a 0-d input.  IndexError: ``dim`` out of range.
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = input._dim(dim)
    n = input.shape[d]
    if n == 0:
        return split(input, [0] * chunks, d)          # PyTorch gives `chunks` empty pieces
    return split(input, math.ceil(n / chunks), d)


def unbind(input, dim=0):
    """The slices ``input[.., i, ..]`` along ``dim``, each without that dimension (views).

    Raises:
        IndexError: a 0-d input, or ``dim`` out of range.
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = input._dim(dim)
    return tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))


def _dim_list(dims, ndim, repeated):
    """Dims given as an int or a sequence, wrapped to [0, ndim); a repeated one raises
    RuntimeError with the message ``repeated(dim)``."""
    dims = [_wrap_dim(d, max(ndim, 1)) for d in ((dims,) if isinstance(dims, int) else dims)]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(repeated(d))
    return dims


def movedim(input, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination``; the others keep their order
    (a view). ``moveaxis`` is the same function (NumPy's name).

    Raises:
        RuntimeError: source and destination of different lengths, or with repeated dims.
        IndexError: a dim out of range.
    """
    src = _dim_list(source, input.ndim, lambda d: f"movedim: repeated dim in `source` ({list(source)})")
    dst = _dim_list(destination, input.ndim, lambda d: f"movedim: repeated dim in `destination` ({list(destination)})")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    if input.ndim == 0:
        return input
    order = [None] * input.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in src)
    return permute(input, *[s if s is not None else next(rest) for s in order])


moveaxis = movedim


def _diagonal_view(backend, data, offset, d1, d2):
    """The raw view of ``data``'s diagonal: dims d1, d2 removed, the diagonal appended last; its
    stride is stride(d1) + stride(d2) (one step down AND one step right)."""
    n1, n2 = data.shape[d1], data.shape[d2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    key = [slice(None)] * data.ndim
    if length:                                        # move the first element onto the diagonal
        key[d2 if offset >= 0 else d1] = slice(abs(offset), None)
    start = data[tuple(key)]
    keep = [d for d in range(data.ndim) if d not in (d1, d2)]
    return backend.as_strided(start, [start.shape[d] for d in keep] + [length],
                              [start.strides[d] for d in keep] + [start.strides[d1] + start.strides[d2]])


class Diagonal(Function):
    """The elements ``input[.., i, .., i + offset, ..]`` of dims d1, d2 (a view)."""

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        ctx.shape, ctx.args = a.shape, (offset, d1, d2)
        return Tensor(_diagonal_view(a._backend, a._data, offset, d1, d2), a.device)

    @staticmethod
    def backward(ctx, grad):
        g = _zeros(ctx.shape, grad)
        grad._backend.copy_(_diagonal_view(grad._backend, g, *ctx.args), grad._data)
        return Tensor(g, grad.device), None, None, None


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the matrices spanned by ``dim1`` and ``dim2`` (above the main one for
    ``offset`` > 0, below for < 0): those two dims go, a last dim of the diagonal's length comes
    (a view, PyTorch's layout).

    Raises:
        RuntimeError: ``dim1 == dim2``.  IndexError: a dim out of range.
    """
    d1, d2 = input._dim(dim1), input._dim(dim2)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset, d1, d2)


# ---- copies: flip, roll, repeat, tile, tril, triu ---------------------------------------------------
class Flip(Function):
    """Reverse the order along ``dims``: a contiguous copy of a view with negative strides."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return Tensor(_flipped(a._backend, a._data, dims), a.device)

    @staticmethod
    def backward(ctx, grad):
        return Tensor(_flipped(grad._backend, grad._data, ctx.dims), grad.device), None


def _flipped(backend, data, dims):
    key = tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(data.ndim))
    return backend.contiguous(data[key])


def flip(input, dims):
    """A copy with the order of elements reversed along each of ``dims`` (an int or a sequence).

    Raises:
        RuntimeError: a dim listed twice.  IndexError: a dim out of range.
    """
    dims = _dim_list(dims, input.ndim, lambda d: f"dim {d} appears multiple times in the list of dims")
    return Flip.apply(input, tuple(dims))


def _rolled(backend, data, dtype, device, shifts, dims):
    """``data`` rolled by ``shifts[k]`` along ``dims[k]``: per dim, the last ``s`` elements move
    to the front (two strided copies into a fresh array)."""
    for shift, d in zip(shifts, dims):
        n = data.shape[d]
        s = shift % n if n else 0
        out = backend.empty(data.shape, dtype, device.index)
        pre = (slice(None),) * d
        if n:
            backend.copy_(out[pre + (slice(s, n),)], data[pre + (slice(0, n - s),)])
            if s:
                backend.copy_(out[pre + (slice(0, s),)], data[pre + (slice(n - s, n),)])
        data = out
    return data


class Roll(Function):
    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return Tensor(_rolled(a._backend, a._data, a.dtype, a.device, shifts, dims), a.device)

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts)
        return Tensor(_rolled(grad._backend, grad._data, grad.dtype, grad.device, back, ctx.dims),
                      grad.device), None, None


def roll(input, shifts, dims=None):
    """A copy with elements moved ``shifts`` places along ``dims`` (wrapping around): element i
    goes to (i + shift) mod size. Without ``dims`` the tensor is rolled as if flattened.

    Raises:
        RuntimeError: shifts and dims of different lengths.  IndexError: a dim out of range.
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input.flatten(), shifts, (0,)).reshape(input.shape)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, shifts, tuple(input._dim(d) for d in dims))


def repeat(input, *sizes):
    """``input`` repeated ``sizes[k]`` times along dim k (``torch.Tensor.repeat``); extra leading
    sizes add dimensions. Built as a view, (1, n0, 1, n1, ...) expanded to (r0, n0, r1, n1, ...)
    with stride 0, copied once and reshaped to (r0 n0, r1 n1, ...); the gradient sums the copies.

    Raises:
        RuntimeError: fewer sizes than dimensions, or a negative size.
    """
    sizes = tuple(_unpack_ints(sizes))
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(r < 0 for r in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: repeats {list(sizes)}")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    pairs = input.reshape(tuple(v for n in shape for v in (1, n)))
    pairs = pairs.expand(tuple(v for r, n in zip(sizes, shape) for v in (r, n)))
    return clone(pairs).reshape(tuple(r * n for r, n in zip(sizes, shape)))


def tile(input, dims):
    """``repeat`` with ``dims`` padded on the left with 1s when shorter than ``input.ndim``."""
    dims = tuple(_unpack_ints((dims,)))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _triangle(name, input, diagonal, lower):
    """Keep element (i, j) of each matrix in the last two dims where j - i <= diagonal (lower) or
    j - i >= diagonal (upper); zeros elsewhere."""
    from ..creation import arange, full
    from .elementwise import where
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2:]
    above = arange(cols, device=input.device) - arange(rows, device=input.device).reshape(rows, 1)   # j - i
    keep = above <= diagonal if lower else above >= diagonal
    return where(keep, input, full((), 0, dtype=input.dtype, device=input.device))


def tril(input, diagonal=0):
    """The lower triangle of the matrices in the last two dims: elements with column - row <=
    ``diagonal`` kept, the rest 0 (a copy; any dtype).

    Raises:
        RuntimeError: fewer than 2 dimensions.
    """
    return _triangle("tril", input, diagonal, lower=True)


def triu(input, diagonal=0):
    """The upper triangle: elements with column - row >= ``diagonal`` kept, the rest 0."""
    return _triangle("triu", input, diagonal, lower=False)
