"""Phase 06: softmax, log-softmax, cross-entropy, NLL, argmax and nn.Flatten, against PyTorch and
NumPy on odd shapes (rows of 1, 10, 1000, 4097 classes; row counts that are multiples of nothing),
gradients by finite differences in float64 (gradcheck), special values and error messages.
Every test runs on cpu and, marked cuda, on the GPU (the ``device`` fixture)."""
import numpy as np
import pytest
import torch

import minitorch as mt
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck

from helpers import backward_both, tensor, to_np

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-11, atol=1e-13)}
TORCH_DTYPE = {"float32": torch.float32, "float64": torch.float64}
ROW_SHAPES = [(1, 1), (7, 1), (3, 10), (65, 10), (2, 33), (3, 1000), (2, 1025), (2, 4097)]


def _close(ours, theirs, dtype):
    np.testing.assert_allclose(to_np(ours), theirs.detach().numpy(), **TOL[dtype])


# ---- softmax / log-softmax -------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 10), (3, 1000), (2, 4097), (130, 7)])
def test_softmax_stays_finite_for_huge_logits(device, rng, shape):
    x = rng.choice([-1000.0, 1000.0], size=shape) + rng.standard_normal(shape)
    p = mt.softmax(tensor(x, device, dtype=mt.float32), dim=-1)
    out = to_np(p)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)
    logp = to_np(mt.log_softmax(tensor(x, device, dtype=mt.float32), dim=-1))
    assert np.isfinite(logp).all() and (logp <= 0).all()
    np.testing.assert_allclose(logp, torch.log_softmax(torch.tensor(x, dtype=torch.float32), -1).numpy(),
                               rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", ROW_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_softmax_rows_match_pytorch(device, rng, shape, log, dtype):
    x = rng.standard_normal(shape) * 4
    g = rng.standard_normal(shape)
    ours = tensor(x, device, getattr(mt, dtype), requires_grad=True)
    theirs = torch.tensor(x, dtype=TORCH_DTYPE[dtype], requires_grad=True)
    fn, tfn = (mt.log_softmax, torch.log_softmax) if log else (mt.softmax, torch.softmax)
    y, ty = fn(ours, dim=1), tfn(theirs, 1)
    _close(y, ty, dtype)
    backward_both(y, ty, g, device, getattr(mt, dtype))
    _close(ours.grad, theirs.grad, dtype)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((4, 5, 6), 0), ((4, 5, 6), 1), ((4, 5, 6), -1), ((3, 1, 2), 1),
                                       ((7,), 0), ((), 0), ((0, 5), 1), ((5, 0), 1), ((2, 3, 4, 5), 2)])
