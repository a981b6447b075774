"""minitorch.save / minitorch.load (safetensors files), Module.load_state_dict, resuming training."""
import io
import json
import os
import pathlib
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch

import minitorch
from minitorch import nn
from minitorch.data import DataLoader, TensorDataset
from minitorch.optim import SGD
from minitorch.optim.lr_scheduler import StepLR

DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
          "int64": np.int64, "bool": np.bool_}


def _round_trip(obj, **load_args):
    buffer = io.BytesIO()
    minitorch.save(obj, buffer)
    buffer.seek(0)
    return minitorch.load(buffer, **load_args)


def _bits(t):
    """The tensor's elements as bytes, to compare bit for bit (NaN payloads and -0.0 included)."""
    return t.cpu().numpy().tobytes()


def _values(rng, shape, np_dtype):
    if np_dtype is np.bool_:
        return rng.random(shape) < 0.5
    if np_dtype is np.int64:
        return rng.integers(-2**62, 2**62, size=shape, dtype=np.int64)
    values = rng.standard_normal(shape).astype(np.float32) * 100
    if values.size >= 4:             # the special values must survive too
        values.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return values.astype(np_dtype)


# ---- round trips -------------------------------------------------------------------------------
def test_nested_tree_round_trips_with_its_types():
    a, b = minitorch.randn(3, 4), minitorch.tensor([1, 2, 3])
    obj = {"a": [a, (b, 3, "x", None)], 5: None, 2.5: True, ("k", 1): -7,
           "od": OrderedDict([("z", 1.5), ("y", float("inf"))]), "big": 2**70, "float": 1e-300,
           "empty": {}, "list": [], "tuple": (), "s": "é ü \n \"quoted\""}
    out = _round_trip(obj)
    assert type(out) is dict and list(out) == list(obj)
    assert type(out["od"]) is OrderedDict and list(out["od"].items()) == [("z", 1.5), ("y", float("inf"))]
    assert type(out["a"]) is list and type(out["a"][1]) is tuple
    assert out["a"][1][1:] == (3, "x", None) and type(out["a"][1][1]) is int
    assert out[5] is None and out[2.5] is True and out[("k", 1)] == -7
    assert out["big"] == 2**70 and out["float"] == 1e-300
    assert out["empty"] == {} and out["list"] == [] and out["tuple"] == () and out["s"] == obj["s"]
    assert _bits(out["a"][0]) == _bits(a) and _bits(out["a"][1][0]) == _bits(b)


def test_a_tensor_alone_and_numpy_scalars_round_trip():
    t = minitorch.randn(2, 3)
    assert _bits(_round_trip(t)) == _bits(t)
    out = _round_trip({"n": np.float64(0.1), "i": np.int64(3), "b": np.bool_(True)})
    assert out == {"n": 0.1, "i": 3, "b": True} and type(out["i"]) is int and type(out["b"]) is bool


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (2, 3, 5), (3, 0, 2)])
def test_every_dtype_and_shape_round_trips_bit_exactly(device, dtype, shape, rng):
    t = minitorch.tensor(_values(rng, shape, DTYPES[dtype]), device=device)
    out = _round_trip({"t": t})["t"]
    assert out.dtype == t.dtype and out.device == t.device and tuple(out.shape) == shape
    assert _bits(out) == _bits(t)


def test_views_are_saved_compactly(device, tmp_path):
    """A column of a 1000 x 50 tensor stores its 1000 elements, not the 50000 of its base."""
    big = minitorch.randn(1000, 50, device=device)
    column, every_other, transposed = big[:, 3], big[::2, 1:4], big[:10].T
    minitorch.save({"column": column}, tmp_path / "column.safetensors")
    assert os.path.getsize(tmp_path / "column.safetensors") < 1000 * 4 + 1000
    out = _round_trip({"column": column, "every_other": every_other, "transposed": transposed})
    host = big.cpu().numpy()
    np.testing.assert_array_equal(out["column"].cpu().numpy(), host[:, 3])
    np.testing.assert_array_equal(out["every_other"].cpu().numpy(), host[::2, 1:4])
    np.testing.assert_array_equal(out["transposed"].cpu().numpy(), host[:10].T)
    assert out["transposed"].is_contiguous()


