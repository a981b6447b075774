# GENERATED from minitorch/optim/optimizer.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in ``torch.optim``."""
from ..nn.parameter import zero_grads
import copy  # noqa: E402

from .. import native  # noqa: E402
from ..autograd import enable_grad  # noqa: E402
from ..creation import tensor  # noqa: E402
from ..dtypes import float32  # noqa: E402
from ..tensor import Tensor  # noqa: E402


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
        if isinstance(group["params"], Tensor):        # one tensor: a group of one, as in PyTorch
            group["params"] = [group["params"]]
        group["params"] = list(group["params"])
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]) or len({id(p) for p in group["params"]}) < len(group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self):
        raise NotImplementedError
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
        # "step": our optimizers count in a Python int (see _buckets); saved as PyTorch saves it
        state = {index[id(p)]: {k: tensor(float(v), dtype=float32) if k == "step" else v for k, v in s.items()}
                 for p, s in self.state.items()}
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

    # ---- what step() of the fused optimizers shares ----------------------------------------------------
    def _buckets(self, group, init):
        """The parameters of ``group`` that have a gradient, in lists that one fused update can take:
        one list per (device, dtype, step count), usually just one. Each parameter's state is made
        on first use with ``init(p)`` (a dict) plus "step": 0, and its step count is incremented.

        Yields (backend, step, params, grads, states): raw arrays for params and grads, state dicts.
        Raises TypeError for a gradient whose dtype or device is not its parameter's."""
        buckets = {}
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.grad.dtype is not p.dtype or p.grad.device != p.device:
                raise TypeError(f"{type(self).__name__}: a parameter of {p.dtype} on {p.device} has a gradient of "
                                f"{p.grad.dtype} on {p.grad.device}; they must match")
            state = self.state.get(p)
            if not state:
                state = self.state[p] = dict(init(p), step=0)
            state["step"] += 1
            p._version += 1     # written in place: a graph that saved p can no longer backward
            bucket = buckets.setdefault((p.device, p.dtype, state["step"]), ([], [], []))
            bucket[0].append(p._data)
            bucket[1].append(p.grad._data)
            bucket[2].append(state)
        for (device, _, step), (params, grads, states) in buckets.items():
            yield native.get(device), step, params, grads, states


def _state_value(key, value, param):
    """A saved state entry as this optimizer keeps it: a tensor is copied (never shared with the
    state dict) to ``param``'s device, and to its dtype when both are floating, except ``step``."""
    if key == "step":                   # a 0-d tensor (PyTorch's, or ours) -> the int our optimizers count in
        return int(round(float(value.item() if isinstance(value, Tensor) else value)))
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    dtype = param.dtype if value.dtype.is_floating_point and param.dtype.is_floating_point \
        else value.dtype
    return value.detach().to(device=param.device, dtype=dtype).clone()


def _check(name, value, low=0.0, high=None):
    """PyTorch's ValueError for a hyper-parameter outside [low, high)."""
    if not low <= value or (high is not None and not value < high):
        raise ValueError(f"Invalid {name}: {value}")


def _closure_loss(closure):
    """step(closure)'s loss: the closure re-evaluates the model with gradients on (None: no closure)."""
    if closure is None:
        return None
    with enable_grad():
        return closure()
