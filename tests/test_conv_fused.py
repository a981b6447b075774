"""conv2d_relu_max_pool2d (conv -> ReLU -> MaxPool2d(2) as one op; on cuda rung 03 pools in its
epilogue) against the unfused composition of our own ops and against PyTorch: pooled values,
argmax indices, and the gradients of input, weight and bias, on both devices and (cuda) every rung
forced through the dispatcher, on odd shapes (P or Q odd: the last row/column is dropped; batch 1;
K and the pixel count not multiples of any tile; groups, dilation, stride, depthwise); also
without the ReLU (the backend's activation=None), in float16/bfloat16, with NaN, and the
dispatcher's rule and tuned table."""
import contextlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck
from minitorch.ops.conv import _conv2d, conv2d_relu
from oracle import assert_close

RUNGS = ("auto", "01_direct", "02_im2col", "03_implicit_gemm")

# (input shape, weight shape, keyword arguments); the comment gives the convolution's P x Q
CASES = [
    ((1, 1, 28, 28), (8, 1, 3, 3), {"padding": 1}),                    # seed conv1, N = 1: 28 x 28
    ((3, 8, 14, 14), (16, 8, 3, 3), {"padding": 1}),                   # seed conv2: 14 x 14
    ((2, 1, 28, 28), (6, 1, 5, 5), {"padding": 2}),                    # LeNet-5 C1: 28 x 28
    ((2, 6, 14, 14), (16, 6, 5, 5), {}),                               # LeNet-5 C3: 10 x 10
    ((3, 3, 11, 9), (5, 3, 3, 3), {}),                                 # 9 x 7: both odd
    ((1, 4, 13, 12), (6, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 1}),   # 11 x 10
    ((2, 3, 10, 9), (70, 3, 3, 2), {"stride": (2, 1), "padding": (1, 0)}),        # 5 x 8, K = 70
    ((2, 5, 8, 9), (5, 1, 3, 3), {"groups": 5, "padding": "same"}),    # depthwise, 8 x 9
    ((5, 3, 33, 35), (7, 3, 3, 3), {}),                                # 31 x 33: many column tiles
]
IDS = [f"x{'x'.join(map(str, x))}-w{'x'.join(map(str, w))}-" + ",".join(f"{k}={v}" for k, v in kw.items())
       for x, w, kw in CASES]


def _rung(device, rung):
    if device == "cpu" or rung == "auto":
        return contextlib.nullcontext()
    from minitorch.native.cuda import conv
    return conv.use_rung(rung)


def _skip_cpu_rungs(device, rung, request):
    """cpu runs only 'auto'; cuda fills every new block with NaN (-1 for int64) first, so an
    output element or index a kernel forgot to write fails the comparison."""
    if device == "cpu" and rung != "auto":
        pytest.skip("the cpu backend has one implementation")
    if device == "cuda":
        request.getfixturevalue("poisoned_allocator")


def _run(fused, arrays, g, device, kw, dtype=None, activation="relu"):
    """Pooled values, indices and (dx, dw, db) of the fused op or of our unfused composition
    (conv2d or conv2d_relu, then F.max_pool2d(2) with return_indices)."""
    x, w, b = (mt.tensor(a, device=device, dtype=dtype, requires_grad=True) for a in arrays)
    if fused:
        y, idx = _conv2d(x, w, b, kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1),
                         kw.get("groups", 1), activation, pool=True)
    else:
        conv = conv2d_relu(x, w, b, **kw) if activation == "relu" else F.conv2d(x, w, b, **kw)
        y, idx = F.max_pool2d(conv, 2, return_indices=True)
    (y * mt.tensor(g, device=device, dtype=dtype)).sum().backward()
    return [y.detach(), idx] + [t.grad for t in (x, w, b)]


def _inputs(rng, x_shape, w_shape):
    return (rng.standard_normal(x_shape), rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:])),
            rng.standard_normal(w_shape[0]) * 0.3)