def test_the_same_tensor_twice_is_stored_once(tmp_path):
    t = minitorch.randn(100, 100)
    minitorch.save({"a": t}, tmp_path / "once.safetensors")
    minitorch.save({"a": t, "b": t, "c": [t.detach()]}, tmp_path / "thrice.safetensors")
    once, thrice = (os.path.getsize(tmp_path / f"{n}.safetensors") for n in ("once", "thrice"))
    assert thrice < once + 200, f"{thrice} bytes for three references, {once} for one"
    out = minitorch.load(tmp_path / "thrice.safetensors")
    assert out["a"] is out["b"] is out["c"][0]
    different_view = _round_trip({"a": t, "row": t[0]})       # a view with its own shape: its own entry
    np.testing.assert_array_equal(different_view["row"].numpy(), t[0].numpy())


def test_requires_grad_is_kept():
    out = _round_trip({"p": minitorch.randn(3, requires_grad=True), "q": minitorch.randn(3)})
    assert out["p"].requires_grad and out["p"].is_leaf and not out["q"].requires_grad


def test_paths_pathlike_and_file_objects(tmp_path):
    t = minitorch.arange(6)
    minitorch.save({"t": t}, str(tmp_path / "a.safetensors"))
    minitorch.save({"t": t}, pathlib.Path(tmp_path / "b.safetensors"))
    with open(tmp_path / "c.safetensors", "wb") as f:
        minitorch.save({"t": t}, f)
    for name in "abc":
        with open(tmp_path / f"{name}.safetensors", "rb") as f:
            assert minitorch.load(f)["t"].tolist() == list(range(6))
        assert minitorch.load(str(tmp_path / f"{name}.safetensors"))["t"].tolist() == list(range(6))


def test_unsupported_objects_raise_naming_where_they_are():
    with pytest.raises(TypeError, match=r"object at key model\.layers\.1"):
        minitorch.save({"model": {"layers": [1, object()]}}, io.BytesIO())
    with pytest.raises(TypeError, match="dict key of type device"):
        minitorch.save({minitorch.device("cpu"): 1}, io.BytesIO())


# ---- map_location ------------------------------------------------------------------------------
def test_map_location_on_cpu():
    t = minitorch.randn(4)
    seen = []
    out = _round_trip({"t": t}, map_location=lambda tensor, location: seen.append(location))
    assert seen == ["cpu"] and out["t"].device == minitorch.device("cpu")
    for where in ("cpu", minitorch.device("cpu"), {"cuda:0": "cpu"}):
        assert _bits(_round_trip({"t": t}, map_location=where)["t"]) == _bits(t)
    replaced = _round_trip({"t": t}, map_location=lambda tensor, location: tensor * 2)["t"]
    np.testing.assert_array_equal(replaced.numpy(), t.numpy() * 2)
    with pytest.raises(TypeError, match="map_location should be"):
        _round_trip({"t": t}, map_location=3.5)


@pytest.mark.cuda
def test_map_location_with_cuda():
    gpu, cpu = minitorch.randn(5, device="cuda"), minitorch.randn(3)
    obj = {"gpu": gpu, "cpu": cpu}
    out = _round_trip(obj)
    assert out["gpu"].device == minitorch.device("cuda:0") and out["cpu"].device == minitorch.device("cpu")
    for where in ("cpu", minitorch.device("cpu"), {"cuda:0": "cpu"}):
        out = _round_trip(obj, map_location=where)
        assert out["gpu"].device == minitorch.device("cpu") and _bits(out["gpu"]) == _bits(gpu)
    out = _round_trip(obj, map_location="cuda")
    assert out["cpu"].device == minitorch.device("cuda:0") and _bits(out["cpu"]) == _bits(cpu)
    seen = []
    out = _round_trip(obj, map_location=lambda tensor, location: seen.append((tensor.device.type, location)))
    assert sorted(seen) == [("cpu", "cpu"), ("cpu", "cuda:0")] and out["gpu"].is_cuda


