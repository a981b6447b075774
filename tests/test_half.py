"""float16 and bfloat16 (phase 05) against PyTorch: dtypes and promotion, creation, casts,
elementwise ops, reductions, softmax and losses, autograd, printing.

Every op computes in float32 and rounds once (PyTorch's "opmath"), so results are compared with a
tolerance of about one unit in the last place of each dtype: float16 keeps 11 significant bits
(eps 2^-10), bfloat16 8 (eps 2^-7). The cuda tests at the end compare the cuda backend with the
cpu one in the same way (our kernels against NumPy).
"""
import itertools
import math

import ml_dtypes
import numpy as np
import pytest
import torch

import minitorch as mt

HALVES = [mt.float16, mt.bfloat16]
ALL = [mt.bool, mt.int64, mt.float16, mt.bfloat16, mt.float32, mt.float64]
# one rounding of a float32 result, and a little more where float32 math rounds differently
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-6, "float64": 1e-12}
ATOL = {"float16": 1e-4, "bfloat16": 1e-3, "float32": 1e-7, "float64": 1e-12}


def tdt(d):
    """The torch dtype of a minitorch dtype."""
    return getattr(torch, d.name)


def to_torch(x, requires_grad=False):
    """A minitorch cpu tensor as a torch tensor of the same dtype and values (exact)."""
    values = x.detach().cpu().numpy()
    if values.dtype in mt.dtypes.HALF_NUMPY:          # torch reads no ml_dtypes arrays: go via float32
        t = torch.tensor(values.astype(np.float32)).to(tdt(x.dtype))
    else:
        t = torch.tensor(values)
    return t.requires_grad_(requires_grad)


