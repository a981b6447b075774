"""Phase 07: embedding, layer_norm, gelu and one_hot against PyTorch on cpu and (marked cuda) the GPU:
values and gradients, odd row lengths (1, 7, 33, 768, 1000, 4097: the warp and block kernels of
layernorm.cu, aligned and unaligned rows), non-contiguous inputs, normalized_shape over 2 dims,
no affine, float16/bfloat16 against a float32 reference, repeated indices, padding_idx,
deterministic embedding gradients, float64 gradcheck, and the error messages."""
import numpy as np
import pytest
import torch

import minitorch as mt
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck

from helpers import tensor, to_np
from oracle import check_op

ROW_LENGTHS = [1, 7, 33, 768, 1000, 1024, 1025, 2048, 4097]
HALF_TOL = {"float16": dict(rtol=1e-2, atol=1e-2), "bfloat16": dict(rtol=4e-2, atol=4e-2)}


# ---- layer_norm ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_layer_norm_matches_torch(device, rng, dtype, n):
    if n == 1 and dtype == "float32":
        pytest.skip("one element per row: dx is exactly 0, PyTorch's float32 gives rounding noise times 1/sqrt(eps)")
    rows = 5 if n > 1000 else 37          # 37 rows: a block of 4 warps is left partly empty
    check_op(lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (n,), w, b, eps=1e-5),
             [(rows, n), (n,), (n,)], device, rng, dtype=dtype)


@pytest.mark.parametrize("n", [7, 768, 4097])
def test_layer_norm_non_contiguous_input(device, rng, n):
    check_op(lambda lib, x, w, b: lib.nn.functional.layer_norm(x.transpose(0, 1), (n,), w, b),
             [(n, 6), (n,), (n,)], device, rng, dtype="float32")


@pytest.mark.parametrize("n", [768, 2048])
def test_layer_norm_unaligned_contiguous_rows(device, rng, n):
    """A contiguous view starting 4 bytes into its buffer: rows not 16-byte aligned, so the
    kernels must take their one-element path although n is a multiple of the vector width."""
    flat = rng.standard_normal(3 * n + 1).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    x = tensor(flat, device)[1:].reshape(3, n).detach().requires_grad_(True)
    tx = torch.tensor(flat)[1:].reshape(3, n).detach().requires_grad_(True)
    ours, theirs = tensor(w, device, requires_grad=True), torch.tensor(w, requires_grad=True)
    y, ty = F.layer_norm(x, (n,), ours), torch.nn.functional.layer_norm(tx, (n,), theirs)
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    dy = rng.standard_normal((3, n)).astype(np.float32)
    y.backward(tensor(dy, device))
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_layer_norm_over_two_dims_without_affine_and_eps(device, rng):
    check_op(lambda lib, x: lib.nn.functional.layer_norm(x, (3, 11), eps=0.1), [(2, 4, 3, 11)], device, rng)
    check_op(lambda lib, x, w, b: lib.nn.functional.layer_norm(x, [3, 11], w, b), [(2, 4, 3, 11), (3, 11), (3, 11)],
             device, rng)


def test_layer_norm_bias_without_weight(device, rng):
    check_op(lambda lib, x, b: lib.nn.functional.layer_norm(x, (9,), None, b), [(4, 9), (9,)], device, rng)


def test_layer_norm_large_offset_is_accurate(device, rng):
    """Welford's update keeps var right where E[x^2] - E[x]^2 would cancel (mean 1e4, std 1)."""
    x = (1e4 + rng.standard_normal((8, 768))).astype(np.float32)
    y = F.layer_norm(tensor(x, device), (768,))
    ref = torch.nn.functional.layer_norm(torch.tensor(x, dtype=torch.float64), (768,)).numpy()
    np.testing.assert_allclose(to_np(y), ref, rtol=0, atol=5e-3)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [7, 768, 4097])
