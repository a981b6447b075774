"""The cuda backend with CuPy arrays in and out, for the GPU tests.

Tests build inputs, views (``.T``, ``[::2]``, ``cupy.broadcast_to``) and references with CuPy.
``import cupy_backend as gpu`` gives the functions of ``minitorch.native.cuda`` under the same
names; each call hands the backend DeviceArrays over the same memory and strides
(``from_cuda_array``: no copy), and returns the backend's DeviceArrays as CuPy arrays over the same
memory (``cupy.asarray`` through the CUDA Array Interface: no copy either). In-place functions
write through to the caller's CuPy arrays.
"""
import cupy as cp

from minitorch.native import cuda as _backend
from minitorch.cuda.array import DeviceArray, from_cuda_array


def _in(x):
    return from_cuda_array(x) if isinstance(x, cp.ndarray) else x


def _out(x):
    if isinstance(x, DeviceArray):
        return cp.asarray(x)
    if isinstance(x, tuple):
        return tuple(_out(v) for v in x)
    return x


def __getattr__(name):
    attr = getattr(_backend, name)
    if not callable(attr):
        return attr

    def call(*args, **kwargs):
        return _out(attr(*map(_in, args), **{k: _in(v) for k, v in kwargs.items()}))
    call.__name__ = name
    return call
