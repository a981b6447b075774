"""Phase 02: every op through the Tensor layer vs NumPy in float64, on odd, broadcast and
non-contiguous shapes, on cpu and cuda; type promotion; and the error messages."""
import numpy as np
import pytest

import minitorch as mt

SHAPES = [((1,), (1,)), ((7,), (7,)), ((33,), (1,)), ((1000, 3), (3,)), ((4, 1, 5), (3, 1)), ((2, 3), ())]
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _t(x, device, dtype=mt.float32):
    return mt.tensor(x, dtype=dtype, device=device)


def _close(t, ref, tol=1e-5):
    got = t.cpu().numpy().astype(np.float64)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_binary_broadcast(device, rng, op, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb) + 3.0       # keep divisors away from 0
    out = getattr(mt, op)(_t(a, device), _t(b, device))
    _close(out, BINARY[op](a.astype(np.float32), b.astype(np.float32)))


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_binary_float64_is_exact_to_rounding(device, rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _close(_t(a, device, mt.float64) * _t(b, device, mt.float64) + _t(b, device, mt.float64), a * b + b, 1e-12)


def test_scalar_and_reflected_ops(device, rng):
    a = rng.random((5, 3)) + 0.5
    t = _t(a, device, mt.float64)
    for got, ref in [(t + 2, a + 2), (2 + t, 2 + a), (t - 2, a - 2), (2.0 - t, 2.0 - a), (t * 3, a * 3),
                     (t / 4, a / 4), (1.0 / t, 1.0 / a), (t ** 2, a ** 2), (t ** 0.5, a ** 0.5),
                     (2 ** t, 2 ** a), (t ** t, a ** a), (-t, -a)]:
        _close(got, ref, 1e-12)


@pytest.mark.parametrize("name,ref", [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("abs", np.abs),
                                      ("tanh", np.tanh), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
                                      ("relu", lambda x: np.maximum(x, 0))])
@pytest.mark.parametrize("shape", [(1,), (7,), (1000, 3), (3, 33, 2)])
def test_unary(device, rng, name, ref, shape):
    a = rng.standard_normal(shape) * 3
    if name in ("log", "sqrt"):
        a = np.abs(a) + 1e-3
    _close(getattr(_t(a, device, mt.float64), name)(), ref(a), 1e-12)
    _close(getattr(_t(a, device), name)(), ref(a.astype(np.float32)), 2e-6)


def test_sigmoid_does_not_overflow(device):
    t = _t([-1000.0, -100.0, 0.0, 100.0, 1000.0], device)
    assert t.sigmoid().tolist() == [0.0, pytest.approx(3.72e-44, abs=1e-43), 0.5, 1.0, 1.0]


def test_comparisons_and_where(device, rng):
    a, b = rng.integers(-3, 3, (4, 5)), rng.integers(-3, 3, (5,))
    ta, tb = _t(a, device, mt.int64), _t(b, device, mt.int64)
    for got, ref in [(ta == tb, a == b), (ta != tb, a != b), (ta < tb, a < b), (ta <= tb, a <= b),
                     (ta > tb, a > b), (ta >= tb, a >= b), (ta > 0, a > 0), (1 < ta, 1 < a)]:
        assert got.dtype is mt.bool and np.array_equal(got.cpu().numpy(), ref)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 1))
    _close(mt.where(ta > tb, _t(x, device), _t(y, device)), np.where(a > b, x, y).astype(np.float32))
    _close(mt.where(ta > 0, _t(x, device), 0.0), np.where(a > 0, x, 0).astype(np.float32))


def test_type_promotion(device):
    i, f, d = mt.tensor([1, 2], device=device), mt.tensor([1.0, 2.0], device=device), mt.tensor([1.0], dtype=mt.float64, device=device)
    assert (i + i).dtype is mt.int64 and (i + f).dtype is mt.float32 and (f + d).dtype is mt.float64
    assert (i * 0.5).dtype is mt.float32 and (i / 2).dtype is mt.float32 and (i / 2).tolist() == [0.5, 1.0]
    assert (f + mt.tensor(1.0, dtype=mt.float64, device=device)).dtype is mt.float32   # 0-d does not widen
    assert (i + mt.tensor(1.5, device=device)).dtype is mt.float32                      # but lifts category
    assert i.exp().dtype is mt.float32 and i.abs().dtype is mt.int64
    assert f.to(mt.int64).tolist() == [1, 2] and (f > 1).to(mt.float32).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("shape", [(1, 1), (33, 65), (127, 1), (64, 32), (1000, 3)])
def test_transpose_and_contiguous(device, rng, shape):
    a = rng.standard_normal(shape)
    t = _t(a, device, mt.float64)
    assert not t.T.is_contiguous() or 1 in shape
    _close(t.T.contiguous(), a.T, 0)
    _close(t.T * 2, a.T * 2, 0)                        # kernels read the view through its strides
    _close(t.transpose(0, 1).exp(), np.exp(a.T), 1e-12)


def test_non_contiguous_inputs(device, rng):
    a = rng.standard_normal((6, 8, 5))
    t = _t(a, device, mt.float64)
    view = t.permute(2, 0, 1)
    _close(view + t.permute(2, 0, 1), 2 * a.transpose(2, 0, 1), 0)
    _close(view.reshape(5, 48), a.transpose(2, 0, 1).reshape(5, 48), 0)
    _close(t.expand(2, 6, 8, 5) * 1.0, np.broadcast_to(a, (2, 6, 8, 5)), 0)


@pytest.mark.parametrize("sa,sb", [((128, 64), (64, 128)), ((33, 17), (17, 65)), ((1, 1), (1, 1)),
                                   ((7,), (7,)), ((5, 7), (7,)), ((7,), (7, 3)), ((2, 1, 5, 7), (3, 7, 4)),
                                   ((4, 3, 2), (2, 5))])
def test_matmul_shapes(device, rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _close(_t(a, device, mt.float64) @ _t(b, device, mt.float64), np.matmul(a, b), 1e-10)
    _close(_t(a, device) @ _t(b, device), np.matmul(a, b), 1e-4)


def test_matmul_of_transposed_view(device, rng):
    a, b = rng.standard_normal((9, 5)), rng.standard_normal((9, 4))
    _close(_t(a, device).T @ _t(b, device), a.T @ b, 1e-4)


def test_phase02_deliverable_max_error(device, rng):
    """The seed's deliverable: A (128x64) @ B (64x128) vs a CPU reference, max abs error < 1e-4."""
    a, b = rng.random((128, 64), dtype=np.float32), rng.random((64, 128), dtype=np.float32)
    c = (_t(a, device) @ _t(b, device)).cpu().numpy()
    assert np.abs(c - a.astype(np.float64) @ b).max() < 1e-4


def test_error_messages_name_both_sides(device):
    a, b = mt.ones(2, 3, device=device), mt.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4,\)"):
        a + b
    with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(2, 3\) cannot be multiplied"):
        a @ a
    with pytest.raises(TypeError, match="minitorch.int64 and minitorch.float32"):
        mt.ones(2, 2, dtype=mt.int64, device=device) @ mt.ones(2, 2, device=device)
    with pytest.raises(RuntimeError, match="invalid for input"):
        a.reshape(4, 2)
    with pytest.raises(RuntimeError, match="Use .reshape"):
        a.T.view(6)
    with pytest.raises(TypeError, match="bool tensor"):
        mt.where(a, a, a)


@pytest.mark.cuda
def test_mixing_devices_names_both():
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        mt.ones(3) + mt.ones(3, device="cuda")
