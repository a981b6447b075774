# GENERATED from minitorch/backends/cuda/creation.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Creating device arrays: allocate, fill, copy between host and device, draw random numbers.

Only :func:`to_numpy` waits for the GPU: a device-to-host copy must.
"""
import numpy as np

from ... import random
from ...dtypes import from_numpy_dtype
from .launch import cp, kernel_for, launch_1d


def empty(shape, dtype, index=0):
    with cp.cuda.Device(index):
        return cp.empty(shape, dtype=dtype.numpy)


def fill_(x, value):
    """Set every element of a contiguous array to ``value`` with the fill kernel."""
    dtype = from_numpy_dtype(x.dtype)
    with x.device:
        launch_1d(kernel_for("fill.cu", "fill", dtype), x.size, x, dtype.numpy.type(value), np.int64(x.size))
    return x


def full(shape, value, dtype, index=0):
    return fill_(empty(shape, dtype, index), value)


def arange(start, step, n, dtype, index=0):
    out = empty((n,), dtype, index)
    with out.device:
        launch_1d(kernel_for("fill.cu", "arange", dtype), n, out, np.float64(start), np.float64(step), np.int64(n))
    return out


def from_numpy(array, index=0):
    """Copy host memory to a new device array (cudaMemcpy host-to-device)."""
    with cp.cuda.Device(index):
        return cp.asarray(np.asarray(array, order="C"))     # (ascontiguousarray would make 0-d 1-d)


def to_numpy(x):
    """Copy device memory to a new host array (cudaMemcpy device-to-host; waits for the GPU)."""
    return x.get()


# cuRAND draws the random numbers; one generator per GPU, created on first use.
_generators = {}


def _curand(index):
    gen = _generators.get(index)
    if gen is None or gen[1] != random.seed_epoch():
        curand = cp.cuda.curand
        handle = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
        curand.setPseudoRandomGeneratorSeed(handle, random.initial_seed())
        gen = _generators[index] = (handle, random.seed_epoch())
    cp.cuda.curand.setStream(gen[0], cp.cuda.get_current_stream().ptr)
    return gen[0]


def rand(shape, dtype, generator=None, index=0):
    """Uniform on [0, 1): cuRAND's (0, 1] flipped by the one_minus kernel."""
    out = empty(shape, dtype, index)
    with out.device:
        handle = _curand(index)
        draw = cp.cuda.curand.generateUniform if dtype.name == "float32" else cp.cuda.curand.generateUniformDouble
        if out.size:
            draw(handle, out.data.ptr, out.size)
        launch_1d(kernel_for("fill.cu", "one_minus", dtype), out.size, out, np.int64(out.size))
    return out


def randn(shape, dtype, generator=None, index=0):
    """Standard normal from cuRAND (which fills an even count: we draw one spare if needed)."""
    n = int(np.prod(shape, dtype=np.int64))
    buf = empty((n + n % 2,), dtype, index)
    with buf.device:
        handle = _curand(index)
        draw = cp.cuda.curand.generateNormal if dtype.name == "float32" else cp.cuda.curand.generateNormalDouble
        if buf.size:
            draw(handle, buf.data.ptr, buf.size, 0.0, 1.0)
    return buf[:n].reshape(shape)