def _torch(arrays, g, kw, relu=True):
    x, w, b = (torch.tensor(a, requires_grad=True) for a in arrays)
    y = TF.conv2d(x, w, b, **kw)
    y, idx = TF.max_pool2d(torch.relu(y) if relu else y, 2, return_indices=True)
    (y * torch.tensor(g)).sum().backward()
    return [y.detach().numpy(), idx.numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


def _pooled_shape(arrays, kw):
    x, w, b = (torch.tensor(a) for a in arrays)
    return tuple(TF.max_pool2d(TF.conv2d(x, w, b, **kw), 2).shape)


NAMES = ("pooled", "indices", "dx", "dw", "db")


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("x_shape,w_shape,kw", CASES, ids=IDS)
def test_fused_matches_unfused_and_torch(device, rng, rung, x_shape, w_shape, kw, request):
    _skip_cpu_rungs(device, rung, request)
    arrays = _inputs(rng, x_shape, w_shape)
    g = rng.standard_normal(_pooled_shape(arrays, kw))
    with _rung(device, rung):
        fused, unfused = (_run(f, arrays, g, device, kw) for f in (True, False))
    want = _torch(arrays, g, kw)
    pooled = want[0]
    assert (pooled == 0).any() and (pooled > 0).any(), "the ReLU zeroes some windows and passes others"
    assert tuple(fused[0].shape) == pooled.shape, f"pooled shape {tuple(fused[0].shape)} vs torch {pooled.shape}"
    for what, ours, plain, theirs in zip(NAMES, fused, unfused, want):
        if what == "indices":
            assert ours.dtype is mt.int64, f"indices are int64, got {ours.dtype}"
            np.testing.assert_array_equal(ours.cpu().numpy(), plain.cpu().numpy(),
                                          err_msg=f"fused indices vs the unfused max_pool2d's, rung {rung}")
            np.testing.assert_array_equal(ours.cpu().numpy(), theirs, err_msg=f"fused indices vs torch, rung {rung}")
        else:
            assert_close(ours, plain.cpu().numpy(), "float64", f"fused {what} vs the unfused path, rung {rung}")
            assert_close(ours, theirs, "float64", f"fused {what} vs torch, rung {rung}")


@pytest.mark.parametrize("rung", RUNGS)
def test_without_relu_negative_maxima_keep_their_gradient(device, rng, rung, request):
    """activation=None (the backend's option): negative window maxima pool and get gradient."""
    _skip_cpu_rungs(device, rung, request)
    kw = {"stride": (1, 2), "padding": 1}
    arrays = _inputs(rng, (2, 3, 9, 13), (5, 3, 3, 3))
    g = rng.standard_normal(_pooled_shape(arrays, kw))
    with _rung(device, rung):
        fused = _run(True, arrays, g, device, kw, activation=None)
    want = _torch(arrays, g, kw, relu=False)
    assert (want[0] < 0).any(), "some window maxima are negative"
    for what, ours, theirs in zip(NAMES, fused, want):
        if what == "indices":
            np.testing.assert_array_equal(ours.cpu().numpy(), theirs, err_msg=f"indices, no ReLU, rung {rung}")
        else:
            assert_close(ours, theirs, "float64", f"{what} without the ReLU, rung {rung}")


@pytest.mark.parametrize("rung", RUNGS)
def test_half_precision_equals_the_unfused_path(device, rng, rung, request):
    """float16 / bfloat16: the window maximum is taken among the values the unfused y stores
    (rounded once), so pooled values and indices equal the unfused path's exactly."""
    _skip_cpu_rungs(device, rung, request)
    kw = {"padding": 1}
    arrays = _inputs(rng, (3, 4, 11, 10), (6, 4, 3, 3))
    g = rng.standard_normal(_pooled_shape(arrays, kw))
    for dtype in (mt.float16, mt.bfloat16):
        with _rung(device, rung):
            fused, unfused = (_run(f, arrays, g, device, kw, dtype) for f in (True, False))
        assert fused[0].dtype is dtype and fused[3].dtype is dtype
        for what, ours, plain in zip(NAMES, fused, unfused):
            got, ref = ours.cpu(), plain.cpu()
            if what != "indices":
                got, ref = got.float(), ref.float()
            tol = 0 if what in ("pooled", "indices") else 2e-2       # same sums, but a margin for the gradients
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=tol, atol=tol,
                                       err_msg=f"{dtype} fused {what} vs unfused, rung {rung}")


@pytest.mark.parametrize("rung", RUNGS)
def test_nan_wins_its_window(device, rng, rung, request):
    """A NaN in the input makes NaN outputs; as in max_pool2d, a NaN wins its window (the last
    one in window order, by the sequential rule) and carries the index."""
    _skip_cpu_rungs(device, rung, request)
    x = rng.standard_normal((2, 2, 12, 11))
    x[0, 1, 5, 4] = np.nan
    w = rng.standard_normal((3, 2, 3, 3))
    b = rng.standard_normal(3)
    with _rung(device, rung):
        y, idx = F.conv2d_relu_max_pool2d(*(mt.tensor(a, device=device) for a in (x, w, b)), return_indices=True)
    ty, tidx = TF.max_pool2d(torch.relu(TF.conv2d(*(torch.tensor(a) for a in (x, w, b)))), 2, return_indices=True)
    assert np.isnan(ty.numpy()).any()
    np.testing.assert_array_equal(idx.cpu().numpy(), tidx.numpy(), err_msg=f"indices with NaN, rung {rung}")
    np.testing.assert_array_equal(np.isnan(y.cpu().numpy()), np.isnan(ty.numpy()), err_msg=f"NaN positions, {rung}")
    finite = ~np.isnan(ty.numpy())
    assert_close(y.cpu().numpy()[finite], ty.numpy()[finite], "float64", f"finite values with NaN, rung {rung}")


