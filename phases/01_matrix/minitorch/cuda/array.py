# GENERATED from minitorch/cuda/array.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""``DeviceArray``: what a ``cuda`` tensor holds: an address in GPU memory, a shape, strides, a dtype.

It is NumPy's array header without the host data: element ``[i, j]`` of a 2-d array lives at
byte address ``ptr + i * strides[0] + j * strides[1]`` on the GPU. Kernels get ``ptr`` (and, for
views, the strides); the host never touches the elements except through an explicit copy
(:func:`from_numpy`, :meth:`DeviceArray.get`).

A *view* (transpose, slice, reshape, broadcast) is a new header over the same memory: a new
``ptr``/``shape``/``strides`` and the same ``owner``. The owner is what keeps the bytes alive: a
:class:`~minitorch.cuda.memory.Block` from our caching allocator, or a foreign array (CuPy,
PyTorch) we wrap without copying (:func:`from_cuda_array`). When the last view of a Block dies,
the Block goes back to the allocator.

Why not ``cupy.ndarray``? It does all of this and more, but making one (``cupy.empty``) cost
2-5 us on the H100 hosts we measured, as much as launching the kernel itself; this header and our
allocator together cost about half of that (benchmarks/overhead_breakdown.py).
"""
import functools
import operator

import numpy as np

from . import cupy_or_raise, memory

cp = cupy_or_raise()     # this module is imported only when cuda is used: fail early and clearly
_current_stream = cp.cuda.get_current_stream
_runtime = cp.cuda.runtime


class DeviceArray:
    """An N-d strided view of GPU memory. Make one with :func:`empty` or :func:`from_numpy`.

    Attributes:
        ptr (int): device address of the first element (of index ``[0, 0, ...]``).
        shape (tuple of int): sizes, outermost first.
        strides (tuple of int): BYTES to step per index along each dimension (NumPy's unit;
            a Tensor's ``stride()`` divides by the itemsize).
        dtype (numpy.dtype): element type (float32, float64, int64 or bool).
        size (int): number of elements.
        ndim (int): number of dimensions.
        c_contiguous (bool): elements lie in row-major order with no gaps.
        device_id (int): the GPU ordinal.
        owner: what keeps the memory alive (a memory.Block or a foreign array).
    """

    __slots__ = ("ptr", "shape", "strides", "dtype", "size", "ndim", "c_contiguous", "device_id", "owner")

    def __init__(self, owner, ptr, shape, strides, dtype, size, c_contiguous, device_id):
        self.owner = owner
        self.ptr = ptr
        self.shape = shape
        self.ndim = len(shape)
        self.strides = strides
        self.dtype = dtype
        self.size = size
        self.c_contiguous = c_contiguous
        self.device_id = device_id

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def flags(self):
        """NumPy's ``a.flags.c_contiguous`` works here too: it reads our own attribute (code shared
        with the cpu backend asks this way)."""
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self):
        return (f"DeviceArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"device={self.device_id}, ptr={self.ptr:#x})")

    # ---- views: new headers over the same memory -------------------------------------------------
    def as_strided(self, shape, strides, offset=0):
        """A view with ``shape`` and byte ``strides`` starting ``offset`` bytes after ``ptr``.

        Nothing is checked: every index of the view must land inside the owner's memory (the
        callers below make sure it does).
        """
        shape, strides = tuple(shape), tuple(strides)
        return DeviceArray(self.owner, self.ptr + offset, shape, strides, self.dtype,
                           _product(shape), is_c_contiguous(shape, strides, self.dtype.itemsize),
                           self.device_id)

    def transpose(self, *axes):
        """Reorder dimensions: ``out.shape[i] = shape[axes[i]]``; axes given as ints or one tuple,
        all reversed when none (or None) are given, as in NumPy.

        Raises:
            ValueError: if ``axes`` is not a permutation of ``range(ndim)``.
        """
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(reversed(range(self.ndim))) if not axes else tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of the {self.ndim} dimensions")
        return self.as_strided([self.shape[d] for d in axes], [self.strides[d] for d in axes])

    @property
    def T(self):
        return self.transpose()

    def reshape(self, *shape):
        """The same elements, row-major, in another shape (one size may be -1). A view, so the
        array must be contiguous (copy it first otherwise, as the Tensor layer does).

        Raises:
            ValueError: the array is not contiguous, or the element counts differ.
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = [operator.index(s) for s in shape]
        if shape.count(-1) == 1:
            known = _product(s for s in shape if s != -1)
            shape[shape.index(-1)] = self.size // known if known else 0
        if _product(shape) != self.size or any(s < 0 for s in shape):
            raise ValueError(f"cannot reshape a DeviceArray of shape {self.shape} into {tuple(shape)}")
        if not self.c_contiguous:
            raise ValueError(f"reshape needs a contiguous array (shape {self.shape}, strides {self.strides}); "
                             f"copy it first")
        shape = tuple(shape)
        # A fresh row-major layout of the same elements: contiguous and of self.size by construction,
        # so the header is made here rather than by as_strided, which would count both again (a
        # training step reshapes about ten times, and on a launch-bound step host time is the cost).
        return DeviceArray(self.owner, self.ptr, shape, contiguous_strides(shape, self.dtype.itemsize)[0],
                           self.dtype, self.size, True, self.device_id)

    def __getitem__(self, key):
        """Basic indexing: ints, slices (any step), ``None`` (a new dimension of size 1) and one
        ``...``. Returns a view; an int removes its dimension.

        Raises:
            IndexError: an int out of range, too many indices, or any other kind of index.
        """
        if type(key) is slice and self.ndim:
            # x[a:b], the commonest key (a DataLoader's batch, a sequence's prefix): the general
            # walk below gives the same view in about twice the host time
            n, st = self.shape[0], self.strides[0]
            start, stop, step = key.indices(n)
            rows = len(range(start, stop, step))
            return self.as_strided((rows,) + self.shape[1:], (st * step,) + self.strides[1:],
                                   start * st if rows else 0)
        key = key if isinstance(key, tuple) else (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(k is not None and k is not Ellipsis for k in key)
        if used > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, but {used} were indexed")
        if Ellipsis in key:
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - used) + key[at + 1:]
        else:
            key = key + (slice(None),) * (self.ndim - used)
        shape, strides, offset, d = [], [], 0, 0
        for k in key:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            n, st = self.shape[d], self.strides[d]
            if isinstance(k, slice):
                start, _, step = k.indices(n)
                shape.append(len(range(*k.indices(n))))
                strides.append(st * step)
                offset += start * st if shape[-1] else 0
            else:
                try:
                    i = operator.index(k)
                except TypeError:
                    raise IndexError(f"DeviceArray indices must be ints, slices, None or ..., got {type(k).__name__}") from None
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                offset += (i % n) * st
            d += 1
        return self.as_strided(shape, strides, offset)

    # ---- leaving the GPU and meeting other libraries ---------------------------------------------
    def get(self):
        """A host copy as a ``numpy.ndarray`` (waits for the GPU): :func:`to_numpy`."""
        return to_numpy(self)

    @property
    def __cuda_array_interface__(self):
        """The CUDA Array Interface (v3): CuPy, PyTorch and Numba can view this memory without
        copying, e.g. ``cupy.asarray(a)``. https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html"""
        stream = _current_stream(self.device_id).ptr
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None if self.c_contiguous else self.strides,
                "stream": stream or 1}         # 1 names the legacy default stream (0 is not allowed)


