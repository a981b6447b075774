# GENERATED from minitorch/optim/adam.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Adam and AdamW, as ``torch.optim.Adam``/``torch.optim.AdamW`` define them.

Per parameter p with gradient g, at step t (https://pytorch.org/docs/stable/generated/torch.optim.Adam.html):
g = -g if maximize; weight decay: g += wd * p (Adam) or p *= 1 - lr * wd (AdamW, decoupled);
m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2; v_max = max(v_max, v) if amsgrad;
p -= lr / (1 - beta1^t) * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps).
The bias corrections depend only on t: the host computes them once per step and passes numbers.

On cuda every parameter of a group (of one dtype) is updated by ONE kernel launch
(``native/cuda/multi_tensor.py``), as PyTorch's ``fused=True``: ``foreach``, ``fused``,
``capturable`` and ``differentiable`` are accepted for compatibility and change nothing.
"""
from ..creation import zeros_like
from .optimizer import Optimizer, _check, _closure_loss


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
    decoupled_weight_decay=False). Kingma & Ba, "Adam: A Method for Stochastic Optimization" (2014).

    State per parameter: "step" (int), "exp_avg", "exp_avg_sq" (and "max_exp_avg_sq" with amsgrad),
    tensors of the parameter's shape, dtype and device.

    Raises:
        ValueError: lr, eps or weight_decay < 0, or a beta outside [0, 1).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("beta parameter at index 0", betas[0], 0.0, 1.0)
        _check("beta parameter at index 1", betas[1], 0.0, 1.0)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @staticmethod
    def _init_state(p, amsgrad):
        state = {"exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}
        if amsgrad:
            state["max_exp_avg_sq"] = zeros_like(p)
        return state

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place; returns the closure's loss (or None)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            amsgrad = group["amsgrad"]
            beta1, beta2 = (float(b) for b in group["betas"])
            for backend, step, params, grads, states in self._buckets(group, lambda p: self._init_state(p, amsgrad)):
                backend.adam_step(params, grads, [s["exp_avg"]._data for s in states],
                                  [s["exp_avg_sq"]._data for s in states],
                                  [s["max_exp_avg_sq"]._data for s in states] if amsgrad else None,
                                  step, float(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                                  amsgrad, group["maximize"], group["decoupled_weight_decay"])
        return loss


class AdamW(Adam):
    """AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False, foreach=None, capturable=False, differentiable=False, fused=None): Adam with
    decoupled weight decay, p *= 1 - lr * weight_decay before the update. Loshchilov & Hutter,
    "Decoupled Weight Decay Regularization" (2017).

    Raises:
        ValueError: as Adam.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
