"""F.conv2d, nn.Conv2d and the fused conv2d_relu against PyTorch, on both devices and (cuda) every
rung of the ladder forced through the dispatcher: values and the gradients of input, weight and
bias, on odd shapes (batch 1 and 3, channels 1/3/5, H != W, kernels 1, 3, 5, (3, 2), strides 2 and
(2, 1), padding 0/1/'same'/'valid', dilation 2, groups 2 and depthwise), float64 finite
differences, and PyTorch's errors."""
import contextlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import nn
from minitorch.autograd import gradcheck
from minitorch.ops.conv import conv2d_relu
from oracle import assert_close, check_op

RUNGS = ("auto", "01_direct", "02_im2col", "03_implicit_gemm")

# (input shape, weight shape, keyword arguments): every feature at least once, none a tile multiple
CASES = [
    ((1, 1, 5, 5), (1, 1, 3, 3), {}),
    ((3, 3, 13, 17), (5, 3, 3, 3), {"padding": 1}),
    ((2, 5, 9, 8), (3, 5, 1, 1), {}),
    ((1, 3, 11, 7), (4, 3, 5, 5), {"stride": 2, "padding": 2}),
    ((3, 3, 10, 9), (5, 3, 3, 2), {"stride": (2, 1), "padding": (1, 0)}),
    ((2, 4, 13, 12), (6, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 1}),
    ((2, 5, 8, 9), (5, 1, 3, 3), {"groups": 5, "padding": "same"}),             # depthwise
    ((1, 3, 7, 10), (4, 3, 2, 4), {"padding": "same", "dilation": (2, 1)}),     # even kernel: asymmetric
    ((3, 2, 6, 5), (3, 2, 3, 3), {"padding": "valid", "stride": 3}),
    ((2, 20, 9, 11), (70, 20, 3, 3), {"padding": 1}),        # several 64-row tiles, a long reduction
]
IDS = [f"x{'x'.join(map(str, x))}-w{'x'.join(map(str, w))}-" + ",".join(f"{k}={v}" for k, v in kw.items())
       for x, w, kw in CASES]


def _rung(device, rung):
    """Force ``rung`` on cuda (the dispatcher's choice for 'auto'); cpu has one implementation."""
    if device == "cpu" or rung == "auto":
        return contextlib.nullcontext()
    from minitorch.native.cuda import conv
    return conv.use_rung(rung)


def _skip_cpu_rungs(device, rung, request=None):
    """cpu runs only 'auto'; on cuda (with ``request``) every block our allocator hands out is
    first filled with NaN, so an output element a kernel forgot to write fails the comparison."""
    if device == "cpu" and rung != "auto":
        pytest.skip("the cpu backend has one implementation")
    if device == "cuda" and request is not None:
        request.getfixturevalue("poisoned_allocator")


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("x_shape,w_shape,kw", CASES, ids=IDS)
def test_conv2d_matches_torch(device, rng, rung, x_shape, w_shape, kw, request):
    _skip_cpu_rungs(device, rung, request)
    with _rung(device, rung):
        check_op(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw),
                 [x_shape, w_shape, (w_shape[0],)], device, rng)


@pytest.mark.parametrize("rung", RUNGS)
def test_conv2d_float32_without_bias(device, rng, rung):
    _skip_cpu_rungs(device, rung)
    with _rung(device, rung):
        check_op(lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding=1),
                 [(3, 5, 13, 17), (7, 5, 3, 3)], device, rng, dtype="float32")


@pytest.mark.parametrize("rung", RUNGS)
def test_conv2d_non_contiguous_inputs(device, rng, rung):
    _skip_cpu_rungs(device, rung)
    with _rung(device, rung):
        check_op(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1, groups=2),
                 [(2, 4, 9, 6), (6, 2, 3, 2), (6,)], device, rng, layout="transposed")


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("bias", [True, False])
def test_fused_bias_relu_equals_the_unfused_path(device, rng, rung, bias, request):
    _skip_cpu_rungs(device, rung, request)
    x = rng.standard_normal((3, 4, 11, 9))
    w = rng.standard_normal((6, 2, 3, 3))
    b = rng.standard_normal(6) if bias else None
    g = rng.standard_normal((3, 6, 6, 9))
    results = []
    with _rung(device, rung):
        for fused in (True, False):
            tx, tw = (mt.tensor(a, device=device, requires_grad=True) for a in (x, w))
            tb = mt.tensor(b, device=device, requires_grad=True) if bias else None
            args = (tx, tw, tb, (2, 1), 1, 1, 2)
            y = conv2d_relu(*args) if fused else F.relu(F.conv2d(*args))
            (y * mt.tensor(g, device=device)).sum().backward()
            results.append([y.detach()] + [t.grad for t in (tx, tw, tb) if t is not None])
    assert (results[1][0].cpu().numpy() == 0).any() and (results[1][0].cpu().numpy() > 0).any(), "ReLU is exercised"
    for what, fused, unfused in zip(("output", "dx", "dw", "db"), *results):
        assert_close(fused, unfused.cpu().numpy(), "float64", f"fused conv2d_relu {what} vs conv2d then relu")


