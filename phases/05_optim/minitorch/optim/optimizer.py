# GENERATED from minitorch/optim/optimizer.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in ``torch.optim``."""
from ..nn.parameter import zero_grads


class Optimizer:
    """Base class. ``params`` is an iterable of tensors, or of dicts (parameter groups) each with
    a ``"params"`` list and optional per-group options overriding ``defaults``.

    Raises:
        ValueError: for an empty parameter list.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}                  # parameter -> its state (e.g. momentum buffer)
        self.param_groups = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        for group in (params if isinstance(params[0], dict) else [{"params": params}]):
            self.add_param_group(group)

    def add_param_group(self, group):
        group = dict(group)
        group["params"] = list(group["params"])
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self):
        raise NotImplementedError
