"""minitorch.optim.lr_scheduler against torch.optim.lr_scheduler: the same floats, step by step.

Every schedule runs on an optimizer with two param groups (different lrs) next to the same
schedule in PyTorch; the lrs (and OneCycleLR's momentum or beta1) must be equal exactly after
each step, not close: the schedules use PyTorch's formulas in PyTorch's order of operations.
"""
import io
import math
import warnings

import pytest
import torch

import minitorch
from minitorch.optim import SGD, Optimizer
from minitorch.optim import lr_scheduler as M
from torch.optim import lr_scheduler as T

LRS = (0.1, 0.037)
STEPS = 150


class _BetasOptimizer(Optimizer):
    """An Adam-like optimizer (its defaults hold ``betas``) that does nothing: OneCycleLR cycles beta1."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999)):
        super().__init__(params, dict(lr=lr, betas=betas))

    def step(self):
        pass


def _pair(kind="sgd", lrs=LRS):
    """The same optimizer in both libraries: one group per lr, each with one parameter."""
    t_groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    m_groups = [{"params": [minitorch.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    if kind == "betas":
        return torch.optim.Adam(t_groups, lr=1.0), _BetasOptimizer(m_groups, lr=1.0)
    return torch.optim.SGD(t_groups, lr=1.0, momentum=0.5), SGD(m_groups, lr=1.0, momentum=0.5)


# name -> (optimizer kind, steps, factory(L, optimizer) with L = the lr_scheduler module)
CASES = {
    "StepLR": ("sgd", STEPS, lambda L, o: L.StepLR(o, step_size=7)),
    "StepLR-gamma": ("sgd", STEPS, lambda L, o: L.StepLR(o, 10, gamma=0.73)),
    "MultiStepLR": ("sgd", STEPS, lambda L, o: L.MultiStepLR(o, milestones=[5, 30, 80])),
    "MultiStepLR-repeated": ("sgd", STEPS, lambda L, o: L.MultiStepLR(o, [80, 5, 30, 30], gamma=0.5)),
    "ExponentialLR": ("sgd", STEPS, lambda L, o: L.ExponentialLR(o, gamma=0.97)),
    "ExponentialLR-up": ("sgd", STEPS, lambda L, o: L.ExponentialLR(o, 1.013)),
    "CosineAnnealingLR": ("sgd", STEPS, lambda L, o: L.CosineAnnealingLR(o, T_max=30)),
    "CosineAnnealingLR-eta": ("sgd", STEPS, lambda L, o: L.CosineAnnealingLR(o, 17, eta_min=0.001)),
    "CosineAnnealingLR-T1": ("sgd", STEPS, lambda L, o: L.CosineAnnealingLR(o, T_max=1, eta_min=0.01)),
    "LinearLR": ("sgd", STEPS, lambda L, o: L.LinearLR(o)),
    "LinearLR-args": ("sgd", STEPS, lambda L, o: L.LinearLR(o, start_factor=0.05, end_factor=0.5, total_iters=40)),
    "LinearLR-down": ("sgd", STEPS, lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=120)),
    "LambdaLR": ("sgd", STEPS, lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e)),
    "LambdaLR-list": ("sgd", STEPS, lambda L, o: L.LambdaLR(o, [lambda e: e // 30, lambda e: 1 / (1 + e)])),
    "OneCycleLR": ("sgd", 150, lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=150)),
    "OneCycleLR-linear": ("sgd", 120, lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 2.0], epochs=10, steps_per_epoch=12,
                                                                anneal_strategy="linear", pct_start=0.25)),
    "OneCycleLR-three-phase": ("sgd", 130, lambda L, o: L.OneCycleLR(o, 0.8, total_steps=130, three_phase=True,
                                                                     base_momentum=[0.8, 0.7], max_momentum=0.99)),
    "OneCycleLR-three-phase-linear": ("sgd", 101, lambda L, o: L.OneCycleLR(o, 0.8, total_steps=101, three_phase=True,
                                                                            anneal_strategy="linear", pct_start=0.4)),
    "OneCycleLR-no-momentum": ("sgd", 110, lambda L, o: L.OneCycleLR(o, 0.3, total_steps=110, cycle_momentum=False,
                                                                     div_factor=10.0, final_div_factor=100.0)),
    "OneCycleLR-betas": ("betas", 140, lambda L, o: L.OneCycleLR(o, max_lr=[0.01, 0.02], total_steps=140)),
    "SequentialLR": ("sgd", STEPS, lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=10), L.CosineAnnealingLR(o, T_max=50),
            L.ExponentialLR(o, 0.9)], milestones=[10, 60])),
    "SequentialLR-step": ("sgd", STEPS, lambda L, o: L.SequentialLR(
        o, [L.ExponentialLR(o, 0.9), L.StepLR(o, 5, gamma=0.5), L.MultiStepLR(o, [3, 7])], milestones=[20, 45])),
    "SequentialLR-one": ("sgd", STEPS, lambda L, o: L.SequentialLR(o, [L.StepLR(o, 4)], milestones=[])),
}


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def _assert_same(t_opt, m_opt, t_sched, m_sched, step):
    t_lrs, m_lrs = [g["lr"] for g in t_opt.param_groups], [g["lr"] for g in m_opt.param_groups]
    assert m_lrs == t_lrs, f"step {step}: lrs {m_lrs}, PyTorch {t_lrs}"
    assert m_sched.get_last_lr() == t_sched.get_last_lr(), f"step {step}: get_last_lr differs"
    assert _momenta(m_opt) == _momenta(t_opt), f"step {step}: momentum {_momenta(m_opt)}, PyTorch {_momenta(t_opt)}"
    assert m_sched.last_epoch == t_sched.last_epoch


def _run(t_opt, m_opt, t_sched, m_sched, steps, first=0):
    for step in range(first, first + steps):
        t_opt.step()                 # no gradients: nothing changes, but PyTorch sees the usual order
        m_opt.step()
        t_sched.step()
        m_sched.step()
        _assert_same(t_opt, m_opt, t_sched, m_sched, step)


@pytest.mark.parametrize("name", CASES)
def test_schedule_matches_torch_step_by_step(name):
    kind, steps, make = CASES[name]
    t_opt, m_opt = _pair(kind)
    t_sched, m_sched = make(T, t_opt), make(M, m_opt)
    _assert_same(t_opt, m_opt, t_sched, m_sched, "init")
    _run(t_opt, m_opt, t_sched, m_sched, steps)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith(("OneCycle", "Sequential", "Lambda"))])
def test_closed_form_step_epoch_matches_torch(name):
    """step(epoch) jumps with the closed form (deprecated in both, with a warning)."""
    kind, _, make = CASES[name]
    t_opt, m_opt = _pair(kind)
    t_sched, m_sched = make(T, t_opt), make(M, m_opt)
    for epoch in (3, 10, 57, 100, 31, 149):
        with pytest.warns(UserWarning):
            m_sched.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_sched.step(epoch)
        _assert_same(t_opt, m_opt, t_sched, m_sched, f"step({epoch})")


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("Lambda")])
def test_state_dict_resumes_the_schedule(name):
    """37 steps, state_dicts through minitorch.save/load, fresh optimizer and scheduler, the rest:
    the lrs go on exactly as PyTorch's uninterrupted schedule."""
    kind, steps, make = CASES[name]
    t_opt, m_opt = _pair(kind)
    t_sched, m_sched = make(T, t_opt), make(M, m_opt)
    _run(t_opt, m_opt, t_sched, m_sched, 37)
    buffer = io.BytesIO()
    minitorch.save({"optimizer": m_opt.state_dict(), "scheduler": m_sched.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = minitorch.load(buffer)
    _, m_opt = _pair(kind)
    m_sched = make(M, m_opt)
    m_opt.load_state_dict(checkpoint["optimizer"])
    m_sched.load_state_dict(checkpoint["scheduler"])
    _assert_same(t_opt, m_opt, t_sched, m_sched, "after load")
    _run(t_opt, m_opt, t_sched, m_sched, steps - 37, first=37)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR-eta", "LinearLR-args",
                                  "LambdaLR", "OneCycleLR-three-phase"])
