# GENERATED from minitorch/ops/indexing.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Indexing and joining: ``x[key]``, ``x[key] = value``, ``index_select``, ``index_add``,
``nonzero``, ``cat`` and ``stack``, with their gradients.

``x[key]`` follows PyTorch (which follows NumPy, except that integers, and 0-d int64 tensors, are
always basic); ``x[key] = value`` accepts every key ``x[key]`` reads and writes those positions:

* **Basic indexing** - integers, slices ``start:stop:step`` (step >= 1: PyTorch has no negative
  steps), ``None`` (a new dimension of size 1) and ``...`` (as many ``:`` as needed) - gives a
  **view**: the same memory read with another shape, strides and starting element. No kernel runs;
  writing through the view changes ``x``. Its gradient is zeros with ``grad`` copied into the
  viewed positions (``copy_into`` in index.cu).
* **Advanced indexing** - int64 tensors (or lists of ints), bool tensors (masks), several of them
  broadcasting together - **copies**: ``x[idx]`` has ``idx``'s shape where the indexed dimension
  was, ``out[.., b, ..] = x[.., idx[b], ..]``, gathered by one kernel (``gather`` in index.cu).
  When the index tensors sit in adjacent dimensions their broadcast shape replaces those
  dimensions in place; when other dimensions separate them it goes first (NumPy's rule). The
  gradient scatters back with atomicAdd (``scatter_add``): repeated indices add up, in no fixed
  order, so float gradients may differ in the last bits from run to run (as PyTorch's on CUDA).
* **Bool masks**: ``x[mask]`` keeps the elements where ``mask`` (of the shape of the dimensions it
  covers, from where it stands) is true, in row-major order: it is ``x[mask.nonzero() columns]``.
  How many there are decides the output's shape, so the count must come back to the host: a
  **synchronisation with the GPU** that cannot be avoided (PyTorch synchronises too).

Indices may be negative (counting from the end). On cpu an index out of range raises IndexError
with PyTorch's message; on cuda checking would also need a synchronisation, so it is not done: the
kernel never reads out of bounds but gives NaN (float), 0 (int64) or False there.
"""
import numbers

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..dtypes import bool as _bool
from ..dtypes import int64, result_type
from ..tensor import Tensor, _wrap_dim
from .elementwise import check_broadcast, check_same_device, where

_INVALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
            "indices (got {})")


def _zeros(shape, dtype, device):
    from .. import native
    return native.get(device).full(tuple(shape), 0, dtype, device.index)


# ---- the Functions -------------------------------------------------------------------------------
class BasicIndex(Function):
    """``x[key]`` for a key of ints, slices, None and a final ``...``: a view (no kernel)."""

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape, ctx.key = a.shape, key
        return Tensor(a._data[key], a.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g = _zeros(ctx.shape, grad.dtype, grad.device)
        b.copy_(g[ctx.key], grad._data)            # the view's elements are distinct: a plain copy
        return Tensor(g, grad.device), None


def _fused(backend, data, shape, first, indices):
    """For k >= 2 index tensors on dimensions first .. first+k-1 of the raw array ``data`` (of
    ``backend``):
    (a view of data in which those k dimensions are ONE dimension of stride 1 element, the index
    into it). Index j moves by stride s_j along its dimension, so the element at (w_1, .., w_k)
    is at offset sum_j w_j s_j: the linear index. The view's size along the merged dimension,
    ``span``, is one past the largest such offset, so it never reaches outside data's elements.
    An index out of range becomes ``span`` (out of range for the gather too, which skips it)."""
    isz = data.itemsize
    k = len(indices)
    sizes = shape[first:first + k]
    strides = [s // isz for s in data.strides[first:first + k]]
    span = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
    lin = ok = None
    for idx, n, s in zip(indices, sizes, strides):
        w = where(idx < 0, idx + n, idx)
        good = where(w >= 0, w < n, False)
        lin = w * s if lin is None else lin + w * s
        ok = good if ok is None else where(ok, good, False)
    lin = where(ok, lin, span)
    view = backend.as_strided(data, shape[:first] + (span,) + shape[first + k:],
                              data.strides[:first] + (isz,) + data.strides[first + k:])
    return view, lin


class Take(Function):
    """Advanced indexing of dimensions first .. first+k-1 by k int64 index tensors (broadcasting
    together to B): out has shape v.shape[:first] + B + v.shape[first+k:]."""

    @staticmethod
    def forward(ctx, v, first, indices):
        ctx.shape, ctx.first, ctx.indices = v.shape, first, indices
        b = v._backend
        if len(indices) == 1:
            return Tensor(b.take(v._data, first, indices[0]._data), v.device)
        view, lin = _fused(b, v._data, v.shape, first, indices)
        return Tensor(b.take(view, first, lin._data), v.device)

    @staticmethod
    def backward(ctx, grad):
        b = grad._backend
        g = _zeros(ctx.shape, grad.dtype, grad.device)
        if len(ctx.indices) == 1:
            b.index_add_(g, ctx.first, ctx.indices[0]._data, grad._data)
        else:
            view, lin = _fused(b, g, ctx.shape, ctx.first, ctx.indices)
            b.index_add_(view, ctx.first, lin._data, grad._data)
        return Tensor(g, grad.device), None, None


class IndexAdd(Function):
    """``out = a`` with ``source[.., b, ..]`` added at ``a[.., index[b], ..]`` (times alpha)."""

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha):
        b = a._backend
        out = b.contiguous(a._data)                # a fresh copy to add into
        src = source._data if alpha == 1 else b.binary_scalar("mul", source._data, alpha)
        b.index_add_(out, dim, index._data, src)
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        return Tensor(out, a.device)

    @staticmethod
    def backward(ctx, grad):
        gs = Tensor(grad._backend.take(grad._data, ctx.dim, ctx.index._data), grad.device)
        return grad, None, None, (gs if ctx.alpha == 1 else gs * ctx.alpha), None


class Cat(Function):
    """Tensors joined along ``dim``: each copied into its slice of the output (``copy_into``)."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ref = tensors[0]
        b = ref._backend
        sizes = [t.shape[dim] for t in tensors]
        shape = ref.shape[:dim] + (sum(sizes),) + ref.shape[dim + 1:]
        out = b.empty(tuple(shape), ref.dtype, ref.device.index)
        start = 0
        for t, n in zip(tensors, sizes):
            if n:
                b.copy_(out[(slice(None),) * dim + (slice(start, start + n), Ellipsis)], t._data)
            start += n
        ctx.dim, ctx.sizes = dim, sizes
        return Tensor(out, ref.device)

    @staticmethod
    def backward(ctx, grad):
        grads, start = [], 0
        for n in ctx.sizes:
            grads.append(grad[(slice(None),) * ctx.dim + (slice(start, start + n),)].contiguous())
            start += n
        return (None,) + tuple(grads)


# ---- x[key] ---------------------------------------------------------------------------------------
def _key_item(t, k):
    """One element of a key, normalised: lists and arrays become int64/bool tensors on t's device."""
    if isinstance(k, Tensor):
        if k.dtype is not int64 and k.dtype is not _bool:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k.to(t.device) if k.device != t.device else k
    if isinstance(k, (list, tuple, np.ndarray)):
        from ..creation import tensor
        arr = np.asarray(k)
        if arr.dtype == np.bool_:
            return tensor(arr, dtype=_bool, device=t.device)
        if arr.dtype.kind in "iu" or arr.size == 0:
            return tensor(arr.astype(np.int64), dtype=int64, device=t.device)
        raise IndexError(_INVALID.format(f"a sequence of {arr.dtype}"))
    if k is None or k is Ellipsis or isinstance(k, (slice, bool, np.bool_, numbers.Integral)):
        return k
    raise IndexError(_INVALID.format(type(k).__name__))


def _dims_used(k):
    """How many of the tensor's dimensions a key element consumes."""
    if isinstance(k, Tensor):
        return k.ndim if k.dtype is _bool else 1
    if isinstance(k, (bool, np.bool_)) or k is None or k is Ellipsis:
        return 0
    return 1                                         # an int or a slice


def _check_slice(s):
    for v in (s.start, s.stop, s.step):
        if v is not None and not isinstance(v, numbers.Integral):
            raise IndexError(_INVALID.format(f"a slice with {type(v).__name__} bounds"))
    if s.step is not None:
        if s.step == 0:
            raise ValueError("slice step cannot be zero")
        if s.step < 0:
            raise ValueError("step must be greater than zero")


def _parse(t, key):
    """Split ``key`` into the basic key of a view (None if it selects everything) and the
    advanced indices: a list of (dimension of the view, int64 or bool tensor, is_mask)."""
    from ..creation import empty
    items = [_key_item(t, k) for k in (key if isinstance(key, tuple) else (key,))]
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_dims_used(k) for k in items)
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    fill = [slice(None)] * (t.ndim - used)
    at = next((i for i, k in enumerate(items) if k is Ellipsis), None)     # (`in` would call Tensor.__eq__)
    if at is not None:
        items[at:at + 1] = fill
    else:
        items += fill
    basic, advanced = [], []
    d = v = 0                                        # dimension of t, dimension of the view
    trivial = True
    for k in items:
        if k is None or isinstance(k, (bool, np.bool_)) or (isinstance(k, Tensor) and k.dtype is _bool and k.ndim == 0):
            # None, True: a new dimension of size 1; False: the same, then emptied (x[False] is
            # empty). A 0-d mask reads its value from the device.
            basic.append(None)
            keep = True if k is None else bool(k.item() if isinstance(k, Tensor) else k)
            if not keep:
                advanced.append((v, empty(0, dtype=int64, device=t.device), False))
            v += 1
            trivial = False
        elif isinstance(k, slice):
            _check_slice(k)
            basic.append(k)
            trivial = trivial and k.start is None and k.stop is None and k.step in (None, 1)
            d += 1
            v += 1
        elif isinstance(k, Tensor) and k.dtype is _bool:
            for j, (m, n) in enumerate(zip(k.shape, t.shape[d:])):
                if m != n:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(t.shape)} at index {d + j}")
            basic += [slice(None)] * k.ndim
            advanced.append((v, k, True))
            d += k.ndim
            v += k.ndim
        elif isinstance(k, Tensor):
            basic.append(slice(None))
            advanced.append((v, k, False))
            d += 1
            v += 1
        else:                                        # an int: select (the dimension goes away)
            n = t.shape[d]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
            basic.append(int(k))
            trivial = False
            d += 1
    return (None if trivial else tuple(basic) + (Ellipsis,)), advanced


