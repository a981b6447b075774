# GENERATED from minitorch/optim/sgd.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Stochastic gradient descent with momentum, as ``torch.optim.SGD`` defines it.

Per parameter p with gradient g (https://pytorch.org/docs/stable/generated/torch.optim.SGD.html):
g += weight_decay * p; b = momentum * b + (1 - dampening) * g (b = g on the first step);
g = g + momentum * b if nesterov else b; p -= lr * g. On cuda all of it is one fused kernel
(``sgd.cu``): one read of p, g and b and one write of p and b, however many options are on.
"""
from ..creation import empty_like
from .optimizer import Optimizer
from .. import native  # noqa: E402
from .optimizer import _closure_loss  # noqa: E402


class SGD(Optimizer):
    """SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False).

    Raises:
        ValueError: for a negative lr, momentum or weight_decay, or nesterov without momentum.
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0, got {lr}, {momentum}, {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    def step(self):
        """Update every parameter that has a gradient, in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state.setdefault(p, {})
                first = "momentum_buffer" not in state
                if group["momentum"] and first:
                    state["momentum_buffer"] = empty_like(p)
                buf = state.get("momentum_buffer")
                p._version += 1     # written in place: a graph that saved p can no longer backward
                p._backend.sgd_step(p._data, p.grad._data, None if buf is None else buf._data,
                                    group["lr"], group["momentum"], group["dampening"],
                                    group["weight_decay"], group["nesterov"], group["maximize"], first)

    def step(self, closure=None):  # noqa: F811 - replaces phase 03's step: one backend call per group
        """Update every parameter that has a gradient, in place: the parameters of a group (of one
        device and dtype) in one ``sgd_step_list`` call, on cuda ONE kernel launch for all of them
        (native/cuda/multi_tensor.py), the same arithmetic as the per-parameter sgd_step. Returns
        the closure's loss (or None)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            momentum = group["momentum"]
            lists = {}        # (device, dtype, first step) -> (params, grads, buffers)
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state.setdefault(p, {})
                first = "momentum_buffer" not in state
                if momentum and first:
                    state["momentum_buffer"] = empty_like(p)      # the kernel writes buf = g on the first step
                p._version += 1
                key = (p._device, p.dtype, first)
                found = lists.get(key)    # (setdefault would build three empty lists for every parameter)
                if found is None:
                    found = lists[key] = ([], [], [])
                params, grads, bufs = found
                params.append(p._data)
                grads.append(grad._data)
                bufs.append(state["momentum_buffer"]._data if momentum else None)
            for (device, _, first), (params, grads, bufs) in lists.items():
                native.get(device).sgd_step_list(params, grads, bufs if momentum else None, float(group["lr"]), momentum,
                                                 group["dampening"], group["weight_decay"], group["nesterov"],
                                                 group["maximize"], first)
        return loss