def test_a_scheduler_made_with_last_epoch_resumes_as_torch(name):
    """A second scheduler made with last_epoch=k takes over from the groups' "initial_lr"."""
    kind, _, make = CASES[name]
    t_opt, m_opt = _pair(kind)
    t_sched, m_sched = make(T, t_opt), make(M, m_opt)
    _run(t_opt, m_opt, t_sched, m_sched, 20)
    t_sched, m_sched = make(_WithLastEpoch(T, 20), t_opt), make(_WithLastEpoch(M, 20), m_opt)
    _assert_same(t_opt, m_opt, t_sched, m_sched, "made with last_epoch=20")
    _run(t_opt, m_opt, t_sched, m_sched, 60, first=21)


class _WithLastEpoch:
    """The lr_scheduler module ``L`` whose classes get ``last_epoch=k``."""

    def __init__(self, L, k):
        self.L, self.k = L, k

    def __getattr__(self, name):
        cls = getattr(self.L, name)
        return lambda *args, **kwargs: cls(*args, last_epoch=self.k, **kwargs)


def test_state_dict_holds_torchs_counters_and_not_the_optimizer():
    t_opt, m_opt = _pair()
    t_sched, m_sched = T.StepLR(t_opt, 3), M.StepLR(m_opt, 3)
    _run(t_opt, m_opt, t_sched, m_sched, 5)
    t_state, m_state = t_sched.state_dict(), m_sched.state_dict()
    assert "optimizer" not in m_state
    for key in ("last_epoch", "base_lrs", "_last_lr", "_step_count", "step_size", "gamma"):
        assert m_state[key] == t_state[key], key