def as_f64(x):
    """Values of a minitorch or torch tensor as float64 NumPy (exact for every float dtype)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).numpy()
    return x.detach().cpu().numpy().astype(np.float64)


def close(ours, theirs, dtype=None, rtol=None, atol=None):
    """Same dtype, shape and values within the dtype's tolerance (NaN == NaN)."""
    dtype = dtype or ours.dtype
    assert ours.dtype is dtype, (ours.dtype, dtype)
    if isinstance(theirs, torch.Tensor):
        assert str(theirs.dtype) == f"torch.{dtype.name}", (theirs.dtype, dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(as_f64(ours), as_f64(theirs), equal_nan=True,
                               rtol=RTOL[dtype.name] if rtol is None else rtol,
                               atol=ATOL[dtype.name] if atol is None else atol)


def rand_pair(rng, shape, dtype, low=-2.0, high=2.0, requires_grad=False):
    """The same random values (exactly representable in ``dtype``) as a minitorch and a torch tensor."""
    values = rng.uniform(low, high, shape).astype(np.float32).astype(dtype.numpy)
    x = mt.tensor(values, requires_grad=requires_grad)
    return x, to_torch(x, requires_grad=requires_grad)


# ---- the dtypes ----------------------------------------------------------------------------------
def test_dtype_objects():
    assert mt.half is mt.float16
    assert mt.float16.itemsize == 2 and mt.bfloat16.itemsize == 2
    assert mt.float16.is_floating_point and mt.bfloat16.is_floating_point
    assert str(mt.bfloat16) == "minitorch.bfloat16"
    assert mt.float16.numpy == np.float16 and mt.bfloat16.numpy == np.dtype(ml_dtypes.bfloat16)
    for name in ("float16", "bfloat16", "half"):
        assert mt.dtypes.as_dtype(name) is getattr(mt, name)
    assert mt.dtypes.from_numpy_dtype(np.dtype(ml_dtypes.bfloat16)) is mt.bfloat16
    assert mt.dtypes.from_numpy_dtype(np.float16) is mt.float16
    import pickle
    assert pickle.loads(pickle.dumps(mt.bfloat16)) is mt.bfloat16


@pytest.mark.parametrize("a, b", list(itertools.product(ALL, ALL)), ids=str)
def test_promote_types_matches_torch(a, b):
    assert mt.promote_types(a, b).name == str(torch.promote_types(tdt(a), tdt(b))).split(".")[1]


def _operand(kind, d):
    """A tensor with dimensions ('t'), a 0-d tensor ('0'), for both libraries."""
    shape = (3,) if kind == "t" else ()
    return mt.ones(shape, dtype=d), torch.ones(shape, dtype=tdt(d))


@pytest.mark.parametrize("ka, kb", [("t", "t"), ("t", "0"), ("0", "t"), ("0", "0")])
def test_result_type_table_matches_torch(ka, kb):
    """Every pair of dtypes, with and without dimensions, and against Python scalars."""
    for a, b in itertools.product(ALL, ALL):
        (x, tx), (y, ty) = _operand(ka, a), _operand(kb, b)
        want = str(torch.result_type(tx, ty)).split(".")[1]
        assert mt.result_type(x, y).name == want, (ka, a, kb, b)
        if "bool" not in (a.name, b.name) or a is not b:      # arithmetic on two bools counts them
            got = (x * y).dtype.name
            assert got == str((tx * ty).dtype).split(".")[1], (ka, a, kb, b)
    for a, scalar in itertools.product(ALL, (True, 2, 2.5)):
        x, tx = _operand(ka, a)
        assert mt.result_type(x, scalar).name == str(torch.result_type(tx, scalar)).split(".")[1], (a, scalar)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_python_float_keeps_half(dtype):
    x = mt.ones(4, dtype=dtype)
    for y in (x + 0.1, 0.1 + x, x * 3.0, x / 7, 2.0 - x, x ** 2.0, x + 1, x > 0.5):
        assert y.dtype in (dtype, mt.bool)
    assert (x + mt.ones(4)).dtype is mt.float32
    assert (x + mt.ones(4, dtype=mt.float64)).dtype is mt.float64
    assert (x + mt.tensor(1.0, dtype=mt.float64)).dtype is dtype       # a 0-d tensor does not widen
    assert (mt.arange(4) * mt.tensor(0.5, dtype=dtype)).dtype is dtype
    assert (mt.ones(2, dtype=mt.float16) + mt.ones(2, dtype=mt.bfloat16)).dtype is mt.float32


# ---- creation --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_creation(dtype):
    t = tdt(dtype)
    close(mt.tensor([[1.1, -2.5], [3e-3, 7.0]], dtype=dtype), torch.tensor([[1.1, -2.5], [3e-3, 7.0]], dtype=t))
    close(mt.zeros(2, 3, dtype=dtype), torch.zeros(2, 3, dtype=t), atol=0, rtol=0)
    close(mt.ones((3,), dtype=dtype), torch.ones(3, dtype=t), atol=0, rtol=0)
    close(mt.full((2, 2), 0.1, dtype=dtype), torch.full((2, 2), 0.1, dtype=t), atol=0, rtol=0)
    close(mt.arange(0, 2, 0.25, dtype=dtype), torch.arange(0, 2, 0.25, dtype=t), atol=0, rtol=0)
    assert mt.empty(5, dtype=dtype).dtype is dtype
    for like in (mt.zeros_like, mt.ones_like, mt.rand_like, mt.randn_like, mt.empty_like):
        assert like(mt.zeros(3, dtype=dtype)).dtype is dtype
    assert mt.full((2,), 1.5, dtype=dtype).tolist() == [1.5, 1.5]


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_random(dtype):
    mt.manual_seed(0)
    u = mt.rand(20000, dtype=dtype)
    assert u.dtype is dtype
    v = as_f64(u)
    assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.02
    n = as_f64(mt.randn(20000, dtype=dtype))
    assert mt.randn(3, 4, dtype=dtype).dtype is dtype
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_from_numpy_shares_memory_and_tensor_copies(dtype):
    a = np.array([1.5, -2.0, 3.25], dtype=dtype.numpy)
    x = mt.from_numpy(a)
    assert x.dtype is dtype
    a[0] = 4.0
    assert x.tolist() == [4.0, -2.0, 3.25]
    y = mt.tensor(a)
    assert y.dtype is dtype
    a[1] = 0.0
    assert y.tolist() == [4.0, -2.0, 3.25]
    assert x.numpy() is a


# ---- casts -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src, dst", list(itertools.product(ALL, ALL)), ids=str)
def test_cast_every_pair(src, dst, rng):
    if src is mt.bool:
        values = rng.random(12) < 0.5
    elif src is mt.int64:
        values = rng.integers(-300, 300, 12)
    else:
        values = np.concatenate([rng.uniform(-100, 100, 10), [0.0, -0.0]])
    x = mt.tensor(values).to(src)
    tx = to_torch(x)
    y, ty = x.to(dst), tx.to(tdt(dst))
    assert y.dtype is dst
    np.testing.assert_array_equal(as_f64(y), as_f64(ty))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_shorthands_and_rounding(dtype):
    x = mt.tensor([0.1, 1 / 3, 65519.0, 1e-6])
    tx = torch.tensor([0.1, 1 / 3, 65519.0, 1e-6])
    h = x.half() if dtype is mt.float16 else x.bfloat16()
    th = tx.half() if dtype is mt.float16 else tx.bfloat16()
    np.testing.assert_array_equal(as_f64(h), as_f64(th))     # round to nearest even, overflow to inf
    assert h.float().dtype is mt.float32 and h.double().dtype is mt.float64
    np.testing.assert_array_equal(as_f64(h.float()), as_f64(th.float()))
    assert h.half().dtype is mt.float16 and h.bfloat16().dtype is mt.bfloat16
    assert x.to(dtype) is not x and h.to(dtype) is h


# ---- elementwise -------------------------------------------------------------------------------------
BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "maximum": lambda a, b: a.maximum(b), "minimum": lambda a, b: a.minimum(b)}
COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
UNARY = {"neg": lambda a: -a, "exp": lambda a: a.exp(), "log": lambda a: a.abs().log(),
         "sqrt": lambda a: a.abs().sqrt(), "abs": lambda a: a.abs(), "tanh": lambda a: a.tanh(),
         "sigmoid": lambda a: a.sigmoid(), "relu": lambda a: a.relu()}


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_broadcast(op, dtype, rng):
    a, ta = rand_pair(rng, (4, 1, 5), dtype)
    b, tb = rand_pair(rng, (3, 1), dtype, 0.5, 2.0)
    close(BINARY[op](a, b), BINARY[op](ta, tb))
    close(BINARY[op](a[:, :, ::2], b), BINARY[op](ta[:, :, ::2], tb))      # strided


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_pow_and_scalars(dtype, rng):
    a, ta = rand_pair(rng, (7, 3), dtype, 0.5, 2.0)
    close(a ** a, ta ** ta)
    # A Python number is not rounded to half first: x + s is float32(x) + float32(s), rounded once,
    # as PyTorch computes on cuda (and on cpu for * and /; its cpu add rounds s to half first).
    t = tdt(dtype)
    ta32 = ta.float()
    for s in (0.1, 3, -1.7, 2.0):
        close(a + s, (ta32 + s).to(t))
        close(s - a, (s - ta32).to(t))
        close(a * s, ta * s)
        close(a / s, ta / s)
        close(s / a, (s / ta32).to(t))
        close(a ** s, (ta32 ** s).to(t))
    close(2.0 ** a, (2.0 ** ta32).to(t))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("op", list(COMPARE))