def _zero_d_as_int(key):
    """``key`` with each 0-d int64 tensor replaced by its int: ``x[key]`` treats it as an int (basic,
    a select), as PyTorch does (reading it waits for the GPU, there too). index_put does not."""
    def one(k):
        return int(k.item()) if isinstance(k, Tensor) and k.dtype is int64 and k.ndim == 0 else k
    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _check_in_range(x, n, dim, message=None):
    """On cpu (cheap there), raise IndexError for an index outside [-n, n)."""
    if x.device.type != "cpu" or x.numel() == 0:
        return
    data = x._data
    bad = data[(data < -n) | (data >= n)]
    if bad.size:
        raise IndexError(message or f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {n}")


def _index_tensors(shape, device, advanced):
    """The advanced part of a key on a view of ``shape``: (int64 index tensors, the view's dims
    they index, the permutation that brings those dims first when others separate them, else
    None). Masks become their true positions; indices are checked (on cpu)."""
    tensors, dims = [], []
    for pos, k, is_mask in advanced:
        if is_mask:                                  # the mask's true positions, one column per dim
            coords = k._backend.nonzero(k._data)     # waits for the GPU: the count sizes the result
            for j in range(k.ndim):
                tensors.append(Tensor(coords[:, j], device))
                dims.append(pos + j)
        else:
            tensors.append(k)
            dims.append(pos)
    if len(tensors) > 1:
        try:
            check_broadcast("index", *(x.shape for x in tensors))
        except RuntimeError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(list(x.shape)) for x in tensors)) from None
    for x, d in zip(tensors, dims):
        _check_in_range(x, shape[d], d)
    if dims != list(range(dims[0], dims[0] + len(dims))):    # separated: the indexed dims go first
        return tensors, dims, dims + [d for d in range(len(shape)) if d not in dims]
    return tensors, dims, None