def test_gradcheck_float64_cpu():
    rng = np.random.default_rng(11)
    x = mt.tensor(rng.standard_normal((2, 4, 9, 7)), requires_grad=True)
    w = mt.tensor(rng.standard_normal((6, 2, 3, 2)), requires_grad=True)
    b = mt.tensor(rng.standard_normal(6), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d_relu_max_pool2d(x, w, b, padding=1, groups=2), [x, w, b])


def test_float32_unbatched_and_without_bias(device, rng):
    x, w = rng.standard_normal((3, 10, 9)), rng.standard_normal((4, 3, 3, 3))
    ours = F.conv2d_relu_max_pool2d(mt.tensor(x, device=device, dtype=mt.float32),
                                    mt.tensor(w, device=device, dtype=mt.float32), padding="same")
    want = TF.max_pool2d(torch.relu(TF.conv2d(torch.tensor(x, dtype=torch.float32),
                                              torch.tensor(w, dtype=torch.float32), padding="same")), 2)
    assert tuple(ours.shape) == (4, 5, 4) and ours.dtype is mt.float32
    assert_close(ours, want.numpy(), "float32", "unbatched float32 without bias")


def test_empty_batch(device):
    y, idx = F.conv2d_relu_max_pool2d(mt.zeros(0, 3, 8, 8, device=device), mt.ones(4, 3, 3, 3, device=device),
                                      return_indices=True)
    assert tuple(y.shape) == (0, 4, 3, 3) and tuple(idx.shape) == (0, 4, 3, 3)


def test_errors(device):
    x, w = mt.zeros(1, 3, 5, 3, device=device), mt.zeros(2, 3, 3, 3, device=device)
    with pytest.raises(RuntimeError, match="output size .* is too small"):
        F.conv2d_relu_max_pool2d(x, w)                     # y is 3 x 1: no 2 x 2 window fits
    with pytest.raises(RuntimeError, match="Given groups=1"):
        F.conv2d_relu_max_pool2d(x, mt.zeros(2, 2, 3, 3, device=device))


# ---- the dispatcher: rule and tuned table ---------------------------------------------------------------
@pytest.mark.cuda
def test_rule_is_the_implicit_gemm_and_unknown_passes_raise():
    from minitorch.native.cuda import conv
    for p in conv.PASSES:
        assert conv.choose(p, (64, 8, 14, 14), (16, 8, 3, 3), 1) == "03_implicit_gemm", p
    with pytest.raises(KeyError, match="unknown conv pass"):
        conv.choose("backward", (1, 1, 3, 3), (1, 1, 3, 3), 1)


