# GENERATED from minitorch/autograd/gradcheck.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``gradcheck``: compare autograd's gradients with central finite differences in float64.

For a random weighting ``v`` of the outputs, L = sum(v * fn(inputs)). Autograd gives dL/dx for
every input element at once; the finite difference (L(x + eps) - L(x - eps)) / (2 eps) estimates
each one separately (error O(eps^2)). They must agree to ``atol + rtol * |numeric|``.
"""
import numpy as np


class GradcheckError(AssertionError):
    """Autograd and finite differences disagree; the message names the worst element."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0):
    """Check ``fn``'s gradients with respect to every input that requires grad.

    Args:
        fn: maps the input tensors to one output tensor.
        inputs: tensors (float64 recommended; others are converted); those with
            ``requires_grad`` are checked. Any device.
    Returns:
        True, or raises :class:`GradcheckError` naming the input, the worst element's index,
        the analytic and numeric values and the error.
    """
    from ..creation import tensor
    from ..dtypes import float64
    inputs = [x.detach().to(dtype=float64).requires_grad_(x.requires_grad) for x in inputs]
    out = fn(*inputs)
    v = tensor(np.random.default_rng(seed).standard_normal(tuple(out.shape)), dtype=float64, device=out.device)
    (out * v).sum().backward()

    def loss_at(i, values):
        args = list(inputs)
        args[i] = tensor(values, dtype=float64, device=inputs[i].device)
        return float((fn(*args).detach() * v).sum().item())

    for i, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        analytic = np.zeros(tuple(x.shape)) if x.grad is None else x.grad.cpu().numpy()
        base = x.detach().cpu().numpy().copy()
        # >>> exercise 03.6: gradient checking
        # hint: for every element: numeric = (loss_at(x + eps) - loss_at(x - eps)) / (2 eps), changing one element of base
        # hint: put the element back afterwards
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            keep = base[idx]
            base[idx] = keep + eps
            up = loss_at(i, base)
            base[idx] = keep - eps
            down = loss_at(i, base)
            base[idx] = keep
            numeric[idx] = (up - down) / (2 * eps)
        # <<< exercise
        err = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
        if err.size and err.max() > 0:
            worst = np.unravel_index(np.argmax(err), err.shape)
            raise GradcheckError(
                f"gradcheck: input {i} (shape {tuple(x.shape)}), element {tuple(int(j) for j in worst)}: "
                f"autograd {analytic[worst]:.8g} vs finite difference {numeric[worst]:.8g} "
                f"(|diff| {abs(analytic[worst] - numeric[worst]):.3g} > atol {atol} + rtol {rtol} * |numeric|)")
    return True
