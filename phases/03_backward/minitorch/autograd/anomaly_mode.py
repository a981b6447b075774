# GENERATED from minitorch/autograd/anomaly_mode.py by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Anomaly detection: ``with minitorch.autograd.detect_anomaly():`` makes backward check every
gradient an op returns and raise, naming the op, at the first NaN; the error also shows where that
op was called in forward. Checking means reading the gradient back on the host (the GPU waits), so
it is for debugging only, as in PyTorch."""
import functools

_enabled = False


def is_anomaly_enabled():
    return _enabled


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns the checks on at once; as a ``with`` block, until its end."""

    def __init__(self, mode):
        global _enabled
        self.prev, _enabled = _enabled, bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.prev


class detect_anomaly:
    """Check every backward result for NaN inside the block (or the decorated function)."""

    def __enter__(self):
        global _enabled
        self.prev, _enabled = _enabled, True
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly():
                return fn(*args, **kwargs)
        return wrapper