def test_softmax_any_dim_matches_pytorch(device, rng, shape, dim, log):
    x = rng.standard_normal(shape)
    ours = tensor(x, device, mt.float64, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y = (mt.log_softmax if log else mt.softmax)(ours, dim)
    ty = (torch.log_softmax if log else torch.softmax)(theirs, dim)
    assert y.shape == tuple(ty.shape) and y.is_contiguous()
    _close(y, ty, "float64")
    if x.size:
        w = rng.standard_normal(shape)
        backward_both(y, ty, w, device)
        _close(ours.grad, theirs.grad, "float64")


def test_softmax_of_views_and_methods(device, rng):
    base = rng.standard_normal((6, 9))
    x = tensor(base, device, dtype=mt.float64).T            # non-contiguous [9, 6]
    np.testing.assert_allclose(to_np(x.softmax(1)), torch.softmax(torch.tensor(base).T, 1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(x.log_softmax(0)), torch.log_softmax(torch.tensor(base).T, 0).numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(F.softmax(x, -1, dtype=mt.float32)),
                               torch.softmax(torch.tensor(base).T, -1).numpy(), rtol=1e-5)
    np.testing.assert_allclose(to_np(mt.nn.Softmax(dim=0)(x)), torch.softmax(torch.tensor(base).T, 0).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(to_np(mt.nn.LogSoftmax(dim=1)(x)), torch.log_softmax(torch.tensor(base).T, 1).numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("n", [10, 700, 3000])
def test_softmax_special_values_like_pytorch(device, rng, n):
    x = rng.standard_normal((5, n)) * 3
    x[0, : n // 2] = -np.inf            # masked logits: probability 0, log-probability -inf
    x[1, :] = -np.inf                   # every logit masked: NaN, as in PyTorch
    x[2, n // 3] = np.nan               # a NaN poisons its row
    x[3, :] = -np.inf
    x[3, n - 1] = 7.0                   # one survivor: probability 1
    for fn, tfn in ((mt.softmax, torch.softmax), (mt.log_softmax, torch.log_softmax)):
        ours = to_np(fn(tensor(x, device, dtype=mt.float32), 1))
        theirs = tfn(torch.tensor(x, dtype=torch.float32), 1).numpy()
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)     # equal infinities pass


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((4, 3), 0), ((2, 3, 4), 1), ((1, 1), 0)])
def test_softmax_gradcheck(device, rng, shape, dim, log):
    fn = mt.log_softmax if log else mt.softmax
    assert gradcheck(lambda x: fn(x, dim), [tensor(rng.standard_normal(shape), device, mt.float64, requires_grad=True)])


# ---- cross-entropy and NLL ------------------------------------------------------------------------
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(1, 1), (3, 10), (64, 10), (5, 33), (3, 1000), (2, 4097), (37, 1)],
                         ids=lambda s: "x".join(map(str, s)))
def test_cross_entropy_matches_pytorch(device, rng, shape, reduction, dtype):
    x = rng.standard_normal(shape) * 3
    t = rng.integers(0, shape[1], shape[0])
    ours = tensor(x, device, getattr(mt, dtype), requires_grad=True)
    theirs = torch.tensor(x, dtype=TORCH_DTYPE[dtype], requires_grad=True)
    loss = F.cross_entropy(ours, tensor(t, device), reduction=reduction)
    tloss = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), reduction=reduction)
    assert loss.shape == tuple(tloss.shape) and loss.dtype == getattr(mt, dtype)
    _close(loss, tloss, dtype)
    w = rng.standard_normal(tuple(tloss.shape))
    backward_both(loss, tloss, w, device, getattr(mt, dtype))
    _close(ours.grad, theirs.grad, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(7,), (2, 5, 3), (2, 4, 3, 2)])
def test_cross_entropy_class_vector_and_extra_dims(device, rng, shape, reduction):
    x = rng.standard_normal(shape)
    C = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, C, tshape)
    ours = tensor(x, device, mt.float64, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(ours, tensor(t, device, dtype=mt.int64), reduction)
    tloss = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), reduction=reduction)
    assert loss.shape == tuple(tloss.shape)
    _close(loss, tloss, "float64")
    loss.sum().backward()
    tloss.sum().backward()
    _close(ours.grad, theirs.grad, "float64")


def test_cross_entropy_of_a_view_and_zero_rows(device, rng):
    base = rng.standard_normal((10, 6))
    t = rng.integers(0, 10, 6)
    ours = tensor(base, device, mt.float64, requires_grad=True)
    theirs = torch.tensor(base, requires_grad=True)
    loss = F.cross_entropy(ours.T, tensor(t, device))
    tloss = torch.nn.functional.cross_entropy(theirs.T, torch.tensor(t))
    _close(loss, tloss, "float64")
    loss.backward()
    tloss.backward()
    _close(ours.grad, theirs.grad, "float64")
    empty = F.cross_entropy(tensor(np.zeros((0, 4)), device, dtype=mt.float32), tensor(np.zeros(0, np.int64), device))
    assert np.isnan(empty.item())                        # the mean of nothing, as in PyTorch
    assert F.cross_entropy(tensor(np.zeros((0, 4)), device, dtype=mt.float32), tensor(np.zeros(0, np.int64), device),
                           reduction="sum").item() == 0.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(1, 1), (4, 10), (3, 1000), (2, 4097)], ids=lambda s: "x".join(map(str, s)))
def test_nll_loss_matches_pytorch(device, rng, shape, reduction, dtype):
    x = rng.standard_normal(shape)
    t = rng.integers(0, shape[1], shape[0])
    ours = tensor(x, device, getattr(mt, dtype), requires_grad=True)
    theirs = torch.tensor(x, dtype=TORCH_DTYPE[dtype], requires_grad=True)
    loss = F.nll_loss(ours, tensor(t, device), reduction=reduction)
    tloss = torch.nn.functional.nll_loss(theirs, torch.tensor(t), reduction=reduction)
    _close(loss, tloss, dtype)
    loss.sum().backward()
    tloss.sum().backward()
    _close(ours.grad, theirs.grad, dtype)


