# phase: 07
"""``minitorch.use_deterministic_algorithms``: PyTorch's switch between fast kernels whose float
results may change between runs (atomicAdd adds in the order threads arrive) and slower ones that
give the same bits every run. Ops with both kinds read :func:`are_deterministic_algorithms_enabled`
(today: the gradient of ``embedding``, whose deterministic version sorts the indices first, and
the bfloat16/float16 flash attention backward, whose deterministic version computes dq in a kernel
of its own instead of adding it with float32 atomics).
"""

_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops with a deterministic variant use it (``mode`` True) or the fast one (False).

    ``warn_only`` is kept for PyTorch's signature: every minitorch op that has a
    nondeterministic kernel also has a deterministic one, so there is nothing to warn about.

    Raises:
        TypeError: ``mode`` or ``warn_only`` not a bool.
    """
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"use_deterministic_algorithms: expected a bool for {name}, got {type(value).__name__}")
    _state["enabled"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    """True after ``use_deterministic_algorithms(True)``."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """True after ``use_deterministic_algorithms(True, warn_only=True)``."""
    return _state["enabled"] and _state["warn_only"]
