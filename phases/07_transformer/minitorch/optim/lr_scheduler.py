# GENERATED from minitorch/optim/lr_scheduler.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Learning-rate schedules, as ``torch.optim.lr_scheduler`` defines them.

A scheduler rewrites ``group["lr"]`` in every parameter group of its optimizer each time
``scheduler.step()`` is called (once per epoch or once per batch, after ``optimizer.step()``)::

    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = CosineAnnealingLR(opt, T_max=100)
    for epoch in range(100):
        train_one_epoch(model, opt)
        sched.step()

``last_epoch`` counts the calls to ``step()``; creating a scheduler already makes the first one,
which sets the lr of epoch 0. ``base_lrs`` are the groups' ``"initial_lr"`` (their lr when the
first scheduler was made).

Most schedules are written, as in PyTorch, in a *recursive* form: the new lr is computed from the
group's current lr (``lr * gamma``), so that a scheduler composes with anything else that changes
the lr. A *closed* form (``base_lr * gamma ** epoch``) gives the same value on paper but rounds
differently, so each schedule here uses the same form and the same order of float operations as
PyTorch's: the lrs equal PyTorch's exactly, step for step. ``step(epoch)`` (deprecated in PyTorch)
and :class:`SequentialLR`'s milestones use the closed form where a schedule has one.

Formulas: https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate; OneCycleLR is
Smith & Topin, "Super-Convergence" (2017), https://arxiv.org/abs/1708.07120; cosine annealing is
Loshchilov & Hutter, "SGDR" (2016), https://arxiv.org/abs/1608.03983.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "LinearLR", "ExponentialLR",
           "CosineAnnealingLR", "OneCycleLR", "SequentialLR"]


def _current_lrs(optimizer):
    return [group["lr"] for group in optimizer.param_groups]