# ---- PyTorch's files ------------------------------------------------------------------------------
class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(5, 7)
        self.fc2 = torch.nn.Linear(7, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    """TorchNet in minitorch: the same names, so the same state_dict keys."""

    def __init__(self, device=None):
        super().__init__()
        self.fc1 = nn.Linear(5, 7, device=device)
        self.fc2 = nn.Linear(7, 3, device=device)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def test_a_torch_models_safetensors_gives_torchs_outputs(device, tmp_path, rng):
    torch.manual_seed(0)
    reference = TorchNet()
    path = tmp_path / "torch_model.safetensors"
    safetensors.torch.save_file(reference.state_dict(), path)
    x = rng.standard_normal((11, 5)).astype(np.float32)
    expected = reference(torch.from_numpy(x)).detach().numpy()
    for source in (str(path), path, minitorch.load(path)):
        model = Net(device)
        result = model.load_state_dict(source)
        assert result.missing_keys == [] and result.unexpected_keys == []
        out = model(minitorch.tensor(x, device=device)).cpu().numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
        assert model.fc1.weight.device.type == device


def test_a_plain_safetensors_file_loads_as_an_ordered_dict(tmp_path):
    tensors = {"w": torch.randn(3, 2, dtype=torch.bfloat16), "h": torch.randn(4, dtype=torch.float16),
               "i": torch.arange(5), "b": torch.tensor([True, False]), "i32": torch.arange(3, dtype=torch.int32),
               "d": torch.randn(2, dtype=torch.float64), "s": torch.tensor(2.5)}
    safetensors.torch.save_file(tensors, tmp_path / "plain.safetensors")
    out = minitorch.load(tmp_path / "plain.safetensors")
    assert type(out) is OrderedDict and sorted(out) == sorted(tensors)
    for key, t in tensors.items():
        if key == "i32":                          # minitorch has no int32: widened to int64
            assert out[key].dtype == minitorch.int64 and out[key].tolist() == t.tolist()
            continue
        assert str(out[key].dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert tuple(out[key].shape) == tuple(t.shape)
        raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t      # NumPy has no bfloat16
        assert _bits(out[key]) == raw.numpy().tobytes()


def test_a_saved_state_dict_is_an_ordinary_safetensors_file(tmp_path):
    """torch reads what minitorch.save wrote from a state_dict: the same names, the same values."""
    model = Net()
    minitorch.save(model.state_dict(), tmp_path / "m.safetensors")
    loaded = safetensors.torch.load_file(tmp_path / "m.safetensors")
    assert sorted(loaded) == sorted(model.state_dict())
    reference = TorchNet()
    reference.load_state_dict(loaded)
    np.testing.assert_array_equal(reference.fc1.weight.detach().numpy(), model.fc1.weight.numpy())


# ---- Module.load_state_dict ---------------------------------------------------------------------
def test_strict_false_reports_missing_and_unexpected_keys_as_torch():
    source, model = Net(), Net()
    state = source.state_dict()
    del state["fc2.bias"]
    state["extra.weight"] = minitorch.zeros(2)
    t_state = {k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()}
    expected = TorchNet().load_state_dict(t_state, strict=False)
    result = model.load_state_dict(state, strict=False)
    assert result == expected and type(result).__name__ == "_IncompatibleKeys"
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["extra.weight"]
    np.testing.assert_array_equal(model.fc1.weight.numpy(), source.fc1.weight.numpy())
    with pytest.raises(RuntimeError, match=r"fc2\.bias.*extra\.weight"):
        Net().load_state_dict(state)


@pytest.mark.parametrize("strict", [True, False])
def test_a_wrong_shape_raises_naming_the_key_and_both_shapes(strict):
    state = Net().state_dict()
    state["fc1.weight"] = minitorch.zeros(5, 7)
    with pytest.raises(RuntimeError, match=r"fc1\.weight.*\(5, 7\).*\(7, 5\)"):
        Net().load_state_dict(state, strict=strict)


def test_optimizer_state_dict_has_torchs_layout():
    model = Net()
    opt = SGD([{"params": [model.fc1.weight, model.fc1.bias]}, {"params": [model.fc2.weight, model.fc2.bias],
                                                                  "lr": 0.5}], lr=0.1, momentum=0.9)
    model(minitorch.randn(4, 5)).sum().backward()
    opt.step()
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0, 1], [2, 3]]
    assert [g["lr"] for g in state["param_groups"]] == [0.1, 0.5]
    assert sorted(state["state"]) == [0, 1, 2, 3] and set(state["state"][2]) == {"momentum_buffer"}
    with pytest.raises(ValueError, match="different number of parameter groups"):
        SGD(model.parameters(), lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match="doesn't match the size"):
        SGD([{"params": [model.fc1.weight]}, {"params": [model.fc2.weight]}], lr=0.1).load_state_dict(state)