def _advanced(view, advanced):
    tensors, dims, order = _index_tensors(view.shape, view.device, advanced)
    if order is not None:
        return Take.apply(view.permute(*order), 0, tuple(tensors))
    return Take.apply(view, dims[0], tuple(tensors))


def getitem(input, key):
    """``input[key]`` as PyTorch defines it (see the module docstring): a view for ints, slices,
    None and ``...``; a gathered copy when ``key`` holds int64 or bool tensors (or lists of them).

    Raises:
        IndexError: an index out of range (for index tensors: on cpu only), too many indices, a
            mask of the wrong shape, index tensors that do not broadcast, or an unsupported key.
        ValueError: a slice step that is zero or negative (PyTorch's messages).
    """
    basic, advanced = _parse(input, _zero_d_as_int(key))
    view = input if basic is None else BasicIndex.apply(input, basic)
    if advanced:
        return _advanced(view, advanced)
    if view is not input and is_grad_enabled():     # (under no_grad, no write will be recorded: keep no link)
        view._view_of, view._view_version = (input, key), input._version     # see Tensor._write_through_base
    return view


def _extent(data):
    """(first byte, one past the last byte) that the raw array's elements occupy."""
    start = data.ctypes.data if isinstance(data, np.ndarray) else data.ptr
    if data.size == 0:
        return start, start
    return start, start + sum((n - 1) * s for n, s in zip(data.shape, data.strides)) + data.itemsize