def _per_group(name, optimizer, value):
    """``value`` once per param group: a list or tuple must have one entry per group.

    Raises:
        ValueError: a list or tuple of the wrong length.
    """
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return list(value)
    return [value] * n


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (the lrs at ``last_epoch``, usually from the
    current ones) and, where they have one, ``_get_closed_form_lr()`` (from ``base_lrs``).

    Args:
        optimizer: the :class:`~minitorch.optim.Optimizer` whose groups' ``"lr"`` it sets.
        last_epoch: the index of the last epoch done; -1 starts afresh. A value >= 0 resumes a
            schedule and needs ``"initial_lr"`` in every group (load the optimizer first).

    Raises:
        TypeError: ``optimizer`` is not an Optimizer.
        KeyError: ``last_epoch >= 0`` and a group has no ``"initial_lr"``.
    """

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                               f"a scheduler with last_epoch={last_epoch}: load the optimizer's state_dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The step a new scheduler makes: it sets the lrs of epoch ``last_epoch + 1``."""
        self._step_count = 0
        self._is_initial = True        # read by get_lr: the recursive forms must not scale yet
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The lrs at ``last_epoch``, one per param group (subclasses define it)."""
        raise NotImplementedError

    def get_last_lr(self):
        """The lrs the last ``step()`` set, one float per param group."""
        return self._last_lr

    def step(self, epoch=None):
        """Advance one epoch and write the new lrs into the optimizer's groups.

        ``step(epoch)`` jumps to ``epoch`` with the closed form (deprecated, as in PyTorch).
        """
        self._step_count += 1
        if epoch is not None:
            warnings.warn("scheduler.step(epoch) is deprecated, as in PyTorch: call step() without an "
                          "epoch; with one, the closed form is used where the schedule has one", UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            lrs = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
            lrs = closed_form()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = _current_lrs(self.optimizer)

    def state_dict(self):
        """Every attribute except the optimizer: plain numbers and lists, for ``minitorch.save``."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore the attributes ``state_dict()`` gave (load the optimizer's state too)."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch).

    Args:
        lr_lambda: a function of the epoch (an int) giving a factor, or a list of them, one per
            param group.

    Raises:
        ValueError: a list of lambdas whose length is not the number of param groups.
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        """As the base class, but functions are not saved (they are code): ``lr_lambdas`` holds
        ``None`` for a function or lambda and the attributes (``__dict__``) of a callable object."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved_lambdas):
            if attributes is not None:
                fn.__dict__.update(attributes)


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size): multiplied by ``gamma`` every ``step_size``
    epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _current_lrs(self.optimizer)
        return [lr * self.gamma for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr multiplied by ``gamma`` at each epoch of ``milestones`` (an epoch listed n times: by
    gamma ** n)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)      # epoch -> how many times it is listed
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return _current_lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.milestones = Counter(self.milestones)   # a loaded checkpoint gives a plain dict


class LinearLR(LRScheduler):
    """The factor on base_lr goes linearly from ``start_factor`` (epoch 0) to ``end_factor``
    (epoch ``total_iters`` and after).

    Raises:
        ValueError: start_factor not in (0, 1], or end_factor not in [0, 1].
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = _current_lrs(self.optimizer)
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        # the ratio of factor(epoch) to factor(epoch - 1), each start + (end - start) * epoch / total
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in lrs]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch: multiplied by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = _current_lrs(self.optimizer)
        return lrs if self._is_initial else [lr * self.gamma for lr in lrs]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2: half a cosine from
    base_lr down to ``eta_min`` over ``T_max`` epochs, then back up (a period of 2 * T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = _current_lrs(self.optimizer)
        if self._is_initial:
            return lrs
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # the step leaving the minimum, where the ratio below would divide by 1 + cos(pi) = 0
            rise = (1 - math.cos(math.pi / self.T_max)) / 2
            return [lr + (base_lr - self.eta_min) * rise for lr, base_lr in zip(lrs, self.base_lrs)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (lr - self.eta_min) + self.eta_min for lr in lrs]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


def _anneal_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start, end, pct):
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the lr rises from max_lr / div_factor to ``max_lr`` during the first
    ``pct_start`` of ``total_steps``, then falls to initial_lr / final_div_factor; the momentum
    (SGD's ``momentum``, or beta1 of Adam-style ``betas``) moves the opposite way between
    ``max_momentum`` and ``base_momentum``. ``three_phase`` rises, falls back to initial_lr
    symmetrically, then annihilates to the minimum. Step it once per batch.

    Args:
        max_lr: the peak lr (a float or one per group).
        total_steps: steps in the cycle; or give ``epochs`` and ``steps_per_epoch``.
        anneal_strategy: ``"cos"`` or ``"linear"``.
        cycle_momentum: also cycle momentum / beta1 (the optimizer must have one).

    Raises:
        TypeError: ``optimizer`` is not an Optimizer.
        ValueError: no total_steps (nor epochs and steps_per_epoch), a non-positive one, pct_start
            not a float in [0, 1], an unknown anneal_strategy, per-group lists of the wrong length,
            cycle_momentum with an optimizer that has no momentum, or a step past total_steps.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy      # a name, not a function: state_dict stays plain data
        self._schedule_phases = self._phases(pct_start, three_phase)
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps, epochs, steps_per_epoch):
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
        return epochs * steps_per_epoch

    def _phases(self, pct_start, three_phase):
        """Each phase: the step it ends at and the group keys its lr and momentum go between."""
        def phase(end_step, lrs, momenta):
            return {"end_step": end_step, "start_lr": lrs[0], "end_lr": lrs[1],
                    "start_momentum": momenta[0], "end_momentum": momenta[1]}
        warmup_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            return [phase(warmup_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                    phase(float(2 * pct_start * self.total_steps) - 2, ("max_lr", "initial_lr"),
                          ("base_momentum", "max_momentum")),
                    phase(last, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]
        return [phase(warmup_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                phase(last, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]

    def _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch):
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        max_momenta = _per_group("max_momentum", optimizer, max_momentum)
        base_momenta = _per_group("base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for group, top, bottom in zip(optimizer.param_groups, max_momenta, base_momenta):
                self._set_momentum(group, top)
                group["max_momentum"] = top
                group["base_momentum"] = bottom

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        anneal = _anneal_cos if self._anneal_func_type == "cos" else _anneal_linear
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                    break
                start_step = phase["end_step"]
            pct = (step - start_step) / (phase["end_step"] - start_step)
            lrs.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                self._set_momentum(group, anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
        return lrs


class SequentialLR(LRScheduler):
    """Runs ``schedulers[0]`` until epoch ``milestones[0]``, then ``schedulers[1]`` (restarted at
    its epoch 0, from its closed form where it has one) until ``milestones[1]``, and so on.

    Raises:
        ValueError: no schedulers, a scheduler of another optimizer, or
            ``len(milestones) != len(schedulers) - 1``.
        TypeError: an entry that is not a scheduler (no ``optimizer`` attribute).
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                                 f"which is different from {type(optimizer).__name__}.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Making the schedulers stepped each of them once: undo that, then start the first one.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_initial_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    @classmethod
    def _undo_initial_steps(cls, scheduler):
        """One epoch back for every scheduler inside ``scheduler`` (recursing into nested ones)."""
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                cls._undo_initial_steps(inner)
        else:
            scheduler.last_epoch -= 1

    def step(self):
        """Advance one epoch: the scheduler whose span holds it steps (or restarts at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """Own attributes plus each scheduler's state_dict under ``"_schedulers"``."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        inner_states = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, inner in zip(self._schedulers, inner_states):
            scheduler.load_state_dict(inner)