def test_log_softmax_then_nll_is_cross_entropy(device, rng):
    x = tensor(rng.standard_normal((9, 13)), device, dtype=mt.float64)
    t = tensor(rng.integers(0, 13, 9), device)
    a = mt.nn.NLLLoss()(mt.nn.LogSoftmax(dim=1)(x), t)
    b = mt.nn.CrossEntropyLoss()(x, t)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-13)
    assert mt.nn.CrossEntropyLoss(reduction="none")(x, t).shape == (9,)
    assert mt.nn.NLLLoss(reduction="sum")(x, t).shape == ()


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_gradcheck(device, rng, reduction):
    t = tensor(rng.integers(0, 5, 4), device)
    x = tensor(rng.standard_normal((4, 5)), device, mt.float64, requires_grad=True)
    assert gradcheck(lambda x: F.cross_entropy(x, t, reduction), [x])
    t3 = tensor(rng.integers(0, 3, (2, 2)), device)
    x3 = tensor(rng.standard_normal((2, 3, 2)), device, mt.float64, requires_grad=True)
    assert gradcheck(lambda x: F.cross_entropy(x, t3, reduction), [x3])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_gradcheck(device, rng, reduction):
    t = tensor(rng.integers(0, 6, 5), device)
    x = tensor(rng.standard_normal((5, 6)), device, mt.float64, requires_grad=True)
    assert gradcheck(lambda x: F.nll_loss(x, t, reduction), [x])
    assert gradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction), [x])


def test_cross_entropy_trains_a_linear_classifier(device, rng):
    """A few SGD steps on separable data drive the loss down and the accuracy up."""
    X = rng.standard_normal((128, 8))
    y = np.argmax(X[:, :4] @ rng.standard_normal((4, 4)), axis=1)
    model = mt.nn.Linear(8, 4).to(device)
    opt = mt.optim.SGD(model.parameters(), lr=0.5)
    xs, ys = tensor(X, device, dtype=mt.float32), tensor(y, device)
    first = None
    for _ in range(60):
        loss = F.cross_entropy(model(xs), ys)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
    assert (model(xs).argmax(1) == ys).float().mean().item() > 0.9


# ---- argmax ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (3, 10), (70, 3), (3, 1000), (2, 1025), (2, 4097)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_argmax_first_index_on_ties_like_numpy(device, rng, shape, dtype):
    x = rng.integers(-2, 3, shape).astype(dtype)          # few values: many ties
    got = tensor(x, device).argmax(dim=1)
    assert got.dtype == mt.int64 and got.shape == (shape[0],)
    np.testing.assert_array_equal(to_np(got), np.argmax(x, axis=1))
    np.testing.assert_array_equal(to_np(torch.tensor(x).argmax(1)), np.argmax(x, axis=1))   # same rule


def test_argmax_nan_counts_as_the_maximum(device):
    x = np.array([[1.0, np.nan, 5.0, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf], [2.0, 9.0, 9.0, 1.0]])
    got = to_np(tensor(x, device, dtype=mt.float32).argmax(1))
    np.testing.assert_array_equal(got, torch.tensor(x).argmax(1).numpy())
    np.testing.assert_array_equal(got, [1, 0, 1])


@pytest.mark.parametrize("shape,dim,keepdim", [((4, 5, 6), 0, False), ((4, 5, 6), 1, True), ((4, 5, 6), -1, False),
                                               ((3, 4), None, False), ((3, 4), None, True), ((7,), 0, True),
                                               ((), None, False), ((), 0, False), ((0, 3), 1, False)])
def test_argmax_dims_match_pytorch(device, rng, shape, dim, keepdim):
    x = rng.standard_normal(shape)
    got = mt.argmax(tensor(x, device), dim=dim, keepdim=keepdim)
    want = torch.argmax(torch.tensor(x), dim=dim, keepdim=keepdim)
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(to_np(got), want.numpy())


