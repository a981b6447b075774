# GENERATED from minitorch/autograd/anomaly_mode.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Anomaly detection: ``with minitorch.autograd.detect_anomaly():`` makes backward check every
gradient an op returns and raise, naming the op, at the first NaN; a warning also shows where that
op was called in forward. Checking means reading a flag back on the host (the GPU waits), so it is
for debugging only, as in PyTorch."""
import functools
import warnings

_enabled = False
_check_nan = True


def is_anomaly_enabled():
    return _enabled


def is_anomaly_check_nan_enabled():
    return _check_nan


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns anomaly mode on at once; as a ``with`` block, until its
    end. ``check_nan=False`` keeps the forward tracebacks but skips the NaN checks."""

    def __init__(self, mode, check_nan=True):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev


class detect_anomaly:
    """Anomaly mode inside the block (or the decorated function): backward raises at the first op
    whose gradient holds a NaN, naming it and where forward called it."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper
