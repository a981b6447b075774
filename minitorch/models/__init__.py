# phase: 07
"""Models built from ``minitorch.nn``: ``minitorch.models.gpt`` (a GPT as Karpathy's nanoGPT)."""
