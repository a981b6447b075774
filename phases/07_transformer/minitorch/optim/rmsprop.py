# GENERATED from minitorch/optim/rmsprop.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""RMSprop, as ``torch.optim.RMSprop`` defines it.

Per parameter p with gradient g (https://pytorch.org/docs/stable/generated/torch.optim.RMSprop.html):
g = -g if maximize; g += wd * p; v = alpha * v + (1 - alpha) * g^2;
centered: a = alpha * a + (1 - alpha) * g and the denominator is sqrt(v - a^2) + eps, else sqrt(v) + eps;
momentum: b = momentum * b + g / denominator, p -= lr * b; without: p -= lr * g / denominator.
On cuda one kernel launch updates every parameter of a group (see adam.py).
"""
from ..creation import zeros_like
from .optimizer import Optimizer, _check, _closure_loss


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
    capturable=False, foreach=None, maximize=False, differentiable=False). Hinton, Lecture 6e of
    "Neural Networks for Machine Learning" (2012); centered: Graves (2013), arXiv:1308.0850.

    State per parameter: "step", "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered).

    Raises:
        ValueError: lr, eps, momentum, weight_decay or alpha < 0.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        _check("alpha value", alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        state = {"square_avg": zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)
        return state

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place; returns the closure's loss (or None)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            momentum, centered = group["momentum"], group["centered"]
            for backend, _, params, grads, states in self._buckets(group, lambda p: self._init_state(p, group)):
                backend.rmsprop_step(params, grads, [s["square_avg"]._data for s in states],
                                     [s["grad_avg"]._data for s in states] if centered else None,
                                     [s["momentum_buffer"]._data for s in states] if momentum > 0 else None,
                                     float(group["lr"]), group["alpha"], group["eps"], group["weight_decay"],
                                     momentum, centered, group["maximize"])
        return loss