def test_comparisons(op, dtype, rng):
    a, ta = rand_pair(rng, (33,), dtype)
    b = mt.tensor(np.where(rng.random(33) < 0.3, a.numpy(), rng.uniform(-2, 2, 33).astype(dtype.numpy)))
    tb = to_torch(b)
    got, want = COMPARE[op](a, b), COMPARE[op](ta, tb)
    assert got.dtype is mt.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(COMPARE[op](a, 0.5).numpy(), COMPARE[op](ta, 0.5).numpy())


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, dtype, rng):
    a, ta = rand_pair(rng, (5, 7), dtype, -4, 4)
    close(UNARY[op](a), UNARY[op](ta))
    close(UNARY[op](a.T), UNARY[op](ta.T))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_where_and_special_values(dtype):
    x = mt.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0], dtype=dtype)
    tx = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0], dtype=tdt(dtype))
    close(mt.where(x > 0, x, mt.zeros(5, dtype=dtype)), torch.where(tx > 0, tx, torch.zeros(5, dtype=tdt(dtype))))
    close(x.maximum(mt.zeros(5, dtype=dtype)), tx.maximum(torch.zeros(5, dtype=tdt(dtype))))
    close(x * 2, tx * 2)


def test_float16_overflows_where_bfloat16_does_not():
    close(mt.tensor([300.0], dtype=mt.float16) ** 2, torch.tensor([300.0], dtype=torch.float16) ** 2)
    close(mt.tensor([300.0], dtype=mt.bfloat16) ** 2, torch.tensor([300.0], dtype=torch.bfloat16) ** 2)
    assert math.isinf((mt.tensor([300.0], dtype=mt.float16) ** 2).item())


# ---- reductions ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_sum_mean_accumulate_in_float32(dtype):
    # 4096 ones: a running half sum would stop at 2048 (float16) or 256 (bfloat16)
    x = mt.ones(4096, dtype=dtype)
    assert x.sum().item() == 4096.0 and x.sum().dtype is dtype
    assert x.mean().item() == 1.0


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_reductions(dtype, dim, rng):
    a, ta = rand_pair(rng, (6, 33, 5), dtype)
    kw = {} if dim is None else {"dim": dim}
    close(a.sum(**kw), ta.sum(**kw))
    close(a.mean(**kw), ta.mean(**kw))
    close(a.var(**kw), ta.var(**kw))
    close(a.std(**kw), ta.std(**kw))
    if dim is None or isinstance(dim, int):
        close(a.max(**kw)[0] if dim is not None else a.max(), ta.max(**kw)[0] if dim is not None else ta.max())
        close(a.min(**kw)[0] if dim is not None else a.min(), ta.min(**kw)[0] if dim is not None else ta.min())
        np.testing.assert_array_equal(a.argmax(**kw).numpy(), ta.argmax(**kw).numpy())
        np.testing.assert_array_equal(a.argmin(**kw).numpy(), ta.argmin(**kw).numpy())


# ---- softmax and losses ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_softmax_log_softmax_cross_entropy(dtype, rng):
    x, tx = rand_pair(rng, (9, 13), dtype, -6, 6, requires_grad=True)
    for dim in (0, 1, -1):
        close(x.softmax(dim), tx.softmax(dim))
        close(x.log_softmax(dim), tx.log_softmax(dim))
    target = rng.integers(0, 13, 9)
    loss = mt.nn.functional.cross_entropy(x, mt.tensor(target))
    tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(target))
    close(loss, tloss)
    loss.backward()
    tloss.backward()
    close(x.grad, tx.grad)
    assert x.grad.dtype is dtype


