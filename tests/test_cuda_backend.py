"""The cuda backend against the cpu backend (the reference), function by function.

Inputs are random, of odd sizes (1, 7, 33, 1000x3), broadcast ((4,1,5) with (3,1)) and
non-contiguous (transposed, sliced with steps, shifted by one element so 16-byte vector loads
are impossible). Views are built the same way on both devices from a contiguous base, so the
GPU really sees the strides. Every allocation is poisoned with 0xFF bytes (NaN for floats), so an
output element a kernel forgot to write fails the comparison.
The ``rng`` fixture (tests/conftest.py) gives fresh random data, reproducible per test.
"""
import itertools

import numpy as np
import pytest

import minitorch
from minitorch import dtypes
from minitorch.native import cpu

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("poisoned_allocator")]
if not minitorch.cuda.is_available():
    pytest.skip("needs CuPy and a CUDA GPU", allow_module_level=True)

import cupy as cp  # noqa: E402
import cupy_backend as gpu  # noqa: E402 - the cuda backend, CuPy arrays in and out

from minitorch.native.cuda.launch import SUFFIX  # noqa: E402

F32, F64, I64, BOOL = (np.dtype(t) for t in (np.float32, np.float64, np.int64, np.bool_))
FLOATS = (F32, F64)
RTOL = {F32: 2e-6, F64: 1e-13}


# ---- helpers ------------------------------------------------------------------------------------
def check(got, want, rtol=None, atol=0.0):
    """got (cupy) equals want (numpy): dtype, shape, contiguity, values (NaN == NaN)."""
    assert isinstance(got, cp.ndarray)
    assert got.flags.c_contiguous, "outputs must be contiguous"
    host = cp.asnumpy(got)
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    assert host.shape == want.shape, (host.shape, want.shape)
    if want.dtype == BOOL:
        np.testing.assert_array_equal(host.view(np.uint8), want.astype(np.uint8))
    elif want.dtype == I64:
        np.testing.assert_array_equal(host, want)
    else:
        rtol = RTOL[want.dtype] if rtol is None else rtol
        np.testing.assert_allclose(host, want, rtol=rtol, atol=atol, equal_nan=True)


# A view is (base shape, function applied to the base): the same slicing on numpy and cupy.
VIEWS = {
    "contiguous-7": ((7,), lambda x: x),
    "contiguous-1": ((1,), lambda x: x),
    "contiguous-33": ((33,), lambda x: x),
    "contiguous-1000x3": ((1000, 3), lambda x: x),
    "contiguous-big": ((1 << 18) + 3, lambda x: x),      # vector loop plus a 3-element tail
    "zero-d": ((), lambda x: x),
    "empty": ((0, 3), lambda x: x),
    "transposed": ((5, 8), lambda x: x.T),
    "stepped": ((20, 9), lambda x: x[::2, 1::3]),
    "reversed": ((33,), lambda x: x[::-1]),
    "misaligned": ((1001,), lambda x: x[1:]),              # contiguous but not 16-byte aligned
    "3d-permuted": ((3, 4, 5), lambda x: x.transpose(2, 0, 1)),
}


def draw(rng, shape, dtype, kind="normal"):
    """Random data of a dtype; kind picks a range that suits the op."""
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype == I64:
        lo, hi = {"pow_base": (-4, 5), "pow_exp": (0, 6), "small": (-3, 4)}.get(kind, (-50, 51))
        return rng.integers(lo, hi, size=shape, dtype=np.int64)
    if kind == "positive":
        x = rng.uniform(0.1, 5.0, shape)
    elif kind == "small":                   # many ties: exercises eq/le/ge and max/min
        x = rng.integers(-3, 4, size=shape).astype(np.float64)
    elif kind == "pow_base":
        x = rng.uniform(0.1, 3.0, shape)
    elif kind == "pow_exp":
        x = rng.uniform(-2.0, 2.0, shape)
    elif kind == "nonzero":
        x = rng.standard_normal(shape)
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    elif kind == "wide":                    # overflow territory for exp-based ops
        x = rng.standard_normal(shape) * 3
        x.flat[: min(x.size, 4)] = [-1000.0, 1000.0, -100.0, 100.0][: min(x.size, 4)]
    else:
        x = rng.standard_normal(shape) * 3
    return np.asarray(x, dtype=dtype)


def pair(rng, view, dtype, kind="normal"):
    """(numpy view, cupy view) of the same random data."""
    shape, fn = VIEWS[view]
    base = draw(rng, shape, dtype, kind)
    return fn(base), fn(cp.asarray(base))


