# GENERATED from minitorch/native/cuda/creation.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Creating device arrays: allocate, fill, copy between host and device, draw random numbers.

Arrays are our ``DeviceArray``s with memory from our caching allocator (minitorch/cuda/array.py,
memory.py). Only :func:`to_numpy` waits for the GPU: a device-to-host copy must.
"""
import math

import numpy as np

from ... import random
from ...cuda import array
from .launch import cp, kernel_for, launch_1d
from ... import dtypes as _dtypes

HALF = _dtypes.HALF_NUMPY


def empty(shape, dtype, index=0):
    """An uninitialised contiguous array of ``shape`` and minitorch ``dtype`` on GPU ``index``."""
    return array.empty(tuple(shape), dtype.numpy, index)


def fill_(x, value):
    """Set every element of a contiguous array to ``value`` with the fill kernel."""
    n = x.size
    value = x.dtype.type(value)
    if x.dtype in HALF:
        value = np.float64(value)          # fill_f16/fill_bf16 take a double and round it once
    launch_1d(kernel_for("fill.cu", "fill", x.dtype, x.device_id), n, x.device_id, (x, value, n))
    return x


def full(shape, value, dtype, index=0):
    return fill_(empty(shape, dtype, index), value)


def arange(start, step, n, dtype, index=0):
    out = empty((n,), dtype, index)
    launch_1d(kernel_for("fill.cu", "arange", out.dtype, index), n, index,
              (out, np.float64(start), np.float64(step), n))
    return out


def from_numpy(host, index=0):
    """Copy a host array to a new device array (cudaMemcpy host-to-device)."""
    return array.from_numpy(np.asarray(host), index)


def to_numpy(x):
    """Copy a contiguous device array to a new host array (cudaMemcpy device-to-host; waits for the GPU)."""
    return array.to_numpy(x)


# cuRAND draws the random numbers; one generator per GPU, created on first use.
_generators = {}


def _curand(index, generator=None):
    """This GPU's cuRAND generator, reseeded after ``manual_seed`` (or ``generator``, the cuRAND
    handle of a ``minitorch.Generator``, when given), set to the current stream.
    Call with GPU ``index`` current (cuRAND works on the current device)."""
    if generator is not None:
        cp.cuda.curand.setStream(generator, cp.cuda.get_current_stream().ptr)
        return generator
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
    if dtype.numpy in HALF:                # cuRAND's float (0, 1], flipped and rounded by uniform_f16/bf16
        u = empty(shape, _dtypes.float32, index)
        out = empty(shape, dtype, index)
        with cp.cuda.Device(index):
            handle = _curand(index, generator)
            if u.size:
                cp.cuda.curand.generateUniform(handle, u.ptr, u.size)
        launch_1d(kernel_for("fill.cu", "uniform", out.dtype, index), out.size, index, (u, out, out.size))
        return out
    out = empty(shape, dtype, index)
    with cp.cuda.Device(index):
        handle = _curand(index, generator)
        draw = cp.cuda.curand.generateUniform if dtype.name == "float32" else cp.cuda.curand.generateUniformDouble
        if out.size:
            draw(handle, out.ptr, out.size)
    launch_1d(kernel_for("fill.cu", "one_minus", out.dtype, index), out.size, index, (out, out.size))
    return out


def randn(shape, dtype, generator=None, index=0):
    """Standard normal from cuRAND (which fills an even count: we draw one spare if needed)."""
    if dtype.numpy in HALF:                # float32 draws, rounded by the cast kernel
        from .elementwise import cast
        return cast(randn(shape, _dtypes.float32, generator, index), dtype)
    n = math.prod(shape)
    buf = empty((n + n % 2,), dtype, index)
    with cp.cuda.Device(index):
        handle = _curand(index, generator)
        draw = cp.cuda.curand.generateNormal if dtype.name == "float32" else cp.cuda.curand.generateNormalDouble
        if buf.size:
            draw(handle, buf.ptr, buf.size, 0.0, 1.0)
    return buf[:n].reshape(tuple(shape))