# ---- matmul on cpu (float32 products and sums, rounded once) ---------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_matmul_cpu(dtype, rng):
    a, ta = rand_pair(rng, (7, 33), dtype)
    b, tb = rand_pair(rng, (33, 5), dtype)
    close(a @ b, ta @ tb)
    close(a.T.T @ b, (ta @ tb))


# ---- autograd --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_autograd(dtype, rng):
    x, tx = rand_pair(rng, (4, 6), dtype, 0.5, 2, requires_grad=True)
    w, tw = rand_pair(rng, (6,), dtype, -1, 1, requires_grad=True)
    y = ((x * w).sigmoid() + (x / w).tanh() * 0.5 + x.log() - x.sqrt().exp()).relu() ** 2
    ty = ((tx * tw).sigmoid() + (tx / tw).tanh() * 0.5 + tx.log() - tx.sqrt().exp()).relu() ** 2
    close(y, ty, rtol=RTOL[dtype.name] * 4, atol=ATOL[dtype.name] * 4)
    y.mean().backward()
    ty.mean().backward()
    assert x.grad.dtype is dtype and w.grad.dtype is dtype
    # rounding after every op compounds through the chain: a few units in the last place
    close(x.grad, tx.grad, rtol=RTOL[dtype.name] * 8, atol=ATOL[dtype.name] * 8)
    close(w.grad, tw.grad, rtol=RTOL[dtype.name] * 8, atol=ATOL[dtype.name] * 8)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_autograd_through_casts(dtype, rng):
    x, tx = rand_pair(rng, (5,), mt.float32, requires_grad=True)
    y = x.to(dtype) * 3.0
    ty = tx.to(tdt(dtype)) * 3.0
    (y.float() * x).sum().backward()
    (ty.float() * tx).sum().backward()
    assert x.grad.dtype is mt.float32
    close(x.grad, tx.grad, rtol=RTOL[dtype.name], atol=ATOL[dtype.name])


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_linear_and_sgd_step(dtype, rng):
    """nn.Linear in half (matmul in float32, rounded once) and one SGD step with momentum, whose
    update is computed in float32 and rounded once per step, as torch.optim.SGD does."""
    mt.manual_seed(0)
    layer = mt.nn.Linear(6, 3).to(dtype=dtype)
    tlayer = torch.nn.Linear(6, 3).to(tdt(dtype))
    with torch.no_grad():
        tlayer.weight.copy_(to_torch(layer.weight))
        tlayer.bias.copy_(to_torch(layer.bias))
    x, tx = rand_pair(rng, (5, 6), dtype)
    y, ty = layer(x), tlayer(tx)
    close(y, ty.detach())
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    # a sum of products that cancel: compare to the scale of the gradient, not of each element
    scale = float(tlayer.weight.grad.abs().max())
    close(layer.weight.grad, tlayer.weight.grad, rtol=RTOL[dtype.name] * 2, atol=RTOL[dtype.name] * 2 * scale)
    opt = mt.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tlayer.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.step()
        topt.step()
    assert layer.weight.dtype is dtype
    close(layer.weight, tlayer.weight.detach(), rtol=RTOL[dtype.name] * 2, atol=RTOL[dtype.name] * 2 * scale)


# ---- printing and reading back ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_repr_item_tolist(dtype):
    x = mt.tensor([1.5, -2.25, 3.0], dtype=dtype)
    assert repr(x) == f"tensor([ 1.5000, -2.2500,  3.0000], dtype=minitorch.{dtype.name})"
    assert repr(mt.ones(2, dtype=dtype)) == f"tensor([1., 1.], dtype=minitorch.{dtype.name})"
    assert x[1].item() == -2.25 and isinstance(x[1].item(), float)
    assert x.tolist() == [1.5, -2.25, 3.0]
    assert x.numpy().dtype == dtype.numpy
    assert mt.tensor(x.numpy()).dtype is dtype


# ---- cuda: our kernels against the cpu backend -------------------------------------------------------------
cuda = pytest.mark.cuda


def both(rng, shape, dtype, low=-2.0, high=2.0):
    """The same values on cpu and on cuda."""
    values = rng.uniform(low, high, shape).astype(np.float32).astype(dtype.numpy)
    return mt.tensor(values), mt.tensor(values, device="cuda")


