# phase: 01
"""Course tooling: the race harness against PyTorch (:mod:`.race`) and the notebook runner (:mod:`.course`)."""
