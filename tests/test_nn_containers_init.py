"""Phase 05: containers (Sequential, ModuleList, ModuleDict, Identity), module tree helpers
(apply, register_buffer, add_module), PyTorch's model repr, and ``nn.init`` against torch."""
import math
from collections import OrderedDict

import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch import nn


def _pair_of_models():
    ours = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.Flatten(), nn.Identity(),
                         nn.Linear(4, 2, bias=False))
    theirs = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Sigmoid(), torch.nn.Tanh(),
                                 torch.nn.Flatten(), torch.nn.Identity(), torch.nn.Linear(4, 2, bias=False))
    return ours, theirs


def _names(seq):
    return [type(m).__name__ for m in seq]


def test_repr_and_state_dict_keys_equal_torchs():
    ours, theirs = _pair_of_models()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    nested_ours = nn.Sequential(OrderedDict(body=ours, head=nn.ModuleList([nn.ReLU(), nn.Linear(2, 3)])))
    nested_theirs = torch.nn.Sequential(OrderedDict(body=theirs, head=torch.nn.ModuleList([torch.nn.ReLU(),
                                                                                           torch.nn.Linear(2, 3)])))
    assert repr(nested_ours) == repr(nested_theirs)
    assert list(nested_ours.state_dict()) == list(nested_theirs.state_dict())
    assert [n for n, _ in nested_ours.named_modules()] == [n for n, _ in nested_theirs.named_modules()]
    assert [n for n, _ in nested_ours.named_parameters()] == [n for n, _ in nested_theirs.named_parameters()]
    d_ours = nn.ModuleDict({"enc": nn.Linear(3, 3), "act": nn.Tanh()})
    d_theirs = torch.nn.ModuleDict({"enc": torch.nn.Linear(3, 3), "act": torch.nn.Tanh()})
    assert repr(d_ours) == repr(d_theirs) and list(d_ours.state_dict()) == list(d_theirs.state_dict())
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential()) == "Sequential()"


def test_sequential_indexing_slicing_and_editing_like_torch():
    ours, theirs = _pair_of_models()
    assert len(ours) == len(theirs) == 7
    for i in range(-7, 7):
        assert type(ours[i]).__name__ == type(theirs[i]).__name__, f"index {i}"
    for sl in [slice(1, 4), slice(None, None, 2), slice(-3, None), slice(5, 2), slice(None, None, -1)]:
        a, b = ours[sl], theirs[sl]
        assert isinstance(a, nn.Sequential) and _names(a) == _names(b), f"slice {sl}"
        assert list(a._modules) == list(b._modules), f"slice {sl} keeps the children's names"
    assert ours[1:3][0] is ours[1]                       # a slice holds the same module objects
    for idx in (7, -8):
        with pytest.raises(IndexError):
            theirs[idx]
        with pytest.raises(IndexError, match=f"index {idx} is out of range"):
            ours[idx]
    ours.append(nn.ReLU()).insert(0, nn.Tanh()).insert(-1, nn.Sigmoid())
    theirs.append(torch.nn.ReLU()).insert(0, torch.nn.Tanh()).insert(-1, torch.nn.Sigmoid())
    ours.extend([nn.Identity()])
    theirs.extend([torch.nn.Identity()])
    del ours[2]
    del theirs[2]
    ours[0] = nn.ReLU()
    theirs[0] = torch.nn.ReLU()
    assert repr(ours) == repr(theirs)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        ours.append(lambda x: x)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        nn.Sequential(nn.ReLU(), 3)


