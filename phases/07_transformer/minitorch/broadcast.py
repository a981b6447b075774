# GENERATED from minitorch/broadcast.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 02
"""Broadcasting: the shape several shapes stretch to, by NumPy's and PyTorch's rule.

Align the shapes on the right; in each dimension the sizes must be equal, or 1 (which stretches),
or missing (a shorter shape counts as 1 there). ``(4, 1, 5)`` with ``(3, 1)`` gives ``(4, 3, 5)``.
One function for both layers: the Tensor layer turns its ValueError into PyTorch's RuntimeError
naming the op; the cuda backend lets it through, as NumPy's own error reaches cpu.py's callers.
"""


def broadcast_shape(*shapes):
    """The shape that ``shapes`` (tuples of ints) broadcast to.

    Raises:
        ValueError: naming the shapes and the first dimension (counted from the right, as a
            negative index) whose sizes differ where neither is 1.
    """
    # >>> exercise 02.2: the broadcast shape
    # hint: align the shapes on the right: look at dimension -1, -2, ... of every shape that has it
    # hint: in each dimension the sizes other than 1 must all be equal; the result is that size, or 1
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast: "
                             f"dimension {i} has sizes {sorted(sizes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
    # <<< exercise
