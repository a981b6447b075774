# phase: 03
"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in ``torch.optim``."""
from ..nn.parameter import zero_grads
# >>> phase 05
import copy  # noqa: E402

from ..tensor import Tensor  # noqa: E402
# <<< phase 05


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
    # >>> phase 05
    def state_dict(self):
        """The optimizer's state in PyTorch's format, for checkpoints (``minitorch.save``)::

            {"state": {index: {"momentum_buffer": tensor, ...}, ...},
             "param_groups": [{"lr": 0.1, ..., "params": [index, ...]}, ...]}

        Parameters are numbered 0, 1, ... in the order of the groups, so the dict holds none of
        the model's tensors; the state tensors are the optimizer's own (not copies).
        """
        index = {}                                    # id(parameter) -> its number
        groups = []
        for group in self.param_groups:
            numbers = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": numbers})
        state = {index[id(p)]: dict(s) for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore what :meth:`state_dict` gave, onto this optimizer's parameters (matched by
        position). State tensors are copied to their parameter's device, and floating ones to its
        dtype (except ``"step"``, as PyTorch does), so training resumes where it stopped.

        Raises:
            ValueError: a different number of param groups, or a group of a different size.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups: "
                             f"{len(saved_groups)} saved, the optimizer has {len(self.param_groups)}")
        by_number = {}
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group: group {i} has {len(saved['params'])} saved parameters, "
                                 f"the optimizer has {len(group['params'])}")
            by_number.update(zip(saved["params"], group["params"]))
        self.state = {}
        for number, saved in state_dict["state"].items():
            p = by_number[int(number)]
            self.state[p] = {key: _state_value(key, value, p) for key, value in saved.items()}
        self.param_groups = [{**copy.deepcopy({k: v for k, v in saved.items() if k != "params"}),
                              "params": group["params"]}
                             for group, saved in zip(self.param_groups, saved_groups)]


def _state_value(key, value, param):
    """A saved state entry as this optimizer keeps it: a tensor is copied (never shared with the
    state dict) to ``param``'s device, and to its dtype when both are floating, except ``step``."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    dtype = param.dtype if key != "step" and value.dtype.is_floating_point and param.dtype.is_floating_point \
        else value.dtype
    return value.detach().to(device=param.device, dtype=dtype).clone()
# <<< phase 05
