"""PyTorch as the oracle: run one op through minitorch and torch on the same inputs, compare.

In the manner of tinygrad's ``helper_test_op``: ``check_op`` builds random inputs of the given
shapes, feeds copies to ``fn(mt, *tensors)`` and ``fn(torch, *tensors)`` (one lambda serves both
libraries, since the names are PyTorch's), compares the outputs, then backpropagates the same
random weights through both and compares the input gradients. ``layout="transposed"`` hands the
op non-contiguous views (each input made as its transpose and transposed back), which is where
stride bugs hide.

    check_op(lambda lib, x: lib.clamp(x, min=-0.5), [(3, 4)], device, rng)
    check_op(lambda lib, x, y: x.remainder(y), [(5, 1), (1, 7)], device, rng, grad=False)
"""
import numpy as np
import torch

import minitorch as mt

TOLERANCE = {"float64": (1e-9, 1e-9), "float32": (1e-5, 1e-5)}      # (rtol, atol)


def random_array(shape, dtype, rng, low=-2.0, high=2.0):
    """Uniform values in [low, high) (integers for int64, coin flips for bool), as a NumPy array."""
    if dtype == "int64":
        return rng.integers(int(low), int(high) + 1, size=shape).astype(np.int64)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def _as_both(array, device, layout, requires_grad):
    """The same values as a minitorch tensor on ``device`` and a torch tensor on the cpu; with
    ``layout="transposed"`` both are non-contiguous views (the last two dims swapped twice)."""
    if layout == "transposed" and array.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(array, -1, -2))
        ours = mt.tensor(base, device=device).transpose(-1, -2)
        theirs = torch.tensor(base).transpose(-1, -2)
    else:
        ours, theirs = mt.tensor(array, device=device), torch.tensor(array)
    if requires_grad:        # make them leaves that collect gradients (views are not leaves)
        ours = ours.detach().requires_grad_(True)
        theirs = theirs.detach().requires_grad_(True)
    return ours, theirs


def _flatten(out):
    """An op's result as a list of tensors (a tuple, a namedtuple like ``sort``'s, or one tensor)."""
    if isinstance(out, (tuple, list)):
        return [o for o in out]
    return [out]


def _values(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    if isinstance(t, mt.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def assert_close(ours, theirs, dtype, what):
    """Values (and shape and dtype kind) of ``ours`` equal ``theirs`` within the dtype's tolerance."""
    a, b = _values(ours), _values(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, PyTorch gives {b.shape}"
    if b.dtype.kind in "biu":
        assert a.dtype.kind == b.dtype.kind, f"{what}: dtype {a.dtype}, PyTorch gives {b.dtype}"
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    rtol, atol = TOLERANCE.get(dtype, (1e-5, 1e-5))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check_op(fn, shapes, device, rng, dtype="float64", grad=True, layout="contiguous",
             low=-2.0, high=2.0, arrays=None):
    """Compare ``fn(mt, *inputs)`` with ``fn(torch, *inputs)`` on random inputs of ``shapes``.

    Args:
        fn: ``fn(lib, *tensors)``, lib being ``minitorch`` or ``torch``.
        shapes: one shape (tuple) per input.
        device: where minitorch computes ("cpu" or "cuda"); torch always runs on the cpu.
        dtype: NumPy dtype name of the inputs ("float64", "float32", "int64", "bool").
        grad: also compare the gradients of every floating input (for differentiable ops).
        layout: "contiguous" or "transposed" (non-contiguous views of the same values).
        low, high: the range inputs are drawn from (keep away from an op's poles).
        arrays: explicit NumPy inputs instead of random ones (``shapes`` is then ignored).
    Returns:
        (ours, theirs): the two results, for further checks.
    """
    arrays = arrays if arrays is not None else [random_array(s, dtype, rng, low, high) for s in shapes]
    differentiable = grad and np.dtype(dtype).kind == "f"
    pairs = [_as_both(a, device, layout, differentiable) for a in arrays]
    ours = fn(mt, *[p[0] for p in pairs])
    theirs = fn(torch, *[p[1] for p in pairs])
    outs, refs = _flatten(ours), _flatten(theirs)
    assert len(outs) == len(refs), f"{len(outs)} outputs, PyTorch gives {len(refs)}"
    for k, (o, r) in enumerate(zip(outs, refs)):
        assert_close(o, r, dtype, f"output {k}")
    if differentiable:
        _check_grads(outs, refs, pairs, dtype, device, rng)
    return ours, theirs


def _check_grads(outs, refs, pairs, dtype, device, rng):
    """Backpropagate sum(out * w) with the same random ``w`` through both; compare input grads."""
    ours_loss, theirs_loss = 0, 0
    for o, r in zip(outs, refs):
        if not (isinstance(r, torch.Tensor) and r.requires_grad):
            continue
        w = rng.standard_normal(tuple(r.shape)).astype(dtype)
        ours_loss = ours_loss + (o * mt.tensor(w, device=device)).sum()
        theirs_loss = theirs_loss + (r * torch.tensor(w)).sum()
    if isinstance(theirs_loss, int):
        return                     # no differentiable output (e.g. argsort's indices only)
    ours_loss.backward()
    theirs_loss.backward()
    for k, (ours, theirs) in enumerate(pairs):
        if theirs.grad is None:
            assert ours.grad is None or not _values(ours.grad).any(), f"input {k}: a gradient PyTorch does not give"
            continue
        assert ours.grad is not None, f"input {k}: no gradient, PyTorch gives one"
        assert_close(ours.grad, theirs.grad, dtype, f"gradient of input {k}")