def test_layer_norm_half_against_float32(device, rng, half, n):
    dt = getattr(mt, half)
    x = rng.standard_normal((6, n)).astype(np.float32)
    w, b, dy = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32), \
        rng.standard_normal((6, n)).astype(np.float32)
    ours = [tensor(a, device).to(dt).detach().requires_grad_(True) for a in (x, w, b)]
    y = F.layer_norm(ours[0], (n,), ours[1], ours[2])
    assert y.dtype is dt
    y.backward(tensor(dy, device).to(dt))
    # the reference: the same half-rounded inputs, in float32
    theirs = [torch.tensor(to_np(o.float())).requires_grad_(True) for o in ours]
    ty = torch.nn.functional.layer_norm(theirs[0], (n,), theirs[1], theirs[2])
    ty.backward(torch.tensor(to_np(tensor(dy, device).to(dt).float())))
    np.testing.assert_allclose(to_np(y.float()), ty.detach().numpy(), **HALF_TOL[half])
    for o, t in zip(ours, theirs):
        assert o.grad.dtype is dt
        scale = max(1.0, float(np.abs(t.grad.numpy()).max()))
        np.testing.assert_allclose(to_np(o.grad.float()) / scale, t.grad.numpy() / scale, **HALF_TOL[half])


@pytest.mark.parametrize("shape", [(3, 7), (2, 3, 5)])
def test_layer_norm_gradcheck(rng, shape):
    x = tensor(rng.standard_normal(shape), "cpu", requires_grad=True)
    w = tensor(rng.standard_normal(shape[-1:]), "cpu", requires_grad=True)
    b = tensor(rng.standard_normal(shape[-1:]), "cpu", requires_grad=True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, shape[-1:], w, b), (x, w, b))


def test_layer_norm_empty_and_module(device, rng):
    y = F.layer_norm(mt.zeros(0, 5, device=device), (5,))
    assert tuple(y.shape) == (0, 5)
    m = nn.LayerNorm(6, elementwise_affine=True, bias=False).to(device)
    assert m.bias is None and tuple(m.weight.shape) == (6,)
    x = rng.standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(to_np(m(tensor(x, device))),
                               torch.nn.LayerNorm(6, bias=False)(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert nn.LayerNorm([2, 3], elementwise_affine=False).weight is None


def test_layer_norm_errors(device):
    x = mt.zeros(2, 5, device=device)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\].*\[2, 5\]"):
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match="weight of shape"):
        F.layer_norm(x, (5,), mt.ones(4, device=device))
    with pytest.raises(RuntimeError, match="floating point"):
        F.layer_norm(mt.zeros(2, 5, dtype=mt.int64, device=device), (5,))


# ---- GELU ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_gelu_matches_torch(device, rng, approximate, dtype, layout):
    check_op(lambda lib, x: lib.nn.functional.gelu(x, approximate=approximate), [(13, 37)], device, rng,
             dtype=dtype, layout=layout, low=-6, high=6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_gelu_half(device, rng, approximate, half):
    dt = getattr(mt, half)
    x = tensor(rng.uniform(-5, 5, 1001).astype(np.float32), device).to(dt).detach().requires_grad_(True)
    y = F.gelu(x, approximate=approximate)
    y.backward(mt.ones_like(y))
    tx = torch.tensor(to_np(x.float())).requires_grad_(True)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    ty.backward(torch.ones_like(ty))
    assert y.dtype is dt and x.grad.dtype is dt
    np.testing.assert_allclose(to_np(y.float()), ty.detach().numpy(), **HALF_TOL[half])
    np.testing.assert_allclose(to_np(x.grad.float()), tx.grad.numpy(), **HALF_TOL[half])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_and_module(rng, approximate):
    x = tensor(rng.standard_normal((4, 5)), "cpu", requires_grad=True)
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))
    m = nn.GELU(approximate)
    assert repr(m) == f"GELU(approximate={approximate!r})"
    np.testing.assert_allclose(to_np(m(x)), torch.nn.GELU(approximate)(torch.tensor(to_np(x))).numpy(), rtol=1e-12)


def test_gelu_double_backward(rng):
    x = rng.standard_normal(6)
    ours, theirs = tensor(x, "cpu", requires_grad=True), torch.tensor(x, requires_grad=True)
    g, = mt.autograd.grad(F.gelu(ours).sum(), ours, create_graph=True)
    tg, = torch.autograd.grad(torch.nn.functional.gelu(theirs).sum(), theirs, create_graph=True)
    g.sum().backward()
    tg.sum().backward()
    np.testing.assert_allclose(to_np(ours.grad), theirs.grad.numpy(), rtol=1e-10)


def test_gelu_errors(device):
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(mt.zeros(3, device=device), approximate="erf")
    with pytest.raises(RuntimeError, match="floating point"):
        F.gelu(mt.zeros(3, dtype=mt.int64, device=device))