# ---- op tables ----------------------------------------------------------------------------------
def test_op_tables_match_cpu():
    assert set(gpu.BINARY_OPS) == set(cpu.BINARY_OPS)
    assert set(gpu.UNARY_OPS) == set(cpu.UNARY_OPS)
    assert tuple(gpu.COMPARISONS) == tuple(cpu.COMPARISONS)


def cases(table):
    """(op, dtype) for every op of ``table`` ({op: kernel name suffixes}) and dtype it has kernels for."""
    for op, suffixes in table.items():
        for dt, suffix in SUFFIX.items():
            # the four dtypes of phases 01-04; float16/bfloat16 (CuPy has no bfloat16 arrays) are
            # checked against the cpu backend in tests/test_half.py
            if suffix in suffixes and suffix in ("f32", "f64", "i64", "bool"):
                yield op, dt


def binary_kinds(op):
    if op == "pow":
        return "pow_base", "pow_exp"
    if op == "div":
        return "normal", "nonzero"
    if op in gpu.COMPARISONS or op in ("maximum", "minimum"):
        return "small", "small"
    return "normal", "normal"


# ---- binary --------------------------------------------------------------------------------------
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op,dtype", list(cases(gpu.BINARY_OPS)), ids=lambda v: str(v))
def test_binary_same_shape(op, dtype, view, rng):
    ka, kb = binary_kinds(op)
    a, ga = pair(rng, view, dtype, ka)
    b, gb = pair(rng, view, dtype, kb)
    check(gpu.binary(op, ga, gb), cpu.binary(op, a, b))


BROADCASTS = [((4, 1, 5), (3, 1)), ((5,), (2, 3, 5)), ((), (3, 4)), ((2, 1), (1, 3)),
              ((1000, 3), (3,)), ((7, 1, 1, 2), (1, 6, 3, 1)), ((0, 3), (1, 3))]


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("op,dtype", list(cases(gpu.BINARY_OPS)), ids=lambda v: str(v))
def test_binary_broadcast(op, dtype, shapes, rng):
    ka, kb = binary_kinds(op)
    a, b = draw(rng, shapes[0], dtype, ka), draw(rng, shapes[1], dtype, kb)
    check(gpu.binary(op, cp.asarray(a), cp.asarray(b)), cpu.binary(op, a, b))
    if not (op == "pow" and dtype == I64):       # b ** a: NumPy refuses negative integer powers
        check(gpu.binary(op, cp.asarray(b), cp.asarray(a)), cpu.binary(op, b, a))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_binary_broadcast_of_views(dtype, rng):
    """A transposed view broadcast against a stepped slice: strides and stride 0 at once."""
    base_a = draw(rng, (6, 4), dtype)
    base_b = draw(rng, (10, 18), dtype)
    a, b = base_a.T[:, None, :], base_b[::2, ::3]      # (4, 1, 6) and (5, 6) -> (4, 5, 6)
    ga, gb = cp.asarray(base_a).T[:, None, :], cp.asarray(base_b)[::2, ::3]
    for op in ("add", "sub", "mul", "maximum", "lt"):
        check(gpu.binary(op, ga, gb), cpu.binary(op, a, b))


def test_binary_nan_propagates_through_maximum_minimum():
    a = np.array([np.nan, 1.0, np.nan, -2.0], dtype=np.float32)
    b = np.array([0.0, np.nan, np.nan, 3.0], dtype=np.float32)
    for op in ("maximum", "minimum"):
        check(gpu.binary(op, cp.asarray(a), cp.asarray(b)), cpu.binary(op, a, b))


def test_binary_int64_wraps_like_numpy():
    a = np.array([2**62, -(2**63), 2**63 - 1], dtype=np.int64)
    b = np.array([4, 1, 1], dtype=np.int64)
    for op in ("add", "sub", "mul"):
        with np.errstate(over="ignore"):
            check(gpu.binary(op, cp.asarray(a), cp.asarray(b)), cpu.binary(op, a, b))


def test_binary_errors():
    x = cp.ones(3, dtype=cp.float32)
    with pytest.raises(KeyError):
        gpu.binary("nope", x, x)
    with pytest.raises(TypeError):
        gpu.binary("div", cp.ones(3, dtype=cp.int64), cp.ones(3, dtype=cp.int64))
    with pytest.raises(TypeError):
        gpu.binary("add", x, cp.ones(3, dtype=cp.float64))
    with pytest.raises(ValueError):
        gpu.binary("add", x, cp.ones(4, dtype=cp.float32))


