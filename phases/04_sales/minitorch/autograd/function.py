# GENERATED from minitorch/autograd/function.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 02
"""``Function``: the contract every op follows, after PyTorch's ``torch.autograd.Function``.

An op is a class with a static ``forward(ctx, *inputs)`` that computes the output from input
tensors through their device's backend, and (from phase 03) a static ``backward(ctx, grad_output)``
that returns one gradient per input. ``ctx`` carries what backward needs from forward:
``ctx.save_for_backward(a, b)`` keeps tensors, plain attributes keep the rest (shapes, scalars).
Ops are called through ``Op.apply(*inputs)``, never ``forward`` directly, so that (phase 03) the
call can be recorded in the graph.
"""
import traceback

from . import anomaly_mode, grad_mode


class Context:
    """What one call of an op remembers for its backward pass."""

    saved_tensors = ()      # a class default rather than an __init__: every op makes a Context

    def save_for_backward(self, *tensors):
        """Keep tensors for backward (``None`` allowed); read them back as ``ctx.saved_tensors``."""
        self.saved_tensors = tensors

    non_differentiable = ()     # outputs forward marked with mark_non_differentiable
    materialize_grads = True    # a multi-output backward gets zeros (not None) for unused outputs

    def mark_non_differentiable(self, *tensors):
        """Declare outputs of a custom Function that have no gradient (indices, masks): they will
        not require grad, and backward receives zeros for them."""
        self.non_differentiable = tuple(tensors)

    def set_materialize_grads(self, value):
        """``False``: backward receives ``None`` rather than zeros for outputs that got no gradient."""
        self.materialize_grads = bool(value)


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
    if isinstance(out, tuple):                 # a custom Function with several outputs
        return _record_outputs(fn, ctx, args, out)
    if _is_one_of(out, args):                  # forward returned an input: record a new tensor, not the input
        out = out.detach()
    _record(fn, ctx, args, out)
    return out


def _is_one_of(x, items):
    """Whether ``x`` is one of ``items`` itself (``in`` would compare tensors with ==). A loop
    rather than any() over a generator: every recorded op asks, and a generator costs more."""
    for item in items:
        if x is item:
            return True
    return False


def _record(fn, ctx, args, out):
    """Attach ``out`` to the graph (grad mode is on and some input requires grad)."""
    if not out.dtype.is_floating_point:        # bools and ints carry no gradient
        return
    if ctx.non_differentiable and _is_one_of(out, ctx.non_differentiable):
        return
    out.requires_grad = True
    out.grad_fn = _node(fn, ctx, args)


def _node(fn, ctx, args):
    """The graph node of one call: which inputs need a gradient, the saved tensors' versions."""
    # tuple([...]) rather than tuple(generator): every recorded op runs these lines, and a list
    # comprehension costs less host time than a generator resumed once per argument
    needs = tuple([getattr(a, "requires_grad", False) is True for a in args])
    ctx.needs_input_grad = needs
    if ctx.saved_tensors:       # versions now; an in-place write before backward changes them
        ctx.saved_versions = tuple([getattr(t, "_version", None) for t in ctx.saved_tensors])
    if anomaly_mode._enabled:   # kept to name the forward call if its backward produces a NaN
        ctx.forward_trace = "".join(traceback.format_stack()[:-3])
    inputs = tuple([(a if a.grad_fn is None else _as_used(a)) if n else None for a, n in zip(args, needs)])
    return Node(fn, ctx, inputs)


def _as_used(a):
    """Tensor ``a`` an op made, as this node must see it: a new handle on ``a``'s memory and its
    ``grad_fn`` now. An in-place write recorded later moves ``a`` itself onto a new node
    (Tensor._write_, phase 04); this use must still send its gradient to the node that made the
    value it read, as in PyTorch, whose graph edges point at nodes rather than tensors."""
    if a._view_of is not None and a._view_version != a._view_of[0]._version:
        a._refresh_view()           # a view whose base was written in place since: it reads the new base
    used = a.detach()
    used.requires_grad, used.grad_fn, used._output_nr = True, a.grad_fn, a._output_nr
    return used


def _record_outputs(fn, ctx, args, outs):
    """Attach every differentiable output of a multi-output Function to ONE node; output k
    remembers its position (``_output_nr``), so backward receives one gradient per output."""
    outs = tuple([o.detach() if hasattr(o, "detach") and _is_one_of(o, args) else o for o in outs])
    differentiable = [getattr(o, "dtype", None) is not None and o.dtype.is_floating_point
                      and not _is_one_of(o, ctx.non_differentiable) for o in outs]
    if any(differentiable):
        node = _node(fn, ctx, args)
        ctx.output_meta = tuple([(o.shape, o.dtype, o.device) if hasattr(o, "dtype") else None for o in outs])
        for k, (o, d) in enumerate(zip(outs, differentiable)):
            if d:
                o.requires_grad, o.grad_fn, o._output_nr = True, node, k
    return outs


class Node:
    """One recorded call: the op, its context, and the inputs whose gradients it must produce.

    ``inputs`` holds, per argument of the call, the tensor when it requires grad, else ``None``.
    The backward pass continues with that tensor's ``grad_fn``, or, for a leaf (a tensor the user
    made), adds the gradient into its ``.grad``.
    """

    __slots__ = ("fn", "ctx", "inputs", "hooks", "retained")

    def __init__(self, fn, ctx, inputs):
        self.fn, self.ctx, self.inputs = fn, ctx, inputs
        self.hooks = None       # {handle id: (output_nr, fn)} from Tensor.register_hook on its outputs
        self.retained = None    # {output_nr: weak reference} of outputs that called retain_grad()

    def name(self):
        return f"{self.fn.__name__}Backward"

    def __repr__(self):
        return f"<{self.name()}>"
