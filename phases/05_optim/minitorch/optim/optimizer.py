# GENERATED from minitorch/optim/optimizer.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in ``torch.optim``."""
from ..nn.parameter import zero_grads
from .. import native
from ..autograd import enable_grad
from ..creation import tensor
from ..dtypes import float32
from ..tensor import Tensor


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

    # ---- saving and resuming (PyTorch's state_dict format) -----------------------------------------
    # {"state": {index: {"step": 0-d tensor, "exp_avg": tensor, ...}},
    #  "param_groups": [{"lr": ..., "betas": ..., ..., "params": [index, ...]}, ...]}
    # Parameters are named by their position across the groups (0, 1, ... in group order), so a
    # state_dict loads into a new optimizer over a model of the same architecture. Our state keeps
    # "step" as a Python int (the host computes the bias corrections from it); the state_dict holds
    # it as a float32 0-d tensor, as PyTorch's does.
    def state_dict(self):
        """The optimizer's state and hyper-parameters, in torch.optim's format (state tensors are
        shared, not copied)."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if self.state.get(p):
                    state[index[id(p)]] = {k: tensor(float(v), dtype=float32) if k == "step" else v
                                           for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Resume from ``state_dict()``'s output (ours, or PyTorch's with its tensors converted to
        minitorch tensors): hyper-parameters per group, and each parameter's state copied to the
        parameter's device and (floating) dtype.

        Raises:
            ValueError: a different number of groups, or a group of a different size (both named).
        """
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(saved)} parameter groups, this optimizer has "
                             f"{len(self.param_groups)}")
        for k, (mine, theirs) in enumerate(zip(self.param_groups, saved)):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError(f"loaded state dict's parameter group {k} has {len(theirs['params'])} parameters, "
                                 f"this optimizer's group {k} has {len(mine['params'])}")
        param_of = {i: p for mine, theirs in zip(self.param_groups, saved) for i, p in zip(theirs["params"], mine["params"])}
        self.state = {}
        for i, entries in state_dict["state"].items():
            p = param_of[i]
            self.state[p] = {k: _state_value(k, v, p) for k, v in entries.items()}
        self.param_groups = [dict(theirs, params=mine["params"]) for mine, theirs in zip(self.param_groups, saved)]

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
    """A loaded state entry: "step" as an int; a floating tensor copied to ``param``'s device and dtype."""
    if key == "step":
        return int(round(float(value.item() if hasattr(value, "item") else value)))
    if isinstance(value, Tensor):
        dtype = param.dtype if value.dtype.is_floating_point else value.dtype
        moved = value.to(device=param.device, dtype=dtype)
        return moved.clone() if moved is value else moved
    return value


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