def _broadcast_value(value, shape):
    """``value`` (a Tensor) expanded to ``shape``, the shape ``x[key]`` has (leading size-1 dims
    of value dropped first, as PyTorch allows).

    Raises:
        RuntimeError: value does not broadcast to ``shape`` (PyTorch's message).
    """
    while value.ndim > len(shape) and value.shape[0] == 1:
        value = value.reshape(value.shape[1:])
    if value.ndim > len(shape) or any(s not in (1, n) for s, n in zip(value.shape, shape[len(shape) - value.ndim:])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    return value.expand(*shape)


def _setitem_advanced(input, basic, advanced, value):
    """``input[key] = value`` for a key holding index tensors (alone or mixed with ints, slices,
    None, ``...``), in place: the basic part of the key is a view of input's memory, in which the
    index tensors' dimensions are moved first when other dimensions separate them (NumPy's rule,
    as for reading) and, when there are several, fused into one (:func:`_fused`); then
    ``index_copy_`` stores the broadcast value there. Repeated indices keep one of their values
    (unspecified which, as PyTorch).

    Raises:
        IndexError: as for reading ``input[key]``.
        RuntimeError: the value does not broadcast to ``input[key]``'s shape, or the view repeats
            memory (an expanded tensor).
    """
    b = input._backend
    view = input._data if basic is None else input._data[basic]
    tensors, dims, order = _index_tensors(view.shape, input.device, advanced)
    first = dims[0]
    if order is not None:
        view, first = view.transpose(order), 0
    if any(st == 0 and n > 1 for n, st in zip(view.shape, view.strides)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    k = len(tensors)
    batch = tuple(check_broadcast("index", *(x.shape for x in tensors)))
    value = _broadcast_value(value, view.shape[:first] + batch + view.shape[first + k:])
    src = value._data
    (d0, d1), (s0, s1) = _extent(view), _extent(src)
    if d0 < s1 and s0 < d1:                          # the value reads memory being written: copy it first
        src = b.contiguous(src)
    if k == 1:
        b.index_copy_(view, first, tensors[0]._data, src)
    else:
        fused, lin = _fused(b, view, view.shape, first, tensors)
        b.index_copy_(fused, first, lin._data, src)


def setitem(input, key, value):
    """``input[key] = value`` in place, for every key ``input[key]`` reads: basic keys (ints, slices,
    None, ...), index tensors (alone or mixed with the basic ones: :func:`_setitem_advanced`) and
    bool masks. ``value``: a number or a tensor broadcasting to ``input[key]``'s shape
    (converted to input's dtype and device). Not recorded by autograd (``Tensor.__setitem__``
    records the write when autograd must: minitorch/ops/inplace.py).

    Raises:
        RuntimeError: input requires grad while grad mode is on (use ``minitorch.no_grad()``), the
            value does not broadcast, or the view repeats elements (an expanded tensor).
    """
    from ..creation import full
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError("x[key] = value on a tensor that requires grad: autograd does not track in-place "
                           "changes; assign inside `with minitorch.no_grad():`, or build a new tensor (where, cat)")
    input._version += 1             # a backward that saved input raises rather than use the new values
    if not isinstance(value, Tensor):
        value = full((), value, dtype=input.dtype, device=input.device)
    value = value.to(input.device, input.dtype)
    b = input._backend
    if isinstance(key, Tensor) and key.dtype is _bool and key.shape == input.shape:
        new = where(key.to(input.device), value, input)             # no sync: a kernel decides
        b.copy_(input._data, new._data)
        return
    basic, advanced = _parse(input, _zero_d_as_int(key))
    if advanced:
        _setitem_advanced(input, basic, advanced, value)
        return
    dst = input._data if basic is None else input._data[basic]
    if any(st == 0 and n > 1 for n, st in zip(dst.shape, dst.strides)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    src = _broadcast_value(value, dst.shape)._data
    (d0, d1), (s0, s1) = _extent(dst), _extent(src)
    if d0 < s1 and s0 < d1:                          # the value reads memory being written: copy it first
        src = b.contiguous(src)
    b.copy_(dst, src)


# ---- index_select / index_add / nonzero ---------------------------------------------------------------
def _index_vector(name, input, index):
    if not isinstance(input, Tensor) or not isinstance(index, Tensor):
        raise TypeError(f"{name}(): expected Tensors, got {type(input).__name__} and {type(index).__name__}")
    if index.dtype is not int64:
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    check_same_device(name, input, index)
    return index.reshape(1) if index.ndim == 0 else index


def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` at the positions ``index`` (int64, 1-D or 0-d),
    gathered in that order: shape ``input.shape[:dim] + (len(index),) + input.shape[dim+1:]``.
    ``x.index_select(0, idx)`` is ``x[idx]`` for a 1-D idx. One gather kernel; the gradient is
    :func:`index_add` into zeros (atomicAdd: repeated indices add up).

    Raises:
        RuntimeError: index not int64, or on another device.  IndexError: index not a vector,
            ``dim`` out of range, an index out of range (checked on cpu only; on cuda such rows
            are NaN / 0).
    """
    index = _index_vector("index_select", input, index)
    if input.ndim == 0:
        input = input.reshape(1)
    d = input._dim(dim)
    _check_in_range(index, input.shape[d], d, "index out of range in self")
    return Take.apply(input, d, (index,))


def index_add(input, dim, index, source, alpha=1):
    """A copy of ``input`` with ``alpha * source[.., i, ..]`` added to ``input[.., index[i], ..]``
    along ``dim`` (repeated indices add up; atomicAdd on cuda, in no fixed order).
    ``source``: shape ``input.shape[:dim] + (len(index),) + input.shape[dim+1:]``, input's dtype.

    Raises:
        RuntimeError: wrong shapes or dtypes, index not int64.  IndexError: as index_select.
    """
    index = _index_vector("index_add", input, index)
    d = input._dim(dim)
    check_same_device("index_add", input, source)
    want = tuple(input.shape[:d]) + (index.shape[0],) + tuple(input.shape[d + 1:])
    if tuple(source.shape) != want:
        raise RuntimeError(f"index_add(): source has shape {list(source.shape)}, expected {list(want)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add(): self ({input.dtype}) and source ({source.dtype}) must have the same dtype")
    _check_in_range(index, input.shape[d], d, "index out of range in self")
    return IndexAdd.apply(input, d, index, source, alpha)


def nonzero(input, as_tuple=False):
    """Positions of the non-zero (true) elements, row-major: int64 [count, input.ndim], or with
    ``as_tuple`` one 1-D tensor per dimension (what ``x[mask]`` uses).

    Waits for the GPU: the count decides the output's shape and must reach the host.
    """
    coords = Tensor(input._backend.nonzero(input._data), input.device)
    if as_tuple:
        return tuple(coords[:, j] for j in range(input.ndim))
    return coords


# ---- cat / stack -------------------------------------------------------------------------------------
def cat(tensors, dim=0):
    """Tensors joined along ``dim`` (``torch.cat``): same shapes except along ``dim``; dtypes are
    promoted. Each input is copied into its slice of the output by the strided-copy kernel; the
    gradient of each input is its slice of the output's gradient.

    Raises:
        RuntimeError: an empty list, 0-d tensors, shapes that differ outside ``dim`` (PyTorch's
            message), tensors on several devices.  IndexError: ``dim`` out of range.
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected a list of Tensors, got {type(t).__name__}")
    check_same_device("cat", *tensors)
    ref = tensors[0]
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = ref._dim(dim)
    for i, t in enumerate(tensors):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    dtype = result_type(*tensors)
    return Cat.apply(d, *(t.to(dtype=dtype) for t in tensors))


def stack(tensors, dim=0):
    """Tensors of one shape stacked along a new dimension ``dim`` (``torch.stack``): each gets a
    dimension of size 1 there (a view), then :func:`cat`.

    Raises:
        RuntimeError: an empty list, or shapes that differ.  IndexError: ``dim`` out of range.
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"stack(): expected a list of Tensors, got {type(t).__name__}")
        if t.shape != ref.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    dim = _wrap_dim(dim, ref.ndim + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)