def test_conv_relu_module_matches_conv_then_relu(device):
    mt.manual_seed(0)
    fused = nn.conv.ConvReLU2d(3, 5, 3, padding=1, device=device, dtype=mt.float64)
    plain = nn.Conv2d(3, 5, 3, padding=1, device=device, dtype=mt.float64)
    plain.weight, plain.bias = fused.weight, fused.bias
    x = mt.randn(2, 3, 8, 7, device=device, dtype=mt.float64)
    assert_close(fused(x), F.relu(plain(x)).cpu().numpy(), "float64", "ConvReLU2d vs relu(Conv2d)")


@pytest.mark.parametrize("kw", [{"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same"}],
                         ids=["stride2-pad1", "dilation2-groups2", "same"])
def test_gradcheck_float64_cpu(kw):
    rng = np.random.default_rng(7)
    x = mt.tensor(rng.standard_normal((2, 4, 7, 6)), requires_grad=True)
    w = mt.tensor(rng.standard_normal((4, 4 // kw.get("groups", 1), 3, 2)), requires_grad=True)
    b = mt.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), [x, w, b])
    assert gradcheck(lambda x, w, b: conv2d_relu(x, w, b, **kw), [x, w, b])


def test_unbatched_input(device, rng):
    check_op(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), [(3, 6, 5), (2, 3, 3, 3)], device, rng)


def test_empty_batch(device):
    x = mt.zeros(0, 3, 5, 5, device=device)
    y = F.conv2d(x, mt.ones(4, 3, 3, 3, device=device))
    assert tuple(y.shape) == (0, 4, 3, 3)


def test_half_precision(device):
    """float16 / bfloat16 are loaded as float, computed in float, rounded once; with a backward."""
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 4, 9, 7)), rng.standard_normal((6, 4, 3, 3)) / 6, rng.standard_normal(6)
    tw64 = torch.tensor(w, requires_grad=True)
    ty = TF.conv2d(torch.tensor(x), tw64, torch.tensor(b), padding=1)
    torch.relu(ty).sum().backward()
    want, want_gw = ty.detach().numpy(), tw64.grad.numpy()
    for dtype, tol in ((mt.float16, 1e-2), (mt.bfloat16, 5e-2)):
        for rung in RUNGS if device == "cuda" else ("auto",):
            with _rung(device, rung):
                tw = mt.tensor(w, device=device, dtype=dtype, requires_grad=True)
                y = conv2d_relu(*(mt.tensor(a, device=device, dtype=dtype) for a in (x,)), tw,
                                mt.tensor(b, device=device, dtype=dtype), padding=1)
                y.sum().backward()
            assert y.dtype is dtype and tw.grad.dtype is dtype
            np.testing.assert_allclose(y.float().cpu().numpy(), np.maximum(want, 0), rtol=tol, atol=tol,
                                       err_msg=f"{dtype} conv2d_relu, rung {rung}")
            np.testing.assert_allclose(tw.grad.float().cpu().numpy(), want_gw, rtol=tol,
                                       atol=tol * np.abs(want_gw).max(), err_msg=f"{dtype} weight gradient, rung {rung}")


@pytest.mark.cuda
def test_benchmark_mode_times_once_and_stays_correct(rng):
    from minitorch import backends
    from minitorch.native.cuda import conv
    x, w = rng.standard_normal((4, 3, 12, 10)), rng.standard_normal((5, 3, 3, 3))
    want = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    backends.cudnn.benchmark = True
    try:
        for _ in range(2):
            y = F.conv2d(mt.tensor(x, device="cuda"), mt.tensor(w, device="cuda"), padding=1)
            assert_close(y, want, "float64", "conv2d in benchmark mode")
    finally:
        backends.cudnn.benchmark = False
    timed = [v for k, v in conv._timed.items() if k[0] == "forward" and k[1] == (4, 3, 12, 10)]
    assert len(timed) == 1 and timed[0] in conv.RUNGS, f"one timed choice for the shape, got {timed}"


