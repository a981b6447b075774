"""Issue 13, second pass: gaps in PyTorch's everyday API - unique(dim=), mode's index on ties,
scatter(reduce=) and scatter_reduce, tensor indices mixed with slices/ints/None/Ellipsis,
state_dict with tied parameters, view() of strided tensors. Values and gradients against PyTorch
(tests/oracle.py) on cpu and (marked cuda) on the GPU; every fresh cuda allocation is filled with
0xFF first, so an output element a kernel forgot to write fails."""
import numpy as np
import pytest
import torch

import minitorch as mt
from oracle import check_op

pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")


@pytest.fixture(autouse=True)
def _poison_cuda(request):
    if "device" in request.fixturenames and request.getfixturevalue("device") == "cuda":
        request.getfixturevalue("poisoned_allocator")


def _as(array, device):
    return mt.tensor(array, device=device), torch.tensor(array)


# ---- scatter(reduce=), scatter_reduce ------------------------------------------------------------------
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _scatter_case(rng, shape, dim, k, integer_values=False, low=-2.0, high=2.0):
    """(input, index, src) with index of shape ``shape`` but ``k`` along dim, values in [0, size)."""
    ishape = tuple(k if d == dim else n for d, n in enumerate(shape))
    index = rng.integers(0, shape[dim], ishape)
    if integer_values:          # small integers as floats: ties between input and src for amax/amin
        return rng.integers(-2, 3, shape).astype(np.float64), index, rng.integers(-2, 3, ishape).astype(np.float64)
    return rng.uniform(low, high, shape), index, rng.uniform(low, high, ishape)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("shape,dim,k", [((5,), 0, 12), ((4, 6), 1, 9), ((4, 6), 0, 3), ((3, 4, 5), -1, 7),
                                         ((1, 1), 0, 1), ((2, 1000), 1, 3000)], ids=str)
def test_scatter_reduce_matches_pytorch(device, rng, reduce, include_self, shape, dim, k):
    x, index, src = _scatter_case(rng, shape, dim, k, low=0.5, high=1.5)
    idx_ours, idx_theirs = _as(index, device)

    def fn(lib, t, s):
        i = idx_ours if lib is mt else idx_theirs
        return t.scatter_reduce(dim, i, s, reduce, include_self=include_self)
    check_op(fn, None, device, rng, arrays=[x, src])
    check_op(fn, None, device, rng, arrays=[x.astype(np.float32), src.astype(np.float32)], dtype="float32",
             layout="transposed")
    ints = [rng.integers(-3, 4, shape), rng.integers(-3, 4, index.shape)]
    check_op(fn, None, device, rng, arrays=ints, dtype="int64")


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_ties_zeros_and_nan(device, rng, reduce, include_self):
    """amax/amin share the gradient among equal elements; prod's gradient with one and with
    several zeros at a position; NaN propagates through amax/amin."""
    x, index, src = _scatter_case(rng, (6, 5), 0, 14, integer_values=True)
    idx_ours, idx_theirs = _as(index, device)
    fn = lambda lib, t, s: t.scatter_reduce(0, idx_ours if lib is mt else idx_theirs, s, reduce,  # noqa: E731
                                            include_self=include_self)
    check_op(fn, None, device, rng, arrays=[x, src])
    src_nan = src.copy()
    src_nan[0, 0] = np.nan
    check_op(fn, None, device, rng, arrays=[x, src_nan], grad=False)


