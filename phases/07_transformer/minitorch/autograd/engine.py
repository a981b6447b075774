# GENERATED from minitorch/autograd/engine.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""The backward pass: walk the recorded graph from the output back to the leaves.

Reverse-mode differentiation (the chain rule applied from the output; see Baydin et al., 2018,
"Automatic Differentiation in Machine Learning: a Survey", section 3.2): each node receives
dL/d(its output), asks its op for dL/d(each input), and passes those on. A node may feed several
others, so it must wait until all of them have sent their share: we visit nodes in reverse
topological order and add up gradients that meet at the same node or leaf.
"""
import warnings

from . import anomaly_mode
from .function import Node
from .grad_mode import set_grad_enabled
from .hooks import run_hooks


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


def backward(tensor, gradient=None, retain_graph=None, create_graph=False):
    """Add d(tensor)/d(leaf), weighted by ``gradient``, into ``.grad`` of every leaf behind it.
    The graph is freed unless ``retain_graph``, which defaults to ``create_graph`` (as in PyTorch).

    Raises:
        RuntimeError: if ``tensor`` does not require grad, if ``gradient`` is missing for a
            non-scalar output or has the wrong shape, or if the graph was already freed.
    """
    gradient = _check_root(tensor, gradient, 0)
    run_backward(((tensor, gradient),), create_graph if retain_graph is None else retain_graph, create_graph)


def _check_root(tensor, gradient, k):
    """The gradient to start from at output ``k``: ``gradient``, or 1 for a one-element output."""
    from ..creation import ones_like
    if not tensor.requires_grad:
        raise RuntimeError(f"element {k} of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if tensor.numel() != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs; "
                               f"pass gradient= of shape {tuple(tensor.shape)}")
        return ones_like(tensor)
    if gradient.shape != tensor.shape:
        raise RuntimeError(f"backward: gradient has shape {tuple(gradient.shape)}, "
                           f"expected the output's shape {tuple(tensor.shape)}")
    return gradient


def run_backward(roots, retain_graph, create_graph, inputs=None):
    """The backward pass from ``roots``, ``(output, dL/d output)`` pairs.

    Without ``inputs``, adds dL/d(leaf) into the ``.grad`` of every leaf behind the outputs. With
    ``inputs`` (a list of tensors, for :func:`grad`), runs only the nodes that lead to them and
    returns their gradients (``None`` where none arrived), touching no leaf's ``.grad``. Hooks and
    ``retain_grad`` act in both cases, on each tensor's total gradient.
    """
    grads, leaf_grads = {}, {}              # node -> gradient(s) of its output(s); id(leaf) -> [leaf, grad]
    for out, g in roots:
        _send(grads, leaf_grads, out, g)
    # One root above all outputs, so that one topological order covers them (then dropped).
    order = _topological_order(Node(None, None, tuple(out for out, _ in roots)))[1:]
    captured = None if inputs is None else _Capture(inputs, order)
    with set_grad_enabled(create_graph):    # backward ops are recorded only for higher derivatives
        for node in order:
            grad = grads.pop(node, None)
            if grad is None:                # every path to this node had a zero (None) gradient
                continue
            if captured is not None and node not in captured.reached:
                continue                    # neither asked for nor leading to what is
            if node.hooks or node.retained:
                grad = _node_hooks(node, grad, create_graph)
            if captured is not None and not captured.at_node(node, grad):
                continue                    # asked for, and nothing asked for lies behind it
            if node.ctx is None:
                raise RuntimeError("Trying to backward through the graph a second time: its saved "
                                   "tensors were freed. Pass retain_graph=True to the first backward().")
            if node.ctx.saved_tensors:
                _check_versions(node)
            input_grads = _call_backward(node, grad)
            if anomaly_mode._enabled and anomaly_mode._check_nan:
                _check_nan(node, input_grads)
            for inp, g in zip(node.inputs, input_grads):
                if inp is not None and g is not None:
                    _send(grads, leaf_grads, inp, g)
            if not retain_graph:
                node.ctx = None             # free what forward saved
        for leaf, g in leaf_grads.values():
            if captured is not None and id(leaf) not in captured.leaves:
                continue                    # a leaf grad() was not asked about: no hooks, no .grad
            if leaf._hooks:
                g = run_hooks(leaf._hooks, None, g)
            if captured is None:
                _accumulate_leaf(leaf, g if create_graph else g.detach())
            else:
                captured.at_leaf(leaf, g)
    return None if captured is None else captured.grads


def _send(grads, leaf_grads, tensor, grad):
    """Add ``grad`` to what ``tensor`` has received: at its node (per output for a node of several
    outputs), or, for a leaf, in ``leaf_grads`` until the pass ends."""
    node, nr = tensor.grad_fn, tensor._output_nr
    if node is None:
        entry = leaf_grads.get(id(tensor))
        if entry is None:
            leaf_grads[id(tensor)] = [tensor, grad]
        else:
            entry[1] = entry[1] + grad
    elif nr is None:
        _accumulate(grads, node, grad)
    else:
        _accumulate(grads.setdefault(node, {}), nr, grad)


def _call_backward(node, grad):
    """``node.fn.backward`` as a tuple of input gradients; a node of several outputs gets one
    gradient per output (zeros for those that got none, unless ctx.set_materialize_grads(False))."""
    if type(grad) is dict:
        from ..creation import zeros
        ctx = node.ctx
        args = [grad.get(k) for k in range(len(ctx.output_meta))]
        if ctx.materialize_grads:
            args = [zeros(m[0], dtype=m[1], device=m[2]) if g is None and m is not None else g
                    for g, m in zip(args, ctx.output_meta)]
        input_grads = node.fn.backward(ctx, *args)
    else:
        input_grads = node.fn.backward(node.ctx, grad)
    return input_grads if isinstance(input_grads, tuple) else (input_grads,)


def _node_hooks(node, grad, create_graph):
    """The hooks and retain_grad of the node's output (each output's, for several) on its total gradient."""
    if type(grad) is not dict:
        return _output_hooks(node, None, grad, create_graph)
    return {nr: _output_hooks(node, nr, g, create_graph) for nr, g in grad.items()}


def _output_hooks(node, nr, grad, create_graph):
    """Output ``nr``'s hooks in registration order (each may replace the gradient), then, if it
    called retain_grad() and is still alive, add the result into its ``.grad``."""
    if node.hooks:
        grad = run_hooks(node.hooks, nr, grad)
    ref = node.retained.get(nr) if node.retained else None
    kept = ref() if ref is not None else None
    if kept is not None:
        g = grad if create_graph else grad.detach()
        kept.grad = g if kept.grad is None else kept.grad + g
    return grad


class _Capture:
    """Where :func:`grad`'s inputs receive their gradients, and which nodes lead to them."""

    def __init__(self, inputs, order):
        self.grads = [None] * len(inputs)
        self.leaves, self.nodes = {}, {}    # id(leaf) -> [index in inputs]; node -> [(output_nr, index)]
        for i, t in enumerate(inputs):
            if t.grad_fn is None:
                self.leaves.setdefault(id(t), []).append(i)
            else:
                self.nodes.setdefault(t.grad_fn, []).append((t._output_nr, i))
        # A node runs when one of its inputs is an input leaf or comes from a node leading to one;
        # inputs' nodes come after their consumers in ``order``, so walk it backwards.
        self.reached, self.runs = set(self.nodes), set()      # nodes to visit; nodes whose backward runs
        for node in reversed(order):
            for inp in node.inputs:
                if inp is not None and (id(inp) in self.leaves if inp.grad_fn is None else inp.grad_fn in self.reached):
                    self.runs.add(node)
                    self.reached.add(node)
                    break

    def at_node(self, node, grad):
        """Keep the gradient of inputs made by ``node``; whether ``node``'s backward must run."""
        for nr, i in self.nodes.get(node, ()):
            self.grads[i] = grad if nr is None else grad.get(nr)
        return node in self.runs

    def at_leaf(self, leaf, grad):
        for i in self.leaves[id(leaf)]:
            self.grads[i] = grad


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """d(outputs)/d(inputs), weighted by ``grad_outputs``, as a tuple: one gradient per input,
    without touching any ``.grad`` (``torch.autograd.grad``).

    Args:
        outputs: a tensor or a sequence of tensors to differentiate.
        inputs: a tensor or a sequence of tensors (leaves or not) that require grad.
        grad_outputs: one weight per output (same shape), or None for a one-element output (1).
        retain_graph: keep the graph for another pass; defaults to ``create_graph``.
        create_graph: record the backward pass, so the result can be differentiated again
            (second derivatives, gradient penalties).
        allow_unused: return None for an input the outputs do not depend on, rather than raise.
    Raises:
        RuntimeError: an output or input that does not require grad, an unused input (unless
            ``allow_unused``), a missing or misshapen grad_output (PyTorch's messages).
    """
    outputs = (outputs,) if not isinstance(outputs, (tuple, list)) else tuple(outputs)
    inputs = (inputs,) if not isinstance(inputs, (tuple, list)) else tuple(inputs)
    if grad_outputs is None or not isinstance(grad_outputs, (tuple, list)):
        grad_outputs = (grad_outputs,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} grad_outputs "
                           f"for {len(outputs)} outputs")
    if not all(t.requires_grad for t in inputs):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = tuple((out, _check_root(out, g, k)) for k, (out, g) in enumerate(zip(outputs, grad_outputs)))
    retain_graph = create_graph if retain_graph is None else retain_graph
    result = run_backward(roots, retain_graph, create_graph, inputs)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
    return tuple(g if create_graph or g is None else g.detach() for g in result)


def _check_nan(node, input_grads):
    """Anomaly mode: raise, naming the op, if one of its input gradients holds a NaN. The check
    reads a flag back to the host (the GPU waits): the price of debugging, as in PyTorch."""
    for k, g in enumerate(input_grads):
        if g is not None and g.dtype.is_floating_point and (g != g).sum().item() > 0:      # NaN != NaN
            trace = getattr(node.ctx, "forward_trace", None)
            if trace:
                warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                              f"error:\n{trace}", stacklevel=2)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {k}th output.")


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