def as_strided(a, shape, strides):
    """``a.as_strided(shape, strides)``: the backend function the Tensor layer's views call."""
    return a.as_strided(shape, strides)


def _product(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


@functools.lru_cache(maxsize=4096)
def contiguous_strides(shape, itemsize):
    """(byte strides, element count) of a fresh row-major array: the last dimension steps one
    item, each earlier one steps the whole block after it. Cached: loops repeat shapes.

    Raises:
        ValueError: a negative size.
    """
    # >>> exercise 01.1: row-major strides
    # hint: walk the dimensions from the last one: it steps one item; each earlier one steps the whole block after it
    # hint: a dimension of size 0 still gets a stride (use max(n, 1) for the step after it)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides)), _product(shape)
    # <<< exercise


def is_c_contiguous(shape, strides, itemsize):
    """True when ``strides`` walk ``shape`` in row-major order with no gaps. Dimensions of size 1
    may have any stride (they are never stepped); an empty array is contiguous."""
    # >>> exercise 01.2: is a layout contiguous?
    # hint: compare each stride, from the innermost dimension out, with the stride a fresh array would have
    # hint: dimensions of size 1 are never stepped: any stride is fine there; an empty array is contiguous
    step = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if st != step:
                return False
            step *= n
    return True
    # <<< exercise


def empty(shape, dtype, device_id):
    """A new contiguous DeviceArray of ``shape`` (a tuple of ints) and ``dtype`` (a ``numpy.dtype``
    instance such as ``np.dtype(np.float32)``, not the scalar type ``np.float32``) on GPU
    ``device_id``, memory from the caching allocator, elements uninitialised.

    Raises:
        ValueError: a negative size.
        cupy.cuda.memory.OutOfMemoryError: the GPU is full.
    """
    strides, size = contiguous_strides(shape, dtype.itemsize)
    stream = _current_stream(device_id).ptr
    block = memory.pool(device_id, cp).malloc(size * dtype.itemsize, stream)
    return DeviceArray(block, block.ptr, shape, strides, dtype, size, True, device_id)


def from_numpy(array, device_id):
    """Copy a host array to a new contiguous DeviceArray (cudaMemcpyAsync host-to-device on the
    current stream; from pageable memory the call returns once the bytes are staged)."""
    # >>> exercise 01.4: host-to-device copy
    # hint: make the host array C-contiguous first (np.asarray(array, order='C')), then allocate with empty()
    # hint: _runtime.memcpyAsync(dst, src, nbytes, _runtime.memcpyHostToDevice, stream) copies; skip it for 0 bytes
    host = np.asarray(array, order="C")      # (np.ascontiguousarray would make a 0-d array 1-d)
    out = empty(host.shape, host.dtype, device_id)
    if host.nbytes:
        _runtime.memcpyAsync(out.ptr, host.ctypes.data, host.nbytes, _runtime.memcpyHostToDevice,
                             _current_stream(device_id).ptr)
    return out
    # <<< exercise


def to_numpy(a):
    """Copy a contiguous DeviceArray to a new host array: cudaMemcpyAsync device-to-host on the
    current stream, then wait for that stream (the host needs the bytes now).

    Raises:
        ValueError: for a non-contiguous view (the Tensor layer copies views compactly first).
    """
    # >>> exercise 01.5: device-to-host copy
    # hint: allocate the host array with np.empty, copy with memcpyAsync(..., _runtime.memcpyDeviceToHost, stream)
    # hint: the copy is asynchronous: wait for the stream (_runtime.streamSynchronize) before returning
    if not a.c_contiguous:
        raise ValueError(f"to_numpy needs a contiguous array (shape {a.shape}, strides {a.strides})")
    host = np.empty(a.shape, dtype=a.dtype)
    if host.nbytes:
        stream = _current_stream(a.device_id).ptr
        _runtime.memcpyAsync(host.ctypes.data, a.ptr, host.nbytes, _runtime.memcpyDeviceToHost, stream)
        _runtime.streamSynchronize(stream)
    return host
    # <<< exercise


def from_cuda_array(obj):
    """Wrap any object with ``__cuda_array_interface__`` (a CuPy array, a PyTorch cuda tensor)
    as a DeviceArray over the same memory, without copying; ``obj`` is kept alive as the owner.
    The interface's ``stream`` is not waited on: the producer's work must already be ordered
    before our kernels (the same stream - CuPy, PyTorch and we all default to the legacy default
    stream - or a synchronize first).

    Raises:
        TypeError: if ``obj`` has no CUDA Array Interface or a dtype we have no kernels for.
    """
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"expected an object with __cuda_array_interface__ (CuPy array, cuda tensor), "
                        f"got {type(obj).__name__}") from None
    dtype = np.dtype(cai["typestr"])
    kernels = (np.float32, np.float64, np.int64, np.bool_)
    if dtype not in kernels:
        raise TypeError(f"from_cuda_array: dtype {dtype} has no kernels; expected float32, float64, int64 or bool")
    shape = tuple(cai["shape"])
    ptr = cai["data"][0]
    strides = tuple(cai["strides"]) if cai.get("strides") else contiguous_strides(shape, dtype.itemsize)[0]
    device_id = _runtime.pointerGetAttributes(ptr).device if ptr else _runtime.getDevice()
    return DeviceArray(obj, ptr, shape, strides, dtype, _product(shape),
                       is_c_contiguous(shape, strides, dtype.itemsize), device_id)


