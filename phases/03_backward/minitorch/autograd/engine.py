# GENERATED from minitorch/autograd/engine.py by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
# phase: 03
"""The backward pass: walk the recorded graph from the output back to the leaves.

Reverse-mode differentiation (the chain rule applied from the output; see Baydin et al., 2018,
"Automatic Differentiation in Machine Learning: a Survey", section 3.2): each node receives
dL/d(its output), asks its op for dL/d(each input), and passes those on. A node may feed several
others, so it must wait until all of them have sent their share: we visit nodes in reverse
topological order and add up gradients that meet at the same node or leaf.
"""
from .grad_mode import set_grad_enabled


def _topological_order(root):
    """Nodes reachable from ``root``, each after every node that consumes its output."""
    # >>> exercise 03.4: the topological sort
    # hint: a depth-first search from root over node.inputs[k].grad_fn; append a node after all its inputs (post-order)
    # hint: reverse the post-order: root first; an explicit stack avoids Python's recursion limit on deep graphs
    order, visited, stack = [], set(), [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for inp in node.inputs:
            if inp is not None and inp.grad_fn is not None and inp.grad_fn not in visited:
                stack.append((inp.grad_fn, False))
    return order[::-1]          # post-order reversed: the root first, leaves' parents last
    # <<< exercise


def _accumulate(store, key, grad):
    store[key] = grad if key not in store else store[key] + grad


def backward(tensor, gradient=None, retain_graph=False, create_graph=False):
    """Add d(tensor)/d(leaf), weighted by ``gradient``, into ``.grad`` of every leaf behind it.

    Raises:
        RuntimeError: if ``tensor`` does not require grad, if ``gradient`` is missing for a
            non-scalar output or has the wrong shape, or if the graph was already freed.
    """
    from ..creation import ones_like
    if not tensor.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if tensor.numel() != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs; "
                               f"pass gradient= of shape {tuple(tensor.shape)}")
        gradient = ones_like(tensor)
    elif gradient.shape != tensor.shape:
        raise RuntimeError(f"backward: gradient has shape {tuple(gradient.shape)}, "
                           f"expected the output's shape {tuple(tensor.shape)}")
    if tensor.grad_fn is None:              # backward on a leaf: its gradient is `gradient` itself
        _accumulate_leaf(tensor, gradient.detach())
        return
    grads = {tensor.grad_fn: gradient}
    with set_grad_enabled(create_graph):    # backward ops are recorded only for higher derivatives
        for node in _topological_order(tensor.grad_fn):
            grad = grads.pop(node, None)
            if grad is None:                # every path to this node had a zero (None) gradient
                continue
            if node.ctx is None:
                raise RuntimeError("Trying to backward through the graph a second time: its saved "
                                   "tensors were freed. Pass retain_graph=True to the first backward().")
            if node.ctx.saved_tensors:
                _check_versions(node)
            input_grads = node.fn.backward(node.ctx, grad)
            if not isinstance(input_grads, tuple):
                input_grads = (input_grads,)
            for inp, g in zip(node.inputs, input_grads):
                if inp is None or g is None:
                    continue
                if inp.grad_fn is None:
                    _accumulate_leaf(inp, g if create_graph else g.detach())
                else:
                    _accumulate(grads, inp.grad_fn, g)
            if not retain_graph:
                node.ctx = None             # free what forward saved


def _check_versions(node):
    """Raise if a tensor ``node``'s op saved was written in place since (its version moved on):
    the gradient would be computed from values forward never saw."""
    for k, (t, v) in enumerate(zip(node.ctx.saved_tensors, node.ctx.saved_versions)):
        if v is not None and t._version != v:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{t.dtype.name} tensor of shape {list(t.shape)}] (saved tensor {k} of "
                f"{node.name()}) is at version {t._version}; expected version {v} instead. Use an "
                f"out-of-place op, or .clone() the tensor before changing it.")


def _accumulate_leaf(leaf, grad):
    leaf.grad = grad if leaf.grad is None else leaf.grad + grad