@pytest.mark.cuda
def test_geometry_counts_the_pixels_that_pick_compares_with_int_max():
    """_pick reads geometry's Python int ``pixels`` (host cost), not the struct: the two agree,
    and a problem past 2**31 - 1 pixels still goes to 01_direct."""
    from minitorch.native.cuda import conv
    for n, h, w, pad, stride in [(4, 12, 10, 1, 1), (1, 1, 1, 0, 1), (3, 9, 7, 2, 2), (2, 5, 5, 3, 1)]:
        geom, _ = conv.geometry((n, 3, h, w), (5, 3, 3, 3), (stride, stride), ((pad, pad), (pad, pad)), (1, 1), 1)
        a = geom.array[0]
        assert geom.pixels == int(a["N"]) * max(int(a["H"]) * int(a["W"]), int(a["P"]) * int(a["Q"]))
    big, _ = conv.geometry((2 ** 16, 1, 256, 128), (1, 1, 1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    assert big.pixels == 2 ** 31
    assert conv._pick("forward", None, (2 ** 16, 1, 256, 128), (1, 1, 1, 1), 1, np.dtype(np.float32), 0, big) == "01_direct"


def test_choose_is_a_rung_for_every_pass():
    pytest.importorskip("cupy")
    from minitorch.native.cuda import conv
    for x_shape, w_shape, kw in CASES:
        for p in conv.PASSES:
            assert conv.choose(p, x_shape, w_shape, kw.get("groups", 1)) in conv.RUNGS


test_choose_is_a_rung_for_every_pass = pytest.mark.cuda(test_choose_is_a_rung_for_every_pass)


def test_module_shapes_init_and_repr(device):
    mt.manual_seed(1)
    for args, kw in [((4, 8, 3), {}), ((4, 8, (3, 2)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False)),
                     ((3, 6, 5), dict(padding="same"))]:
        ours, theirs = nn.Conv2d(*args, **kw, device=device), torch.nn.Conv2d(*args, **kw)
        assert repr(ours) == repr(theirs), f"{ours!r} vs {theirs!r}"
        assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
        assert (ours.bias is None) == (theirs.bias is None)
        fan_in = theirs.weight[0].numel()
        assert np.abs(ours.weight.detach().cpu().numpy()).max() <= 1 / np.sqrt(fan_in), "U(-1/sqrt(fan_in), ...)"
        x = mt.randn(2, args[0], 9, 8, device=device)
        theirs.weight.data = torch.tensor(ours.weight.detach().cpu().numpy())
        if ours.bias is not None:
            theirs.bias.data = torch.tensor(ours.bias.detach().cpu().numpy())
        assert_close(ours(x), theirs(torch.tensor(x.cpu().numpy())).detach().numpy(), "float32", f"Conv2d{args}")


@pytest.mark.parametrize("call,message", [
    (lambda: F.conv2d(mt.randn(2, 3), mt.randn(8, 3, 3, 3)), "Expected 3D (unbatched) or 4D (batched) input"),
    (lambda: F.conv2d(mt.randn(1, 2, 3, 4, 5), mt.randn(8, 3, 3, 3)), "input of size: [1, 2, 3, 4, 5]"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 3, 3, 3)), "to have 3 channels, but got 4 channels"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(5, 2, 3, 3), groups=2), "divisible by 2 at dimension 0"),
    (lambda: F.conv2d(mt.randn(2, 5, 5, 5), mt.randn(4, 2, 3, 3), groups=2), "to have 4 channels, but got 5"),
    (lambda: F.conv2d(mt.randn(2, 4, 2, 2), mt.randn(8, 4, 3, 3)), "Kernel size can't be greater"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), stride=0), "non-positive stride"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), padding=-1), "negative padding"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), dilation=0), "non-positive dilation"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), groups=0), "non-positive groups"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), mt.randn(4)), "expected bias to be 1-dimensional"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), stride=2, padding="same"), "strided convolutions"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), padding="foo"), "Invalid padding string"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3), stride=(1, 2, 3)), "list of 2 values"),
    (lambda: F.conv2d(mt.randn(2, 4, 5, 5), mt.randn(8, 4, 3, 3, dtype=mt.float64)), "should be the same"),
])
def test_errors_like_torch(call, message):
    with pytest.raises(RuntimeError) as err:
        call()
    assert message in str(err.value)


