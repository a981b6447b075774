"""What the per-op hot path relies on: interned devices, the dtype lookup, and recording that
only happens when an input requires grad (CPU only)."""
import copy
import pickle

import numpy as np
import pytest

import minitorch as mt
from minitorch import native
from minitorch.device import CPU, as_device


def test_devices_are_interned():
    assert mt.device("cpu") is CPU and as_device(None) is CPU and as_device("cpu") is CPU
    assert mt.device("cuda") is mt.device("cuda", 0) is mt.device("cuda:0") is as_device(0)
    assert mt.device("cuda:1") is mt.device("cuda", 1) is mt.device(mt.device("cuda:1"))
    assert mt.device("cuda:1") is not mt.device("cuda")
    for d in (CPU, mt.device("cuda:2")):
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.copy(d) is d and copy.deepcopy(d) is d


def test_devices_still_compare_hash_and_print_by_value():
    assert mt.device("cuda:0") == "cuda" and mt.device("cpu") != "cuda"
    assert mt.device("cuda", 1) != mt.device("cuda", 0)
    assert hash(mt.device("cuda")) == hash(("cuda", 0))
    assert str(mt.device("cuda", 1)) == "cuda:1" and repr(CPU) == "device(type='cpu')"
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mt.device("tpu")
    with pytest.raises(ValueError, match="must be a non-negative integer, got 'x'"):
        mt.device("cuda:x")
    with pytest.raises(ValueError, match="must be non-negative, got -1"):
        mt.device("cuda", -1)


def test_cpu_backend_lookup():
    assert native.get(CPU) is native.cpu
    assert mt.ones(2)._backend is native.cpu


@pytest.mark.parametrize("np_dtype,expected", [
    (np.float32, mt.float32), (np.float64, mt.float64), (np.int64, mt.int64), (np.bool_, mt.bool),
    ("float32", mt.float32), (np.dtype(">f4"), mt.float32), (np.float16, mt.float16),
    (np.int32, mt.int64), (np.uint8, mt.int64), (np.longdouble, mt.float64),
])
def test_from_numpy_dtype_exact_and_nearest(np_dtype, expected):
    assert mt.dtypes.from_numpy_dtype(np_dtype) is expected


def test_from_numpy_dtype_rejects_types_without_a_twin():
    with pytest.raises(TypeError, match="has no minitorch twin"):
        mt.dtypes.from_numpy_dtype(np.complex64)


def test_dtype_follows_the_raw_array():
    t = mt.ones(3)
    t._data = t._data.astype(np.float64)        # what Module.to(dtype=...) does to a parameter
    assert t.dtype is mt.float64
    assert mt.float32.is_floating_point and not mt.int64.is_floating_point and not mt.bool.is_floating_point


def test_scalar_operands():
    a = mt.ones(3)
    assert (a * 2.0).tolist() == [2.0, 2.0, 2.0] and (a * 2.0).dtype is mt.float32
    assert (a * np.float64(3)).tolist() == [3.0, 3.0, 3.0]
    assert (mt.ones(3, dtype=mt.int64) * 0.5).dtype is mt.float32
    assert (2 - a).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="add: unsupported operand type str; expected Tensor or a number"):
        a + "x"


def test_nothing_is_recorded_unless_an_input_requires_grad():
    a, b = mt.ones(3), mt.ones(3)
    for out in (a + b, a * 2.0, a.sigmoid(), a.fill_(1.0)):
        assert out.grad_fn is None and out.requires_grad is False
    w = mt.ones(3, requires_grad=True)
    y = a + w
    assert y.requires_grad and y.grad_fn.name() == "AddBackward"
    assert y.grad_fn.inputs == (None, w) and y.grad_fn.ctx.needs_input_grad == (False, True)
    assert (w > 0).grad_fn is None                      # bool outputs carry no gradient
    with mt.no_grad():
        assert (w * 2.0).grad_fn is None
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