# ---- embedding ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", [None, 3, -1])
def test_embedding_matches_torch_with_repeats(device, rng, dtype, padding_idx):
    V, D = 11, 33
    idx = rng.integers(0, V, size=(7, 9))
    idx[0, :4] = 3                                    # repeated indices: their gradients add up
    idx[1, 0] = V - 1
    weight = rng.standard_normal((V, D)).astype(dtype)
    w, tw = tensor(weight, device, requires_grad=True), torch.tensor(weight, requires_grad=True)
    y = F.embedding(tensor(idx, device), w, padding_idx=padding_idx)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=padding_idx)
    np.testing.assert_array_equal(to_np(y), ty.detach().numpy())
    dy = rng.standard_normal(ty.shape).astype(dtype)
    y.backward(tensor(dy, device))
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(to_np(w.grad), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    if padding_idx is not None:
        assert not to_np(w.grad)[padding_idx].any()


def test_embedding_gradcheck(rng):
    w = tensor(rng.standard_normal((6, 4)), "cpu", requires_grad=True)
    idx = mt.tensor([[0, 5, 5], [2, 0, 1]])
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))


@pytest.fixture
def deterministic():
    mt.use_deterministic_algorithms(True)
    yield
    mt.use_deterministic_algorithms(False)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_embedding_deterministic_grads_are_bit_identical(device, rng, deterministic, dtype):
    assert mt.are_deterministic_algorithms_enabled()
    V, D = 50, 768
    idx = tensor(rng.integers(0, 5, size=(64, 40)), device)   # 2560 lookups into 5 rows: long runs
    idx[3, :] = 7
    weight = tensor(rng.standard_normal((V, D)).astype(np.float32), device).to(getattr(mt, dtype))
    dy = tensor(rng.standard_normal((64, 40, D)).astype(np.float32), device).to(getattr(mt, dtype))
    grads = []
    for _ in range(3):
        w = weight.detach().requires_grad_(True)
        F.embedding(idx, w, padding_idx=2).backward(dy)
        grads.append(to_np(w.grad.float()))
    for g in grads[1:]:
        np.testing.assert_array_equal(g, grads[0])
    ref = np.zeros((V, D))
    np.add.at(ref, to_np(idx).reshape(-1), to_np(dy.float()).reshape(-1, D).astype(np.float64))
    ref[2] = 0
    tol = dict(rtol=1e-5, atol=1e-3) if dtype == "float32" else dict(rtol=2e-2, atol=1.0)
    np.testing.assert_allclose(grads[0], ref, **tol)


def test_embedding_module_and_errors(device, rng):
    m = nn.Embedding(10, 3, padding_idx=-2).to(device)
    assert m.padding_idx == 8 and not to_np(m.weight)[8].any()
    assert tuple(m(tensor(rng.integers(0, 10, size=(2, 5)), device)).shape) == (2, 5, 3)
    assert repr(m) == "Embedding(10, 3, padding_idx=8)"
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(4, 2, padding_idx=4)
    w = mt.zeros(4, 2, device=device)
    with pytest.raises(RuntimeError, match="int64"):
        F.embedding(mt.zeros(3, device=device), w)
    with pytest.raises(RuntimeError, match="2-D"):
        F.embedding(mt.zeros(3, dtype=mt.int64, device=device), mt.zeros(4, device=device))
    if device == "cpu":
        with pytest.raises(IndexError, match="index 4 is out of range"):
            F.embedding(mt.tensor([0, 4]), w)


def test_use_deterministic_algorithms_checks_its_argument():
    with pytest.raises(TypeError, match="bool"):
        mt.use_deterministic_algorithms(1)
    assert not mt.are_deterministic_algorithms_enabled()


# ---- one_hot ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_classes", [-1, 6])
def test_one_hot_matches_torch(device, rng, num_classes):
    x = rng.integers(0, 5, size=(3, 4))
    ours = F.one_hot(tensor(x, device), num_classes)
    theirs = torch.nn.functional.one_hot(torch.tensor(x), num_classes)
    assert ours.dtype is mt.int64
    np.testing.assert_array_equal(to_np(ours), theirs.numpy())
    assert tuple(F.one_hot(mt.zeros(0, dtype=mt.int64, device=device), 3).shape) == (0, 3)


def test_one_hot_errors(device):
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(mt.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="empty"):
        F.one_hot(mt.zeros(0, dtype=mt.int64, device=device))
    if device == "cpu":
        with pytest.raises(RuntimeError, match="smaller than num_classes"):
            F.one_hot(mt.tensor([0, 3]), 3)
        with pytest.raises(RuntimeError, match="non-negative"):
            F.one_hot(mt.tensor([-1, 0]), 3)