def test_scatter_reduce_zero_d_half_and_inplace(device, rng):
    x, i, s = mt.tensor(2.0, device=device), mt.tensor(0, device=device), mt.tensor(5.0, device=device)
    assert x.scatter_reduce(0, i, s, "prod").item() == 10.0, "a 0-d scatter_reduce multiplies the one element"
    h = mt.tensor([1.0, 2.0, 3.0], device=device).to(mt.float16)
    out = h.scatter_reduce(0, mt.tensor([2, 2], device=device), mt.tensor([4.0, 0.5], device=device).to(mt.float16),
                           "prod")
    assert out.dtype is mt.float16 and out.tolist() == [1.0, 2.0, 6.0], "float16 scatter_reduce (computed in float32)"
    y = mt.tensor([1.0, 2.0, 3.0], device=device)
    assert y.scatter_reduce_(0, mt.tensor([0, 0], device=device), mt.tensor([5.0, 4.0], device=device), "amax") is y
    assert y.tolist() == [5.0, 2.0, 3.0], "scatter_reduce_ writes into self"


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_argument(device, rng, reduce):
    x, index, src = _scatter_case(rng, (4, 7), 1, 10)
    idx_ours, idx_theirs = _as(index, device)
    pick = lambda lib: idx_ours if lib is mt else idx_theirs  # noqa: E731
    check_op(lambda lib, t, s: t.scatter(1, pick(lib), s, reduce=reduce), None, device, rng, arrays=[x, src],
             grad=False)
    check_op(lambda lib, t: t.scatter(1, pick(lib), 1.5, reduce=reduce), None, device, rng, arrays=[x], grad=False)
    for dtype in ("int64", "float32"):
        a, b = rng.integers(-3, 4, (4, 7)).astype(dtype), rng.integers(-3, 4, index.shape).astype(dtype)
        ours, theirs = _as(a, device)
        ours.scatter_(1, idx_ours, mt.tensor(b, device=device), reduce=reduce)
        theirs.scatter_(1, idx_theirs, torch.tensor(b), reduce=reduce)
        np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy(), err_msg=f"scatter_(reduce={reduce!r})")


