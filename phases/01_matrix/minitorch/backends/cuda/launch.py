# GENERATED from minitorch/backends/cuda/launch.py by tools/sync_phases.py (phase 01 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Launching our kernels: names per dtype, grid sizes, the device's shape.

CuPy is used for memory (allocation, host<->device copies), module loading, streams and cuRAND
only. Every launch goes to CuPy's current stream and nothing here waits for the GPU.
"""
import functools

from ...cuda import cupy_or_raise
from ...cuda.compiler import kernel

cp = cupy_or_raise()     # importing the cuda backend means cuda was asked for: fail early and clearly

SUFFIX = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "bool"}
BLOCK = 256              # threads per block for 1-D kernels: a multiple of the 32-thread warp


def kernel_for(file, op, dtype):
    """``op`` specialised for ``dtype``: ``kernel_for('fill.cu', 'fill', float32)`` -> fill_f32."""
    return kernel(file, f"{op}_{SUFFIX[dtype.name]}")


def launch(fn, grid, block, args, shared_mem=0):
    """Queue the kernel ``fn`` on CuPy's current stream: ``grid`` (a tuple of 1 to 3 block counts,
    each >= 1) blocks of ``block`` (1 to 3 thread counts) threads, ``shared_mem`` bytes of dynamic
    shared memory per block, ``args`` a tuple of the kernel's arguments (device arrays, NumPy
    scalars of the exact C types). Returns at once: the GPU runs the kernel later, in stream order.

    Here CuPy's ``RawKernel.__call__`` converts the arguments and launches; phase 02 replaces this
    function with one that packs the arguments itself (see "launching" there), same results.
    """
    fn(grid, block, args, shared_mem=shared_mem)


def launch_1d(fn, n, *args):
    """Run ``fn`` with one thread per element: ceil(n / BLOCK) blocks of BLOCK threads."""
    if n > 0:
        launch(fn, ((n + BLOCK - 1) // BLOCK,), (BLOCK,), args)


@functools.lru_cache(maxsize=None)
def sm_count(index):
    """Number of streaming multiprocessors: sizes grids that stride over large inputs."""
    return cp.cuda.runtime.getDeviceProperties(index)["multiProcessorCount"]