def test_sequential_forward_equals_torch(device, rng):
    ours, theirs = _pair_of_models()
    theirs.load_state_dict({k: torch.tensor(v.cpu().numpy()) for k, v in ours.state_dict().items()})
    ours.to(device)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    got = ours(mt.tensor(x, device=device)).detach().cpu().numpy()
    np.testing.assert_allclose(got, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    t = mt.tensor(x)
    assert nn.Identity()(t) is t and nn.Identity(3, unused=True)(t) is t     # arguments ignored, as in torch


def test_module_list_and_dict_like_torch():
    ours, theirs = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()]), torch.nn.ModuleList([torch.nn.Linear(2, 2),
                                                                                      torch.nn.ReLU()])
    ours += [nn.Tanh()]
    theirs += [torch.nn.Tanh()]
    ours.append(nn.Sigmoid()).insert(1, nn.Identity())
    theirs.append(torch.nn.Sigmoid()).insert(1, torch.nn.Identity())
    assert _names(ours) == _names(theirs) and len(ours) == len(theirs) == 5
    assert isinstance(ours[1:3], nn.ModuleList) and _names(ours[1:3]) == _names(theirs[1:3])
    assert type(ours[-1]).__name__ == "Sigmoid"
    del ours[0]
    del theirs[0]
    assert list(ours._modules) == list(theirs._modules) == ["0", "1", "2", "3"]
    assert repr(ours) == repr(theirs)
    with pytest.raises(NotImplementedError):
        ours(mt.ones(1))
    with pytest.raises(IndexError, match="index -5 is out of range"):
        ours[-5]
    d = nn.ModuleDict([("a", nn.Linear(2, 3)), ("b", nn.ReLU())])
    d["c"] = nn.Linear(3, 1)
    assert list(d) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [k for k, _ in d.items()] == list(d.keys()) and d.pop("b").__class__ is nn.ReLU
    assert list(d.state_dict()) == ["a.weight", "a.bias", "c.weight", "c.bias"]
    with pytest.raises(KeyError):
        d["missing"]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        d["x"] = "not a module"


def test_apply_children_and_named_modules_order_like_torch():
    ours, theirs = _pair_of_models()
    seen_ours, seen_theirs = [], []
    assert ours.apply(lambda m: seen_ours.append(type(m).__name__)) is ours
    theirs.apply(lambda m: seen_theirs.append(type(m).__name__))
    assert seen_ours == seen_theirs                     # children first, the parent last
    assert _names(ours.children()) == _names(theirs.children())

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.ones_(m.weight)
    ours.apply(init)
    assert all(np.all(m.weight.numpy() == 1) for m in ours if isinstance(m, nn.Linear))


class _WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.register_buffer("running", mt.zeros(2))
        self.register_buffer("mask", mt.ones(2), persistent=False)
        self.register_buffer("empty", None)


def test_register_buffer_state_dict_and_to(device):
    m = _WithBuffers()
    assert list(m.state_dict()) == ["running", "fc.weight", "fc.bias"]    # PyTorch's order; mask is not persistent
    assert [n for n, _ in m.named_buffers()] == ["running", "mask", "empty"]
    m.running = mt.full((2,), 3.0)                      # assigning to a buffer's name updates the buffer
    assert "running" in m._buffers and m.state_dict()["running"].tolist() == [3.0, 3.0]
    other = _WithBuffers()
    other.load_state_dict(m.state_dict())               # strict: mask is neither expected nor missing
    assert other.running.tolist() == [3.0, 3.0]
    m.to(device)
    assert m.running.device.type == device and m.mask.device.type == device
    assert [b.shape for b in m.buffers()] == [(2,), (2,)]
    del m.mask
    assert [n for n, _ in m.named_buffers()] == ["running", "empty"] and not hasattr(m, "mask")
    del m.fc
    assert list(m.state_dict()) == ["running"]
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'x'"):
        m.register_buffer("x", 3)
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("training", mt.zeros(1))
    with pytest.raises(KeyError):
        m.register_buffer("a.b", mt.zeros(1))


# ---- nn.init ---------------------------------------------------------------------------------------

