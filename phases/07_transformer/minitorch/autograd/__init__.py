# GENERATED from minitorch/autograd/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Autograd: every op is a :class:`Function` with a ``forward`` (phase 02) and a ``backward``
(phase 03); running ops on tensors that require grad records a graph that ``backward()`` walks."""
from .function import Context, Function
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
