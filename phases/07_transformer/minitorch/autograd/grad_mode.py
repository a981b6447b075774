# GENERATED from minitorch/autograd/grad_mode.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Grad mode: whether ops are being recorded. ``with minitorch.no_grad():`` turns it off
(evaluation, optimizer updates), saving the memory that recorded graphs hold."""
import functools

_enabled = True


def is_grad_enabled():
    return _enabled


class _GradMode:
    """Set recording to ``self.mode`` inside a ``with`` block or a decorated function."""

    mode = True

    def __enter__(self):
        global _enabled
        self.prev, _enabled = _enabled, self.mode
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Record nothing inside: ``with minitorch.no_grad(): ...`` or ``@minitorch.no_grad()``."""

    mode = False


class enable_grad(_GradMode):
    """Record again inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` turns recording off at once; as a ``with`` block, until its end."""

    def __init__(self, mode):
        global _enabled
        self.mode = bool(mode)
        self.prev, _enabled = _enabled, self.mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        raise TypeError("use no_grad() or enable_grad() as decorators")