# ---- binary with a scalar ----------------------------------------------------------------------
SCALARS = {F32: (2.5, -0.75), F64: (2.5, -0.75), I64: (3, -2), BOOL: (True, False)}


@pytest.mark.parametrize("reflected", [False, True])
@pytest.mark.parametrize("view", ["contiguous-1000x3", "contiguous-big", "transposed", "stepped",
                                  "misaligned", "zero-d", "empty"])
@pytest.mark.parametrize("op,dtype", list(cases(gpu.BINARY_OPS)), ids=lambda v: str(v))
def test_binary_scalar(op, dtype, view, reflected, rng):
    ka, kb = binary_kinds(op)
    a, ga = pair(rng, view, dtype, kb if reflected else ka)
    for s in SCALARS[dtype]:
        if op == "pow":
            s = 2 if dtype == I64 else 1.5              # a ** s with a > 0; s ** a, a within the exponent range
        check(gpu.binary_scalar(op, ga, s, reflected), cpu.binary_scalar(op, a, s, reflected))


# ---- unary -------------------------------------------------------------------------------------
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op,dtype", list(cases(gpu.UNARY_OPS)), ids=lambda v: str(v))
def test_unary(op, dtype, view, rng):
    kind = "positive" if op in ("log", "sqrt") else ("wide" if op in ("sigmoid", "tanh") else "normal")
    a, ga = pair(rng, view, dtype, kind)
    # exp/tanh/sigmoid are within 2 ulp of the correctly rounded value; tiny results need atol.
    # gelu in float32: erfc/exp of a rounded argument, whose relative error in the far tail grows
    # with x^2 (the condition number): ~6e-6 at x = -7.5
    rtol = 2e-5 if op.startswith("gelu") and dtype == np.float32 else None
    check(gpu.unary(op, ga), cpu.unary(op, a), rtol=rtol, atol=1e-30)


def test_unary_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e-30, -88.8, 88.8, -1e4, 1e4], dtype=np.float32)
    for op in (op for op, suffixes in gpu.UNARY_OPS.items() if "f32" in suffixes):     # not logical_not: bool only
        with np.errstate(all="ignore"):
            check(gpu.unary(op, cp.asarray(x)), cpu.unary(op, x), atol=1e-30)


def test_unary_errors():
    with pytest.raises(KeyError):
        gpu.unary("nope", cp.ones(3, dtype=cp.float32))
    with pytest.raises(TypeError):
        gpu.unary("exp", cp.ones(3, dtype=cp.int64))


# ---- where ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", (F32, F64, I64, BOOL), ids=str)
@pytest.mark.parametrize("shapes", [((1000, 3),) * 3, ((4, 1, 5), (3, 1), (5,)), ((), (2, 3), (3,)),
                                    ((7,), (7,), ()), ((0, 2), (1, 2), (2,))], ids=str)
def test_where(dtype, shapes, rng):
    c = rng.random(shapes[0]) < 0.5
    a, b = draw(rng, shapes[1], dtype), draw(rng, shapes[2], dtype)
    check(gpu.where(cp.asarray(c), cp.asarray(a), cp.asarray(b)), cpu.where(c, a, b))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_views_and_non_bool_condition(dtype, rng):
    c = rng.integers(0, 2, size=(8, 5)).astype(np.float32)      # float condition: x != 0
    a = draw(rng, (5, 8), dtype)
    b = draw(rng, (16, 5), dtype)
    got = gpu.where(cp.asarray(c), cp.asarray(a).T, cp.asarray(b)[::2])
    check(got, cpu.where(c, a.T, b[::2]))


# ---- cast and contiguous -------------------------------------------------------------------------
@pytest.mark.parametrize("view", ["contiguous-1000x3", "contiguous-big", "transposed", "stepped",
                                  "reversed", "misaligned", "zero-d", "empty", "3d-permuted"])
@pytest.mark.parametrize("src,dst", list(itertools.product((F32, F64, I64, BOOL), repeat=2)), ids=str)
def test_cast(src, dst, view, rng):
    shape, fn = VIEWS[view]
    base = draw(rng, shape, src, "small")            # small integers and zeros: exact in every type
    if src in FLOATS:
        base = (base + np.asarray(rng.uniform(-0.9, 0.9, shape), dtype=src)).astype(src)  # truncation
    a, ga = fn(base), fn(cp.asarray(base))
    check(gpu.cast(ga, dtypes.as_dtype(dst.name)), cpu.cast(a, dtypes.as_dtype(dst.name)), rtol=0)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", (F32, F64, I64, BOOL), ids=str)
