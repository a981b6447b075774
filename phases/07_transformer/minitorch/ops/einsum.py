# GENERATED from minitorch/ops/einsum.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""``einsum``: Einstein summation, reduced to the ops we have (views, sums, batched matmul).

``einsum("bij,bjk->bik", a, b)`` names each dimension of each operand with a letter; letters shared
between operands are multiplied together, letters missing from the output are summed. We evaluate
it in four moves, each an existing differentiable op, so autograd needs nothing new:

1. a letter repeated within one operand (``"ii->i"``) takes the diagonal: a strided view whose
   stride is the sum of the repeated dimensions' strides (``Diagonal`` below);
2. a letter found in one operand only and not in the output is summed away at once;
3. operands are contracted pairwise, left to right: each pair is permuted and reshaped to
   ``[batch, left, contracted] @ [batch, contracted, right]`` (one batched matmul), where batch
   letters are in both and still needed, contracted letters in both and needed nowhere else;
4. the result is summed over what the output lacks and permuted into the output's order.

``...`` stands for the leading dimensions a subscript does not name; they broadcast across
operands (aligned from the right) and, without ``->``, come first in the output. Labels of size 1
broadcast against the same label of another size (as PyTorch allows). Our matmul is floating
only: integer operands are multiplied and summed elementwise instead.
"""
import math
import string

from ..autograd.function import Function
from ..tensor import Tensor
from .elementwise import check_same_device
from .matmul import matmul
from .reduce import sum as _sum
from .shape import permute, reshape

_LETTERS = set(string.ascii_letters)


class Diagonal(Function):
    """The view of ``a`` where the dimensions of each group share one index: ``groups`` lists, for
    each output dimension, the input dimensions it walks (``[[0, 1]]`` on a matrix: its diagonal)."""

    @staticmethod
    def forward(ctx, a, groups):
        ctx.groups, ctx.shape, ctx.dtype = groups, a.shape, a.dtype
        return Tensor(_diagonal_view(a._backend, a._data, groups), a.device)

    @staticmethod
    def backward(ctx, grad):
        """Zeros of the input's shape with ``grad`` written into the same diagonal view."""
        from ..creation import zeros
        out = zeros(ctx.shape, dtype=ctx.dtype, device=grad.device)
        out._backend.copy_(_diagonal_view(out._backend, out._data, ctx.groups), grad._data)
        return out, None


def _diagonal_view(backend, data, groups):
    shape = [data.shape[g[0]] for g in groups]
    strides = [sum(data.strides[d] for d in g) for g in groups]
    return backend.as_strided(data, shape, strides)


def _parse(equation, operands):
    """The labels of each operand and of the output: lists of letters, ``...``'s dimensions as
    the ints 0, 1, ... (0 the outermost of the widest ``...``).

    Raises:
        RuntimeError: a character that is not a letter, an operand count or rank that does not
            match, a misplaced ``...``, an output label repeated or found in no input.
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    for at, c in enumerate(lhs + arrow + rhs):
        if c not in _LETTERS and c not in ",." and not (arrow and len(lhs) <= at < len(lhs) + 2):
            raise RuntimeError(f"einsum(): invalid subscript given at index {at} in the equation string "
                               f"'{equation}', subscripts must be in [a-zA-Z]")
    if "," in rhs:
        raise RuntimeError(f"einsum(): the output subscript of '{equation}' may not contain ','")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        more = "more" if len(operands) > len(terms) else "fewer"
        raise RuntimeError(f"einsum(): {more} operands were provided than specified in the equation "
                           f"({len(operands)} operands, {len(terms)} subscripts in '{equation}')")
    widths = []
    for k, (term, op) in enumerate(zip(terms, operands)):
        dots = "..." in term
        if "." in term.replace("...", "", 1):
            raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part of any ellipsis")
        named = len(term) - 3 * dots
        if named > op.ndim or (not dots and named != op.ndim):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match "
                               f"the number of dimensions ({op.ndim}) for operand {k}"
                               f"{'' if dots else ' and no ellipsis was given'}")
        widths.append(op.ndim - named)
    width = max(widths, default=0)
    labels = [_expand(term, w, width) for term, w in zip(terms, widths)]
    if arrow:
        if "." in rhs.replace("...", "", 1):
            raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis")
        out = _expand(rhs, width, width)
        for c in out:
            if isinstance(c, str) and out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if isinstance(c, str) and not any(c in l for l in labels):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any "
                                   f"input operand")
    else:                          # implicit output: '...' first, then the letters seen once, sorted
        letters = [c for l in labels for c in l if isinstance(c, str)]
        out = list(range(width)) + sorted({c for c in letters if letters.count(c) == 1})
    return labels, out


def _expand(term, w, width):
    """A subscript's labels with ``...`` replaced by the last ``w`` of the ``width`` ellipsis ints."""
    head, dots, tail = term.partition("...")
    return list(head) + (list(range(width - w, width)) if dots else []) + list(tail)


