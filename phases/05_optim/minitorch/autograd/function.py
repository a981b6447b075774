# GENERATED from minitorch/autograd/function.py by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
# phase: 02
"""``Function``: the contract every op follows, after PyTorch's ``torch.autograd.Function``.

An op is a class with a static ``forward(ctx, *inputs)`` that computes the output from input
tensors through their device's backend, and (from phase 03) a static ``backward(ctx, grad_output)``
that returns one gradient per input. ``ctx`` carries what backward needs from forward:
``ctx.save_for_backward(a, b)`` keeps tensors, plain attributes keep the rest (shapes, scalars).
Ops are called through ``Op.apply(*inputs)``, never ``forward`` directly, so that (phase 03) the
call can be recorded in the graph.
"""
from . import grad_mode


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

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = Context()
        if grad_mode._enabled:
            # Most calls have no input that requires grad: they run forward as it is, nothing to
            # record (every op passes here, so the check is a plain loop, kept cheap).
            for a in args:
                if getattr(a, "requires_grad", False) is True:       # tensors only
                    return _forward_and_record(cls, ctx, args, kwargs)
        return cls.forward(ctx, *args, **kwargs)


def _forward_and_record(fn, ctx, args, kwargs):
    """Run ``fn.forward`` and record the call as one node of the graph (grad mode is on and some
    input requires grad). The ops forward runs inside are not recorded: this node stands for them."""
    grad_mode._enabled = False
    try:
        out = fn.forward(ctx, *args, **kwargs)
    finally:
        grad_mode._enabled = True
    _record(fn, ctx, args, out)
    return out


def _record(fn, ctx, args, out):
    """Attach ``out`` to the graph (grad mode is on and some input requires grad)."""
    if not out.dtype.is_floating_point:        # bools and ints carry no gradient
        return
    needs = tuple(getattr(a, "requires_grad", False) is True for a in args)
    ctx.needs_input_grad = needs
    inputs = tuple(a if n else None for a, n in zip(args, needs))
    out.requires_grad = True
    out.grad_fn = Node(fn, ctx, inputs)
    if ctx.saved_tensors:       # versions now; an in-place write before backward changes them
        ctx.saved_versions = tuple(getattr(t, "_version", None) for t in ctx.saved_tensors)


class Node:
    """One recorded call: the op, its context, and the inputs whose gradients it must produce.

    ``inputs`` holds, per argument of the call, the tensor when it requires grad, else ``None``.
    The backward pass continues with that tensor's ``grad_fn``, or, for a leaf (a tensor the user
    made), adds the gradient into its ``.grad``.
    """

    __slots__ = ("fn", "ctx", "inputs")

    def __init__(self, fn, ctx, inputs):
        self.fn, self.ctx, self.inputs = fn, ctx, inputs

    def name(self):
        return f"{self.fn.__name__}Backward"

    def __repr__(self):
        return f"<{self.name()}>"
