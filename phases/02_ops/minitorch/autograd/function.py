# GENERATED from minitorch/autograd/function.py by tools/sync_phases.py (phase 02 snapshot): edit the source and re-run, not this file.
# phase: 02
"""``Function``: the contract every op follows, after PyTorch's ``torch.autograd.Function``.

An op is a class with a static ``forward(ctx, *inputs)`` that computes the output from input
tensors through their device's backend, and (from phase 03) a static ``backward(ctx, grad_output)``
that returns one gradient per input. ``ctx`` carries what backward needs from forward:
``ctx.save_for_backward(a, b)`` keeps tensors, plain attributes keep the rest (shapes, scalars).
Ops are called through ``Op.apply(*inputs)``, never ``forward`` directly, so that (phase 03) the
call can be recorded in the graph.
"""


class Context:
    """What one call of an op remembers for its backward pass."""

    saved_tensors = ()      # a class default rather than an __init__: every op makes a Context

    def save_for_backward(self, *tensors):
        """Keep tensors for backward (``None`` allowed); read them back as ``ctx.saved_tensors``."""
        self.saved_tensors = tensors


class Function:
    """Base class of all differentiable ops. Subclasses define ``forward`` and ``backward``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError


    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = Context()
        return cls.forward(ctx, *args, **kwargs)