def _sizes(labels, operands):
    """Each label's size (a size-1 label broadcasts against a bigger one).

    Raises:
        RuntimeError: a label with two different sizes, neither 1.
    """
    sizes = {}
    for k, (l, op) in enumerate(zip(labels, operands)):
        for c, n in zip(l, op.shape):
            if c not in sizes or sizes[c] == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                name = c if isinstance(c, str) else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {n} for operand {k} which does not "
                                   f"broadcast with previously seen size {sizes[c]}")
    return sizes


def _take_diagonal(t, labels, k):
    """Merge repeated labels of one operand into one dimension (a diagonal view)."""
    unique = list(dict.fromkeys(labels))
    if len(unique) == len(labels):
        return t, labels
    groups = [[d for d, c in enumerate(labels) if c == u] for u in unique]
    for u, g in zip(unique, groups):
        sizes = {t.shape[d] for d in g}
        if len(sizes) > 1:
            raise RuntimeError(f"einsum(): subscript {u} is repeated for operand {k} but the sizes don't match, "
                               f"{' != '.join(str(t.shape[d]) for d in g)}")
    return Diagonal.apply(t, groups), unique


def _sum_out(t, labels, keep):
    """Sum ``t`` over the labels not in ``keep``; returns (tensor, remaining labels)."""
    dims = tuple(d for d, c in enumerate(labels) if c not in keep)
    if not dims:
        return t, labels
    return _sum(t, dims), [c for c in labels if c in keep]


def _arrange(t, labels, order, sizes):
    """``t`` permuted into ``order`` (a list of its labels), size-1 labels expanded to ``sizes``."""
    t = permute(t, *[labels.index(c) for c in order])
    full = [sizes[c] for c in order]
    return t.expand(*full) if list(t.shape) != full else t


def _contract(a, la, b, lb, needed, sizes):
    """Multiply ``a`` and ``b`` and sum their shared labels not in ``needed``, by one batched
    matmul [batch, left, sum] @ [batch, sum, right]; returns (tensor, labels batch+left+right)."""
    batch = [c for c in la if c in lb and c in needed]
    summed = [c for c in la if c in lb and c not in needed]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]

    def count(ls):
        return math.prod(sizes[c] for c in ls)
    a3 = reshape(_arrange(a, la, batch + left + summed, sizes), count(batch), count(left), count(summed))
    b3 = reshape(_arrange(b, lb, batch + summed + right, sizes), count(batch), count(summed), count(right))
    if a3.dtype.is_floating_point and b3.dtype.is_floating_point:
        out = matmul(a3, b3)
    else:                          # integers: our matmul is floating only
        out = _sum(a3.unsqueeze(-1) * b3.unsqueeze(1), 2)
    return reshape(out, *[sizes[c] for c in batch + left + right]), batch + left + right


def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``; ``"ii"`` the trace,
    ``"ii->i"`` the diagonal, ``"i,j->ij"`` the outer product, ``"...ij->...ji"`` a batched
    transpose, ``"bij,bjk->bik"`` the batched matmul. Operands may also come as one list.

    Shapes: one letter per dimension (``...`` for any leading ones); the output has the letters
    after ``->`` (without ``->``: ``...`` then the letters used once, alphabetically). Dtypes: the
    operands' promoted dtype. Differentiable: it is built from permute, reshape, expand, a
    diagonal view, sum and matmul (see the module's docstring for the order of contraction).

    Raises:
        RuntimeError: a malformed equation, a count or rank mismatch, sizes that do not match, or
            operands on different devices (each message names the problem).
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not all(isinstance(t, Tensor) for t in operands):
        raise TypeError("einsum(): expected Tensor operands")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    check_same_device("einsum", *operands)
    labels, out = _parse(equation, operands)
    terms = [_take_diagonal(t, l, k) for k, (t, l) in enumerate(zip(operands, labels))]
    sizes = _sizes([l for _, l in terms], [t for t, _ in terms])
    t, lt = _sum_out(*terms[0], _needed_after(terms, 0, out))
    for k in range(1, len(terms)):
        later = _needed_after(terms, k, out)
        b, lb = _sum_out(*terms[k], later | set(lt))       # labels of b alone: summed before the matmul
        t, lt = _contract(t, lt, b, lb, later, sizes)
    return _arrange(t, lt, out, sizes) if lt != out else t


def _needed_after(terms, k, out):
    """The labels still needed once operand ``k`` is folded in: those of later operands and the output."""
    return {c for _, l in terms[k + 1:] for c in l} | set(out)