def same(gpu, cpu, rtol=None, atol=None):
    """A cuda result equals the cpu one within the dtype's tolerance."""
    assert gpu.device.type == "cuda" and gpu.dtype is cpu.dtype
    close(gpu.cpu(), cpu, dtype=cpu.dtype, rtol=rtol, atol=atol)


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_creation_and_casts(dtype, rng):
    x = mt.tensor([1.1, -2.5, 3e-3, 7.0], dtype=dtype, device="cuda")
    assert x.dtype is dtype and x.cpu().tolist() == mt.tensor([1.1, -2.5, 3e-3, 7.0], dtype=dtype).tolist()
    for f in (mt.zeros, mt.ones):
        assert f(3, dtype=dtype, device="cuda").cpu().tolist() == f(3, dtype=dtype).tolist()
    assert mt.full((5,), 0.1, dtype=dtype, device="cuda").cpu().tolist() == mt.full((5,), 0.1, dtype=dtype).tolist()
    assert mt.arange(0, 3, 0.25, dtype=dtype, device="cuda").cpu().tolist() == mt.arange(0, 3, 0.25, dtype=dtype).tolist()
    u = as_f64(mt.rand(100000, dtype=dtype, device="cuda"))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = as_f64(mt.randn(100001, dtype=dtype, device="cuda"))
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    for src, dst in itertools.product(ALL, ALL):
        if dtype not in (src, dst):
            continue
        values = np.concatenate([rng.uniform(-100, 100, 37), [0.0, 0.5, 1.5, 2.5, -1e-8]])
        c = mt.tensor(values).to(src)
        g = c.cuda()
        np.testing.assert_array_equal(as_f64(g.to(dst)), as_f64(c.to(dst)))
        np.testing.assert_array_equal(as_f64(g[::2].to(dst)), as_f64(c[::2].to(dst)))     # strided


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_elementwise(dtype, rng):
    a, ga = both(rng, (4, 1, 1000), dtype, 0.5, 2)
    b, gb = both(rng, (3, 1), dtype, 0.5, 2)
    c, gc = both(rng, (4, 3, 1000), dtype, 0.5, 2)
    flat, gflat = c.reshape(-1), gc.reshape(-1)
    for f in list(BINARY.values()) + [lambda x, y: x ** y]:
        same(f(ga, gb), f(a, b))                      # broadcast: the strided kernels
        same(f(gc, gc * 1.5), f(c, c * 1.5))          # contiguous: 8 halves per 16-byte vector
        same(f(gflat[1:], gflat[:-1]), f(flat[1:], flat[:-1]))     # contiguous, not 16-byte aligned
        same(f(gc[:, :, 1:], gc[:, :, :-1]), f(c[:, :, 1:], c[:, :, :-1]))
    for f in COMPARE.values():
        np.testing.assert_array_equal(f(gc, gc * 0.99).cpu().numpy(), f(c, c * 0.99).numpy())
        np.testing.assert_array_equal(f(gc, 1.0).cpu().numpy(), f(c, 1.0).numpy())
    for s in (0.1, 3, -1.7):
        same(gc * s, c * s)
        same(s - gc, s - c)
        same(s / gc, s / c)
        same(gc[:, :, ::3] + s, c[:, :, ::3] + s)
    for f in UNARY.values():
        same(f(gc), f(c))
        same(f(gc.transpose(0, 2)), f(c.transpose(0, 2)))
    cond = c > 1
    same(mt.where(cond.cuda(), gc, gc * 2), mt.where(cond, c, c * 2))


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_reductions_softmax_autograd(dtype, rng):
    a, ga = both(rng, (7, 33, 130), dtype)
    for kw in ({}, {"dim": 0}, {"dim": 2}, {"dim": (0, 2)}):
        # both accumulate in float32 (in different orders): a half ulp of the result apart
        same(ga.sum(**kw), a.sum(**kw))
        same(ga.mean(**kw), a.mean(**kw))
        same(ga.var(**kw), a.var(**kw))
        same(ga.std(**kw), a.std(**kw))
    same(ga.max(), a.max())
    v, i = ga.max(dim=1)
    tv, ti = a.max(dim=1)
    same(v, tv)
    np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())
    np.testing.assert_array_equal(ga.argmin(dim=2).cpu().numpy(), a.argmin(dim=2).numpy())
    # float accumulation: a half running sum of ones would stop at 2048 (float16) or 256 (bfloat16);
    # 100000 and 3M also take the sliced-row path (partial sums added by sum_blocks_f32)
    assert mt.ones(8192, dtype=dtype, device="cuda").sum().item() == 8192.0
    for n in (8192, 100000, 3 * 10**6):
        same(mt.ones(n, dtype=dtype, device="cuda").sum(), mt.ones(n, dtype=dtype).sum(), rtol=0, atol=0)
        same(mt.ones(n, dtype=dtype, device="cuda").mean(), mt.ones(n, dtype=dtype).mean(), rtol=0, atol=0)
    same(ga.transpose(0, 2).sum(dim=1), a.transpose(0, 2).sum(dim=1))     # strided rows
    x, gx = both(rng, (64, 1000), dtype, -6, 6)
    x.requires_grad_()
    gx.requires_grad_()
    same(gx.softmax(1), x.softmax(1))
    same(gx.log_softmax(0), x.log_softmax(0))
    target = rng.integers(0, 1000, 64)
    loss = mt.nn.functional.cross_entropy(x, mt.tensor(target))
    gloss = mt.nn.functional.cross_entropy(gx, mt.tensor(target, device="cuda"))
    same(gloss, loss)
    loss.backward()
    gloss.backward()
    same(gx.grad, x.grad)
    w, gw = both(rng, (1000,), dtype, 0.5, 2)
    w.requires_grad_()
    gw.requires_grad_()
    ((x * w).sigmoid() + (x / w).tanh() + (x * w).relu()).sum().backward()
    ((gx * gw).sigmoid() + (gx / gw).tanh() + (gx * gw).relu()).sum().backward()
    assert gw.grad.dtype is dtype
    same(gw.grad, w.grad, rtol=RTOL[dtype.name] * 4, atol=ATOL[dtype.name] * 64)


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_indexing(dtype, rng):
    a, ga = both(rng, (10, 7), dtype)
    idx = rng.integers(-10, 10, 13)
    same(ga[mt.tensor(idx, device="cuda")], a[mt.tensor(idx)])
    same(ga.index_select(1, mt.tensor([0, 6, 6], device="cuda")), a.index_select(1, mt.tensor([0, 6, 6])))
    src, gsrc = both(rng, (3, 7), dtype)
    same(ga.index_add(0, mt.tensor([1, 1, 4], device="cuda"), gsrc), a.index_add(0, mt.tensor([1, 1, 4]), src))
    gb = ga.clone() if hasattr(ga, "clone") else ga * 1
    b = a * 1
    gb[2:5, ::2] = 0.5
    b[2:5, ::2] = 0.5
    same(gb, b)
    assert "dtype=minitorch." + dtype.name in repr(ga)


