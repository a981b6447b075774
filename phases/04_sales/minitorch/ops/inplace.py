# GENERATED from minitorch/ops/inplace.py by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
# phase: 04
"""In-place writes that autograd records (PyTorch's ``CopySlices``): ``y[1:3] = b``,
``y.mul_(z)``, ``y.copy_(v)``... on a tensor ``y`` that requires grad (not a leaf), or with an
operand that requires grad.

``Tensor._write_`` computes the new value out of place from ``old``, a copy of ``y`` that carries
``y``'s history, writes it into ``y``'s memory, and moves ``y`` onto the node that computed it.
The gradient reaching ``old`` is then zero where the write replaced it; ``b`` gets the gradient of
the positions it was written to, summed over the dimensions it was broadcast along. Ops recorded
before the write keep sending their gradient to ``y``'s old node (autograd.function._as_used),
and those that saved ``y`` raise at backward (its version moved on). A write into a view
``v = y[key]`` (basic indexing) is recorded as ``y[key] = new value``: ``y`` moves onto the new
node and ``v`` reads ``y[key]`` again, as does any view of ``y`` used after the write
(``Tensor._refresh_view``). Other views (``reshape``, ``t()``...) of a tensor that requires grad
do not know their base: writing into them raises.

The two Functions here cover the writes whose new value is not already an op of ``old``:
``x[key] = value`` and overwriting the whole tensor (``copy_``, ``fill_``).
"""
from ..autograd.function import Function
from .elementwise import _sum_to
from .indexing import setitem


def _fold(grad, shape, dtype, device):
    """``grad`` (of the shape a value was broadcast to) summed back to the value's ``shape`` (which
    may have extra leading 1s, dropped by ``x[key] = value``), in its dtype and on its device."""
    extra = len(shape) - grad.ndim
    g = _sum_to(grad, shape[extra:] if extra > 0 else shape)
    return g.reshape(shape).to(device, dtype)


def _meta(value):
    return tuple(value.shape), value.dtype, value.device


class SetItem(Function):
    """``out = old`` with ``out[key] = value`` (a number or a tensor broadcasting to ``old[key]``)."""

    @staticmethod
    def forward(ctx, old, value, key):
        out = old.clone()
        setitem(out, key, value)
        ctx.key = key
        if getattr(value, "requires_grad", False):
            ctx.value_meta = _meta(value)
        return out

    @staticmethod
    def backward(ctx, grad):
        g_old = g_value = None
        if ctx.needs_input_grad[0]:
            g_old = grad.clone()
            g_old[ctx.key] = 0                      # the written positions no longer depend on old
        if ctx.needs_input_grad[1]:
            g_value = _fold(grad[ctx.key], *ctx.value_meta)
        return g_old, g_value, None


class Overwrite(Function):
    """``out = value`` broadcast to ``old``'s shape in ``old``'s dtype and device: nothing of
    ``old`` is left (``copy_``, ``fill_``; also any write whose result does not carry a graph)."""

    @staticmethod
    def forward(ctx, old, value):
        if value.requires_grad:
            ctx.value_meta = _meta(value)
        return value.to(old.device, old.dtype).expand(old.shape)

    @staticmethod
    def backward(ctx, grad):
        g_old = grad.new_zeros(grad.shape) if ctx.needs_input_grad[0] else None
        g_value = _fold(grad, *ctx.value_meta) if ctx.needs_input_grad[1] else None
        return g_old, g_value


# ---- torch.zero_(t), torch.fill_(t, v)...: PyTorch's module-level names of these Tensor methods ----------
def zero_(input):
    """``input.zero_()``."""
    return input.zero_()


def fill_(input, value):
    """``input.fill_(value)``."""
    return input.fill_(value)


def clamp_(input, min=None, max=None):
    """``input.clamp_(min, max)``."""
    return input.clamp_(min, max)


def index_put_(input, indices, values, accumulate=False):
    """``input.index_put_(indices, values, accumulate)``."""
    return input.index_put_(indices, values, accumulate)