@pytest.mark.cuda
def test_tuned_table_overrides_the_rule_per_shape(monkeypatch, rng):
    """A table entry for one geometry picks its rung (here 01_direct, which the rule never picks);
    a shape the table does not hold falls back to the rule. No synchronization is involved."""
    import cupy as cp
    from minitorch.native.cuda import conv
    x_shape, w_shape = (2, 3, 9, 8), (4, 3, 3, 3)
    geom, _ = conv.geometry(x_shape, w_shape, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    arch = f"sm_{cp.cuda.Device().compute_capability}"
    table = {arch: {"f64": {geom.key: {"shape": "test", "rungs": {"forward": "01_direct",
                                                                  "forward_maxpool2": "01_direct"}}}}}
    ran = []
    for rung in conv.RUNGS:
        monkeypatch.setitem(conv._FORWARD, rung, (lambda f, r: lambda *a: ran.append(r) or f(*a))(conv._FORWARD[rung], rung))
    monkeypatch.setattr(conv, "_tuned", table)
    conv._tuned_rung.cache_clear()
    try:
        x, w = (mt.tensor(rng.standard_normal(s), device="cuda") for s in (x_shape, w_shape))
        F.conv2d(x, w, padding=1)
        F.conv2d_relu_max_pool2d(x, w, padding=1)
        F.conv2d(x, w, padding=0)                          # not in the table: the rule
    finally:
        conv._tuned_rung.cache_clear()
    assert ran == ["01_direct", "01_direct", "03_implicit_gemm"], f"rungs run: {ran}"


@pytest.mark.cuda
@pytest.mark.parametrize("tile", [(8, 256), (16, 128), (64, 64), (16, 16)])
@pytest.mark.parametrize("x_shape,w_shape,kw", [CASES[6], CASES[5], CASES[8]], ids=["k70-stride", "groups2", "wide"])
def test_every_pooled_tile(rng, monkeypatch, request, tile, x_shape, w_shape, kw):
    """The pooled epilogue with each tile configuration forced: windows in every lane position of
    each tile shape, rows and columns past a tile, groups."""
    from minitorch.native.cuda import conv
    request.getfixturevalue("poisoned_allocator")
    monkeypatch.setattr(conv, "_tile", lambda m, ncols, groups=1, min_blocks=1: tile)
    arrays = _inputs(rng, x_shape, w_shape)
    g = rng.standard_normal(_pooled_shape(arrays, kw))
    with conv.use_rung("03_implicit_gemm"):
        fused = _run(True, arrays, g, "cuda", kw)
    for what, ours, theirs in zip(NAMES, fused, _torch(arrays, g, kw)):
        if what == "indices":
            np.testing.assert_array_equal(ours.cpu().numpy(), theirs, err_msg=f"indices, tile {tile}")
        else:
            assert_close(ours, theirs, "float64", f"{what}, tile {tile}")


def test_fuse_conv_relu_with_max_pool(device):
    from minitorch.nn.conv import ConvReLU2d, ConvReLUMaxPool2d, fuse_conv_relu
    mt.manual_seed(3)
    model = mt.nn.Sequential(mt.nn.Conv2d(1, 4, 3, padding=1), mt.nn.ReLU(), mt.nn.MaxPool2d(2),
                             mt.nn.Conv2d(4, 6, 3), mt.nn.ReLU(), mt.nn.MaxPool2d(2, stride=1),
                             mt.nn.Flatten(), mt.nn.Linear(6 * 3 * 4, 3)).to(device=device, dtype=mt.float64)
    x = mt.randn(2, 1, 13, 15, device=device, dtype=mt.float64)
    params = list(model.parameters())
    model(x).sum().backward()
    before = [model(x).detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in params]
    for p in params:
        p.grad = None
    fuse_conv_relu(model, max_pool=True)
    assert type(model[0]) is ConvReLUMaxPool2d and type(model[2]) is mt.nn.Identity, "conv-relu-pool fused"
    assert type(model[3]) is ConvReLU2d and type(model[5]) is mt.nn.MaxPool2d, "a stride-1 pool stays"
    model(x).sum().backward()
    after = [model(x).detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in params]
    for what, a, b in zip(["output"] + [f"grad {i}" for i in range(len(params))], after, before):
        assert_close(a, b, "float64", f"fused model {what}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pool_backward_applies_the_relu_mask(device, rng, dtype):
    """max_pool2d_backward(..., relu_out=pooled) equals masking the gradient by pooled > 0 first and
    routing it without a mask (what the fused block's backward did in two passes): on both backends,
    with zeros, negatives and a NaN among the pooled values, overlapping 3x3/stride-2 windows."""
    from minitorch import native
    be = native.get(mt.device(device))
    x = rng.standard_normal((2, 3, 9, 11)).astype(dtype)
    x[0, 0, :3, :3] = 0.0                                    # a window whose maximum is exactly 0
    x[1, 2, 4, 4] = np.nan
    to = (lambda a: be.from_numpy(np.ascontiguousarray(a), 0))
    out = tuple((n - 3) // 2 + 1 for n in x.shape[2:])
    pooled, indices = be.max_pool2d(to(x), (3, 3), (2, 2), (0, 0), (1, 1), out)
    g = to(rng.standard_normal(tuple(pooled.shape)).astype(dtype))
    masked = be.unary_backward("relu", g, pooled)
    want = be.max_pool2d_backward(masked, indices, x.shape[2:], (3, 3), (2, 2), (0, 0), (1, 1))
    got = be.max_pool2d_backward(g, indices, x.shape[2:], (3, 3), (2, 2), (0, 0), (1, 1), relu_out=pooled)
    np.testing.assert_array_equal(be.to_numpy(got), be.to_numpy(want))
    assert (be.to_numpy(got) != 0).any() and (be.to_numpy(got) == 0).any()