def test_loaded_optimizer_state_is_a_copy():
    model = Net()
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(minitorch.randn(4, 5)).sum().backward()
    opt.step()
    other = SGD(model.parameters(), lr=0.1, momentum=0.9)
    other.load_state_dict(opt.state_dict())
    mine, theirs = opt.state[model.fc1.weight]["momentum_buffer"], other.state[model.fc1.weight]["momentum_buffer"]
    assert mine.data_ptr() != theirs.data_ptr()
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


# ---- broken files ---------------------------------------------------------------------------------
def _checkpoint_bytes():
    buffer = io.BytesIO()
    minitorch.save({"model": Net().state_dict(), "epoch": 3}, buffer)
    return buffer.getvalue()


def test_a_truncated_file_raises_naming_the_file_and_the_problem(tmp_path):
    data = _checkpoint_bytes()
    header_end = 8 + int.from_bytes(data[:8], "little")
    for cut, problem in [(0, "fewer than the 8"), (5, "fewer than the 8"), (8, "announce a header"),
                         (header_end // 2, "announce a header"), (header_end + 3, "truncated: tensor"),
                         (len(data) - 1, "truncated: tensor")]:
        path = tmp_path / f"cut{cut}.safetensors"
        path.write_bytes(data[:cut])
        with pytest.raises(RuntimeError, match=problem) as info:
            minitorch.load(path)
        assert str(path) in str(info.value)
        with pytest.raises(RuntimeError, match=problem):
            Net().load_state_dict(path)


def test_files_that_are_not_safetensors_raise(tmp_path):
    torch_file = tmp_path / "model.pt"
    torch.save(TorchNet().state_dict(), torch_file)
    with pytest.raises(RuntimeError, match=f"{torch_file}: truncated or not a safetensors file"):
        minitorch.load(torch_file)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes((10).to_bytes(8, "little") + b"not json!!" + b"\0" * 16)
    with pytest.raises(RuntimeError, match="header is not JSON"):
        minitorch.load(garbage)
    overlapping = tmp_path / "overlap.safetensors"
    header = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
    overlapping.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 12)
    with pytest.raises(RuntimeError, match="corrupt safetensors file"):
        minitorch.load(overlapping)
    for text, problem in [("not json", "its tree does not parse"), ('{"tree": 1}', "its tree does not parse"),
                          ('{"version": 99, "tree": 1}', "format version 99")]:
        safetensors.numpy.save_file({"a": np.zeros(2)}, tmp_path / "tree.safetensors", metadata={"minitorch": text})
        with pytest.raises(RuntimeError, match=problem):
            minitorch.load(tmp_path / "tree.safetensors")
    float8 = tmp_path / "float8.safetensors"
    safetensors.torch.save_file({"f8": torch.zeros(2, dtype=torch.float8_e4m3fn)}, float8)
    with pytest.raises(RuntimeError, match="tensor 'f8' has dtype F8_E4M3"):
        minitorch.load(float8)


