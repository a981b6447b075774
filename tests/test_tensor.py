"""Phase 01: tensors, factories, devices, the fill kernel, copies and memory."""
import numpy as np
import pytest
import torch

import minitorch as mt


def test_factories_shapes_dtypes(device):
    assert mt.zeros(2, 3, device=device).shape == (2, 3)
    assert mt.ones((4,), device=device).dtype is mt.float32
    assert mt.full((2, 2), 7, device=device).dtype is mt.int64
    assert mt.full((2, 2), True, device=device).dtype is mt.bool
    assert mt.empty([3, 1], dtype=mt.float64, device=device).dtype is mt.float64
    assert mt.arange(5, device=device).tolist() == [0, 1, 2, 3, 4]
    assert mt.arange(1, 2, 0.25, device=device).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert mt.arange(10, 0, -3, device=device).tolist() == [10, 7, 4, 1]
    assert mt.tensor([[1, 2], [3, 4]], device=device).dtype is mt.int64
    assert mt.tensor([1.5], device=device).dtype is mt.float32
    assert mt.tensor(np.zeros(3), device=device).dtype is mt.float64
    t = mt.randn(3, 5, device=device)
    for like in (mt.zeros_like, mt.ones_like, mt.empty_like, mt.rand_like, mt.randn_like):
        assert like(t).shape == t.shape and like(t).device == t.device


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 5), (2, 3, 4)])
def test_round_trip_is_bit_exact(device, rng, dtype, shape):
    data = (rng.standard_normal(shape) * 1e3).astype(dtype) if dtype != "bool" else rng.random(shape) > 0.5
    t = mt.tensor(data, device=device)
    back = t.cpu().numpy()
    assert back.dtype == data.dtype and back.shape == data.shape
    assert back.tobytes() == np.ascontiguousarray(data).tobytes()


@pytest.mark.parametrize("n", [1, 255, 256, 257, 100_003])
def test_fill_kernel_writes_every_element(device, n):
    t = mt.full((n,), float("nan"), device=device)      # poison first: unwritten elements stay NaN
    t.fill_(3.14)
    assert np.all(t.cpu().numpy() == np.float32(3.14))
    assert mt.zeros(n, dtype=mt.int64, device=device).fill_(-7).tolist() == [-7] * n


def test_rand_and_randn_statistics_and_seed(device):
    mt.manual_seed(123)
    u = mt.rand(100_001, device=device).cpu().numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = mt.randn(100_001, dtype=mt.float64, device=device).cpu().numpy()
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    mt.manual_seed(7)
    a = mt.randn(5, device=device).tolist()
    mt.manual_seed(7)
    assert mt.randn(5, device=device).tolist() == a


def test_item_repr_and_metadata():
    t = mt.tensor([[1.0, 2.5], [3.0, 4.0]])
    assert repr(t) == "tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]])"
    assert repr(mt.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(mt.tensor([1, 2], dtype=mt.float64)) == "tensor([1., 2.], dtype=minitorch.float64)"
    assert repr(mt.tensor(3)) == "tensor(3)"
    assert t.numel() == 4 and t.ndim == 2 and t.stride() == (2, 1) and t.is_contiguous()
    assert mt.tensor([5.0]).item() == 5.0
    with pytest.raises(RuntimeError, match="4 elements"):
        t.item()


def test_to_returns_self_when_nothing_changes():
    t = mt.ones(3)
    assert t.to("cpu") is t and t.to(mt.float32) is t
    assert t.to(mt.float64).dtype is mt.float64


def test_bad_input_errors():
    with pytest.raises(ValueError, match="unknown device"):
        mt.zeros(2, device="tpu")
    with pytest.raises(ValueError, match="rectangular"):
        mt.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="numbers"):
        mt.tensor(["a"])
    with pytest.raises(ValueError, match="non-negative"):
        mt.zeros(-1)
    with pytest.raises(ValueError, match="step"):
        mt.arange(0, 5, 0)
    with pytest.raises(TypeError, match="floating"):
        mt.rand(3, dtype=mt.int64)


def test_cuda_unavailable_error_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(mt.cuda, "_probe", lambda: (None, "CuPy is not installed (test); install CuPy"))
    with pytest.raises(mt.cuda.CudaUnavailableError, match="CuPy is not installed.*install"):
        mt.zeros(2, device="cuda")


@pytest.mark.cuda
def test_cuda_tensor_lives_on_the_gpu_and_memory_returns():
    import gc
    mt.zeros(1, device="cuda")
    gc.collect()
    before = mt.cuda.memory_allocated()
    t = mt.empty(1024, 1024, device="cuda")
    assert t.device == mt.device("cuda", 0) and t.is_cuda
    assert mt.cuda.memory_allocated() - before >= 4 * 1024 * 1024
    assert mt.cuda.max_memory_allocated() >= mt.cuda.memory_allocated()
    del t
    gc.collect()
    assert mt.cuda.memory_allocated() == before
    with pytest.raises(TypeError, match="cpu"):
        mt.zeros(2, device="cuda").numpy()
    assert isinstance(mt.cuda.get_device_name(), str) and mt.cuda.device_count() >= 1


