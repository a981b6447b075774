"""Issue 13 §1, phase 04: all, any, prod, amax, amin, logsumexp, norm, count_nonzero, cumsum,
cumprod, sort, argsort, topk, kthvalue, median, mode, unique, bincount, histc - values and
gradients against PyTorch (tests/oracle.py's check_op) on both devices: random, non-contiguous,
0-d, size-1 dims, negative dims, keepdim, dim=None, ties, NaN, zeros, and lengths around the
kernels' block and tile sizes (1, 31, 32, 33, 1023, 1025, 5000; on cuda one long row of 300k,
which takes the multi-block scan and the multi-tile sort). On cuda every fresh allocation is
filled with 0xFF first, so an output element a kernel forgot to write fails."""
import math

import numpy as np
import pytest
import torch

import minitorch as mt
from oracle import assert_close, check_op

LENGTHS = [1, 31, 32, 33, 1023, 1025, 5000]
LONG = 300_000           # cuda only: 74 look-back scan tiles, a sort row of 2^19 padded (256 tiles)


@pytest.fixture(autouse=True)
def _poison_cuda(request):
    """On the cuda variant of a test, fill fresh allocations with 0xFF (conftest's fixture)."""
    if "device" in request.fixturenames and request.getfixturevalue("device") == "cuda":
        request.getfixturevalue("poisoned_allocator")


def _long_only_on_cuda(device, n):
    if n > 5000 and device == "cpu":
        pytest.skip("the long row exercises cuda's multi-block paths")


