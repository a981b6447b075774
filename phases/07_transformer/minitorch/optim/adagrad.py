# GENERATED from minitorch/optim/adagrad.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Adagrad, as ``torch.optim.Adagrad`` defines it.

Per parameter p with gradient g at step t (https://pytorch.org/docs/stable/generated/torch.optim.Adagrad.html):
g = -g if maximize; g += wd * p; s += g^2; p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps).
On cuda one kernel launch updates every parameter of a group (see adam.py).
"""
from ..creation import full_like
from .optimizer import Optimizer, _check, _closure_loss


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
    foreach=None, *, maximize=False, differentiable=False, fused=None). Duchi, Hazan & Singer,
    "Adaptive Subgradient Methods for Online Learning and Stochastic Optimization", JMLR 2011.

    State per parameter: "step", "sum" (starts at initial_accumulator_value). PyTorch makes the
    state in the constructor; we make it at a parameter's first update (the same numbers).

    Raises:
        ValueError: lr, lr_decay, weight_decay, initial_accumulator_value or eps < 0.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place; returns the closure's loss (or None)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            init = lambda p: {"sum": full_like(p, group["initial_accumulator_value"])}   # noqa: E731
            for backend, step, params, grads, states in self._buckets(group, init):
                backend.adagrad_step(params, grads, [s["sum"]._data for s in states], step, float(group["lr"]),
                                     group["lr_decay"], group["eps"], group["weight_decay"], group["maximize"])
        return loss
