# GENERATED from minitorch/nn/utils/clip_grad.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Gradient clipping, as ``torch.nn.utils.clip_grad_norm_`` and ``clip_grad_value_``.

Clipping by norm rescales ALL gradients together so that their joint norm is at most max_norm
(Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent neural networks", 2013): the
direction of the update is kept, only its length is capped. On cuda the norm is one multi-tensor
reduction launch and the rescale one more (native/cuda/multi_tensor.py); the factor
min(1, max_norm / (norm + 1e-6)) is computed and applied on the GPU, so nothing waits for it.
"""
import math

from ...tensor import Tensor


def _grads(parameters, what):
    """The gradients of ``parameters`` (a tensor or an iterable), made contiguous in place where
    they are not (the kernels write them as flat arrays); all on one device."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    params = [p for p in params if p.grad is not None]
    devices = {p.grad.device for p in params}
    if len(devices) > 1:
        raise RuntimeError(f"{what}: gradients on several devices ({', '.join(sorted(map(str, devices)))}); "
                           f"expected one")
    for p in params:
        if not p.grad.is_contiguous():
            p.grad = p.grad.contiguous()
    return [p.grad for p in params]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their joint ``norm_type``-norm is at
    most ``max_norm``: each is multiplied by min(1, max_norm / (total_norm + 1e-6)).

    Args:
        parameters: a tensor or an iterable of tensors (those without a gradient are skipped).
        max_norm (float), norm_type (float > 0, or inf): the norm of all gradients as one vector.
        error_if_nonfinite: raise when the norm is nan or inf. Checking reads the norm on the host,
            so it waits for the GPU (as in PyTorch); the default does not.
        foreach: accepted for PyTorch compatibility; cuda always uses the multi-tensor kernels.

    Returns:
        The total norm (before clipping) as a 0-d tensor of the first gradient's dtype and device
        (a 0-d float32 cpu tensor of 0 when no parameter has a gradient).

    Raises:
        ValueError: norm_type <= 0. RuntimeError: a non-finite norm with error_if_nonfinite, or
        gradients on several devices.
    """
    norm_type = float(norm_type)
    if not norm_type > 0:
        raise ValueError(f"clip_grad_norm_: norm_type must be > 0 or inf, got {norm_type}")
    grads = _grads(parameters, "clip_grad_norm_")
    if not grads:
        from ...creation import tensor
        return tensor(0.0)
    backend = grads[0]._backend
    arrays = [g._data for g in grads]
    total, coef = backend.grads_norm(arrays, norm_type, float(max_norm))
    total = Tensor(total, grads[0].device)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           f"so it cannot be clipped. To disable this error and scale the gradients by the "
                           f"non-finite norm anyway, set `error_if_nonfinite=False`")
    backend.grads_scale_(arrays, coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value], in place (NaN stays
    NaN). ``foreach`` is accepted and ignored (see clip_grad_norm_). Returns None."""
    grads = _grads(parameters, "clip_grad_value_")
    if grads:
        grads[0]._backend.grads_clamp_([g._data for g in grads], float(clip_value))