def test_contiguous(dtype, view, rng):
    a, ga = pair(rng, view, dtype)
    out = gpu.contiguous(ga)
    check(out, cpu.contiguous(a), rtol=0)
    if ga.size:
        assert out.data.ptr != ga.data.ptr, "contiguous must copy"


# ---- transpose -----------------------------------------------------------------------------------
TRANSPOSE_SHAPES = [(33, 65), (1, 1), (127, 1), (1, 127), (64, 32), (1000, 3), (0, 5), (2_200_000, 1)]


@pytest.mark.parametrize("fn", ["transpose2d", "transpose2d_naive"])
@pytest.mark.parametrize("shape", TRANSPOSE_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", (F32, F64, I64, BOOL), ids=str)
def test_transpose2d(fn, shape, dtype, rng):
    a = draw(rng, shape, dtype)
    check(getattr(gpu, fn)(cp.asarray(a)), cpu.transpose2d(a), rtol=0)


@pytest.mark.parametrize("fn", ["transpose2d", "transpose2d_naive"])
def test_transpose2d_of_views(fn, rng):
    base = draw(rng, (70, 90), F32)
    g = cp.asarray(base)
    for view in (lambda x: x[::2, 1::3], lambda x: x.T, lambda x: x[::-1, 5:40]):
        check(getattr(gpu, fn)(view(g)), cpu.transpose2d(view(base)), rtol=0)


def test_transpose2d_errors():
    with pytest.raises(ValueError):
        gpu.transpose2d(cp.ones((2, 3, 4), dtype=cp.float32))


# ---- matmul --------------------------------------------------------------------------------------
MATMUL_SHAPES = [((33, 65), (65, 17)), ((1, 1), (1, 1)), ((127, 1), (1, 5)), ((2, 1, 5, 7), (3, 7, 4)),
                 ((16, 16), (16, 16)), ((7,), (7, 4)), ((3, 7), (7,)), ((7,), (7,)), ((3, 0), (0, 4)),
                 ((0, 3), (3, 4)), ((4, 2, 3), (3, 5)), ((70_000, 1, 2), (70_000, 2, 1))]


def matmul_check(got, a, b):
    want = cpu.matmul(a, b)
    if a.dtype == F64:
        check(got, want, rtol=1e-12, atol=1e-12)
        return
    # float32 against a float64 product of the same inputs: relative to the size of the terms
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    scale = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    host = cp.asnumpy(got)
    assert host.shape == ref.shape and host.dtype == F32 and got.flags.c_contiguous
    assert np.all(np.abs(host - ref) <= 1e-5 * scale + 1e-30), "float32 matmul off the float64 product"


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_matmul(shapes, dtype, rng):
    a, b = draw(rng, shapes[0], dtype), draw(rng, shapes[1], dtype)
    matmul_check(gpu.matmul(cp.asarray(a), cp.asarray(b)), a, b)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_matmul_of_views(dtype, rng):
    base_a, base_b = draw(rng, (40, 66), dtype), draw(rng, (50, 90), dtype)
    ga, gb = cp.asarray(base_a), cp.asarray(base_b)
    # a: transposed [33, 40]; b: stepped [40, 17]
    a, b = base_a[:, ::2].T, base_b[::1, ::5][:40, :17]
    got = gpu.matmul(ga[:, ::2].T, gb[::1, ::5][:40, :17])
    matmul_check(got, a, b)
    # batch broadcast through a stride-0 view
    a3 = np.broadcast_to(base_a[:5, :7], (3, 5, 7))
    got = gpu.matmul(cp.broadcast_to(ga[:5, :7], (3, 5, 7)), gb[:7, :4])
    matmul_check(got, a3, base_b[:7, :4])


def test_matmul_errors():
    with pytest.raises(ValueError):
        gpu.matmul(cp.ones((2, 3), dtype=cp.float32), cp.ones((4, 2), dtype=cp.float32))
    with pytest.raises(TypeError):
        gpu.matmul(cp.ones((2, 3), dtype=cp.int64), cp.ones((3, 2), dtype=cp.int64))


# ---- sum -----------------------------------------------------------------------------------------
def sum_check(got, a, dims, keepdim, scale):
    want = cpu.sum(a, dims, keepdim, scale)
    if a.dtype == I64:
        check(got, want)
        return
    # against a float64 sum, relative to the sum of magnitudes (tree order differs from NumPy's)
    a64 = a.astype(np.float64)
    ref = np.sum(a64, axis=tuple(dims), keepdims=keepdim) * scale
    mag = np.sum(np.abs(a64), axis=tuple(dims), keepdims=keepdim) * abs(scale)
    host = cp.asnumpy(got)
    assert host.shape == want.shape and host.dtype == want.dtype and got.flags.c_contiguous
    tol = 1e-5 if a.dtype == F32 else 1e-13
    assert np.all(np.abs(host - ref) <= tol * mag + 1e-30), np.max(np.abs(host - ref) / (mag + 1e-30))


def all_axis_sets(ndim):
    for k in range(ndim + 1):
        yield from itertools.combinations(range(ndim), k)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", (F32, F64, I64), ids=str)
@pytest.mark.parametrize("view", ["contiguous-1", "contiguous-7", "contiguous-1000x3", "transposed",
                                  "stepped", "3d-permuted", "zero-d", "empty"])
def test_sum_every_axis_set(view, dtype, keepdim, rng):
    a, ga = pair(rng, view, dtype)
    for dims in all_axis_sets(a.ndim):
        sum_check(gpu.sum(ga, dims, keepdim, 1.0), a, dims, keepdim, 1.0)
        if dtype != I64:
            sum_check(gpu.sum(ga, dims, keepdim, 0.25), a, dims, keepdim, 0.25)


@pytest.mark.parametrize("shape,dims", [((10_000_003,), (0,)), ((100_000, 3), (0,)), ((3, 100_000), (1,)),
                                        ((5000, 64), (0,)), ((64, 5000), (1,)), ((300, 2, 700), (0, 2)),
                                        ((1, 1), (0, 1)), ((2, 3, 4, 5), (1, 3))], ids=str)
@pytest.mark.parametrize("dtype", (F32, F64, I64), ids=str)
def test_sum_sizes(shape, dims, dtype, rng):
    a = draw(rng, shape, dtype)
    sum_check(gpu.sum(cp.asarray(a), dims, False, 1.0), a, dims, False, 1.0)
    if dtype != I64:
        n = int(np.prod([shape[d] for d in dims]))
        sum_check(gpu.sum(cp.asarray(a), dims, True, 1.0 / n), a, dims, True, 1.0 / n)


def test_sum_errors():
    with pytest.raises(TypeError):
        gpu.sum(cp.ones(3, dtype=cp.bool_), (0,))
    with pytest.raises(ValueError):
        gpu.sum(cp.ones(3, dtype=cp.float32), (1,))


# ---- unary_backward ------------------------------------------------------------------------------
@pytest.mark.parametrize("view", ["contiguous-1000x3", "contiguous-big", "contiguous-1", "transposed",
                                  "misaligned", "empty"])
@pytest.mark.parametrize("op", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_unary_backward(op, dtype, view, rng):
    """Same inputs on both devices (saved y too: 1 - y*y near y = +-1 would magnify a 1-ulp
    difference in the forward pass); each + - * is rounded alone on the GPU, so results match."""
    g, gg = pair(rng, view, dtype)
    shape, fn = VIEWS[view]
    x = draw(rng, shape, dtype)
    base = x if op == "relu" else cpu.unary(op, x)
    saved, gsaved = fn(base), fn(cp.asarray(base))
    check(gpu.unary_backward(op, gg, gsaved), cpu.unary_backward(op, g, saved), rtol=0)


# ---- sgd_step ------------------------------------------------------------------------------------
SGD_OPTIONS = list(itertools.product([0.0, 0.9], [0.0, 0.1], [0.0, 0.01], [False, True], [False, True]))


@pytest.mark.parametrize("momentum,dampening,weight_decay,nesterov,maximize", SGD_OPTIONS, ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(1,), (1000, 3), (100_003,)], ids=str)
def test_sgd_step_matches_cpu_bit_for_bit(shape, dtype, momentum, dampening, weight_decay, nesterov, maximize, rng):
    p = draw(rng, shape, dtype)
    gp = cp.asarray(p)
    buf = np.zeros(shape, dtype) if momentum else None
    gbuf = cp.asarray(buf) if momentum else None
    for step in range(3):
        grad = draw(rng, shape, dtype)
        first = step == 0
        cpu.sgd_step(p, grad, buf, 0.05, momentum, dampening, weight_decay, nesterov, maximize, first)
        gpu.sgd_step(gp, cp.asarray(grad), gbuf, 0.05, momentum, dampening, weight_decay, nesterov, maximize, first)
        np.testing.assert_array_equal(cp.asnumpy(gp), p)
        if momentum:
            np.testing.assert_array_equal(cp.asnumpy(gbuf), buf)