SHAPES = [(5, 3), (16, 8, 3, 3), (7, 2, 5), (3, 1, 2, 2, 2), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_equal_torchs(shape):
    got = nn.init._calculate_fan_in_and_fan_out(mt.empty(*shape))
    assert got == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_based_init_needs_two_dims_and_a_valid_mode():
    for fn in (nn.init.xavier_uniform_, nn.init.xavier_normal_, nn.init.kaiming_uniform_, nn.init.kaiming_normal_):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            fn(mt.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_uniform_(mt.empty(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="zero-element"):
        nn.init.kaiming_uniform_(mt.empty(0, 3))


@pytest.mark.parametrize("name, param", [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
                                         ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None),
                                         ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                                         ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_equals_torchs(name, param):
    assert nn.init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param), rel=1e-15)


def test_calculate_gain_errors_like_torch():
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        nn.init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        nn.init.calculate_gain("leaky_relu", True)


def _stats(t):
    a = t.detach().cpu().numpy().astype(np.float64)
    return a.mean(), a.std(), a.min(), a.max()


# (name, call, expected std, uniform bound or None): the exact formulas, with torch's fan and gain
FAN_IN, FAN_OUT = 64 * 3 * 3, 256 * 3 * 3          # for a [256, 64, 3, 3] conv weight
CASES = [
    ("uniform_", lambda t: nn.init.uniform_(t, -2.0, 1.0), 3 / math.sqrt(12), (-2.0, 1.0), -0.5),
    ("normal_", lambda t: nn.init.normal_(t, 0.5, 2.0), 2.0, None, 0.5),
    ("xavier_uniform_", lambda t: nn.init.xavier_uniform_(t, gain=2.0),
     2.0 * math.sqrt(2 / (FAN_IN + FAN_OUT)), 2.0 * math.sqrt(6 / (FAN_IN + FAN_OUT)), 0.0),
    ("xavier_normal_", lambda t: nn.init.xavier_normal_(t), math.sqrt(2 / (FAN_IN + FAN_OUT)), None, 0.0),
    ("kaiming_uniform_", lambda t: nn.init.kaiming_uniform_(t, a=0.1),
     torch.nn.init.calculate_gain("leaky_relu", 0.1) / math.sqrt(FAN_IN),
     torch.nn.init.calculate_gain("leaky_relu", 0.1) * math.sqrt(3 / FAN_IN), 0.0),
    ("kaiming_normal_", lambda t: nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
     math.sqrt(2 / FAN_OUT), None, 0.0),
]


@pytest.mark.parametrize("name, fill, std, bounds, mean", CASES, ids=[c[0] for c in CASES])
def test_init_statistics_of_large_draws(device, name, fill, std, bounds, mean):
    """147456 draws: the sample mean is within 5 standard errors of the expected mean, the sample
    std within 2%, and uniform draws stay inside their bounds and reach close to both ends."""
    t = mt.empty(256, 64, 3, 3, device=device)
    assert fill(t) is t
    got_mean, got_std, lo, hi = _stats(t)
    n = t.numel()
    assert abs(got_mean - mean) < 5 * std / math.sqrt(n), f"{name}: mean {got_mean}"
    assert abs(got_std / std - 1) < 0.02, f"{name}: std {got_std}, expected {std}"
    if bounds is not None:
        a, b = bounds if isinstance(bounds, tuple) else (-bounds, bounds)
        width = b - a
        assert a <= lo and hi <= b, f"{name}: values [{lo}, {hi}] outside [{a}, {b}]"
        assert lo < a + 1e-3 * width and hi > b - 1e-3 * width, f"{name}: never reaches the ends"


def test_constant_zeros_ones_and_in_place_writes(device):
    base = mt.full((4, 6), 7.0, device=device)
    view = base[:, 1:4]                                  # a non-contiguous view of base's memory
    nn.init.constant_(view, 2.5)
    assert base.cpu().numpy()[:, 1:4].tolist() == [[2.5] * 3] * 4 and base.cpu().numpy()[:, 0].tolist() == [7.0] * 4
    nn.init.zeros_(view)
    assert not base.cpu().numpy()[:, 1:4].any()
    nn.init.ones_(base)
    assert (base.cpu().numpy() == 1).all()
    before = view._version
    nn.init.normal_(view)
    assert view._version == before + 1, "an init is one in-place write: the version counter moves on"
    assert (base.cpu().numpy()[:, 0] == 1).all() and (base.cpu().numpy()[:, 1:4] != 1).all()


def test_init_of_a_parameter_keeps_it_a_leaf_and_its_memory(device):
    layer = nn.Linear(30, 20, device=device)
    opt = mt.optim.SGD(layer.parameters(), lr=0.1)
    ptr = layer.weight.data_ptr()
    nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
    nn.init.zeros_(layer.bias)
    assert layer.weight.data_ptr() == ptr, "init writes into the parameter's memory"
    assert layer.weight.is_leaf and layer.weight.requires_grad and layer.weight.grad_fn is None
    assert opt.param_groups[0]["params"][0] is layer.weight
    assert not layer.bias.cpu().numpy().any()


def test_manual_seed_makes_init_reproducible(device):
    def draw(seed, fn):
        mt.manual_seed(seed)
        return fn(mt.empty(33, 17, device=device)).cpu().numpy()
    for fn in (nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_, nn.init.kaiming_normal_):
        a, b, c = draw(5, fn), draw(5, fn), draw(6, fn)
        assert np.array_equal(a, b), f"{fn.__name__}: the same seed gives the same tensor"
        assert not np.array_equal(a, c), f"{fn.__name__}: another seed gives another tensor"
    mt.manual_seed(11)
    m1 = nn.Sequential(nn.Linear(5, 4, device=device), nn.Linear(4, 3, device=device))
    mt.manual_seed(11)
    m2 = nn.Sequential(nn.Linear(5, 4, device=device), nn.Linear(4, 3, device=device))
    for (k, v1), v2 in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert np.array_equal(v1.cpu().numpy(), v2.cpu().numpy()), k


def test_init_of_empty_tensors_and_half_dtypes(device):
    assert nn.Linear(0, 3, device=device).weight.shape == (3, 0)           # a zero-element weight is left alone
    assert nn.Linear(3, 0, device=device).bias.shape == (0,)
    for fn in (nn.init.uniform_, nn.init.normal_, nn.init.zeros_, nn.init.xavier_uniform_):
        assert fn(mt.empty(0, 4, device=device)).shape == (0, 4)
    for dtype in (mt.float16, mt.bfloat16):
        t = nn.init.kaiming_uniform_(mt.empty(64, 32, dtype=dtype, device=device), nonlinearity="relu")
        values = t.float().cpu().numpy()
        bound = math.sqrt(6 / 32)
        assert t.dtype is dtype and np.abs(values).max() <= bound * (1 + 2 ** -6) and values.std() > bound / 3


@pytest.mark.parametrize("shape", [(20, 7), (8, 3, 5, 5), (6, 4, 3)])
@pytest.mark.parametrize("a, mode, nonlinearity", [(0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"),
                                                   (0.2, "fan_out", "leaky_relu"), (0, "FAN_OUT", "relu"),
                                                   (0, "fan_in", "tanh"), (0, "fan_in", "selu")])
def test_kaiming_and_xavier_parameters_equal_torchs_formulas(monkeypatch, shape, a, mode, nonlinearity):
    """The (low, high) or (mean, std) each initialiser hands to uniform_/normal_, against the same
    quantities from torch's own fan and gain helpers."""
    calls = []
    monkeypatch.setattr(nn.init, "uniform_", lambda t, lo, hi: calls.append((lo, hi)))
    monkeypatch.setattr(nn.init, "normal_", lambda t, mean, std: calls.append((mean, std)))
    t, tt = mt.empty(*shape), torch.empty(*shape)
    fan = torch.nn.init._calculate_correct_fan(tt, mode.lower())
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(tt)
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    xavier_std = 1.5 * math.sqrt(2.0 / (fan_in + fan_out))
    nn.init.kaiming_uniform_(t, a=a, mode=mode, nonlinearity=nonlinearity)
    nn.init.kaiming_normal_(t, a=a, mode=mode, nonlinearity=nonlinearity)
    nn.init.xavier_uniform_(t, gain=1.5)
    nn.init.xavier_normal_(t, gain=1.5)
    want = [(-math.sqrt(3) * std, math.sqrt(3) * std), (0.0, std),
            (-math.sqrt(3) * xavier_std, math.sqrt(3) * xavier_std), (0.0, xavier_std)]
    np.testing.assert_allclose(np.array(calls, dtype=float), np.array(want), rtol=1e-14, atol=0)


def test_to_dtype_converts_floating_buffers_only():
    """PyTorch's Module.to(dtype): parameters and floating buffers change dtype, an integer buffer
    (a step counter such as BatchNorm's num_batches_tracked) stays an integer."""
    module = nn.Module()
    module.register_buffer("mean", mt.zeros(3))
    module.register_buffer("count", mt.tensor(5))
    module.to(dtype=mt.float64)
    assert module.mean.dtype is mt.float64, f"a float buffer should become float64, got {module.mean.dtype}"
    assert module.count.dtype is mt.int64, f"an int64 buffer should stay int64, got {module.count.dtype}"