# ---- cuda: the native half kernels of max/min, var/std, softmax, the losses and SGD ----------------------
# Each kernel reads half, computes in float32 and rounds once (reduce.cu, softmax.cu, sgd.cu, phase 05).
# The cases below reach every launch path of each op: one thread per output (short rows, reductions
# over an outer dimension), one block per output with 16-byte vectors (contiguous rows, aligned or not),
# strided rows, rows cut into slices plus the combine launch (long 1-d inputs), the register-cached
# warp kernels and the block kernels (shared-memory cached or not) of softmax.
def backend_pair(name, *args):
    """The backend function ``name`` on the cpu and the cuda copies of the same inputs (cpu Tensors
    are moved to cuda; other arguments pass as they are): (cuda result, cpu result) as Tensors."""
    first = next(a for a in args if isinstance(a, mt.Tensor))
    gpu_dev = first.cuda().device

    def run(device):
        moved = [a.to(device)._data if isinstance(a, mt.Tensor) else a for a in args]
        out = getattr(first.to(device)._backend, name)(*moved)
        wrap = (lambda y: mt.Tensor(y, device))
        return tuple(map(wrap, out)) if isinstance(out, tuple) else wrap(out)

    return run(gpu_dev), run(first.device)


def half_values(rng, shape, dtype, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32).astype(dtype.numpy)


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_max_min_argmax(dtype, rng):
    # random halves have many ties (bfloat16 keeps 8 bits): the first index must win on both
    values = half_values(rng, (5, 37, 130), dtype)
    values[2, 5, 17] = values[2, 5, 100] = np.nan          # NaN wins; the first NaN's index
    values[3, :, 7] = np.nan                                 # NaN down a column (dim 1)
    a, ga = mt.tensor(values), mt.tensor(values, device="cuda")
    views = {"contiguous": (a, ga), "unaligned": (a[:, :, 1:], ga[:, :, 1:]),
             "transposed": (a.transpose(0, 2), ga.transpose(0, 2))}
    for what, (x, gx) in views.items():
        for dim in range(3):       # dim 0: R = 5 (threads); dim 1: outer dims (threads); dim 2: rows (blocks)
            for f in ("max", "min"):
                gv, gi = getattr(gx, f)(dim=dim)
                v, i = getattr(x, f)(dim=dim)
                same(gv, v, rtol=0, atol=0)
                np.testing.assert_array_equal(gi.cpu().numpy(), i.numpy(), err_msg=f"{what} {f} dim={dim}")
            np.testing.assert_array_equal(gx.argmax(dim=dim).cpu().numpy(), x.argmax(dim=dim).numpy())
            np.testing.assert_array_equal(gx.argmin(dim=dim, keepdim=True).cpu().numpy(),
                                          x.argmin(dim=dim, keepdim=True).numpy())
        same(gx.max(), x.max(), rtol=0, atol=0)
        same(gx.min(), x.min(), rtol=0, atol=0)
        assert gx.argmax().item() == x.argmax().item() and gx.argmin().item() == x.argmin().item()
    # 3M elements: rows cut into slices, then extreme_combine; the maximum twice (first index wins)
    big = half_values(rng, (3 * 10**6 + 7,), dtype)
    big[[123457, 2500000]] = 7.0
    big[[99, 2999999]] = -7.0
    b, gb = mt.tensor(big), mt.tensor(big, device="cuda")
    assert gb.argmax().item() == b.argmax().item() == 123457
    assert gb.argmin().item() == b.argmin().item() == 99
    same(gb.max(), b.max(), rtol=0, atol=0)
    gv, gi = gb[1:].reshape(3, -1).max(dim=1)            # not 16-byte aligned, sliced rows
    v, i = b[1:].reshape(3, -1).max(dim=1)
    same(gv, v, rtol=0, atol=0)
    np.testing.assert_array_equal(gi.cpu().numpy(), i.numpy())
    big[5] = np.nan
    assert math.isnan(mt.tensor(big, device="cuda").max().item())
    assert mt.tensor(big, device="cuda").argmax().item() == 5


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_cuda_var_std(dtype, rng):
    # mean 10, spread 2: the textbook E[x^2] - E[x]^2 would lose digits here; Welford does not
    a, ga = both(rng, (5, 37, 130), dtype, 8.0, 12.0)
    views = {"contiguous": (a, ga), "unaligned": (a[:, :, 1:], ga[:, :, 1:]),
             "transposed": (a.transpose(0, 2), ga.transpose(0, 2))}
    for what, (x, gx) in views.items():
        for dim in (None, 0, 1, 2, (0, 2), (1, 2)):
            for correction in (0, 1):
                kw = {"correction": correction} if dim is None else {"dim": dim, "correction": correction}
                same(gx.var(**kw), x.var(**kw))
                same(gx.std(**kw), x.std(**kw))
        same(gx.var(dim=1, keepdim=True), x.var(dim=1, keepdim=True))
    # 3M elements: sliced rows, partial Moments<float> merged by welford_combine
    b, gb = both(rng, (3 * 10**6 + 7,), dtype, -1.0, 3.0)
    same(gb.var(), b.var())
    same(gb.std(correction=0), b.std(correction=0))
    same(gb[1:].reshape(3, -1).std(dim=1), b[1:].reshape(3, -1).std(dim=1))
    # the mean comes out of the same kernel: the gradient of var uses it
    x, gx = both(rng, (64, 1000), dtype, 8.0, 12.0)
    x.requires_grad_()
    gx.requires_grad_()
    x.var(dim=1).sum().backward()
    gx.var(dim=1).sum().backward()
    same(gx.grad, x.grad, rtol=RTOL[dtype.name] * 4, atol=ATOL[dtype.name] * 4)