# ---- reductions -------------------------------------------------------------------------------------
REDUCTIONS = {
    "prod": lambda lib, x, d, k: lib.prod(x, dim=d, keepdim=k) if d is not None else lib.prod(x),
    "amax": lambda lib, x, d, k: lib.amax(x, dim=() if d is None else d, keepdim=k),
    "amin": lambda lib, x, d, k: lib.amin(x, dim=() if d is None else d, keepdim=k),
    "logsumexp": lambda lib, x, d, k: lib.logsumexp(x, dim=tuple(range(x.ndim)) if d is None else d, keepdim=k),
    "norm_fro": lambda lib, x, d, k: lib.norm(x, dim=d, keepdim=k),
    "norm_1": lambda lib, x, d, k: lib.norm(x, p=1, dim=d, keepdim=k),
    "norm_2": lambda lib, x, d, k: lib.norm(x, p=2, dim=d, keepdim=k),
    "norm_inf": lambda lib, x, d, k: lib.norm(x, p=math.inf, dim=d, keepdim=k),
    "norm_3": lambda lib, x, d, k: lib.norm(x, p=3, dim=d, keepdim=k),
    "all": lambda lib, x, d, k: lib.all(x, dim=d, keepdim=k) if d is not None else lib.all(x),
    "any": lambda lib, x, d, k: lib.any(x, dim=d, keepdim=k) if d is not None else lib.any(x),
    "count_nonzero": lambda lib, x, d, k: lib.count_nonzero(x, dim=d),
}
CASES = [((3, 5), 1), ((3, 5), -2), ((4, 1, 6), 1), ((2, 3, 4), None), ((2, 3, 4), -1), ((5,), 0), ((), None),
         ((1, 1), 0)]


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("shape,dim", CASES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_reductions_match_torch(device, rng, name, shape, dim, layout):
    for keepdim in (False, True):
        fn = REDUCTIONS[name]
        # values away from 0 for prod/norm gradients; all/any see their zeros in other tests
        check_op(lambda lib, x: fn(lib, x, dim, keepdim), [shape], device, rng, layout=layout, low=0.5, high=2.0)
        check_op(lambda lib, x: fn(lib, x, dim, keepdim), [shape], device, rng, layout=layout, low=-2.0, high=-0.5)


@pytest.mark.parametrize("name", ["prod", "amax", "amin", "all", "any", "count_nonzero"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_reductions_of_other_dtypes(device, rng, name, dtype):
    fn = REDUCTIONS[name]
    for dim in (None, 0, 1):
        ours, theirs = check_op(lambda lib, x: fn(lib, x, dim, False), [(6, 7)], device, rng, dtype=dtype, low=-2, high=2)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{name} of {dtype}: dtype"


@pytest.mark.parametrize("name", ["logsumexp", "norm_fro", "norm_1", "norm_inf"])
def test_float32_reductions(device, rng, name):
    check_op(lambda lib, x: REDUCTIONS[name](lib, x, 1, False), [(5, 1025)], device, rng, dtype="float32")


@pytest.mark.parametrize("n", LENGTHS + [LONG])
@pytest.mark.parametrize("name", ["prod", "amax", "logsumexp", "norm_2", "norm_inf", "all", "count_nonzero"])
def test_reduction_lengths(device, rng, name, n):
    _long_only_on_cuda(device, n)
    fn = REDUCTIONS[name]
    # |x| near 1 keeps a long product finite; one row and several rows (columns, strided: dim 0)
    low, high = (0.999, 1.001) if name == "prod" else (-2.0, 2.0)
    check_op(lambda lib, x: fn(lib, x, 0, False), [(n,)], device, rng, low=low, high=high)
    if n <= 5000:
        check_op(lambda lib, x: fn(lib, x, 1, False), [(3, n)], device, rng, low=low, high=high)
        check_op(lambda lib, x: fn(lib, x, 0, True), [(n, 3)], device, rng, low=low, high=high)


def test_prod_gradient_with_zeros(device, rng):
    x = rng.uniform(0.5, 2, (5, 6))
    x[1, 2] = 0                       # one zero: only it gets a gradient (the product of the rest)
    x[2, [0, 4]] = 0                  # two zeros: every gradient of the row is 0
    x[3, :] = 0
    check_op(lambda lib, t: lib.prod(t, dim=1), None, device, rng, arrays=[x])
    check_op(lambda lib, t: lib.prod(t), None, device, rng, arrays=[x[:2]])


def test_amax_amin_ties_share_the_gradient(device, rng):
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [0.0, -1.0, -1.0, 4.0]])
    for fn in (lambda lib, t: lib.amax(t, dim=1), lambda lib, t: lib.amin(t, dim=1),
               lambda lib, t: lib.amax(t), lambda lib, t: lib.amin(t, dim=(0, 1), keepdim=True)):
        check_op(fn, None, device, rng, arrays=[x])


def test_nan_and_infinities(device, rng):
    x = np.array([[1.0, np.nan, 2.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0], [0.0, 0.0, 0.0],
                  [-np.inf, 3.0, np.inf]])
    for fn in (lambda lib, t: lib.amax(t, dim=1), lambda lib, t: lib.amin(t, dim=1),
               lambda lib, t: lib.logsumexp(t, dim=1), lambda lib, t: lib.norm(t, dim=1),
               lambda lib, t: lib.norm(t, p=math.inf, dim=1), lambda lib, t: lib.norm(t, p=1, dim=1),
               lambda lib, t: lib.prod(t, dim=1), lambda lib, t: lib.all(t, dim=1), lambda lib, t: lib.any(t, dim=1),
               lambda lib, t: lib.count_nonzero(t, dim=1)):
        check_op(fn, None, device, rng, arrays=[x], grad=False)


def test_norm_gradient_at_zero_is_zero(device, rng):
    x = np.zeros((3, 4))
    x[1] = rng.standard_normal(4)
    check_op(lambda lib, t: lib.norm(t, dim=1), None, device, rng, arrays=[x])
    check_op(lambda lib, t: lib.norm(t, p=1, dim=1), None, device, rng, arrays=[x])


def test_empty_reductions(device, rng):
    for fn in (lambda lib, t: lib.prod(t, dim=1), lambda lib, t: lib.all(t, dim=1), lambda lib, t: lib.any(t, dim=1),
               lambda lib, t: lib.count_nonzero(t, dim=1), lambda lib, t: lib.logsumexp(t, dim=1),
               lambda lib, t: lib.norm(t, dim=1)):
        check_op(fn, [(3, 0)], device, rng, grad=False)
        check_op(fn, [(0, 4)], device, rng, grad=False)


def test_half_reductions_round_once(device, rng):
    x = rng.uniform(0.5, 1.5, (4, 33)).astype(np.float32)
    for name in ("prod", "amax", "logsumexp", "norm_2"):
        ours = REDUCTIONS[name](mt, mt.tensor(x, device=device).to(mt.float16), 1, False)
        theirs = REDUCTIONS[name](torch, torch.tensor(x).to(torch.float16), 1, False)
        assert ours.dtype == mt.float16
        np.testing.assert_allclose(ours.float().cpu().numpy(), theirs.float().numpy(), rtol=2e-3, err_msg=name)


def test_reduction_errors(device):
    x = mt.zeros((2, 0), device=device)
    with pytest.raises(IndexError):
        mt.amax(x, dim=1)
    with pytest.raises(RuntimeError):
        mt.amin(x)
    with pytest.raises(RuntimeError):
        mt.norm(mt.ones((3,), dtype=mt.int64, device=device))
    with pytest.raises(NotImplementedError):
        mt.norm(mt.ones((3, 3), device=device), p="nuc")
    with pytest.raises(IndexError):
        mt.prod(mt.ones((3,), device=device), dim=2)
    with pytest.raises(TypeError):
        mt.all([1, 2])


# ---- scans ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((3, 7), -1), ((2, 1, 4), 1),
                                       ((2, 3, 4), -2), ((), 0), ((4, 0), 1)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_scans_match_torch(device, rng, op, shape, dim, layout):
    check_op(lambda lib, x: getattr(lib, op)(x, dim), [shape], device, rng, layout=layout, low=0.5, high=1.5)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_cumprod_gradient_with_zeros(device, rng, layout):
    """Rows with no zero, one zero, two zeros (the second after the first), a zero first and last,
    all zeros: the gradient at and after the first zero is PyTorch's, not out / x."""
    rows = np.array([[1.5, 2.0, -0.5, 3.0, 0.7, 1.2], [1.5, 2.0, 0.0, 3.0, 0.7, 1.2],
                     [1.5, 0.0, -0.5, 0.0, 0.7, 1.2], [0.0, 2.0, -0.5, 3.0, 0.7, 0.0],
                     [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    check_op(lambda lib, x: lib.cumprod(x, 1), None, device, rng, arrays=[rows], layout=layout)
    check_op(lambda lib, x: lib.cumprod(x, 0), None, device, rng, arrays=[rows.T.copy()], layout=layout)
    ints = rng.integers(-1, 2, size=(4, 9)).astype(np.float64)      # many zeros at random places
    check_op(lambda lib, x: lib.cumprod(x, -1), None, device, rng, arrays=[ints], layout=layout)


@pytest.mark.parametrize("n", LENGTHS + [LONG])
def test_scan_lengths(device, rng, n):
    _long_only_on_cuda(device, n)
    check_op(lambda lib, x: lib.cumsum(x, 0), [(n,)], device, rng)
    check_op(lambda lib, x: lib.cumprod(x, 0), [(n,)], device, rng, low=0.9999, high=1.0001)
    rows = 3 if n > 5000 else 5
    check_op(lambda lib, x: lib.cumsum(x, -1), [(rows, n)], device, rng, layout="transposed")
    check_op(lambda lib, x: lib.cumsum(x, 0), [(n, rows)], device, rng, grad=n <= 5000)
    check_op(lambda lib, x: lib.cumsum(x, 0), [(n,)], device, rng, dtype="int64")     # exact: any order


TILE = 16384             # cuda's float32 rows-scan tile, the look-back's is 2 TILE (8-byte dtypes: a quarter of each): n sits at tile edges for all; a row of more than 4 tiles takes the look-back scan


@pytest.mark.parametrize("n", [TILE - 1, TILE, TILE + 1, 4 * TILE + 1, 33 * TILE + 5, 2**24 + 3])
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_scan_tiles_exact(device, rng, n, dtype):
    """Rows around cuda's tiles of TILE, up to 2049 tiles (look-back windows of 32 tiles), checked
    EXACTLY: cumsum of small integers and cumprod of +-1 are exact in every dtype and any order of
    additions, so one tile prefix too many or too few shows. Also an unaligned view (no 128-bit
    loads), a strided output (dim 0 of (n, 2)), two launches in a row (statuses reset) and 3 rows of
    ~2n/3: one block per row, tile after tile, up to 4 tiles (4 TILE + 1: rows of 43690, their tiles
    16-byte aligned in rows 0 and 2 only), else the look-back over 3 rows (windows reaching into the
    row before)."""
    _long_only_on_cuda(device, n)
    x = rng.integers(-8, 9, size=(n + 1, 2)).astype(dtype)
    signs = np.where(rng.random(n) < 0.5, -1, 1).astype(dtype)
    t = mt.tensor(x, device=device)
    row = t[1:, 0]                                   # unaligned start, element stride 2
    contiguous = mt.tensor(x[1:, 0].copy(), device=device)
    rows = x[:3 * (n // 3)].reshape(3, -1)           # 3 rows of ~2n/3 (see the docstring)
    for ours, want in [(mt.cumsum(contiguous, 0), np.cumsum(x[1:, 0])),
                       (mt.cumsum(contiguous, 0), np.cumsum(x[1:, 0])),        # second launch
                       (mt.cumsum(row, 0), np.cumsum(x[1:, 0])),
                       (mt.cumsum(t[1:], 0), np.cumsum(x[1:], 0)),
                       (mt.cumsum(t.reshape(-1)[1:n + 1], 0), np.cumsum(x.reshape(-1)[1:n + 1])),
                       (mt.cumsum(mt.tensor(rows, device=device), 1), np.cumsum(rows, 1)),
                       (mt.cumprod(mt.tensor(signs, device=device), 0), np.cumprod(signs))]:
        got = ours.cpu().numpy()
        bad = np.flatnonzero((got != want).reshape(len(got), -1).any(axis=1))
        assert bad.size == 0, f"{bad.size} wrong rows, first at {bad[:5]}: got {got[bad[:3]]}, want {want[bad[:3]]}"


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_scan_dtypes(device, rng, dtype):
    for op in ("cumsum", "cumprod"):
        ours, theirs = check_op(lambda lib, x: getattr(lib, op)(x, 1), [(3, 40)], device, rng, dtype=dtype,
                                low=-2, high=2)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_scan_errors(device):
    with pytest.raises(IndexError):
        mt.cumsum(mt.ones((3, 4), device=device), 2)


# ---- sort and friends ---------------------------------------------------------------------------------
def _ties(rng, shape):
    """Small integers as floats: many ties, so stable order and tie rules are tested."""
    return rng.integers(-3, 4, shape).astype(np.float64)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 9), 1), ((3, 9), 0), ((3, 9), -2), ((2, 1, 5), 1),
                                       ((2, 3, 4), -1), ((), 0), ((0, 3), 1), ((3, 0), 1)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_sort_matches_torch_stable(device, rng, shape, dim, descending, layout):
    fn = (lambda lib, x: lib.sort(x, dim=dim, descending=descending, stable=True))
    check_op(fn, [shape], device, rng, layout=layout)
    check_op(fn, None, device, rng, layout=layout, arrays=[_ties(rng, shape)])
    check_op(lambda lib, x: lib.argsort(x, dim=dim, descending=descending, stable=True), None, device, rng,
             layout=layout, arrays=[_ties(rng, shape)])


@pytest.mark.parametrize("n", LENGTHS + [2048, 2049, 4096, LONG])
def test_sort_lengths(device, rng, n):
    _long_only_on_cuda(device, n)
    for descending in (False, True):
        fn = (lambda lib, x: lib.sort(x, dim=-1, descending=descending, stable=True))
        check_op(fn, [(n,)], device, rng, grad=n <= 5000)
        check_op(fn, None, device, rng, arrays=[_ties(rng, (n,))], grad=False)
        if n <= 5000:     # several rows: on cuda, rows past 2048 take the multi-tile path together
            check_op(fn, [(3, n)], device, rng, layout="transposed")


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_sort_dtypes(device, rng, dtype):
    # 4-byte and 1-byte keys sort in tiles of 4096 on cuda: rows of 5000 take the multi-tile path
    for shape in ((4, 37), (3, 5000), (9000,)):
        for descending in (False, True):
            check_op(lambda lib, x: lib.sort(x, dim=-1, descending=descending, stable=True), [shape], device, rng,
                     dtype=dtype)


def test_sort_nan_is_largest(device, rng):
    x = rng.standard_normal((3, 2100))
    x[:, ::7] = np.nan
    x[1, 5:9] = np.inf
    x[2, 9:12] = -np.inf
    for descending in (False, True):
        check_op(lambda lib, t: lib.sort(t, dim=1, descending=descending, stable=True), None, device, rng,
                 arrays=[x], grad=False)
        check_op(lambda lib, t: lib.sort(t[:, :40], dim=1, descending=descending, stable=True), None, device, rng,
                 arrays=[x], grad=False)


@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(device, rng, k, largest):
    for shape, dim in (((4, 33), -1), ((33, 4), 0), ((5000,), 0), ((2, 17, 3), 1)):
        check_op(lambda lib, x: lib.topk(x, k, dim=dim, largest=largest), [shape], device, rng)
        check_op(lambda lib, x: lib.topk(x, k, dim=dim, largest=largest), [shape], device, rng, layout="transposed")
    check_op(lambda lib, x: lib.topk(x, 0, dim=1), [(3, 4)], device, rng)


def test_topk_long_row(device, rng):
    _long_only_on_cuda(device, LONG)
    check_op(lambda lib, x: lib.topk(x, 10), [(LONG,)], device, rng)


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_median_mode(device, rng, keepdim):
    for shape, dim in (((5, 7), 1), ((5, 8), -1), ((6, 3), 0), ((1,), 0), ((2, 1, 4), 1), ((1025,), 0)):
        for k in (1, shape[dim] // 2 + 1, shape[dim]):
            check_op(lambda lib, x: lib.kthvalue(x, k, dim=dim, keepdim=keepdim), [shape], device, rng)
        check_op(lambda lib, x: lib.median(x, dim=dim, keepdim=keepdim), [shape], device, rng,
                 layout="transposed")
        # mode: few distinct values, so there are real winners and ties between equally frequent ones.
        # indices are checked against PyTorch in test_mode_index_matches_pytorch_cpu
        check_op(lambda lib, x: lib.mode(x, dim=dim, keepdim=keepdim).values, None, device, rng,
                 arrays=[_ties(rng, shape)], grad=False)
        check_op(lambda lib, x: lib.mode(x, dim=dim, keepdim=keepdim).values, None, device, rng, dtype="int64",
                 arrays=[rng.integers(0, 3, shape)])


@pytest.mark.parametrize("shape", [(4, 9), (3, 17), (3, 1025), (2, 5000), (40, 300)], ids=str)
@pytest.mark.parametrize("distinct", [2, 4, 60])
def test_mode_index_matches_pytorch_cpu(device, rng, shape, distinct):
    """PyTorch's cpu mode returns the position that libstdc++'s unstable std::sort leaves last in
    the modal run: the last occurrence on rows of at most 16, another one on longer rows. Both
    devices reproduce that sort, so indices (and the gradient, which follows them) must agree."""
    x = rng.integers(0, distinct, shape)
    check_op(lambda lib, t: lib.mode(t, dim=1), None, device, rng, arrays=[x.astype(np.float64)])
    check_op(lambda lib, t: lib.mode(t, dim=0), None, device, rng, arrays=[x], dtype="int64")
    check_op(lambda lib, t: lib.mode(t, dim=-1), None, device, rng, arrays=[x.astype(np.float32)], dtype="float32",
             layout="transposed")


def test_mode_index_on_sorted_and_patterned_rows(device, rng):
    """Inputs that drive introsort's pivots to its worst cases (and its heap-sort fallback)."""
    n = 2048
    killer = np.zeros(n, np.int64)        # Musser's median-of-3 killer sequence
    for i in range(1, n // 2 + 1):
        if i % 2:
            killer[i - 1], killer[i] = i, n // 2 + i
        killer[n // 2 + i - 1] = 2 * i
    rows = [np.arange(n) % 7, np.sort(rng.integers(0, 9, n)), np.sort(rng.integers(0, 9, n))[::-1],
            np.zeros(n, np.int64), np.tile([1, 2, 3, 1, 2, 1], n // 6 + 1)[:n], killer, killer % 37]
    check_op(lambda lib, t: lib.mode(t, dim=1), None, device, rng, arrays=[np.stack(rows)], dtype="int64")


def test_median_of_all_and_zero_d(device, rng):
    check_op(lambda lib, x: lib.median(x), [(4, 5)], device, rng)
    check_op(lambda lib, x: lib.median(x), None, device, rng, arrays=[_ties(rng, (4, 5))])   # gradient split on ties
    for fn in (lambda lib, x: lib.median(x), lambda lib, x: lib.median(x, 0), lambda lib, x: lib.mode(x),
               lambda lib, x: lib.kthvalue(x, 1), lambda lib, x: lib.topk(x, 1), lambda lib, x: lib.sort(x)):
        check_op(fn, [()], device, rng)


def test_median_nan_propagates(device, rng):
    x = rng.standard_normal((4, 9))
    x[1, 3] = x[1, 6] = np.nan
    x[2, 0] = np.nan
    check_op(lambda lib, t: lib.median(t, dim=1), None, device, rng, arrays=[x], grad=False)
    check_op(lambda lib, t: lib.median(t), None, device, rng, arrays=[x], grad=False)


def test_tie_indices_point_at_their_values(device, rng):
    """Where PyTorch's own index on ties is an implementation detail (kthvalue, median, topk),
    ours must at least point at an element holding the returned value."""
    x = _ties(rng, (6, 40))
    t = mt.tensor(x, device=device)
    for values, indices in (mt.kthvalue(t, 5, dim=1), mt.median(t, dim=1), mt.topk(t, 7, dim=1)):
        v, i = values.cpu().numpy(), indices.cpu().numpy()
        got = np.take_along_axis(x, i if i.ndim == 2 else i[:, None], 1)
        np.testing.assert_array_equal(got.reshape(v.shape), v)


def test_sort_errors(device):
    x = mt.ones((3, 4), device=device)
    with pytest.raises(IndexError):
        mt.sort(x, dim=2)
    with pytest.raises(RuntimeError):
        mt.topk(x, 5)
    with pytest.raises(RuntimeError):
        mt.kthvalue(x, 0)
    with pytest.raises(IndexError):
        mt.median(mt.ones((3, 0), device=device), dim=1)
    assert math.isnan(mt.median(mt.ones((0,), device=device)).item())      # PyTorch's NaN, no error


# ---- unique, bincount, histc ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32", "bool"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (5, 9), (3000,)], ids=str)
def test_unique(device, rng, dtype, shape):
    x = rng.integers(-5, 6, shape).astype(dtype)
    for inverse in (False, True):
        for counts in (False, True):
            check_op(lambda lib, t: lib.unique(t, sorted=True, return_inverse=inverse, return_counts=counts),
                     None, device, rng, dtype=dtype, arrays=[x], layout="transposed", grad=False)


def test_bincount(device, rng):
    x = rng.integers(0, 9, 100)
    w = rng.standard_normal(100)
    check_op(lambda lib, t: lib.bincount(t), None, device, rng, dtype="int64", arrays=[x])
    check_op(lambda lib, t: lib.bincount(t, minlength=20), None, device, rng, dtype="int64", arrays=[x])
    check_op(lambda lib, t: lib.bincount(t[:0], minlength=3), None, device, rng, dtype="int64", arrays=[x])
    for dtype in ("float32", "float64"):
        ours = mt.bincount(mt.tensor(x, device=device), weights=mt.tensor(w.astype(dtype), device=device))
        theirs = torch.bincount(torch.tensor(x), weights=torch.tensor(w.astype(dtype)))
        assert_close(ours, theirs, dtype, f"bincount with {dtype} weights")
        assert str(ours.dtype).endswith(dtype)


def test_bincount_errors(device):
    with pytest.raises(RuntimeError):
        mt.bincount(mt.tensor([1, -1, 2], device=device))
    with pytest.raises(RuntimeError):
        mt.bincount(mt.tensor([[1, 2]], device=device))
    with pytest.raises(RuntimeError):
        mt.bincount(mt.tensor([1.0, 2.0], device=device))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc(device, rng, dtype):
    x = rng.uniform(-3, 3, (40, 50)).astype(dtype)
    for bins, lo, hi in ((10, 0, 0), (7, -1.0, 2.0), (100, -3.0, 3.0), (1, 0, 0)):
        check_op(lambda lib, t: lib.histc(t, bins=bins, min=lo, max=hi), None, device, rng, dtype=dtype,
                 arrays=[x], grad=False, layout="transposed")
    check_op(lambda lib, t: lib.histc(t, bins=4), None, device, rng, dtype=dtype, grad=False,
             arrays=[np.full(5, 2.0, dtype)])        # min == max: widened by 1 each side


def test_histc_errors(device):
    with pytest.raises(RuntimeError):
        mt.histc(mt.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError):
        mt.histc(mt.tensor([1.0, 2.0], device=device), bins=3, min=2, max=1)


def test_tensor_methods_exist():
    x = mt.tensor([[3.0, 1.0], [2.0, 2.0]])
    assert x.prod().item() == 12.0 and x.amax().item() == 3.0 and x.cumsum(1).tolist() == [[3.0, 4.0], [2.0, 4.0]]
    assert x.sort().indices.tolist() == [[1, 0], [0, 1]] and x.argsort(dim=0).tolist() == [[1, 0], [0, 1]]
    assert x.all().item() and x.any(1).tolist() == [True, True] and x.count_nonzero().item() == 4
    assert x.topk(1).values.tolist() == [[3.0], [2.0]] and x.median().item() == 2.0 and x.mode(1).values.tolist() == [1.0, 2.0]
    assert x.unique().tolist() == [1.0, 2.0, 3.0] and x.histc(2, 1, 3).tolist() == [1.0, 3.0]
    assert mt.tensor([0, 2, 2]).bincount().tolist() == [1, 0, 2] and abs(x.norm().item() - 18 ** 0.5) < 1e-6
    assert abs(x.logsumexp(1)[0].item() - math.log(math.exp(3) + math.exp(1))) < 1e-6
    assert x.kthvalue(2, 1).values.tolist() == [3.0, 2.0] and x.cumprod(0).tolist() == [[3.0, 1.0], [6.0, 2.0]]
