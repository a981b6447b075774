"""Phase 04 reductions: max/min (values and indices), argmax/argmin, var/std, and the vectorised
sum of contiguous rows - against NumPy in float64 and PyTorch, on odd shapes, every axis, keepdim,
views, 1-element inputs and (on the GPU, marked slow) 10M-element inputs; gradients by finite
differences (gradcheck) and against PyTorch, ties and NaN included. Every test runs on cpu and,
marked cuda, on the GPU (the ``device`` fixture)."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch.autograd import gradcheck

from helpers import backward_both, tensor, to_np

SHAPES = [(1,), (7,), (1, 1, 1), (3, 5), (33, 1, 2), (4, 65, 3), (2, 3, 4, 5)]
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-11, atol=1e-12)}   # var / std vs NumPy


def _cases():
    for shape in SHAPES:
        for dim in range(-len(shape), len(shape)):
            yield shape, dim


# ---- max / min / argmax / argmin ---------------------------------------------------------------------
@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape,dim", list(_cases()), ids=lambda v: str(v))
def test_max_min_dim_match_numpy(device, rng, shape, dim, dtype, largest):
    x = rng.integers(-3, 4, shape).astype(dtype) if dtype == "int64" else rng.standard_normal(shape).astype(dtype)
    t = tensor(x, device)
    for keepdim in (False, True):
        values, indices = (t.max if largest else t.min)(dim, keepdim=keepdim)
        want_i = (np.argmax if largest else np.argmin)(x, axis=dim)
        want_v = np.take_along_axis(x, np.expand_dims(want_i, dim), dim)
        if not keepdim:
            want_v = want_v.squeeze(dim)
        else:
            want_i = np.expand_dims(want_i, dim)
        assert values.dtype == t.dtype and indices.dtype == mt.int64
        np.testing.assert_array_equal(to_np(values), want_v)
        np.testing.assert_array_equal(to_np(indices), want_i)
        assert values.shape == want_v.shape and indices.shape == want_i.shape
        am = (t.argmax if largest else t.argmin)(dim, keepdim=keepdim)
        np.testing.assert_array_equal(to_np(am), want_i)


@pytest.mark.parametrize("shape", [(1,), (), (5, 1), (1000, 3), (17, 19, 3), (100_003,)], ids=str)
def test_max_min_argmax_over_everything(device, rng, shape):
    x = rng.standard_normal(shape)
    t = tensor(x, device)
    assert t.max().item() == x.max() and t.min().item() == x.min()
    assert t.max().shape == () and t.argmax().shape == ()
    assert t.argmax().item() == np.argmax(x) and t.argmin().item() == np.argmin(x)
    assert mt.argmax(t, keepdim=True).shape == (1,) * x.ndim
    assert mt.max(t.T if x.ndim > 1 else t).item() == x.max()                # strided input
    if x.ndim > 1:
        assert mt.argmax(t.T).item() == np.argmax(x.T)                       # flat index in t.T's order


def test_first_index_on_ties_and_nan_propagates(device):
    x = np.array([[1.0, 5.0, 5.0, 2.0], [np.nan, 1.0, np.nan, 9.0], [3.0, 3.0, 3.0, 3.0], [-np.inf, -np.inf, 0.0, 0.0]])
    t = tensor(x, device)
    tt = torch.tensor(x)
    for f in ("max", "min"):
        v, i = getattr(t, f)(1)
        tv, ti = getattr(tt, f)(1)
        np.testing.assert_array_equal(to_np(v), tv.numpy())
        np.testing.assert_array_equal(to_np(i), ti.numpy())
        np.testing.assert_array_equal(to_np(getattr(t, "arg" + f)(1)), getattr(tt, "arg" + f)(1).numpy())
    assert np.isnan(t.max().item()) and np.isnan(t.min().item())
    assert t.argmax().item() == 4                                            # the first NaN, flat


def test_bool_and_int_inputs(device):
    b = tensor([[False, True, True], [False, False, False]], device)
    v, i = b.max(1)
    assert v.dtype == mt.bool and v.tolist() == [True, False] and i.tolist() == [1, 0]
    assert b.max().item() is True and b.min().item() is False
    n = tensor([[3, -7, 2], [9, 9, -1]], device)
    assert n.max().item() == 9 and n.min(0).values.tolist() == [3, -7, -1] and n.argmin().item() == 1


def test_max_of_two_tensors_is_elementwise(device):
    a, b = tensor([1.0, 5.0], device), tensor([3.0, 2.0], device)
    assert mt.max(a, b).tolist() == [3.0, 5.0] and a.min(b).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("f", ["max", "min"])
def test_max_min_gradients(device, rng, f):
    x = rng.standard_normal((4, 5, 3))                    # no ties: finite differences are valid
    t = tensor(x, device, requires_grad=True)
    assert gradcheck(lambda a: getattr(a, f)(1)[0], [t])
    assert gradcheck(lambda a: getattr(a, f)(-1, keepdim=True)[0], [t])
    assert gradcheck(lambda a: getattr(a, f)(), [t])


def test_max_gradients_with_ties_match_pytorch(device):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    for f, args in (("max", ()), ("min", ()), ("max", (1,)), ("min", (0,)), ("max", (0, True))):
        ours = tensor(x, device, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        y, ty = getattr(ours, f)(*args), getattr(theirs, f)(*args)
        y, ty = (y, ty) if not args else (y.values, ty.values)
        w = np.arange(1.0, 1.0 + np.prod(ty.shape)).reshape(tuple(ty.shape))
        backward_both(y, ty, w, device)
        np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), err_msg=f"{f}{args}")


def test_max_min_errors(device):
    e = mt.zeros(2, 0, device=device)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 1 to have non-zero size"):
        e.max(1)
    with pytest.raises(IndexError, match=r"argmin\(\): Expected reduction dim 1 to have non-zero size"):
        e.argmin(1)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        e.max()
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        e.argmax()
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.ones(2, 3, device=device).max(2)
    assert e.max(0).values.shape == (0,)                  # reducing a non-empty dim of an empty tensor
    with pytest.raises(TypeError, match="keepdim needs a dim"):
        mt.ones(2, device=device).max(keepdim=True)


# ---- var / std ---------------------------------------------------------------------------------------
def _var_ref(x, dims, correction):
    x = x.astype(np.float64)
    n = np.prod([x.shape[d] for d in dims]) if dims else 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((x - x.mean(axis=dims, keepdims=True)) ** 2).sum(axis=dims) / max(n - correction, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dims", [((1,), None), ((7,), 0), ((3, 5), 1), ((3, 5), 0), ((33, 1, 2), (0, 2)),
                                        ((4, 65, 3), 1), ((4, 65, 3), (0, 1)), ((2, 3, 4, 5), (1, 3)),
                                        ((2, 3, 4, 5), None), ((5000, 3), 0), ((3, 5000), 1), ((100_003,), None)],
                         ids=str)
def test_var_std_match_numpy(device, rng, shape, dims, dtype):
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    t = tensor(x, device)
    axes = tuple(range(len(shape))) if dims is None else ((dims,) if isinstance(dims, int) else dims)
    for correction in (0, 1, 2):
        for keepdim in (False, True):
            want = _var_ref(x, axes, correction)
            if keepdim:
                want = want.reshape([1 if d in axes else n for d, n in enumerate(shape)])
            got = t.var(dims, keepdim=keepdim, correction=correction)
            assert got.dtype == t.dtype and got.shape == np.shape(want)
            np.testing.assert_allclose(to_np(got), want, equal_nan=True, **TOL[dtype])
            np.testing.assert_allclose(to_np(t.std(dims, keepdim=keepdim, correction=correction)), np.sqrt(want),
                                       equal_nan=True, **TOL[dtype])


def test_var_views_and_spellings(device, rng):
    x = rng.standard_normal((6, 9))
    t = tensor(x, device)
    np.testing.assert_allclose(to_np(t.T.var(1)), x.T.var(axis=1, ddof=1), rtol=1e-12)        # strided rows
    np.testing.assert_allclose(to_np(t[1:, ::2].std(0)), x[1:, ::2].std(axis=0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(to_np(t.var(unbiased=False)), x.var(), rtol=1e-12)
    np.testing.assert_allclose(to_np(mt.var(t, False)), x.var(), rtol=1e-12)                  # var(x, unbiased)
    np.testing.assert_allclose(to_np(mt.std(t, (0, 1), correction=0)), x.std(), rtol=1e-12)


@pytest.mark.parametrize("dtype,offset,tol", [("float32", 1e4, 1e-2), ("float64", 1e8, 1e-6)])
def test_var_is_numerically_stable(device, rng, dtype, offset, tol):
    # E[x^2] - E[x]^2 would lose every digit here (it cancels to about eps * offset^2 >> 1)
    x = (offset + rng.standard_normal(200_001)).astype(dtype)
    got = tensor(x, device).var().item()
    want = x.astype(np.float64).var(ddof=1)
    assert abs(got - want) <= tol * want, (got, want)
    rows = x[:200_000].reshape(400, 500)
    np.testing.assert_allclose(to_np(tensor(rows, device).var(1)), rows.astype(np.float64).var(axis=1, ddof=1),
                               rtol=tol)


def test_var_degenerate_cases_match_pytorch(device):
    for x, kw in (([1.0], {}), ([1.0, 2.0], dict(correction=2)), ([1.0, 2.0], dict(correction=3)),
                  ([[]], dict(dim=1)), ([5.0, 5.0, 5.0], {})):
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = torch.tensor(x, dtype=torch.float64).var(**kw).numpy()
        np.testing.assert_array_equal(to_np(tensor(x, device, mt.float64).var(**kw)), want)
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        mt.tensor([1, 2, 3], device=device).var()


@pytest.mark.parametrize("f", ["var", "std"])
def test_var_std_gradients(device, rng, f):
    x = tensor(rng.standard_normal((4, 3, 5)), device, requires_grad=True)
    assert gradcheck(lambda a: getattr(a, f)(1), [x])
    assert gradcheck(lambda a: getattr(a, f)((0, 2), keepdim=True, correction=0), [x])
    assert gradcheck(lambda a: getattr(a, f)(), [x])


def test_var_std_gradients_match_pytorch(device, rng):
    x = rng.standard_normal((5, 7))
    x[2] = 1.5                                            # a constant row: std 0, gradient 0 (PyTorch)
    for f, kw in (("var", dict(dim=1)), ("std", dict(dim=1)), ("std", dict(dim=0, correction=0)), ("var", {})):
        ours, theirs = tensor(x, device, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = getattr(ours, f)(**kw), getattr(theirs, f)(**kw)
        w = rng.standard_normal(tuple(ty.shape))
        backward_both(y, ty, w, device)
        np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---- sum: the vectorised contiguous-row path and the others ----------------------------------------
@pytest.mark.parametrize("n", [1, 3, 5, 31, 33, 1000, 4099, 100_003])
@pytest.mark.parametrize("start", [0, 1, 3])
def test_sum_of_contiguous_views_at_any_alignment(device, rng, n, start):
    base = rng.standard_normal(n + start).astype(np.float32)
    t = tensor(base, device)[start:]                          # start > 0: not on a 16-byte boundary
    want = base[start:].astype(np.float64)
    assert abs(t.sum().item() - want.sum()) <= 1e-6 * np.abs(want).sum() + 1e-6
    ints = rng.integers(-2**40, 2**40, n + start)
    assert tensor(ints, device)[start:].sum().item() == int(ints[start:].sum())  # int64: exact
    np.testing.assert_allclose(tensor(base.astype(np.float64), device)[start:].mean().item(), want.mean(), rtol=1e-12)


@pytest.mark.parametrize("shape,dims", [((129, 4099), (1,)), ((3, 5, 77), (1, 2)), ((3, 5, 77), (2,)),
                                        ((7, 33), (0, 1)), ((2, 100_003), (1,)), ((1000, 40), (1,))], ids=str)
def test_sum_rows_match_numpy(device, rng, shape, dims):
    x = rng.standard_normal(shape)
    t = tensor(x, device)
    np.testing.assert_allclose(to_np(t.sum(dims)), x.sum(axis=dims), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(to_np(t.mean(dims, keepdim=True)), x.mean(axis=dims, keepdims=True),
                               rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(to_np(t[:, 1:].sum(-1)), x[:, 1:].sum(axis=-1),                    # rows misaligned
                               rtol=1e-11, atol=1e-11)


# ---- 10M elements (the GPU; a few seconds of NumPy reference) ------------------------------------------
@pytest.mark.cuda
@pytest.mark.slow
def test_ten_million_elements_on_the_gpu(rng):
    n = 10_000_019
    x = rng.standard_normal(n).astype(np.float32)
    x[7_777_777] = 50.0
    x[1_234_567] = -50.0
    t = mt.tensor(x, device="cuda")
    x64 = x.astype(np.float64)
    assert t.max().item() == 50.0 and t.argmax().item() == 7_777_777
    assert t.min().item() == -50.0 and t.argmin().item() == 1_234_567
    assert abs(t.sum().item() - x64.sum()) <= 1e-6 * np.abs(x64).sum()
    assert abs(t.var().item() - x64.var(ddof=1)) <= 1e-5 * x64.var()
    rows = t[:10_000_000].reshape(1000, 10_000)
    v, i = rows.max(1)
    np.testing.assert_array_equal(to_np(i), x[:10_000_000].reshape(1000, 10_000).argmax(axis=1))
    np.testing.assert_allclose(to_np(rows.std(1)), x64[:10_000_000].reshape(1000, 10_000).std(axis=1, ddof=1),
                               rtol=1e-5)
    cols = t[:10_000_000].reshape(10_000, 1000)
    np.testing.assert_array_equal(to_np(cols.argmin(0)), x[:10_000_000].reshape(10_000, 1000).argmin(axis=0))
    np.testing.assert_allclose(to_np(cols.var(0)), x64[:10_000_000].reshape(10_000, 1000).var(axis=0, ddof=1),
                               rtol=1e-4)