# row lengths: warp kernels with 1..32 elements per lane (1, 7, 33, 1000, 1024), block kernels with
# 16-byte vectors and the row cached in shared memory (8192), unvectorized (4099: n % 8 != 0), and
# too long for the cache (30000 halves > 44 KiB)
SOFTMAX_N = [1, 7, 33, 1000, 1024, 1025, 4099, 8192, 30000]


def _logits(rng, rows, n, dtype):
    values = half_values(rng, (rows, n), dtype, -6.0, 6.0)
    if n > 1:
        values[0, 0] = -np.inf                   # exp(-inf - M) = 0: probability 0, log-probability -inf
    if rows > 1:
        values[1] += 300.0                       # large logits: the max trick keeps exp() finite
    return values.astype(dtype.numpy)


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("n", SOFTMAX_N)
def test_cuda_softmax_forward_backward(dtype, n, rng):
    rows = 37 if n <= 1024 else 5            # 37 rows: the last block of row groups is partly empty
    x = mt.tensor(_logits(rng, rows, n, dtype))
    g = mt.tensor(half_values(rng, (rows, n), dtype, -1.0, 1.0))
    for fwd, bwd in (("softmax", "softmax_backward"), ("log_softmax", "log_softmax_backward")):
        gy, y = backend_pair(fwd, x)
        assert gy.dtype is dtype
        same(gy, y)
        # the backward from the same (cpu) forward output on both: only the kernels differ
        gdx, dx = backend_pair(bwd, y, g)
        scale = float(np.nanmax(np.abs(as_f64(dx)))) or 1.0
        same(gdx, dx, rtol=RTOL[dtype.name] * 2, atol=RTOL[dtype.name] * scale)
    # through the Tensor layer, along another dimension too
    xt, gxt = x.detach().requires_grad_(), x.cuda().requires_grad_()
    same(gxt.softmax(-1), xt.softmax(-1))
    if n <= 1024:
        same(gxt.log_softmax(0), xt.log_softmax(0))
    (gxt.softmax(-1) * g.cuda()).sum().backward()
    (xt.softmax(-1) * g).sum().backward()
    scale = float(np.abs(as_f64(xt.grad)).max()) or 1.0
    same(gxt.grad, xt.grad, rtol=RTOL[dtype.name] * 4, atol=RTOL[dtype.name] * 2 * scale)


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("n", SOFTMAX_N)
def test_cuda_cross_entropy_nll(dtype, n, rng):
    rows = 37 if n <= 1024 else 5
    x = mt.tensor(_logits(rng, rows, n, dtype))
    target = rng.integers(0, n, rows)
    target[0] = n - 1 if n > 1 else 0                # not the -inf logit of row 0: a finite loss
    t = mt.tensor(target)
    # the backend functions on the same inputs
    (gloss, glse), (loss, lse) = backend_pair("cross_entropy", x, t)
    assert gloss.dtype is dtype and glse.dtype is dtype
    same(gloss, loss)
    same(glse, lse)
    for grad in (mt.tensor(0.5, dtype=dtype), mt.tensor(half_values(rng, (rows,), dtype, -1, 1))):
        for scale in (1.0, 1.0 / rows):
            gdx, dx = backend_pair("cross_entropy_backward", x, t, lse, grad, scale)
            same(gdx, dx, rtol=RTOL[dtype.name] * 2, atol=ATOL[dtype.name] * 2)
            gdx, dx = backend_pair("nll_loss_backward", t, grad, n, scale)
            same(gdx, dx, rtol=0, atol=0)
    logp = x.log_softmax(-1)
    gl, l = backend_pair("nll_loss", logp, t)
    same(gl, l, rtol=0, atol=0)
    # a target outside [0, n): NaN loss and a NaN gradient row on both (the Tensor layer checks on cpu)
    bad = mt.tensor(np.where(np.arange(rows) == rows - 1, n, target))
    (gloss, glse), (loss, lse) = backend_pair("cross_entropy", x, bad)
    assert math.isnan(as_f64(gloss)[-1]) and math.isnan(as_f64(loss)[-1])
    gdx, dx = backend_pair("cross_entropy_backward", x, bad, lse, mt.tensor(1.0, dtype=dtype), 1.0)
    assert np.isnan(as_f64(gdx)[-1]).all() and not np.isnan(as_f64(gdx)[:-1]).any()
    same(gdx, dx, rtol=RTOL[dtype.name] * 2, atol=ATOL[dtype.name] * 2)
    gl, l = backend_pair("nll_loss", logp, bad)
    same(gl, l, rtol=0, atol=0)
    # through the Tensor layer: every reduction, forward and backward
    for reduction in ("none", "mean", "sum"):
        for fn, inp in ((mt.nn.functional.cross_entropy, x), (mt.nn.functional.nll_loss, logp.detach())):
            c, gc = inp.detach().requires_grad_(), inp.cuda().requires_grad_()
            lc, lg = fn(c, t, reduction=reduction), fn(gc, t.cuda(), reduction=reduction)
            same(lg, lc)
            w = mt.tensor(half_values(rng, lc.shape, dtype, -1, 1))
            (lc * w).sum().backward()
            (lg * w.cuda()).sum().backward()
            same(gc.grad, c.grad, rtol=RTOL[dtype.name] * 2, atol=ATOL[dtype.name] * 4)