@pytest.mark.parametrize("kw,error,message", [
    ({"groups": 3}, ValueError, "in_channels must be divisible by groups"),
    ({"groups": 0}, ValueError, "groups must be a positive integer"),
    ({"padding": "foo"}, ValueError, "Invalid padding string 'foo'"),
    ({"padding": "same", "stride": 2}, ValueError, "strided convolutions"),
    ({"padding_mode": "reflect"}, NotImplementedError, "only 'zeros'"),
])
def test_module_errors(kw, error, message):
    with pytest.raises(error, match=message):
        nn.Conv2d(4, 8, 3, **kw)


def test_integer_tensors_are_refused():
    with pytest.raises(TypeError, match="floating"):
        F.conv2d(mt.ones(1, 1, 3, 3, dtype=mt.int64), mt.ones(1, 1, 3, 3, dtype=mt.int64))


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("needs", ["x", "b", "wb"])
def test_only_some_gradients(device, rng, rung, needs, request):
    """Frozen inputs get no gradient, the others the right one (each backward branch, fused or not)."""
    _skip_cpu_rungs(device, rung, request)
    arrays = rng.standard_normal((2, 3, 8, 7)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    g = rng.standard_normal((2, 4, 8, 7))
    for fused in (False, True):
        ours = [mt.tensor(a, device=device, requires_grad=n in needs) for a, n in zip(arrays, "xwb")]
        theirs = [torch.tensor(a, requires_grad=n in needs) for a, n in zip(arrays, "xwb")]
        with _rung(device, rung):
            y = conv2d_relu(*ours, padding=1) if fused else F.conv2d(*ours, padding=1)
            (y * mt.tensor(g, device=device)).sum().backward()
        ty = TF.conv2d(*theirs, padding=1)
        ((torch.relu(ty) if fused else ty) * torch.tensor(g)).sum().backward()
        for name, o, t in zip("xwb", ours, theirs):
            if name in needs:
                assert_close(o.grad, t.grad.numpy(), "float64", f"d{name} (fused={fused}, needs {needs})")
            else:
                assert o.grad is None, f"d{name} should not be computed (needs {needs})"


def test_fuse_conv_relu_keeps_outputs_gradients_and_parameters(device):
    from minitorch.nn.conv import ConvReLU2d, fuse_conv_relu
    mt.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3),
                          nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU())).to(device=device, dtype=mt.float64)
    x = mt.randn(2, 1, 8, 9, device=device, dtype=mt.float64)
    params = list(model.parameters())
    model(x).sum().backward()
    before = [model(x).detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in params]
    for p in params:
        p.grad = None
    fuse_conv_relu(model)
    assert isinstance(model[0], ConvReLU2d) and isinstance(model[3][0], ConvReLU2d), "both pairs fused"
    assert type(model[2]) is nn.Conv2d, "a Conv2d not followed by a ReLU stays"
    assert all(a is b for a, b in zip(model.parameters(), params)), "the same Parameter objects"
    model(x).sum().backward()
    after = [model(x).detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in params]
    for what, a, b in zip(["output"] + [f"grad {i}" for i in range(len(params))], after, before):
        assert_close(a, b, "float64", f"fused model {what}")


@pytest.mark.cuda
@pytest.mark.parametrize("tile", [(8, 256), (16, 128), (64, 64), (16, 16)])
@pytest.mark.parametrize("x_shape,w_shape,kw", [
    ((3, 10, 13, 17), (70, 10, 3, 3), {"padding": 1}),                      # rows and columns past a tile
    ((2, 6, 9, 11), (10, 3, 3, 2), {"stride": (2, 1), "dilation": (1, 2), "groups": 2, "padding": 1}),
], ids=["k70", "groups2"])
def test_every_implicit_gemm_tile(rng, monkeypatch, request, tile, x_shape, w_shape, kw):
    """03_implicit_gemm with each tile configuration forced (the dispatch picks them by shape), fused
    ReLU included: all three passes, split-k wgrad and its bias column."""
    from minitorch.native.cuda import conv
    request.getfixturevalue("poisoned_allocator")
    monkeypatch.setattr(conv, "_tile", lambda m, ncols, groups=1, min_blocks=1: tile)
    with conv.use_rung("03_implicit_gemm"):
        check_op(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw), [x_shape, w_shape, (w_shape[0],)],
                 "cuda", rng)
        check_op(lambda lib, x, w, b: (conv2d_relu(x, w, b, **kw) if lib is mt
                                       else torch.relu(TF.conv2d(x, w, b, **kw))),
                 [x_shape, w_shape, (w_shape[0],)], "cuda", rng)
