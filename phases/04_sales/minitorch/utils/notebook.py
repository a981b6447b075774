# GENERATED from minitorch/utils/notebook.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 01
"""What every phase notebook does first and last: settle its parameters, and say what it skipped.

    session = start(DEVICE, QUICK)          # DEVICE "auto" -> cuda when a GPU is usable
    if session.needs_gpu("the race"):       # False on cpu: records and prints why it skipped
        ...
    session.report()                        # lists every skipped cell and the reason
"""
import os
import platform

# NumPy's BLAS threads and PyTorch's OpenMP threads spin while they wait; racing the two on the
# same cores makes each steal the other's time. Passive waiting keeps CPU races fair. (It must be
# set before torch is imported, which is why it sits here, at the top of every notebook's setup.)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import minitorch  # noqa: E402


class Session:
    def __init__(self, device, quick):
        self.device, self.quick, self.skipped = device, quick, []

    def needs_gpu(self, what):
        """True on cuda; on cpu, record ``what`` as skipped (with the reason) and return False."""
        if self.device == "cuda":
            return True
        reason = minitorch.cuda._probe()[1] or f"DEVICE is '{self.device}'"
        self.skipped.append((what, reason))
        print(f"skipped: {what} - needs a CUDA GPU ({reason})")
        return False

    def report(self):
        if not self.skipped:
            print(f"every cell ran on {self.device}")
            return
        print(f"{len(self.skipped)} part(s) skipped on {self.device}:")
        for what, reason in self.skipped:
            print(f"  - {what}: {reason}")


def start(device="auto", quick=None):
    """Resolve the notebook parameters and print where we run.

    Args:
        device: "auto" (cuda when available, else cpu), "cpu" or "cuda".
        quick: None reads the environment (MINITORCH_QUICK=1, set in CI); True runs small sizes.
    Raises:
        minitorch.cuda.CudaUnavailableError: if "cuda" is asked for and no GPU is usable.
    """
    if device == "auto":
        device = "cuda" if minitorch.cuda.is_available() else "cpu"
    if device == "cuda":
        minitorch.cuda.cupy_or_raise()
    if quick is None:
        quick = os.environ.get("MINITORCH_QUICK") == "1"
    where = minitorch.cuda.get_device_name() if device == "cuda" else platform.processor() or platform.machine()
    print(f"minitorch from {os.path.dirname(minitorch.__file__)}")
    print(f"device: {device} ({where}); quick mode: {quick}")
    return Session(device, quick)