# ---- copies and in-place ops (issue 13), against PyTorch ---------------------------------------------
INPLACE = [
    ("add_ tensor", lambda t, o, lib: t.add_(o)),
    ("add_ alpha", lambda t, o, lib: t.add_(o, alpha=-2.5)),
    ("add_ scalar", lambda t, o, lib: t.add_(3)),
    ("sub_ alpha", lambda t, o, lib: t.sub_(o, alpha=0.5)),
    ("sub_ scalar", lambda t, o, lib: t.sub_(1.25)),
    ("mul_", lambda t, o, lib: t.mul_(o)),
    ("mul_ scalar", lambda t, o, lib: t.mul_(-2)),
    ("div_", lambda t, o, lib: t.div_(o)),
    ("div_ scalar", lambda t, o, lib: t.div_(4.0)),
    ("clamp_", lambda t, o, lib: t.clamp_(-0.5, 0.25)),
    ("clamp_ min", lambda t, o, lib: t.clamp_(min=0.0)),
    ("clamp_ max", lambda t, o, lib: t.clamp_(max=0.1)),
    ("masked_fill_", lambda t, o, lib: t.masked_fill_(o > 0, -7.0)),
    ("copy_", lambda t, o, lib: t.copy_(o)),
    ("copy_ float64", lambda t, o, lib: t.copy_(o.double() * 3)),
    ("fill_", lambda t, o, lib: t.fill_(0.5)),
    ("zero_", lambda t, o, lib: t.zero_()),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[c[0] for c in INPLACE])
@pytest.mark.parametrize("view", ["compact", "transposed"])
def test_inplace_ops_match_pytorch_and_write_through_views(device, rng, name, fn, view):
    data, other = rng.standard_normal((4, 3)), rng.standard_normal((3,))
    base = mt.tensor(data, dtype=mt.float32, device=device)
    tbase = torch.tensor(data, dtype=torch.float32)
    if view == "transposed":                             # write through a non-contiguous view
        t, tt = base.T, tbase.T
        o, to = mt.tensor(other[:, None], dtype=mt.float32, device=device), torch.tensor(other[:, None], dtype=torch.float32)
    else:
        t, tt = base, tbase
        o, to = mt.tensor(other, dtype=mt.float32, device=device), torch.tensor(other, dtype=torch.float32)
    out = fn(t, o, mt)
    fn(tt, to, torch)
    assert out is t and t._version == 1 and t.dtype is mt.float32
    np.testing.assert_allclose(base.cpu().numpy(), tbase.numpy(), rtol=1e-6, atol=1e-6)


def test_inplace_errors_match_pytorch(device):
    i = mt.tensor([1, 2, 3], device=device)
    ti = torch.tensor([1, 2, 3])
    for ours, theirs in ((lambda: i.add_(0.5), lambda: ti.add_(0.5)),
                         (lambda: i.div_(2), lambda: ti.div_(2)),
                         (lambda: i.clamp_(min=1.5), lambda: ti.clamp_(min=1.5))):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            theirs()
        with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
            ours()
    assert i.tolist() == [1, 2, 3]
    assert i.copy_(mt.tensor([1.7, -2.2, 3.9], device=device)).tolist() == [1, -2, 3]   # copy_ truncates
    x = mt.zeros(3, device=device)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        x.add_(mt.ones(2, 3, device=device))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        x.clamp_()
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill_(mt.ones(3, device=device), 1.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        mt.zeros(1, device=device).expand(3).add_(1.0)
    w = mt.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.add_(1.0)
    x.mul_(w)                                            # recorded: x is no longer a leaf (PyTorch's rule)
    assert x.requires_grad and not x.is_leaf
    with mt.no_grad():
        w.sub_(x.add_(2.0), alpha=0.5)                   # what an optimizer does
    assert w.tolist() == [0.0, 0.0, 0.0] and w.is_leaf and w._version == 1


def test_copy_between_devices_dtypes_and_self_overlap(device):
    x = mt.arange(6, dtype=mt.float32, device=device).reshape(2, 3)
    x.copy_(x.T.reshape(2, 3))                           # a compact copy of the source is made first
    assert x.tolist() == [[0.0, 3.0, 1.0], [4.0, 2.0, 5.0]]
    y = mt.zeros(2, 3, dtype=mt.float64, device=device)
    y.copy_(mt.tensor([1, 2, 3]))                        # cpu int64 source, broadcast, to the device
    assert y.tolist() == [[1.0, 2.0, 3.0]] * 2 and y.device == mt.device(device)


def test_masked_fill_casts_the_value_like_pytorch(device):
    mask = [True, False, True]
    t = mt.tensor([1, 2, 3], device=device).masked_fill_(mt.tensor(mask, device=device), 2.7)
    theirs = torch.tensor([1, 2, 3]).masked_fill_(torch.tensor(mask), 2.7)
    assert t.dtype is mt.int64 and t.tolist() == theirs.tolist()
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        mt.zeros(3, device=device).masked_fill_(mt.tensor(mask, device=device), mt.ones(3, device=device))


def test_in_place_ops_on_empty_tensors(device):
    """An empty tensor takes in-place writes (nothing to write), whatever its strides."""
    for shape in [(0,), (0, 3), (4, 0)]:
        t = mt.zeros(shape, device=device)
        t.fill_(1.0)
        t.add_(mt.ones(shape, device=device))
        t.uniform_()
        assert tuple(t.shape) == shape, f"in-place ops changed the shape {shape} to {tuple(t.shape)}"
    expanded = mt.zeros(1, 0, device=device).expand(3, 0)
    expanded.zero_()
    assert tuple(expanded.shape) == (3, 0)
