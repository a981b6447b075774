# GENERATED from minitorch/native/cuda/half.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 05
"""float16 and bfloat16 through the float32 kernels: max/min, var/std, softmax and the losses.

Their answer must be the float32 one rounded once (PyTorch accumulates half in float32), so
:func:`in_float32` runs a float32 kernel on a float32 copy made by our cast kernel (copy.cu) and
rounds the floating outputs back with it. It costs one extra pass over the input (2 bytes read,
4 written, per element) before the reduction reads 4 bytes: a kernel that loads half and
accumulates in float directly would read 2 (sum has such kernels: reduce.cu, sum_blocks_f16).
Autocast (a later phase) runs softmax and the losses in float32 anyway; this keeps softmax.cu's
register-cached and shared-memory variants to one type each.
"""
import functools

import numpy as np

from ...cuda.array import DeviceArray
from ...dtypes import HALF_NUMPY
from .elementwise import cast

_F32 = np.dtype(np.float32)


_HALF_SET = frozenset(HALF_NUMPY)


def in_float32(fn, at=0):
    """``fn`` (a cuda backend function on DeviceArrays) for float16/bfloat16 inputs: their float32
    copies go in, float32 outputs come back rounded to the dtype of ``args[at]`` (the array whose
    dtype decides; one set lookup, so float32 calls pay ~0.1 us). Other inputs (int64 targets and
    indices) and outputs (int64 indices) pass through."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        half = args[at].dtype
        if half not in _HALF_SET:
            return fn(*args, **kwargs)
        out = fn(*(cast(x, _F32) if type(x) is DeviceArray and x.dtype in _HALF_SET else x for x in args),
                 **kwargs)
        back = (lambda y: cast(y, half) if type(y) is DeviceArray and y.dtype == _F32 else y)
        return tuple(back(y) for y in out) if isinstance(out, tuple) else back(out)
    return wrapper