def _ulps(a, b):
    """Units in the last place between two half arrays of one dtype (the 16-bit patterns put in
    order, so that adjacent values differ by 1 across zero too)."""
    def ordered(x):
        bits = np.ascontiguousarray(x).view(np.uint16).astype(np.int64)
        return np.where(bits < 0x8000, bits, 0x8000 - bits)
    return np.abs(ordered(a) - ordered(b))


@cuda
@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("options", [
    dict(),                                                      # no momentum: no buffer
    dict(momentum=0.9),
    dict(momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(momentum=0.5, dampening=0.1, weight_decay=0.1, maximize=True),
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "plain")
def test_cuda_sgd_step(dtype, options, rng):
    """Three steps on half parameters: float32 math in the cpu backend's order, param and buffer
    rounded once per step (the kernel is written to match the cpu bit for bit; we allow 1 ulp)."""
    shapes = [(7, 143), (1,), (4099,)]
    cpu = [mt.tensor(half_values(rng, s, dtype)).requires_grad_() for s in shapes]
    gpu = [p.detach().cuda().requires_grad_() for p in cpu]
    opt = mt.optim.SGD(cpu, lr=0.1, **options)
    gopt = mt.optim.SGD(gpu, lr=0.1, **options)
    for _ in range(3):
        for p, gp in zip(cpu, gpu):
            grad = mt.tensor(half_values(rng, p.shape, dtype, -3.0, 3.0))
            p.grad, gp.grad = grad, grad.cuda()
        opt.step()
        gopt.step()
        for p, gp in zip(cpu, gpu):
            assert gp.dtype is dtype and gp.device.type == "cuda"
            assert _ulps(gp.detach().cpu().numpy(), p.detach().numpy()).max() <= 1
            if options.get("momentum"):
                buf, gbuf = opt.state[p]["momentum_buffer"], gopt.state[gp]["momentum_buffer"]
                assert gbuf.dtype is dtype           # the buffer has the parameter's dtype, as PyTorch
                assert _ulps(gbuf.cpu().numpy(), buf.numpy()).max() <= 1