# ---- checkpoints and resuming ---------------------------------------------------------------------
def test_model_optimizer_scheduler_epoch_checkpoint(tmp_path):
    model = Net()
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = StepLR(opt, step_size=2)
    for _ in range(3):
        opt.zero_grad()
        model(minitorch.randn(4, 5)).sum().backward()
        opt.step()
        sched.step()
    minitorch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "epoch": 3}, tmp_path / "ckpt.safetensors")
    ckpt = minitorch.load(tmp_path / "ckpt.safetensors")
    assert ckpt["epoch"] == 3 and type(ckpt["model"]) is OrderedDict
    assert list(ckpt["model"]) == list(model.state_dict())
    assert sorted(ckpt["optimizer"]["state"]) == [0, 1, 2, 3]            # int keys stay ints
    buffer = opt.state[model.fc2.bias]["momentum_buffer"]
    assert _bits(ckpt["optimizer"]["state"][3]["momentum_buffer"]) == _bits(buffer)
    assert ckpt["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]
    assert ckpt["scheduler"] == sched.state_dict()


def _training_setup(device):
    """Model, optimizer, scheduler and a shuffling loader that draws from minitorch's cpu generator."""
    model = Net(device)
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = StepLR(opt, step_size=3, gamma=0.7)
    data = np.random.default_rng(0)
    x = minitorch.tensor(data.standard_normal((40, 5)).astype(np.float32), device=device)
    y = minitorch.tensor(data.standard_normal((40, 3)).astype(np.float32), device=device)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, generator=minitorch.random.cpu_generator())
    return model, opt, sched, loader


def _train(model, opt, sched, loader, epochs, device):
    losses = []
    for _ in range(epochs):
        for xb, yb in loader:          # 5 batches an epoch, in an order drawn from the cpu generator
            noise = minitorch.randn(*xb.shape).to(device) * 0.01     # also from the cpu generator
            loss = nn.MSELoss()(model(xb + noise), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
    return losses


def test_resumed_training_is_bit_identical(device, tmp_path):
    """20 steps in one go against 10 steps, a checkpoint, fresh objects loaded from it, 10 steps."""
    minitorch.manual_seed(0)
    uninterrupted = _train(*_training_setup(device), epochs=4, device=device)

    minitorch.manual_seed(0)
    model, opt, sched, loader = _training_setup(device)
    first = _train(model, opt, sched, loader, epochs=2, device=device)
    minitorch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                    "epoch": 2, "rng": minitorch.get_rng_state()}, tmp_path / "ckpt.safetensors")
    del model, opt, sched, loader

    minitorch.manual_seed(1234)                 # a different start: everything must come from the file
    model, opt, sched, loader = _training_setup(device)
    ckpt = minitorch.load(tmp_path / "ckpt.safetensors")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    sched.load_state_dict(ckpt["scheduler"])
    minitorch.set_rng_state(ckpt["rng"])
    assert ckpt["optimizer"]["state"][0]["momentum_buffer"].device.type == device
    resumed = _train(model, opt, sched, loader, epochs=4 - ckpt["epoch"], device=device)

    assert len(uninterrupted) == 20
    assert first + resumed == uninterrupted, f"{first + resumed}\n!=\n{uninterrupted}"
    assert len(set(uninterrupted)) == 20        # the losses move: the comparison means something


def test_rng_state_repeats_draws_and_shuffles():
    minitorch.manual_seed(7)
    state = minitorch.get_rng_state()
    assert state.dtype == minitorch.int64 and tuple(state.shape) == (6,)
    loader = DataLoader(TensorDataset(minitorch.arange(10)), batch_size=10, shuffle=True,
                        generator=minitorch.random.cpu_generator())
    draws, order = minitorch.randn(5).numpy().copy(), next(iter(loader))[0].tolist()
    minitorch.set_rng_state(_round_trip(state))
    np.testing.assert_array_equal(minitorch.randn(5).numpy(), draws)
    assert next(iter(loader))[0].tolist() == order
    with pytest.raises(RuntimeError, match="int64 tensor of shape"):
        minitorch.set_rng_state(minitorch.zeros(6))