def test_argmax_of_bool_and_no_grad(device):
    assert mt.tensor([[False, True, True]], device=device).argmax(1).tolist() == [1]
    x = mt.tensor([[1.0, 3.0, 2.0]], device=device, requires_grad=True)
    idx = x.argmax(1)
    assert idx.tolist() == [1] and not idx.requires_grad


# ---- nn.Flatten -----------------------------------------------------------------------------------
@pytest.mark.parametrize("start,end", [(1, -1), (0, -1), (1, 2), (2, 3), (-2, -1), (0, 0)])
def test_flatten_matches_pytorch(device, rng, start, end):
    x = rng.standard_normal((2, 3, 4, 5))
    ours = tensor(x, device, mt.float64, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y = mt.nn.Flatten(start, end)(ours)
    ty = torch.nn.Flatten(start, end)(theirs)
    assert y.shape == tuple(ty.shape)
    _close(y, ty, "float64")
    w = rng.standard_normal(tuple(ty.shape))
    backward_both(y, ty, w, device)
    _close(ours.grad, theirs.grad, "float64")
    assert repr(mt.nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


def test_flatten_of_a_view_and_bad_dims(device, rng):
    x = tensor(rng.standard_normal((3, 4, 2)), device).permute(2, 0, 1)
    np.testing.assert_array_equal(to_np(mt.nn.Flatten()(x)), to_np(x).reshape(2, 12))
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.nn.Flatten(start_dim=5)(x)


# ---- errors ---------------------------------------------------------------------------------------
def test_error_messages(device):
    x = mt.zeros(3, 4, device=device)
    with pytest.raises(ValueError, match=r"input of shape \(3, 4\) needs a target of shape \(3,\).*\(2,\)"):
        F.cross_entropy(x, mt.tensor([0, 1], device=device))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(3, 1\)"):
        F.nll_loss(x, mt.zeros(3, 1, dtype=mt.int64, device=device))
    with pytest.raises(RuntimeError, match="int64 class indices, got minitorch.float32"):
        F.cross_entropy(x, mt.tensor([0.0, 1.0, 2.0], device=device))
    with pytest.raises(RuntimeError, match="int64 class indices"):
        F.nll_loss(x, mt.tensor([True, False, True], device=device))
    with pytest.raises(ValueError, match="reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        F.cross_entropy(x, mt.tensor([0, 1, 2], device=device), reduction="avg")
    with pytest.raises(ValueError, match="0-d"):
        F.cross_entropy(mt.tensor(1.0, device=device), mt.tensor(0, device=device))
    with pytest.raises(RuntimeError, match="floating point"):
        F.cross_entropy(mt.zeros(3, 4, dtype=mt.int64, device=device), mt.tensor([0, 1, 2], device=device))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        mt.softmax(x, dim=2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.log_softmax(-3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmax(dim=2)
    with pytest.raises(RuntimeError, match="softmax: expected a floating point input, got minitorch.int64"):
        mt.softmax(mt.tensor([1, 2], device=device), 0)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        mt.zeros(2, 0, device=device).argmax(1)
    with pytest.raises(IndexError, match="numel\\(\\) == 0"):
        mt.zeros(0, device=device).argmax()


def test_out_of_range_targets(device):
    x = mt.zeros(3, 4, device=device)
    bad = mt.tensor([0, 4, 1], device=device)
    if device == "cpu":             # checked where it is cheap
        with pytest.raises(IndexError, match="target 4 is out of bounds for 4 classes"):
            F.cross_entropy(x, bad)
        with pytest.raises(IndexError, match="target -1 is out of bounds"):
            F.nll_loss(x, mt.tensor([0, -1, 1], device=device))
    else:                           # never read out of bounds, never wait for the GPU: NaN rows
        x.requires_grad_()
        loss = F.cross_entropy(x, bad, reduction="none")
        values = loss.tolist()
        assert np.isnan(values[1]) and not np.isnan(values[0]) and not np.isnan(values[2])
        loss.sum().backward()
        g = to_np(x.grad)
        assert np.isnan(g[1]).all() and np.isfinite(g[[0, 2]]).all()
        assert np.isnan(F.nll_loss(x.detach(), bad, reduction="none").tolist()[1])