def test_scatter_reduce_errors(device):
    x = mt.zeros(3, device=device, requires_grad=True)
    i = mt.tensor([0, 1], device=device)
    with pytest.raises(RuntimeError, match="sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, i, mt.ones(2, device=device), "max")
    with pytest.raises(RuntimeError, match="add or multiply"):
        x.scatter(0, i, mt.ones(2, device=device), reduce="sum")
    with pytest.raises(TypeError, match="src"):
        x.scatter_reduce(0, i, 1.0, "sum")
    y = x.scatter(0, i, mt.ones(2, device=device), reduce="multiply")
    with pytest.raises(RuntimeError, match="not implemented"):
        y.sum().backward()


# ---- view() of strided tensors ----------------------------------------------------------------------
def _factorings(n, rng, count):
    """``count`` random shapes with ``n`` elements (size-1 dims included)."""
    primes, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    out = []
    for _ in range(count):
        dims = [1] * rng.integers(1, 5)
        for q in primes:
            dims[rng.integers(len(dims))] *= q
        out.append(tuple(dims))
    return out


def _strided_views(lib, base):
    """Non-contiguous views of a [4, 6, 10] tensor: transposes, slices, size-1 dims, a step."""
    return [base.transpose(0, 1), base.permute(2, 0, 1), base[:, 1:4], base[:, :, ::2], base[1:3, :, 2:7],
            base[:, 2:3].transpose(1, 2), base.transpose(1, 2)[:, :, ::3], base[::2], base.unsqueeze(1)[..., 4:6]]


def test_view_accepts_what_pytorch_accepts(device, rng):
    """Every shape PyTorch can view a strided tensor as, with the same strides; the others raise."""
    base = rng.standard_normal((4, 6, 10))
    ours_base, theirs_base = _as(base, device)
    accepted = 0
    for ours, theirs in zip(_strided_views(mt, ours_base), _strided_views(torch, theirs_base)):
        for shape in _factorings(theirs.numel(), rng, 25) + [(theirs.numel(),), tuple(theirs.shape)]:
            try:
                ref = theirs.view(shape)
            except RuntimeError:
                with pytest.raises(RuntimeError, match="view size is not compatible"):
                    ours.view(shape)
                continue
            out = ours.view(*shape)
            accepted += 1
            assert out.stride() == ref.stride(), f"view{shape} of {tuple(theirs.shape)} strides {theirs.stride()}"
            np.testing.assert_array_equal(out.cpu().numpy(), ref.numpy())
    assert accepted > 50, "the test must exercise many accepted views"


def test_view_shares_memory_and_backpropagates(device, rng):
    check_op(lambda lib, x: x.transpose(0, 1).view(3, 2, 5) * 2, [(5, 6)], device, rng)
    check_op(lambda lib, x: x[:, 1:3].view(-1, 1, 2), [(4, 5)], device, rng)
    x = mt.zeros((4, 6), device=device)
    x.t().view(3, 2, 4)[0, 1, 2] = 7.0
    assert x[2, 1].item() == 7.0, "a view of a transpose writes into the same memory"
    for shape in [(0, 3), (3, 0, 2)]:
        check_op(lambda lib, x: x.transpose(0, -1).view(-1, 3), [shape], device, rng)
    check_op(lambda lib, x: x.view(1, 1), [()], device, rng)


def test_view_errors(device):
    x = mt.zeros((4, 6), device=device).t()
    with pytest.raises(RuntimeError, match="Use .reshape"):
        x.view(24)
    with pytest.raises(RuntimeError, match="invalid"):
        x.view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension"):
        x.view(-1, -1)


# ---- state_dict with tied parameters; named_modules / named_parameters dedup ---------------------------
def _tied_pair(lib):
    """The same little model in either library: a shared submodule and a tied weight."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(5, 3)
            self.body = lib.nn.Linear(3, 3)
            self.norm = lib.nn.BatchNorm1d(3)                # buffers: keys per module, params first
            self.again = self.body                          # a module under two names
            self.head = lib.nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight              # a parameter under two names
    return Net()


def test_state_dict_keeps_tied_parameters_under_every_name():
    ours, theirs = _tied_pair(mt), _tied_pair(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()), "state_dict keys, in PyTorch's order"
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_modules(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_modules(remove_duplicate=False)]
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 5
    state = ours.state_dict()
    assert np.shares_memory(state["emb.weight"].numpy(), state["head.weight"].numpy())
    # PyTorch's state_dict loads with strict=True, and the tie survives
    result = ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    assert ours.head.weight is ours.emb.weight
    np.testing.assert_array_equal(ours.head.weight.numpy(), theirs.head.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="head.weight"):
        ours.load_state_dict({k: v for k, v in state.items() if k != "head.weight"})


def test_gpt_state_dict_round_trips_and_loads_a_torch_twin(tmp_path):
    from minitorch.models.gpt import GPT, GPTConfig
    from test_gpt import TorchGPT
    config = GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=16, bias=True)
    ours, theirs = GPT(config), TorchGPT(config)
    assert list(ours.state_dict()) == list(theirs.state_dict()), "the GPT's state_dict keys are nanoGPT's"
    result = ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()},
                                  strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    assert ours.lm_head.weight is ours.transformer.wte.weight, "loading keeps the tie"
    for name, p in theirs.named_parameters():
        np.testing.assert_array_equal(dict(ours.named_parameters())[name].numpy(), p.detach().numpy(), err_msg=name)
    mt.save(ours.state_dict(), tmp_path / "gpt.safetensors")          # tied tensors save and load back
    again = GPT(config)
    again.load_state_dict(mt.load(tmp_path / "gpt.safetensors"), strict=True)
    np.testing.assert_array_equal(again.lm_head.weight.numpy(), ours.lm_head.weight.numpy())
    assert again.lm_head.weight is again.transformer.wte.weight


# ---- unique(dim=) ----------------------------------------------------------------------------------------
def _repeated_slices(rng, shape, dim, dtype):
    """A tensor whose slices along ``dim`` repeat (drawn from a few distinct ones)."""
    n = shape[dim]
    pool = rng.integers(-2, 3, (3,) + tuple(s for k, s in enumerate(shape) if k != dim))
    stacked = pool[rng.integers(0, 3, n)]
    return np.moveaxis(stacked, 0, dim).astype(dtype)


@pytest.mark.parametrize("shape,dim", [((7, 3), 0), ((7, 3), 1), ((3, 7), -1), ((4, 5, 6), 1), ((4, 5, 6), 0),
                                       ((9,), 0), ((1, 4), 0), ((40, 2), 0), ((5, 0), 1), ((0, 3), 0)], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "float32"])
def test_unique_dim_matches_pytorch(device, rng, shape, dim, dtype):
    x = _repeated_slices(rng, shape, dim, dtype) if dtype != "bool" else rng.random(shape) < 0.5
    for inverse in (False, True):
        for counts in (False, True):
            check_op(lambda lib, t: lib.unique(t, sorted=True, return_inverse=inverse, return_counts=counts, dim=dim),
                     None, device, rng, arrays=[x], dtype=dtype, grad=False)
    check_op(lambda lib, t: t.unique(dim=dim, return_counts=True), None, device, rng, arrays=[x], dtype=dtype,
             grad=False, layout="transposed")


def test_unique_dim_random_rows_and_errors(device, rng):
    x = rng.integers(0, 2, (200, 3))                     # 8 possible rows, each many times
    check_op(lambda lib, t: lib.unique(t, dim=0, return_inverse=True, return_counts=True), None, device, rng,
             arrays=[x], dtype="int64", grad=False)
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        mt.unique(mt.zeros((0, 3), device=device), dim=1)
    with pytest.raises(IndexError):
        mt.unique(mt.tensor(5.0, device=device), dim=0)


# ---- index tensors mixed with slices, ints, None and Ellipsis -------------------------------------------
def _mixed_keys(L):
    """Keys on a [3, 4, 5, 6] tensor; ``L`` makes an index tensor of the library. Adjacent index
    tensors put their broadcast dims in place, separated ones first; ints are basic (PyTorch)."""
    i, j = L(np.array([0, 2, 1])), L(np.array([[1], [0]]))
    m4, m5 = L(np.array([True, False, True, True])), L(np.array([True, False, True, True, False]))
    return [(i, slice(1, 3)), (slice(None), i), (i, slice(None), j), (i, 0, j), (0, i, j), (i, None, j),
            (Ellipsis, i), (i, Ellipsis, j), (None, i, Ellipsis, 2), (slice(None), m4, L(np.array([1]))),
            (i, slice(None), m5), (1, slice(None), i), (slice(None), 0, i, j), (i, j, slice(None), None),
            (slice(None, None, 2), j, 1, i), ([0, 1], slice(None), [2, 3]), (i, 1, slice(None), i),
            (slice(1, 3), j, slice(None, None, 2), i[:2]), (L(np.array(-1)), slice(None), i)]


KEYS = range(len(_mixed_keys(lambda a: a)))


@pytest.mark.parametrize("k", KEYS)
def test_mixed_index_read_matches_pytorch(device, rng, k):
    ours_keys = _mixed_keys(lambda a: mt.tensor(a, device=device))
    theirs_keys = _mixed_keys(torch.tensor)
    fn = lambda lib, x: x[(ours_keys if lib is mt else theirs_keys)[k]]  # noqa: E731
    check_op(fn, [(3, 4, 5, 6)], device, rng)
    check_op(fn, [(3, 4, 5, 6)], device, rng, layout="transposed", dtype="float32")


@pytest.mark.parametrize("k", KEYS)
@pytest.mark.parametrize("transposed", [False, True])
def test_mixed_index_write_matches_pytorch(device, rng, k, transposed):
    ours_keys = _mixed_keys(lambda a: mt.tensor(a, device=device))
    theirs_keys = _mixed_keys(torch.tensor)
    x = rng.standard_normal((3, 4, 5, 6))
    if transposed:            # write through a non-contiguous view: the base must change
        base = np.ascontiguousarray(x.transpose(3, 2, 1, 0))
        ours, theirs = mt.tensor(base, device=device).permute(3, 2, 1, 0), torch.tensor(base).permute(3, 2, 1, 0)
    else:
        ours, theirs = mt.tensor(x, device=device), torch.tensor(x)
    shape = tuple(theirs[theirs_keys[k]].shape)
    for value_shape in (shape, shape[1:], (1,) + shape, ()):       # full, broadcast, leading 1, a number
        v = rng.standard_normal(value_shape)
        theirs[theirs_keys[k]] = torch.tensor(v)
        ours[ours_keys[k]] = mt.tensor(v, device=device) if value_shape else float(v)
        np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), err_msg=f"x[key {k}] = value of {value_shape}")


def test_mixed_index_write_errors_and_dtype(device):
    x = mt.zeros((3, 4, 5), device=device)
    i = mt.tensor([0, 2], device=device)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        x[i, 1:3] = mt.ones((3, 2, 5), device=device)
    with pytest.raises(IndexError, match="broadcast together"):
        x[i, :, mt.tensor([0, 1, 2], device=device)] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        if device == "cpu":                          # cuda does not check indices (no sync)
            x[mt.tensor([5]), 0] = 1.0
        else:
            raise IndexError("out of bounds")
    y = mt.zeros((4, 3), dtype=mt.int64, device=device)
    y[:, mt.tensor([2, 0], device=device)] = mt.tensor([7, 9], device=device)
    assert y.tolist() == [[9, 0, 7]] * 4, "x[:, idx] = value on int64 (value broadcast over the rows)"
    w = mt.zeros((2, 3), device=device)
    w.expand(4, 2, 3)  # an expanded view cannot be written through index tensors
    with pytest.raises(RuntimeError, match="single memory location"):
        w.expand(4, 2, 3)[mt.tensor([0, 1], device=device), 0] = 1.0
