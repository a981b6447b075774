# GENERATED from minitorch/tensor.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 01
"""``minitorch.Tensor``: an N-dimensional array of one dtype on one device.

A tensor is a thin handle around a raw array, ``_data``: a ``numpy.ndarray`` on ``cpu`` or our
``DeviceArray`` (minitorch/cuda/array.py: a pointer into device memory plus shape and strides) on
``cuda``. The raw array owns the memory; when the last tensor using it dies, the memory goes back
to the allocator (on ``cuda``, our caching allocator, minitorch/cuda/memory.py).
Everything a tensor computes goes through its device's backend (``minitorch/native``).
"""
import math

import numpy as np

from . import native
from . import dtypes as _dtypes
from .autograd import grad_mode as _grad_mode
from .device import CPU, as_device, device as Device
from .broadcast import broadcast_shape
from .dtypes import FROM_NUMPY, as_dtype


def _wrap_dim(dim, n):
    """``dim`` as an index in ``range(n)`` (negative counts from the end), with PyTorch's error
    when out of range."""
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _unpack_ints(args):
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` alike: the ints as one sequence."""
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints like ``minitorch.Size([2, 3])``."""

    def __repr__(self):
        return f"minitorch.Size({list(self)})"

    def numel(self):
        return math.prod(self)


class Tensor:
    """An N-d array with PyTorch's names.

    Build one with the factories (``minitorch.tensor``, ``zeros``, ``randn``...), not directly:
    ``Tensor(data, device)`` wraps an existing raw array without copying it.

    Attributes:
        requires_grad (bool): whether autograd records ops on this tensor (phase 03).
    """

    def __init__(self, data, device=CPU, requires_grad=False):
        self._data = data
        self._device = device
        self.requires_grad = requires_grad

    # ---- what a tensor is -------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape, or the length of dimension ``dim`` (negative counts from the end)."""
        return self.shape if dim is None else self._data.shape[self._dim(dim)]

    @property
    def dtype(self):
        # derived from the raw array, so it is never stale; one dict lookup (it is read on every op)
        return FROM_NUMPY[self._data.dtype]

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        """Number of elements: the product of the shape (1 for a zero-dimensional tensor)."""
        return int(self._data.size)

    def element_size(self):
        """Bytes per element."""
        return self._data.itemsize

    def stride(self, dim=None):
        """Elements to step in memory to move one index along each dimension (PyTorch's unit)."""
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[self._dim(dim)]

    def is_contiguous(self):
        """True when elements lie in row-major order with no gaps (strides of a fresh tensor)."""
        return bool(self._data.flags.c_contiguous)

    def data_ptr(self):
        """Address of the first element: a host address on cpu, a device address on cuda."""
        return self._data.ctypes.data if self._device.type == "cpu" else self._data.ptr

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def _dim(self, dim):
        """Normalise a possibly negative dimension index, with PyTorch's error when out of range."""
        return _wrap_dim(dim, max(self.ndim, 1))

    @property
    def _backend(self):
        return native.get(self._device)

    # ---- moving between devices and dtypes ---------------------------------------------------
    def to(self, *args, device=None, dtype=None):
        """Copy to another device and/or dtype; returns ``self`` when nothing changes.

        Accepts ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)`` and the
        keywords ``device=`` and ``dtype=``, like ``torch.Tensor.to``.
        """
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, Device, int)):
                device = a
            else:
                dtype = a
        device = self._device if device is None else as_device(device)
        dtype = self.dtype if dtype is None else as_dtype(dtype)
        out = self
        if dtype is not self.dtype:
            out = out._cast(dtype)
        if device != self._device:
            if out.requires_grad:           # record the move: the gradient goes back to this device
                from .ops.elementwise import ToDevice
                return ToDevice.apply(out, device)
            out = Tensor(native.get(device).from_numpy(out._host_array(), device.index), device)
        return out

    def _cast(self, dtype):
        from .ops.elementwise import Cast
        return Cast.apply(self, dtype)
        if self._device.type == "cpu":
            return Tensor(self._data.astype(dtype.numpy), self._device)
        raise NotImplementedError("dtype conversion of cuda tensors needs the cast kernel of phase 02")

    def _host_array(self):
        """The elements as a NumPy array (a device-to-host copy for cuda tensors)."""
        if not self.is_contiguous():                  # copy views compactly first, with our kernel
            return self._backend.to_numpy(self._backend.contiguous(self._data))
        return self._backend.to_numpy(self._data)

    def cpu(self):
        return self.to(CPU)

    def cuda(self, device=None):
        return self.to(Device("cuda", device) if isinstance(device, int) else (device or "cuda"))

    def numpy(self):
        """The NumPy array behind a cpu tensor (shared memory, like PyTorch).

        Raises:
            TypeError: for a cuda tensor; call ``.cpu()`` first.
        """
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def item(self):
        """The value of a one-element tensor as a Python number (waits for the GPU on cuda).

        Raises:
            RuntimeError: if the tensor has more than one element.
        """
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._host_array().item()

    def tolist(self):
        return self._host_array().tolist()

    def fill_(self, value):
        """Set every element to ``value`` in place (our fill kernel on cuda); returns ``self``."""
        if not self.is_contiguous() or self.requires_grad and _grad_mode._enabled:   # a view, or a recorded write
            from .creation import full
            return self._write_("fill_", lambda _: full((), value, dtype=self.dtype, device=self._device))
        if self.requires_grad and _grad_mode._enabled:
            self._check_inplace("fill_")            # raises: autograd cannot follow this write
        self._version += 1                          # what _check_inplace does otherwise, without the call
        if not self.is_contiguous():
            raise NotImplementedError("fill_ on a non-contiguous view is not supported yet")
        self._backend.fill_(self._data, value)
        return self

    # ---- printing ----------------------------------------------------------------------------
    def __repr__(self):
        values = self._host_array()
        if values.dtype in _dtypes.HALF_NUMPY:
            values = values.astype(np.float32)    # exact; NumPy formats bfloat16 (kind 'V') poorly
        body = _format(values, indent=len("tensor("))
        extras = []
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self.dtype.name not in ("float32", "int64", "bool") or values.size == 0:
            extras.append(f"dtype={self.dtype}")
        extras += self._repr_autograd()
        return "tensor(" + ", ".join([body] + extras) + ")"

    def _repr_autograd(self):
        if self.grad_fn is not None:
            return [f"grad_fn=<{self.grad_fn.name()}>"]
        return ["requires_grad=True"] if self.requires_grad else []

    # ---- arithmetic: each operator is one op in minitorch/ops -----------------------------------
    def __add__(self, other):
        return ops.add(self, other)

    def __radd__(self, other):
        return ops.add(other, self)

    def __sub__(self, other):
        return ops.sub(self, other)

    def __rsub__(self, other):
        return ops.sub(other, self)

    def __mul__(self, other):
        return ops.mul(self, other)

    def __rmul__(self, other):
        return ops.mul(other, self)

    def __truediv__(self, other):
        return ops.div(self, other)

    def __rtruediv__(self, other):
        return ops.div(other, self)

    def __pow__(self, other):
        return ops.pow(self, other)

    def __rpow__(self, other):
        return ops.pow(other, self)

    def __matmul__(self, other):
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        return ops.matmul(other, self)

    def __neg__(self):
        return ops.neg(self)

    def __eq__(self, other):
        return ops.compare("eq", self, other)

    def __ne__(self, other):
        return ops.compare("ne", self, other)

    def __lt__(self, other):
        return ops.compare("lt", self, other)

    def __le__(self, other):
        return ops.compare("le", self, other)

    def __gt__(self, other):
        return ops.compare("gt", self, other)

    def __ge__(self, other):
        return ops.compare("ge", self, other)

    __hash__ = object.__hash__        # defining __eq__ would otherwise make tensors unhashable

    def add(self, other):
        return ops.add(self, other)

    def sub(self, other):
        return ops.sub(self, other)

    def mul(self, other):
        return ops.mul(self, other)

    def div(self, other):
        return ops.div(self, other)

    def pow(self, exponent):
        return ops.pow(self, exponent)

    def matmul(self, other):
        return ops.matmul(self, other)

    def maximum(self, other):
        return ops.maximum(self, other)

    def minimum(self, other):
        return ops.minimum(self, other)

    def neg(self):
        return ops.neg(self)

    def exp(self):
        return ops.exp(self)

    def log(self):
        return ops.log(self)

    def sqrt(self):
        return ops.sqrt(self)

    def abs(self):
        return ops.abs(self)

    def tanh(self):
        return ops.tanh(self)

    def sigmoid(self):
        return ops.sigmoid(self)

    def relu(self):
        return ops.relu(self)

    def eq(self, other):
        return ops.compare("eq", self, other)

    def ne(self, other):
        return ops.compare("ne", self, other)

    def lt(self, other):
        return ops.compare("lt", self, other)

    def le(self, other):
        return ops.compare("le", self, other)

    def gt(self, other):
        return ops.compare("gt", self, other)

    def ge(self, other):
        return ops.compare("ge", self, other)

    # ---- dtype shorthands --------------------------------------------------------------------
    def float(self):
        return self.to(dtype=_dtypes.float32)

    def double(self):
        return self.to(dtype=_dtypes.float64)

    def long(self):
        return self.to(dtype=_dtypes.int64)

    def bool(self):
        return self.to(dtype=_dtypes.bool)

    # ---- shape: views where possible ---------------------------------------------------------
    @property
    def T(self):
        """All dimensions reversed (the transpose, for a matrix): a view."""
        return ops.permute(self, *reversed(range(self.ndim)))

    def transpose(self, dim0, dim1):
        return ops.transpose(self, dim0, dim1)

    def t(self):
        """Transpose of a tensor of at most 2 dimensions (a view)."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but got {self.ndim}")
        return self.T

    def permute(self, *dims):
        return ops.permute(self, *dims)

    def reshape(self, *shape):
        return ops.reshape(self, *shape)

    def view(self, *shape):
        return ops.view(self, *shape)

    def expand(self, *shape):
        return ops.expand(self, *shape)

    def contiguous(self):
        """Self when already row-major, else a compact copy (our strided-copy kernel on cuda)."""
        return ops.contiguous(self)

    def clone(self):
        """A compact copy in new memory (differentiable: the gradient passes through)."""
        return ops.clone(self)

    def unsqueeze(self, dim):
        return ops.unsqueeze(self, dim)

    def squeeze(self, dim=None):
        return ops.squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return ops.flatten(self, start_dim, end_dim)

    # ---- more math, %, //, logic, special values (see minitorch/ops/elementwise.py) ----------------
    def __mod__(self, other):
        return ops.remainder(self, other)

    def __rmod__(self, other):
        return ops.remainder(other, self)

    def __floordiv__(self, other):
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return ops.floor_divide(other, self)

    def remainder(self, other):
        return ops.remainder(self, other)

    def floor_divide(self, other):
        return ops.floor_divide(self, other)

    def clamp(self, min=None, max=None):
        return ops.clamp(self, min, max)

    def clip(self, min=None, max=None):
        return ops.clamp(self, min, max)

    def sin(self):
        return ops.sin(self)

    def cos(self):
        return ops.cos(self)

    def erf(self):
        return ops.erf(self)

    def rsqrt(self):
        return ops.rsqrt(self)

    def log1p(self):
        return ops.log1p(self)

    def expm1(self):
        return ops.expm1(self)

    def sign(self):
        return ops.sign(self)

    def floor(self):
        return ops.floor(self)

    def ceil(self):
        return ops.ceil(self)

    def round(self, *, decimals=0):
        return ops.round(self, decimals=decimals)

    def logical_and(self, other):
        return ops.logical_and(self, other)

    def logical_or(self, other):
        return ops.logical_or(self, other)

    def logical_xor(self, other):
        return ops.logical_xor(self, other)

    def logical_not(self):
        return ops.logical_not(self)

    def isnan(self):
        return ops.isnan(self)

    def isinf(self):
        return ops.isinf(self)

    def isfinite(self):
        return ops.isfinite(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return ops.nan_to_num(self, nan, posinf, neginf)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return ops.allclose(self, other, rtol, atol, equal_nan)

    def masked_fill(self, mask, value):
        """A copy with ``value`` where the bool ``mask`` is true (see :func:`minitorch.ops.elementwise.masked_fill`)."""
        return ops.masked_fill(self, mask, value)

    def type_as(self, other):
        """This tensor converted to ``other``'s dtype (``self`` when it has it already)."""
        return self.to(dtype=other.dtype)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` filled with ``fill_value``, of self's dtype and device unless given."""
        from .creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self._device,
                    requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of ``size`` (``new_zeros(2, 3)`` or ``new_zeros((2, 3))``), self's dtype and device unless given."""
        from .creation import _shape
        return self.new_full(_shape(size), 0, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of ``size``, self's dtype and device unless given."""
        from .creation import _shape
        return self.new_full(_shape(size), 1, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A new tensor holding a copy of ``data``, of self's dtype and device unless given (so
        ``int_tensor.new_tensor([1.5])`` holds 1, as in PyTorch)."""
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    # ---- autograd --------------------------------------------------------------------------
    grad = None        # the gradient accumulated by backward(), a Tensor of the same shape
    grad_fn = None     # the recorded op that made this tensor (None for leaves)
    _version = 0       # bumped by every in-place write; backward checks the tensors ops saved

    def _check_inplace(self, op):
        """Before ``op`` writes into this tensor: refuse what autograd cannot follow, then bump the
        version counter, so a backward that saved this tensor earlier raises instead of silently
        using the new values (PyTorch's rule).

        Raises:
            RuntimeError: on a leaf that requires grad while grad mode is on (PyTorch's error; do
                it inside ``minitorch.no_grad()``), or on a non-leaf that requires grad (in-place
                ops are not recorded yet: use the out-of-place op).
        """
        if self.requires_grad and _grad_mode._enabled:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            raise RuntimeError(f"{op}: in-place operations on a tensor that is part of a graph are not "
                               f"recorded by autograd yet; use the out-of-place op (or .detach() first)")
        self._version += 1

    @property
    def is_leaf(self):
        """True for tensors the user made (not results of recorded ops): their .grad is kept."""
        return self.grad_fn is None

    def requires_grad_(self, requires_grad=True):
        """Ask autograd to record ops on this leaf tensor; returns ``self``.

        Raises:
            RuntimeError: turning it off on a non-leaf tensor (use ``.detach()``), or turning it on
                for integer/bool dtypes.
        """
        if not self.is_leaf:
            if requires_grad:
                return self                 # a non-leaf that requires grad already: nothing to do
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                               "a computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(f"only floating point tensors can require gradients, got {self.dtype}")
        self.requires_grad = requires_grad
        return self

    def detach(self):
        """The same data (shared memory) with no graph behind it and requires_grad False."""
        return Tensor(self._data, self._device)

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Compute d(self)/d(leaf) for every leaf that requires grad and add it to ``leaf.grad``.

        ``gradient`` (same shape as self) is required unless self has one element.
        The graph is freed afterwards unless ``retain_graph`` (which defaults to ``create_graph``).
        """
        from .autograd.engine import backward
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)

    def zero_(self):
        """Set every element to zero in place; returns ``self``."""
        return self.fill_(0)

    def sum(self, dim=None, keepdim=False):
        return ops.sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return ops.mean(self, dim, keepdim)

    # ---- .data, hooks, retain_grad ----------------------------------------------------------------
    _hooks = None      # a leaf's {handle id: (None, fn)}; a computed tensor's hooks live on its grad_fn
    _output_nr = None  # which output of its grad_fn this is, for a Function with several outputs

    @property
    def data(self):
        """The same memory as a new tensor outside autograd (no graph, requires_grad False).
        In-place writes through it escape the version checks of backward (in PyTorch too, where
        ``detach()`` would share the version counter): prefer ``detach()`` in new code."""
        return Tensor(self._data, self._device)

    @data.setter
    def data(self, value):
        """``t.data = other`` makes ``t`` use ``other``'s memory (shape, dtype, device), keeping
        ``t``'s identity, grad and autograd flags (what ``Module.to`` does to parameters)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data, self._device = value._data, value._device

    def register_hook(self, hook):
        """Call ``hook(grad)`` each time backward computes this tensor's full gradient; if it
        returns a tensor, that replaces the gradient passed on (and kept in ``.grad``). Returns a
        handle whose ``remove()`` unregisters it.

        Raises:
            RuntimeError: if this tensor does not require grad.
        """
        from .autograd.hooks import RemovableHandle
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = {}
            hooks = self._hooks
        else:
            if self.grad_fn.hooks is None:
                self.grad_fn.hooks = {}
            hooks = self.grad_fn.hooks
        handle = RemovableHandle(hooks)
        hooks[handle.id] = (self._output_nr, hook)
        return handle

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward (leaves always do).

        Raises:
            RuntimeError: if this tensor does not require grad.
        """
        import weakref
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:          # weak: the graph must not keep the tensor alive
            if self.grad_fn.retained is None:
                self.grad_fn.retained = {}
            self.grad_fn.retained[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        node = self.grad_fn
        return bool(node is not None and node.retained and self._output_nr in node.retained)

    # ---- max/min, argmax/argmin, var/std ------------------------------------------------------
    def max(self, dim=None, keepdim=False):
        """The maximum, or ``(values, indices)`` along ``dim`` (see :func:`minitorch.ops.reduce.max`)."""
        return ops.max(self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        """The minimum, or ``(values, indices)`` along ``dim`` (see :func:`minitorch.ops.reduce.min`)."""
        return ops.min(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        """int64 index of the first maximum along ``dim`` (over all elements when None)."""
        return ops.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        """int64 index of the first minimum along ``dim`` (over all elements when None)."""
        return ops.argmin(self, dim, keepdim)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """Variance over ``dim`` (``correction=1``: unbiased); see :func:`minitorch.ops.reduce.var`."""
        return ops.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """Standard deviation over ``dim``; see :func:`minitorch.ops.reduce.var`."""
        return ops.std(self, dim, unbiased, keepdim, correction=correction)

    # ---- more reductions, scans, sorting, counting (minitorch/ops/reduce.py, ops/sorting.py) ----------
    def all(self, dim=None, keepdim=False):
        """bool: every element over ``dim`` non-zero (see :func:`minitorch.ops.reduce.all`)."""
        return ops.all(self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        """bool: some element over ``dim`` non-zero (see :func:`minitorch.ops.reduce.any`)."""
        return ops.any(self, dim, keepdim)

    def count_nonzero(self, dim=None):
        """int64 count of non-zero elements over ``dim``."""
        return ops.count_nonzero(self, dim)

    def prod(self, dim=None, keepdim=False):
        """Product over ``dim`` (see :func:`minitorch.ops.reduce.prod`)."""
        return ops.prod(self, dim, keepdim)

    def amax(self, dim=(), keepdim=False):
        """Maximum over ``dim`` (all dims when empty), values only."""
        return ops.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        """Minimum over ``dim`` (all dims when empty), values only."""
        return ops.amin(self, dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        """``log(sum(exp(x)))`` over ``dim`` without overflow."""
        return ops.logsumexp(self, dim, keepdim)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """Vector norm over ``dim`` (see :func:`minitorch.ops.reduce.norm`)."""
        return ops.norm(self, p, dim, keepdim, dtype)

    def cumsum(self, dim, *, dtype=None):
        """Running sums along ``dim``."""
        return ops.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim, *, dtype=None):
        """Running products along ``dim``."""
        return ops.cumprod(self, dim, dtype=dtype)

    def sort(self, dim=-1, descending=False, stable=False):
        """``(values, indices)`` sorted along ``dim`` (stable; NaN largest)."""
        return ops.sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        """int64 positions that sort along ``dim``."""
        return ops.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """``(values, indices)`` of the k largest (or smallest) along ``dim``."""
        return ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """``(values, indices)`` of the k-th smallest along ``dim``."""
        return ops.kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim=False):
        """Lower median over all elements, or ``(values, indices)`` along ``dim``."""
        return ops.median(self, dim, keepdim)

    def mode(self, dim=-1, keepdim=False):
        """``(values, indices)`` of the most frequent value along ``dim``."""
        return ops.mode(self, dim, keepdim)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """Distinct elements, ascending (see :func:`minitorch.ops.sorting.unique`)."""
        return ops.unique(self, sorted, return_inverse, return_counts, dim)

    def bincount(self, weights=None, minlength=0):
        """Counts of each value of a 1-d non-negative int64 tensor."""
        return ops.bincount(self, weights, minlength)

    def histc(self, bins=100, min=0, max=0):
        """Histogram in ``bins`` equal bins over [min, max]."""
        return ops.histc(self, bins, min, max)

    # ---- indexing (see minitorch/ops/indexing.py) -------------------------------------------------
    def __getitem__(self, key):
        """``x[key]``: a view for ints, slices, None, ``...``; a gathered copy for index tensors and
        bool masks (a mask waits for the GPU: the count of true elements sizes the result)."""
        return ops.getitem(self, key)

    def __setitem__(self, key, value):
        """``x[key] = value`` in place: basic keys, index tensors, and bool masks of x's shape.
        Recorded by autograd when x (not a leaf) or value requires grad (minitorch/ops/inplace.py)."""
        if _grad_mode._enabled and (self.requires_grad or getattr(value, "requires_grad", False)):
            self._write_("setitem", lambda old: ops.inplace.SetItem.apply(old, value, key))
        else:
            ops.setitem(self, key, value)

    def index_select(self, dim, index):
        return ops.index_select(self, dim, index)

    def index_add(self, dim, index, source, alpha=1):
        return ops.index_add(self, dim, index, source, alpha)

    def nonzero(self, as_tuple=False):
        return ops.nonzero(self, as_tuple)

    # ---- in place: the result is computed out of place, then written into this tensor's memory
    # by the strided copy (backend.copy_), so views of this tensor see it. Recorded by autograd
    # when this tensor (not a leaf) or an operand requires grad: see minitorch/ops/inplace.py.
    def _write_(self, op, compute, cast_any=False):
        """Write the tensor ``compute(old)`` returns (broadcast to self's shape, converted to self's
        dtype and device) into self; returns ``self``. ``old`` is self's value before the write:
        self itself, or, when autograd records the write, a copy carrying self's history, since
        the ops ``compute`` runs may save it for their backward. (A function, so that nothing is
        computed when the write is refused.)

        Raises:
            RuntimeError: see ``_before_write``; the value does not broadcast to self's shape;
                its dtype cannot be cast to self's (float into an integer tensor, unless
                ``cast_any`` as for ``copy_``); self repeats memory cells (an expanded view).
        """
        old = self._before_write(op) if self.requires_grad and _grad_mode._enabled else self
        value = compute(old)
        if old is self and value.requires_grad and _grad_mode._enabled:
            old = self._before_write(op)            # an operand brought a graph: compute again, from a copy
            value = compute(old)
        dst = self._data
        if dst.size and any(st == 0 and n > 1 for n, st in zip(dst.shape, dst.strides)):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        pad = self.ndim - value.ndim
        if pad < 0 or any(s not in (1, n) for s, n in zip(value.shape, self.shape[pad:])):
            raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(_broadcast_shape(self.shape, value.shape))}")
        if value.dtype is not self.dtype:
            if not cast_any and _kind(value.dtype) > _kind(self.dtype):
                raise RuntimeError(f"{op}: result type {value.dtype.name} can't be cast to the desired output type "
                                   f"{self.dtype.name}")
        if old is not self and (value.grad_fn is None or value.shape != self.shape or value.dtype is not self.dtype
                                or value.device != self._device):
            value = ops.inplace.Overwrite.apply(old, value)     # one node of self's shape, dtype, device
        if old is not self and self._view_of is not None:
            return self._write_through_base(value)
        value = value.to(self._device, self.dtype)
        self._version += 1                          # a backward that saved self raises rather than use new values
        src = value._data
        (d0, d1), (s0, s1) = ops.indexing._extent(dst), ops.indexing._extent(src)
        if d0 < s1 and s0 < d1:                     # the source reads memory being written: copy it first
            src = self._backend.contiguous(src)
        self._backend.copy_(dst, src)
        if old is not self and value.requires_grad:     # self now holds value: it continues value's history
            self.requires_grad, self.grad_fn, self._output_nr = True, value.grad_fn, value._output_nr
            self._rewritten = True
        return self

    _rewritten = False  # set once a recorded write moved this tensor onto a new node
    _view_of = None     # (base, key) when this tensor is the view base[key] of basic indexing (ops.getitem)
    _view_version = 0   # base's version when this view's history was last taken from it
    _split_output = None    # k when this tensor is piece k of split/chunk (ops.rearrange.Split)

    _own_version = 0    # the version counter of a tensor that is not such a view

    @property
    def _version(self):     # noqa: F811 - replaces phase 03's counter: a view shares its base's, as in PyTorch
        """Bumped by every in-place write. A view ``base[key]`` shares base's counter, so a write
        through either one makes a backward that saved the other raise."""
        return self._own_version if self._view_of is None else self._view_of[0]._version

    @_version.setter
    def _version(self, value):
        if self._view_of is None:
            self._own_version = value
        else:
            self._view_of[0]._version = value

    def _write_through_base(self, value):
        """Record a write into the view ``base[key]`` as ``base[key] = value`` (PyTorch's
        CopySlices): base moves onto the new node (the shared version moves on), then this view
        reads base[key] again."""
        base, key = self._view_of
        base[key] = value
        self._refresh_view()
        return self

    def _refresh_view(self):
        """Take this view's history from its base again: ``base[key]`` of base's current node
        (base was written in place since; ops recording this view as an input call this)."""
        base, key = self._view_of
        view = base[key]
        self.requires_grad, self.grad_fn, self._output_nr = view.requires_grad, view.grad_fn, view._output_nr
        self._view_version = base._version

    def _before_write(self, op):
        """A copy of self (new memory) with self's history, for a write autograd records.

        Raises:
            RuntimeError: self is a leaf that requires grad (PyTorch's error: write inside
                ``minitorch.no_grad()``), or a view of a tensor autograd records.
        """
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if self._split_output is not None:      # PyTorch refuses it too: one node made all the pieces
            raise RuntimeError(f"Output {self._split_output} of SplitBackward is a view and is being modified inplace. "
                               "This view is the output of a function that returns multiple views. Such functions "
                               "do not allow the output views to be modified inplace. You should replace the "
                               "inplace operation by an out-of-place one.")
        if self._view_of is not None:
            base = self._view_of[0]
            if base.requires_grad and base.grad_fn is None and self.grad_fn is not None:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
        elif self.grad_fn is not None and not self._rewritten:  # (a rewritten tensor's node may read self's memory)
            self._check_not_a_view(op)
        old = ops.clone(self.detach())
        old.requires_grad, old.grad_fn, old._output_nr = self.requires_grad, self.grad_fn, self._output_nr
        return old

    def _check_not_a_view(self, op):
        """Refuse to record a write into a view, other than one of basic indexing, of a tensor that
        requires grad: this tensor shares memory with an input of its op. (PyTorch records it and
        moves the base tensor onto a new node too; only ``base[key]`` views know their base here,
        so another view's base would miss the write.)

        Raises:
            RuntimeError: PyTorch's message for a view of a leaf; ours, naming the way out, otherwise.
        """
        start, end = ops.indexing._extent(self._data)
        for inp in self.grad_fn.inputs:
            if inp is None or inp.device != self._device or start == end:
                continue
            s0, s1 = ops.indexing._extent(inp._data)
            if start < s1 and s0 < end:
                if inp.grad_fn is None:
                    raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                                       "in-place operation.")
                raise RuntimeError(f"{op}: this tensor is a view of another tensor that requires grad; writing into "
                                   f"a view other than y[key] is not recorded by autograd here: write into y[key] or "
                                   f"into that tensor itself, or clone() the view first")

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (a tensor broadcasting to self's shape, any dtype or device) into self."""
        return self._write_("copy_", lambda old: src, cast_any=True)

    def add_(self, other, *, alpha=1):
        """``self += alpha * other`` in place (``other``: a tensor broadcasting to self, or a number)."""
        return self._write_("add_", lambda old: ops.add(old, other if alpha == 1 else other * alpha))

    def sub_(self, other, *, alpha=1):
        """``self -= alpha * other`` in place."""
        return self._write_("sub_", lambda old: ops.sub(old, other if alpha == 1 else other * alpha))

    def mul_(self, other):
        """``self *= other`` in place."""
        return self._write_("mul_", lambda old: ops.mul(old, other))

    def div_(self, other):
        """``self /= other`` in place (true division: an integer tensor raises, as in PyTorch)."""
        return self._write_("div_", lambda old: ops.div(old, other))

    def clamp_(self, min=None, max=None):
        """Limit every element to ``[min, max]`` in place (either bound may be None; NaN stays NaN).

        Raises:
            RuntimeError: when both bounds are None.
        """
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")

        def clamped(old):
            value = old
            if min is not None:
                value = ops.where(value < min, min, value)
            if max is not None:
                value = ops.where(value > max, max, value)
            return value
        return self._write_("clamp_", clamped)

    def masked_fill_(self, mask, value):
        """Set the elements where bool ``mask`` (broadcasting to self) is true to ``value`` in place.

        Raises:
            RuntimeError: if ``mask`` is not a bool tensor, or ``value`` a tensor of more than 0 dims.
        """
        if not isinstance(mask, Tensor) or mask.dtype is not _dtypes.bool:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                               f"{mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__}")
        if isinstance(value, Tensor) and value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        # the fill value is converted to self's dtype, whatever its kind (2.7 fills an int64 tensor with 2)
        return self._write_("masked_fill_", lambda old: ops.where(mask.to(self._device), value, old), cast_any=True)

    # ---- cutting, reordering, repeating; gather and scatter (ops/rearrange.py, ops/scatter.py) ------
    def split(self, split_size, dim=0):
        """Views of consecutive pieces along ``dim`` (see :func:`minitorch.ops.rearrange.split`)."""
        return ops.split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return ops.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        return ops.unbind(self, dim)

    def narrow(self, dim, start, length):
        return ops.narrow(self, dim, start, length)

    def movedim(self, source, destination):
        return ops.movedim(self, source, destination)

    moveaxis = movedim

    @property
    def mT(self):
        """The last two dimensions swapped (a view): the transpose of each matrix of a batch.

        Raises:
            RuntimeError: fewer than 2 dimensions.
        """
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return ops.transpose(self, -2, -1)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return ops.diagonal(self, offset, dim1, dim2)

    def flip(self, *dims):
        return ops.flip(self, _unpack_ints(dims))

    def roll(self, shifts, dims=None):
        return ops.roll(self, shifts, dims)

    def repeat(self, *sizes):
        """A copy repeated ``sizes[k]`` times along dim k (see :func:`minitorch.ops.rearrange.repeat`)."""
        return ops.repeat(self, *sizes)

    def tile(self, *dims):
        return ops.tile(self, _unpack_ints(dims))

    def tril(self, diagonal=0):
        return ops.tril(self, diagonal)

    def triu(self, diagonal=0):
        return ops.triu(self, diagonal)

    def gather(self, dim, index):
        return ops.gather(self, dim, index)

    def take_along_dim(self, indices, dim=None):
        return ops.take_along_dim(self, indices, dim)

    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        return ops.scatter(self, dim, index, src, value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        return ops.scatter_add(self, dim, index, src)

    def index_put(self, indices, values, accumulate=False):
        return ops.index_put(self, indices, values, accumulate)

    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        """In place: :func:`minitorch.ops.scatter.scatter` written into self (not recorded by autograd)."""
        return self._write_("scatter_", lambda old: ops.scatter(old, dim, index, src, value, reduce=reduce))

    def scatter_add_(self, dim, index, src):
        """In place: ``scatter_add`` written into self (atomicAdd on cuda: repeated indices add up
        in no fixed order, so float results may vary in the last bits)."""
        return self._write_("scatter_add_", lambda old: ops.scatter_add(old, dim, index, src))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        """In place: :func:`minitorch.ops.scatter.scatter_reduce` written into self."""
        return self._write_("scatter_reduce_",
                            lambda old: ops.scatter_reduce(old, dim, index, src, reduce, include_self=include_self))

    def index_put_(self, indices, values, accumulate=False):
        """In place: ``self[indices] = values`` (``+=`` with ``accumulate``; see
        :func:`minitorch.ops.scatter.index_put`)."""
        return self._write_("index_put_", lambda old: ops.index_put(old, indices, values, accumulate))
    # in place twins of the elementwise ops of minitorch/ops/elementwise.py (issue 13)
    def clip_(self, min=None, max=None):
        return self.clamp_(min, max)

    def sin_(self):
        return self._write_("sin_", lambda old: ops.sin(old))

    def cos_(self):
        return self._write_("cos_", lambda old: ops.cos(old))

    def erf_(self):
        return self._write_("erf_", lambda old: ops.erf(old))

    def rsqrt_(self):
        return self._write_("rsqrt_", lambda old: ops.rsqrt(old))

    def log1p_(self):
        return self._write_("log1p_", lambda old: ops.log1p(old))

    def expm1_(self):
        return self._write_("expm1_", lambda old: ops.expm1(old))

    def sign_(self):
        return self._write_("sign_", lambda old: ops.sign(old))

    def floor_(self):
        return self._write_("floor_", lambda old: ops.floor(old))

    def ceil_(self):
        return self._write_("ceil_", lambda old: ops.ceil(old))

    def round_(self, *, decimals=0):
        return self._write_("round_", lambda old: ops.round(old, decimals=decimals))

    def remainder_(self, other):
        return self._write_("remainder_", lambda old: ops.remainder(old, other))

    def floor_divide_(self, other):
        return self._write_("floor_divide_", lambda old: ops.floor_divide(old, other))

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return self._write_("nan_to_num_", lambda old: ops.nan_to_num(old, nan, posinf, neginf))

    def logical_not_(self):
        return self._write_("logical_not_", lambda old: ops.logical_not(old))

    def logical_and_(self, other):
        return self._write_("logical_and_", lambda old: ops.logical_and(old, other))

    def logical_or_(self, other):
        return self._write_("logical_or_", lambda old: ops.logical_or(old, other))

    def logical_xor_(self, other):
        return self._write_("logical_xor_", lambda old: ops.logical_xor(old, other))

    def bmm(self, mat2):
        """Batched matrix product of 3-D tensors (see :func:`minitorch.ops.matmul.bmm`)."""
        return ops.bmm(self, mat2)

    # ---- softmax ---------------------------------------------------------------------------------
    def softmax(self, dim, dtype=None):
        """Softmax along ``dim`` (see :func:`minitorch.ops.softmax.softmax`)."""
        return ops.softmax(self, dim, dtype)

    def log_softmax(self, dim, dtype=None):
        """Log-softmax along ``dim``, computed stably (see :func:`minitorch.ops.softmax.log_softmax`)."""
        return ops.log_softmax(self, dim, dtype)

    def half(self):
        """float16 copy (``self`` when already float16); differentiable, the gradient casts back."""
        return self.to(dtype=_dtypes.float16)

    def bfloat16(self):
        """bfloat16 copy (``self`` when already bfloat16); differentiable, the gradient casts back."""
        return self.to(dtype=_dtypes.bfloat16)

    # ---- random numbers in place: drawn straight into this tensor's memory (cuRAND on cuda) ------
    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        """Fill with U(from_, to) draws in place; returns ``self``. ``generator``: a
        ``minitorch.Generator`` of this device (default: the global generator)."""
        return self._draw_("uniform_", from_, to, generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with N(mean, std^2) draws in place; returns ``self``."""
        return self._draw_("normal_", mean, std, generator)

    def _draw_(self, op, a, b, generator):
        """The backend's in-place draw ``op`` on this contiguous tensor.

        Raises:
            RuntimeError: a non-floating dtype.
            NotImplementedError: a non-contiguous view (phase 04 writes those).
        """
        engine = self._draw_engine(op, generator)
        if not self.is_contiguous():
            raise NotImplementedError(f"{op} on a non-contiguous view is not supported yet")
        getattr(self._backend, op)(self._data, a, b, engine)
        return self

    def _draw_engine(self, op, generator):
        from .random import engine
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{op}: random floats need a floating dtype, got {self.dtype.name}")
        return engine(generator, self._device)

    def _draw_(self, op, a, b, generator):     # noqa: F811 - replaces phase 02's: views, autograd's checks
        """The backend's in-place draw ``op`` on this tensor: straight into its memory when it is
        contiguous, else (a view, or a tensor of a graph: autograd records the write) fresh draws
        written through the strided copy (``_write_``).

        Raises:
            RuntimeError: a non-floating dtype; see ``_check_inplace`` and ``_before_write``.
        """
        engine = self._draw_engine(op, generator)
        if not self.is_contiguous() or self.requires_grad and _grad_mode._enabled:
            from .creation import empty

            def fresh(_):                         # the same draws into a new contiguous tensor
                return getattr(empty(self.shape, dtype=self.dtype, device=self._device), op)(a, b, generator=generator)
            return self._write_(op, fresh)
        self._check_inplace(op)
        getattr(self._backend, op)(self._data, a, b, engine)
        return self

    def bernoulli_(self, p=0.5, *, generator=None):
        """Set each element to 1 with probability ``p`` (a number or a tensor broadcasting to self),
        else 0, in place; returns ``self``."""
        from .creation import rand
        draw_dtype = self.dtype if self.dtype.is_floating_point else _dtypes.float32
        return self._write_("bernoulli_", lambda _: rand(self.shape, generator=generator, dtype=draw_dtype,
                                                       device=self._device) < p, cast_any=True)

    def exponential_(self, lambd=1.0, *, generator=None):
        """Fill with Exp(lambd) draws in place, by the inverse CDF -log(1 - u) / lambd, u ~ U[0, 1)."""
        from .creation import rand
        return self._write_("exponential_", lambda _: -(1 - rand(self.shape, generator=generator, dtype=self.dtype,
                                                              device=self._device)).log() / lambd)

    # Tensor twins of torch.where, torch.multinomial and torch.bernoulli (issue 13's name audit,
    # benchmarks/check_api_gaps.py --names)
    def where(self, condition, y):
        """``minitorch.where(condition, self, y)``: self's element where ``condition`` is true, else y's."""
        return ops.where(condition, self, y)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Category indices drawn from the rows of self (weights): see :func:`minitorch.creation.multinomial`."""
        from .creation import multinomial
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        """0/1 draws, 1 with probability self (or ``p``): see :func:`minitorch.creation.bernoulli`."""
        from .creation import bernoulli
        return bernoulli(self, p, generator=generator)


def _kind(dtype):
    """0 bool, 1 integer, 2 floating: an in-place result may not go to a lower kind (PyTorch's rule)."""
    return 2 if dtype.is_floating_point else 0 if dtype is _dtypes.bool else 1


def _broadcast_shape(a, b):
    try:
        return broadcast_shape(a, b)
    except ValueError:
        return b


def _format(values, indent):
    """Print values as PyTorch does: 4 decimals when any float is fractional, else ``1.``."""
    kind = values.dtype.kind
    options = dict(separator=", ", prefix=" " * indent, threshold=1000, edgeitems=3)
    if kind == "f":
        finite = values[np.isfinite(values)]
        whole = finite.size == 0 or bool(np.all(finite == np.round(finite)))
        big = finite.size > 0 and (np.abs(finite).max() >= 1e8 or (np.abs(finite[finite != 0]).min(initial=1) < 1e-4))
        if big:
            options.update(formatter={"float_kind": lambda x: f"{x:.4e}"})
        elif whole:
            options.update(precision=0, floatmode="fixed")
        else:
            options.update(precision=4, floatmode="fixed")
    return np.array2string(values, **options)


from . import ops  # noqa: E402  (ops import Tensor, so they come after it)
