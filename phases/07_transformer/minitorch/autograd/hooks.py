# GENERATED from minitorch/autograd/hooks.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""Gradient hooks: ``t.register_hook(fn)`` calls ``fn(grad)`` when backward has computed the full
gradient of ``t``; a non-None return value replaces that gradient. ``t.retain_grad()`` keeps a
non-leaf's gradient in ``t.grad``. (A leaf keeps its hooks itself; a computed tensor's live on the
node that made it, since the backward pass meets nodes, not tensors.)"""
import itertools

_ids = itertools.count()


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks):
        self.hooks, self.id = hooks, next(_ids)

    def remove(self):
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def run_hooks(hooks, output_nr, grad):
    """``grad`` after every hook registered for output ``output_nr``, in registration order."""
    for nr, fn in list(hooks.values()):
        if nr == output_nr:
            replaced = fn(grad)
            if replaced is not None:
                grad = replaced
    return grad
