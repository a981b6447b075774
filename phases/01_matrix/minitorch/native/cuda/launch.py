# GENERATED from minitorch/native/cuda/launch.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Launching our kernels: names per dtype, grid sizes, the device's shape.

CuPy is used for memory (allocation, host<->device copies), module loading, streams and cuRAND
only. Every launch goes to CuPy's current stream and nothing here waits for the GPU. Arrays are
our ``DeviceArray``s (minitorch/cuda/array.py): a kernel receives each one as its device address.
"""
import functools

import numpy as np

from ...cuda import cupy_or_raise
from ...cuda.array import DeviceArray
from ...cuda.compiler import kernel

cp = cupy_or_raise()     # importing the cuda backend means cuda was asked for: fail early and clearly

SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",      # kernel names end in these
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}
BLOCK = 256              # threads per block for 1-D kernels: a multiple of the 32-thread warp


def kernel_for(file, op, dtype, index):
    """``op`` specialised for NumPy ``dtype`` on GPU ``index``:
    ``kernel_for('fill.cu', 'fill', np.dtype('float32'), 0)`` is fill_f32."""
    return kernel(file, f"{op}_{SUFFIX[dtype]}", index)


def launch(fn, grid, block, args, shared_mem=0, index=-1):
    """Queue the kernel ``fn`` on CuPy's current stream: ``grid`` (a tuple of 1 to 3 block counts,
    each >= 1) blocks of ``block`` (1 to 3 thread counts) threads, ``shared_mem`` bytes of dynamic
    shared memory per block, ``args`` a tuple of the kernel's arguments (DeviceArrays, NumPy
    scalars of the exact C types). ``index``: the GPU that ``fn`` and the arrays belong to (-1:
    the current one). Returns at once: the GPU runs the kernel later, in stream order.

    Here CuPy's ``RawKernel.__call__`` packs the arguments and launches; phase 02 replaces this
    function with one that packs them itself (see "launching" there), same results.
    """
    with cp.cuda.Device(index if index >= 0 else cp.cuda.runtime.getDevice()):
        fn(grid, block, _as_cupy_args(args), shared_mem=shared_mem)


def _as_cupy_args(args):
    """RawKernel's arguments: a kernel's ``float* x`` parameter is 8 bytes holding an address, so a
    DeviceArray is passed as its address, a 64-bit unsigned NumPy scalar."""
    return tuple(np.uint64(a.ptr) if type(a) is DeviceArray else a for a in args)


def launch_1d(fn, n, index, args):
    """Run ``fn`` on GPU ``index`` with one thread per element: ceil(n / BLOCK) blocks of BLOCK threads."""
    if n > 0:
        launch(fn, ((n + BLOCK - 1) // BLOCK,), (BLOCK,), args, 0, index)


@functools.lru_cache(maxsize=None)
def sm_count(index):
    """Number of streaming multiprocessors: sizes grids that stride over large inputs."""
    return cp.cuda.runtime.getDeviceProperties(index)["multiProcessorCount"]
