"""Issue 13, Creation [02/04]: Generator, randint, randperm, multinomial, bernoulli, uniform_/normal_,
linspace/logspace, eye, empty_strided, einsum; on both devices.

Deterministic factories are compared with PyTorch; random ones with statistics (ranges, means,
chi-square on frequencies) and with themselves (the same seed gives the same draws).
"""
import numpy as np
import pytest
import torch

import minitorch as mt
from oracle import check_op


def _np(t):
    return t.cpu().numpy()


def _chi2_ok(counts, expected):
    """Pearson's chi-square statistic against its 1e-6 tail: df + 10 sqrt(2 df) is far beyond
    any plausible fluctuation (a correct sampler fails about once in never), while a biased one
    (a category off by a few percent over 1e5 draws) lands far past it."""
    counts, expected = np.asarray(counts, float), np.asarray(expected, float)
    keep = expected > 0
    assert np.all(counts[~keep] == 0), f"categories of probability 0 were drawn: {counts[~keep]}"
    stat = np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep])
    df = keep.sum() - 1
    assert stat < df + 10 * np.sqrt(2 * df) + 10, f"chi-square {stat:.1f} with {df} degrees of freedom"


# ---- linspace, logspace, eye, empty_strided -------------------------------------------------------
@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-3.3, 10.1, 1000), (1e-3, 5, 33), (2, 2, 1),
                                             (5, -5, 7), (0, 1, 0), (1, 2, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_linspace_matches_torch(device, start, end, steps, dtype):
    ours = _np(mt.linspace(start, end, steps, dtype=getattr(mt, dtype), device=device))
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    if steps > 1 and dtype != "int64":
        assert ours[0] == theirs[0] and ours[-1] == theirs[-1], "both ends are exact"


@pytest.mark.parametrize("start,end,steps,base", [(0, 3, 4, 10.0), (-1, 1, 5, 2.0), (-2, 2, 17, np.e), (1, 1, 1, 3.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_logspace_matches_torch(device, start, end, steps, base, dtype):
    ours = _np(mt.logspace(start, end, steps, base=base, dtype=getattr(mt, dtype), device=device))
    theirs = torch.logspace(start, end, steps, base=base, dtype=getattr(torch, dtype)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_linspace_errors():
    with pytest.raises(RuntimeError, match="non-negative"):
        mt.linspace(0, 1, -1)


@pytest.mark.parametrize("n,m", [(3, None), (2, 5), (5, 2), (1, 1), (0, 3), (300, 257)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_eye_matches_torch(device, n, m, dtype):
    ours = mt.eye(n, m, dtype=getattr(mt, dtype), device=device)
    theirs = torch.eye(n, n if m is None else m, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(_np(ours), theirs.numpy())
    assert ours.dtype is getattr(mt, dtype)


def test_eye_errors():
    with pytest.raises(RuntimeError, match="non-negative"):
        mt.eye(-1)


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (3,)), ((2, 0, 3), (1, 1, 1)),
                                         ((3, 2), (0, 1)), ((), ())])
def test_empty_strided(device, size, stride):
    t = mt.empty_strided(size, stride, device=device)
    assert t.shape == size and t.stride() == stride == torch.empty_strided(size, stride).stride()


def test_empty_strided_is_writable_through_views(device):
    t = mt.empty_strided((3, 4), (1, 3), device=device)     # a column-major 3 x 4
    t.copy_(mt.tensor(np.arange(12.0).reshape(3, 4)))
    np.testing.assert_array_equal(_np(t), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(_np(t.T.contiguous()).ravel(), np.arange(12.0).reshape(3, 4).T.ravel())


def test_empty_strided_errors():
    with pytest.raises(RuntimeError, match="length"):
        mt.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="negative"):
        mt.empty_strided((2, 3), (-1, 1))


# ---- Generator and manual_seed --------------------------------------------------------------------
def test_generator_api():
    g = mt.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7
    state = g.get_state()
    a = mt.rand(5, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(_np(mt.rand(5, generator=g)), _np(a))
    s = g.seed()
    assert g.initial_seed() == s
    assert isinstance(mt.manual_seed(3), mt.Generator) and mt.initial_seed() == 3
    assert mt.manual_seed(3) is mt.default_generator and mt.default_generator.initial_seed() == 3
    with pytest.raises(ValueError, match="non-negative"):
        g.manual_seed(-1)


def _draws(device, generator):
    """One of each random function, from ``generator``, as NumPy arrays."""
    probs = mt.tensor([[0.1, 0.0, 0.5, 0.4], [1.0, 1.0, 1.0, 1.0]], device=device)
    return [mt.rand(3, 5, generator=generator, device=device), mt.randn(7, generator=generator, device=device),
            mt.randint(-5, 5, (9,), generator=generator, device=device),
            mt.randperm(10, generator=generator, device=device),
            mt.multinomial(probs, 2, generator=generator), mt.multinomial(probs, 6, True, generator=generator),
            mt.bernoulli(mt.full((8,), 0.5, device=device), generator=generator),
            mt.zeros(5, device=device).uniform_(-1, 1, generator=generator),
            mt.zeros(5, device=device).normal_(2, 3, generator=generator)]


def test_same_seed_same_draws(device):
    g = mt.Generator(device)
    first = [_np(t) for t in _draws(device, g.manual_seed(11))]
    mt.rand(100, device=device)                                 # the global generator moves: no effect
    second = [_np(t) for t in _draws(device, g.manual_seed(11))]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    other = [_np(t) for t in _draws(device, g.manual_seed(12))]
    assert not all(np.array_equal(a, b) for a, b in zip(first, other)), "another seed gives other draws"


def test_manual_seed_repeats_the_global_stream(device):
    mt.manual_seed(5)
    first = [_np(t) for t in _draws(device, None)]
    mt.manual_seed(5)
    second = [_np(t) for t in _draws(device, None)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_generator_of_another_device_type_raises():
    with pytest.raises(RuntimeError, match="generator"):
        mt.rand(3, generator=mt.Generator("cuda"))
    with pytest.raises(TypeError, match="Generator"):
        mt.rand(3, generator=np.random.default_rng(0))


# ---- randint ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("low,high", [(0, 1), (0, 7), (-3, 4), (10, 1000), (-2**62, 2**62), (-2**63, 2**63 - 1)])
def test_randint_range(device, low, high):
    x = _np(mt.randint(low, high, (5000,), device=device))
    assert x.dtype == np.int64 and x.min() >= low and x.max() < high
    if high - low <= 7:
        assert len(np.unique(x)) == high - low, "every value of a small range appears"


def test_randint_frequencies(device):
    x = _np(mt.randint(3, 10, (70000,), generator=mt.Generator(device).manual_seed(1), device=device))
    _chi2_ok(np.bincount(x - 3, minlength=7), np.full(7, 10000))


def test_randint_signatures_and_dtype(device):
    assert mt.randint(5, (2, 3), device=device).shape == (2, 3)
    assert mt.randint(5, size=(4,), device=device).shape == (4,)
    f = mt.randint(2, 5, (100,), dtype=mt.float32, device=device)
    assert f.dtype is mt.float32 and set(_np(f).tolist()) <= {2.0, 3.0, 4.0}
    assert mt.randint(0, 3, (0, 4), device=device).shape == (0, 4)
    assert mt.randint(0, 3, (), device=device).shape == ()
    with pytest.raises(RuntimeError, match="from=5 >= to=3"):
        mt.randint(5, 3, (2,))
    with pytest.raises(TypeError, match="size"):
        mt.randint(3, 10)


# ---- uniform_, normal_, rand/randn with a generator --------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_and_normal_in_place(device, dtype):
    x = mt.zeros(100003, dtype=getattr(mt, dtype), device=device)
    ptr = x.data_ptr()
    assert x.uniform_(-2, 3) is x and x.data_ptr() == ptr
    v = _np(x)
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 0.05 and abs(v.var() - 25 / 12) < 0.05
    x.normal_(4, 0.5)
    v = _np(x)
    assert abs(v.mean() - 4) < 0.01 and abs(v.std() - 0.5) < 0.01


def test_in_place_draws_on_views(device):
    base = mt.zeros(6, 8, device=device)
    base[:, ::2].T.uniform_(10, 11)                           # a non-contiguous view of every other column
    v = _np(base)
    assert np.all((v[:, ::2] >= 10) & (v[:, ::2] < 11)) and np.all(v[:, 1::2] == 0), "only the view is written"
    base[1:3].normal_(100, 1)
    assert np.all(_np(base)[1:3] > 90) and np.all(_np(base)[3:, 1::2] == 0)


def test_in_place_draws_odd_sizes_and_versions(device):
    for n in (0, 1, 7, 33, 257):
        x = mt.full((n,), -7.0, device=device)
        before = x._version
        x.normal_()
        assert x._version == before + 1
        assert not np.any(_np(x) == -7.0), f"every element of {n} is written"


def test_in_place_draw_errors(device):
    with pytest.raises(RuntimeError, match="floating"):
        mt.zeros(3, dtype=mt.int64, device=device).uniform_()
    w = mt.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.normal_()
    with mt.no_grad():
        w.normal_()


# ---- randperm -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 33, 1000, 4097])
def test_randperm_is_a_permutation(device, n):
    p = _np(mt.randperm(n, device=device))
    assert p.dtype == np.int64 and p.shape == (n,)
    np.testing.assert_array_equal(np.sort(p), np.arange(n))


def test_randperm_is_uniform(device):
    g = mt.Generator(device).manual_seed(2)
    firsts = [_np(mt.randperm(5, generator=g, device=device)) for _ in range(2000)]
    counts = np.zeros((5, 5))
    for p in firsts:
        counts[np.arange(5), p] += 1                  # how often position i holds value p[i]
    _chi2_ok(counts.ravel(), np.full(25, 400))


def test_randperm_dtype_and_errors(device):
    assert mt.randperm(4, dtype=mt.float32, device=device).dtype is mt.float32
    with pytest.raises(RuntimeError, match="non-negative"):
        mt.randperm(-1)


# ---- multinomial --------------------------------------------------------------------------------------
def test_multinomial_with_replacement_frequencies(device):
    p = np.array([0.1, 0.0, 0.3, 0.05, 0.55, 0.0])
    g = mt.Generator(device).manual_seed(4)
    x = _np(mt.multinomial(mt.tensor(p * 7, device=device), 60000, replacement=True, generator=g))   # unnormalised
    assert x.shape == (60000,) and x.dtype == np.int64
    _chi2_ok(np.bincount(x, minlength=6), p * 60000)


def test_multinomial_rows_and_long_rows(device):
    rng = np.random.default_rng(0)
    p = rng.random((3, 1000)) * (rng.random((3, 1000)) < 0.5)      # half the categories impossible
    x = _np(mt.multinomial(mt.tensor(p, device=device), 5000, True))
    assert x.shape == (3, 5000)
    for r in range(3):
        assert np.all(p[r, x[r]] > 0), "zero-probability categories are never drawn"
    x = _np(mt.multinomial(mt.tensor(p, device=device), 400))
    for r in range(3):
        assert len(set(x[r].tolist())) == 400 and np.all(p[r, x[r]] > 0)


def test_multinomial_without_replacement(device):
    p = np.array([[0.0, 2.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    g = mt.Generator(device).manual_seed(5)
    firsts = []
    for _ in range(300):
        x = _np(mt.multinomial(mt.tensor(p, device=device), 3, generator=g))
        assert sorted(x[0].tolist()) == [1, 2, 4], "all three positive categories, never a zero one"
        assert len(set(x[1].tolist())) == 3, "no repeats"
        firsts.append(x[0, 0])
    _chi2_ok(np.bincount(firsts, minlength=5), np.array([0, 0.5, 0.25, 0, 0.25]) * 300)
    assert mt.multinomial(mt.tensor(p[1], device=device), 5).shape == (5,)


def test_multinomial_second_pick_follows_the_race(device):
    """Without replacement the second draw is p_j / (1 - p_i) given the first was i."""
    p = np.array([0.5, 0.3, 0.2])
    x = _np(mt.multinomial(mt.tensor(np.tile(p, (30000, 1)), device=device), 2))
    _chi2_ok(np.bincount(x[:, 0], minlength=3), p * 30000)
    given0 = x[x[:, 0] == 0, 1]
    _chi2_ok(np.bincount(given0, minlength=3), np.array([0, 0.6, 0.4]) * len(given0))


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        mt.multinomial(mt.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="floating"):
        mt.multinomial(mt.ones(3, dtype=mt.int64), 1)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        mt.multinomial(mt.ones(3), 0)
    with pytest.raises(RuntimeError, match="without replacement"):
        mt.multinomial(mt.ones(3), 4)
    with pytest.raises(RuntimeError, match="element < 0"):
        mt.multinomial(mt.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        mt.multinomial(mt.tensor([0.0, 0.0]), 1, True)
    with pytest.raises(RuntimeError, match="not enough"):
        mt.multinomial(mt.tensor([0.0, 1.0, 0.0]), 2)


# ---- bernoulli ------------------------------------------------------------------------------------------
def test_bernoulli(device):
    p = mt.tensor(np.tile([0.0, 0.2, 0.7, 1.0], 20000).astype(np.float64), device=device)
    x = _np(mt.bernoulli(p))
    assert x.dtype == np.float64 and set(np.unique(x).tolist()) <= {0.0, 1.0}
    means = x.reshape(-1, 4).mean(0)
    np.testing.assert_allclose(means, [0.0, 0.2, 0.7, 1.0], atol=0.015)
    y = _np(mt.bernoulli(mt.zeros(10000, device=device), 0.3))
    assert abs(y.mean() - 0.3) < 0.02
    t = mt.zeros(4, 5000, device=device)
    t.T.bernoulli_(mt.tensor([0.1, 0.5, 0.9, 0.0], device=device))          # a view, per-column p
    np.testing.assert_allclose(_np(t).mean(1), [0.1, 0.5, 0.9, 0.0], atol=0.03)
    w = mt.rand(3, device=device, requires_grad=True)
    assert not mt.bernoulli(w).requires_grad


def test_exponential_(device):
    x = mt.zeros(100000, dtype=mt.float64, device=device)
    assert x.exponential_(4.0) is x
    v = _np(x)
    assert v.min() >= 0 and abs(v.mean() - 0.25) < 0.005 and abs(v.std() - 0.25) < 0.005


# ---- einsum -------------------------------------------------------------------------------------------
EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),            # matmul
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),   # batch matmul
    ("ii", [(4, 4)]),                           # trace
    ("ii->i", [(4, 4)]),                        # diagonal
    ("i,j->ij", [(3,), (4,)]),                  # outer product
    ("ij->ji", [(3, 4)]),                       # transpose
    ("ij", [(3, 4)]),                           # implicit: identity
    ("ji", [(3, 4)]),                           # implicit: alphabetical output, a transpose
    ("ij->", [(3, 4)]),                         # sum of all
    ("i,i", [(5,), (5,)]),                      # dot
    ("ij,j->i", [(3, 4), (4,)]),                # matrix-vector
    ("...ij->...ji", [(2, 3, 4)]),              # batched transpose
    ("...i,...i->...", [(2, 3, 4), (3, 4)]),    # ellipsis broadcasting
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),   # bilinear: three operands
    ("iij->j", [(3, 3, 2)]),                    # diagonal then sum
    ("ij,ij->ij", [(3, 1), (1, 4)]),            # size-1 labels broadcast
    ("a...b,b...->a...", [(2, 3, 4), (4, 3)]),  # ellipsis in the middle
    ("i...->...", [(2, 3, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),   # attention scores
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),            # capital letters
    ("i->", [(0,)]),                            # empty
]


@pytest.mark.parametrize("equation,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_values_and_grads(device, rng, equation, shapes):
    check_op(lambda lib, *xs: lib.einsum(equation, *xs), shapes, device, rng)


@pytest.mark.parametrize("equation,shapes", [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij->bji", [(2, 3, 4)]),
                                             ("ii->i", [(3, 3)])])
def test_einsum_non_contiguous_and_float32(device, rng, equation, shapes):
    check_op(lambda lib, *xs: lib.einsum(equation, *xs), shapes, device, rng, dtype="float32", layout="transposed")


def test_einsum_integers_and_list_operands(device):
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    ours = mt.einsum("ij,jk->ik", [mt.tensor(a, device=device), mt.tensor(b, device=device)])
    np.testing.assert_array_equal(_np(ours), a @ b)


@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(3, 4)], "fewer operands"),
    ("ij->ij", [(3, 4), (4,)], "more operands"),
    ("ijk", [(3, 4)], "number of subscripts"),
    ("i2->i", [(3, 4)], "invalid subscript given at index 1"),
    ("ij->ii", [(3, 4)], "appears more than once"),
    ("ij->k", [(3, 4)], "does not appear"),
    ("ij,jk->ik", [(3, 4), (5, 6)], "subscript j has size 5"),
    ("ii->i", [(3, 4)], "sizes don't match"),
    ("i.j->i", [(3, 4)], "ellipsis"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match=message):
        mt.einsum(equation, *[mt.ones(*s) for s in shapes])
    with pytest.raises(RuntimeError):                # PyTorch rejects them too
        torch.einsum(equation, *[torch.ones(*s) for s in shapes])


# ---- float16 and bfloat16 (phase 05 storage types) --------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_factories_and_draws(device, dtype):
    mt_dtype, torch_dtype = getattr(mt, dtype), getattr(torch, dtype)
    ours = mt.linspace(-1, 3, 50, dtype=mt_dtype, device=device).float()
    np.testing.assert_allclose(_np(ours), torch.linspace(-1, 3, 50, dtype=torch_dtype).float().numpy(), atol=2e-2)
    np.testing.assert_array_equal(_np(mt.eye(3, 4, dtype=mt_dtype, device=device).float()), np.eye(3, 4))
    x = mt.zeros(20001, dtype=mt_dtype, device=device)
    v = _np(x.uniform_(1, 2).float())
    assert x.dtype is mt_dtype and v.min() >= 1 and v.max() <= 2 and abs(v.mean() - 1.5) < 0.02
    v = _np(x.normal_(-3, 2).float())
    assert abs(v.mean() + 3) < 0.1 and abs(v.std() - 2) < 0.1
    b = _np(mt.bernoulli(mt.full((20000,), 0.25, dtype=mt_dtype, device=device)).float())
    assert set(np.unique(b).tolist()) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.02
    m = _np(mt.multinomial(mt.tensor([0.0, 1.0, 3.0], dtype=mt_dtype, device=device), 4000, True))
    _chi2_ok(np.bincount(m, minlength=3), np.array([0, 1000, 3000]))


@pytest.mark.cuda
@pytest.mark.usefixtures("poisoned_allocator")
def test_cuda_outputs_are_fully_written():
    """Every block comes filled with 0xFF (NaN, -1): an element a kernel forgot stays so."""
    p = mt.rand(7, 300, device="cuda") * (mt.rand(7, 300, device="cuda") < 0.5) + 1e-3
    floats = [mt.eye(33, 257, device="cuda"), mt.linspace(0, 1, 1001, device="cuda"),
              mt.logspace(0, 1, 1001, dtype=mt.float64, device="cuda"),
              mt.empty(1001, device="cuda").uniform_(), mt.empty(1001, dtype=mt.float64, device="cuda").normal_(),
              mt.eye(5, dtype=mt.float16, device="cuda").float(), mt.bernoulli(p)]
    for t in floats:
        assert not np.isnan(_np(t)).any(), f"unwritten elements in a tensor of shape {tuple(t.shape)}"
    ints = [mt.randint(0, 5, (1001,), device="cuda"), mt.randperm(1001, device="cuda"),
            mt.multinomial(p, 50), mt.multinomial(p, 500, True), mt.eye(9, dtype=mt.int64, device="cuda")]
    for t in ints:
        assert (_np(t) >= 0).all(), f"unwritten elements in a tensor of shape {tuple(t.shape)}"
