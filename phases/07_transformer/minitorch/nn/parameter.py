# GENERATED from minitorch/nn/parameter.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Parameter``: a tensor that a :class:`Module` owns and an optimizer updates."""
from ..creation import zeros_like
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor with ``requires_grad=True`` that registers itself when assigned to a module.

    ``Parameter(t)`` shares ``t``'s memory (no copy).
    """

    def __init__(self, data, requires_grad=True):
        super().__init__(data._data, data.device)
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


def zero_grads(params, set_to_none=True):
    """Forget the accumulated gradients of ``params`` (``None``, or zeros when ``set_to_none=False``);
    what ``Module.zero_grad`` and ``Optimizer.zero_grad`` do."""
    for p in params:
        if set_to_none:
            p.grad = None
        elif p.grad is not None:
            if p.grad.requires_grad:        # drop the graph a create_graph=True backward left on it
                p.grad = p.grad.detach()
            # A gradient can be a view that cannot be written in place: sum's backward hands back
            # an expanded (stride-0) tensor whose elements share one memory cell. Zero it in place
            # when it is compact (what PyTorch does), else replace it with zeros of its shape.
            if p.grad.is_contiguous():
                p.grad.zero_()
            else:
                p.grad = zeros_like(p.grad)