def test_lambda_state_dict_skips_functions_and_keeps_callable_objects():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate ** epoch

    _, opt = _pair()
    decay = Decay()
    sched = M.LambdaLR(opt, [decay, lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    decay.rate = 0.9
    sched.load_state_dict(state)
    assert decay.rate == 0.5 and "lr_lambdas" in state


def test_importable_as_in_torch():
    import minitorch.optim.lr_scheduler as module
    assert module is minitorch.optim.lr_scheduler
    for name in ("LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                 "LambdaLR", "OneCycleLR", "SequentialLR"):
        assert isinstance(getattr(module, name), type)


def _torch_and_ours(make):
    """Run ``make(L, optimizer)`` in both libraries; the two exceptions raised."""
    errors = []
    for L, opt in zip((T, M), _pair()):
        with pytest.raises(Exception) as info:
            make(L, opt)
        errors.append(info.value)
    return errors


def _step(scheduler, times):
    for _ in range(times):
        scheduler.optimizer.step()
        scheduler.step()


ERRORS = {
    "LinearLR-start-0": lambda L, o: L.LinearLR(o, start_factor=0),
    "LinearLR-start-big": lambda L, o: L.LinearLR(o, start_factor=1.5),
    "LinearLR-end-negative": lambda L, o: L.LinearLR(o, end_factor=-0.1),
    "OneCycleLR-no-total": lambda L, o: L.OneCycleLR(o, 1.0),
    "OneCycleLR-total-0": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=0),
    "OneCycleLR-total-float": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=2.5),
    "OneCycleLR-epochs-0": lambda L, o: L.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
    "OneCycleLR-spe-negative": lambda L, o: L.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=-1),
    "OneCycleLR-pct-big": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5),
    "OneCycleLR-pct-int": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, pct_start=1),
    "OneCycleLR-strategy": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="exp"),
    "OneCycleLR-max-lr-list": lambda L, o: L.OneCycleLR(o, [1.0], total_steps=10),
    "OneCycleLR-momentum-list": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, base_momentum=[0.8, 0.8, 0.8]),
    "OneCycleLR-past-the-end": lambda L, o: _step(L.OneCycleLR(o, 1.0, total_steps=3), 4),
    "LambdaLR-count": lambda L, o: L.LambdaLR(o, [lambda e: 1.0]),
    "SequentialLR-empty": lambda L, o: L.SequentialLR(o, [], []),
    "SequentialLR-milestones": lambda L, o: L.SequentialLR(o, [L.ExponentialLR(o, 0.9), L.StepLR(o, 2)], []),
    "SequentialLR-not-a-scheduler": lambda L, o: L.SequentialLR(o, [L.ExponentialLR(o, 0.9), "step"], [3]),
    "not-an-optimizer": lambda L, o: L.StepLR("sgd", 3),
    "OneCycleLR-not-an-optimizer": lambda L, o: L.OneCycleLR(object(), 1.0, total_steps=3),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_arguments_raise_as_torch(name):
    theirs, ours = _torch_and_ours(ERRORS[name])
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def test_resuming_without_initial_lr_raises_key_error():
    theirs, ours = _torch_and_ours(lambda L, o: L.ExponentialLR(o, 0.9, last_epoch=3))
    assert type(ours) is type(theirs) is KeyError
    assert "initial_lr" in str(ours) and "param_groups[0]" in str(ours)


def test_sequential_of_another_optimizer_raises():
    t_opt, m_opt = _pair()
    _, m_other = _pair()
    with pytest.raises(ValueError, match="same optimizer.*index 1"):
        M.SequentialLR(m_opt, [M.ExponentialLR(m_opt, 0.9), M.StepLR(m_other, 2)], [3])


def test_cycle_momentum_needs_momentum_or_betas():
    t_opt = torch.optim.Adagrad([torch.zeros(2, requires_grad=True)])

    class Plain(Optimizer):
        def __init__(self, params):
            super().__init__(params, dict(lr=0.1))

    m_opt = Plain([minitorch.zeros(2, requires_grad=True)])
    with pytest.raises(ValueError) as theirs:
        T.OneCycleLR(t_opt, 1.0, total_steps=10)
    with pytest.raises(ValueError) as ours:
        M.OneCycleLR(m_opt, 1.0, total_steps=10)
    assert str(ours.value) == str(theirs.value)
    M.OneCycleLR(m_opt, 1.0, total_steps=10, cycle_momentum=False)       # fine without cycling


def test_cosine_reaches_eta_min_and_comes_back():
    """Not only equal to PyTorch: the schedule is the one its docstring promises."""
    _, opt = _pair(lrs=(0.5,))
    sched = M.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
    lrs = [sched.get_last_lr()[0]] + [sched.step() or sched.get_last_lr()[0] for _ in range(20)]
    assert math.isclose(lrs[10], 0.1) and math.isclose(lrs[20], 0.5) and math.isclose(lrs[5], 0.3)
