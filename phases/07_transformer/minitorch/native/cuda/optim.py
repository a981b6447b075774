# GENERATED from minitorch/native/cuda/optim.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Optimizer updates on ``DeviceArray``s with ``minitorch/cuda/sgd.cu``: the cuda twin of
cpu.py's ``sgd_step``, fused into one kernel that reads and writes each parameter once."""
import numpy as np

from .elementwise import contiguous
from .launch import kernel, launch_stride

_NAMES = {np.dtype(np.float32): "sgd_step_f32", np.dtype(np.float64): "sgd_step_f64"}
# float16/bfloat16 parameters (and buffers, of the parameter's dtype): updated in float32, rounded
# once on store; the scalars go to these kernels as C floats (sgd.cu, sgd_step_half)
from .launch import SUFFIX  # noqa: E402

_HALF_STEP = {dt: f"sgd_step_{s}" for dt, s in SUFFIX.items() if s in ("f16", "bf16")}
_NAMES.update(_HALF_STEP)


def sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first_step):
    """One SGD update in place on ``param`` (and ``buf``), as ``torch.optim.SGD`` computes it:

        g = -grad if maximize else grad;  g += weight_decay * param
        buf = g (first step) or momentum * buf + (1 - dampening) * g;  g = g + momentum * buf if nesterov else buf
        param -= lr * g

    ``param`` contiguous float32/float64; ``grad`` (and ``buf``, ``None`` when momentum is 0) of
    the same shape and dtype. Bit-for-bit the cpu backend's result (see sgd.cu). Returns None.

    Raises:
        TypeError: dtype other than float32/float64, or mismatched dtypes.
        ValueError: non-contiguous param or buf, shapes that differ, momentum without a buffer.
    """
    name = _NAMES.get(param.dtype)
    if name is None or grad.dtype != param.dtype or (buf is not None and buf.dtype != param.dtype):
        raise TypeError(f"cuda sgd_step takes float32 or float64 param, grad and buf of one dtype, "
                        f"got {param.dtype}, {grad.dtype}, {None if buf is None else buf.dtype}")
    if grad.shape != param.shape or (buf is not None and buf.shape != param.shape):
        raise ValueError("sgd_step: param, grad and buf must have one shape")
    if not param.c_contiguous or (buf is not None and not buf.c_contiguous):
        raise ValueError("sgd_step updates param and buf in place: they must be contiguous")
    use_momentum = bool(momentum)
    if use_momentum and buf is None:
        raise ValueError("sgd_step: momentum != 0 needs a momentum buffer")
    if not grad.c_contiguous:
        grad = contiguous(grad)
    T = param.dtype.type
    if param.dtype in _HALF_STEP:
        T = np.float32       # the half kernels compute in float and take float scalars
    idx = param.device_id
    n = param.size
    launch_stride(kernel("sgd.cu", name, idx), n, 1, idx,
                  (param, grad, buf if use_momentum else None, n,
                   T(lr), T(momentum), T(1 - dampening), T(weight_decay),
                   np.bool_(bool(weight_decay)), np.bool_(use_momentum), np.bool_(bool(nesterov)),
                   np.bool_(bool(maximize)), np.bool_(bool(first_step))))
