"""Phase 01: tensors, factories, devices, the fill kernel, copies and memory."""
import numpy as np
import pytest

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
