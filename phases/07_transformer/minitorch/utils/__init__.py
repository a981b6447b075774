# GENERATED from minitorch/utils/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Course tooling: the race harness against PyTorch (:mod:`.race`) and the notebook runner (:mod:`.course`)."""
