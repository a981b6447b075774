# GENERATED from minitorch/models/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""Models built from ``minitorch.nn``: ``minitorch.models.gpt`` (a GPT as Karpathy's nanoGPT)."""
