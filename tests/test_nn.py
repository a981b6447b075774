"""Phase 03: modules, parameters, state_dict, Linear, losses, SGD, and XOR training."""
import numpy as np
import pytest
import torch

import minitorch as mt
from minitorch import nn


class XorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 4)
        self.act = nn.Sigmoid()
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_module_tree_order_and_state_dict_round_trip():
    model = XorNet()
    assert [n for n, _ in model.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [type(m).__name__ for m in model.modules()] == ["XorNet", "Linear", "Sigmoid", "Linear"]
    assert model.fc1.weight.shape == (4, 2) and model.fc1.bias.shape == (4,)
    other = XorNet()
    other.load_state_dict(model.state_dict())
    x = mt.randn(5, 2)
    assert np.array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    other.fc1.weight._data += 1                       # a loaded model owns copies, not views
    assert not np.array_equal(other.fc1.weight.numpy(), model.fc1.weight.numpy())
    with pytest.raises(RuntimeError, match="missing keys"):
        other.load_state_dict({"fc1.weight": model.fc1.weight})
    bad = model.state_dict()
    bad["fc2.bias"] = mt.zeros(3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc2.bias.*\(3,\).*\(1,\)"):
        other.load_state_dict(bad)


def test_linear_init_range_and_forward_vs_torch(device, rng):
    layer = nn.Linear(50, 7, device=device)
    bound = 1 / np.sqrt(50)
    w = layer.weight.cpu().numpy()
    assert np.abs(w).max() <= bound and w.std() > bound / 3
    x = rng.standard_normal((9, 50)).astype(np.float32)
    ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(layer.bias.cpu().numpy()))
    np.testing.assert_allclose(layer(mt.tensor(x, device=device)).detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"input shape \(9, 3\).*weight shape \(7, 50\)"):
        layer(mt.ones(9, 3, device=device))


def test_forward_by_hand_matches_paper_value():
    """Linear(2,3) -> Sigmoid -> Linear(3,1) on [[1,2],[3,4]] with weights set by hand."""
    l1, l2 = nn.Linear(2, 3), nn.Linear(3, 1)
    l1.weight._data = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], np.float32)
    l1.bias._data = np.array([0.1, 0.2, 0.3], np.float32)
    l2.weight._data = np.array([[0.7, 0.8, 0.9]], np.float32)
    l2.bias._data = np.array([0.1], np.float32)
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    h = 1 / (1 + np.exp(-(x @ np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]).T + [0.1, 0.2, 0.3])))
    expected = h @ np.array([0.7, 0.8, 0.9]) + 0.1
    out = l2(nn.Sigmoid()(l1(mt.tensor(x, dtype=mt.float32))))
    np.testing.assert_allclose(out.detach().numpy()[:, 0], expected, rtol=1e-6)


@pytest.mark.parametrize("options", [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True),
                                     dict(momentum=0.5, dampening=0.3, weight_decay=0.01), dict(maximize=True, weight_decay=0.1)])
def test_sgd_matches_torch(device, rng, options):
    w0 = rng.standard_normal((3, 4))
    ours = mt.tensor(w0, device=device, requires_grad=True)
    theirs = torch.tensor(w0, dtype=torch.float32, requires_grad=True)
    opt, topt = mt.optim.SGD([ours], lr=0.1, **options), torch.optim.SGD([theirs], lr=0.1, **options)
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        ((ours * ours).sum() * 0.5 + ours.sum()).backward()
        ((theirs * theirs).sum() * 0.5 + theirs.sum()).backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_mse_loss_reductions_and_shape_error(device):
    a, b = mt.tensor([1.0, 2.0, 4.0], device=device), mt.tensor([1.0, 0.0, 1.0], device=device)
    assert nn.MSELoss()(a, b).item() == pytest.approx(13 / 3)
    assert nn.MSELoss(reduction="sum")(a, b).item() == 13.0
    assert nn.MSELoss(reduction="none")(a, b).tolist() == [0.0, 4.0, 9.0]
    with pytest.raises(ValueError, match=r"\(3,\) and target shape \(3, 1\)"):
        nn.MSELoss()(a, b.reshape(3, 1))


def test_module_to_device_keeps_parameter_identity(device):
    model = XorNet()
    params = list(model.parameters())
    model.to(device)
    assert all(p is q for p, q in zip(params, model.parameters()))
    assert all(p.device == mt.device(device) for p in model.parameters())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_xor_converges(device, seed):
    mt.manual_seed(seed)
    model = XorNet().to(device)
    x = mt.tensor([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=mt.float32, device=device)
    y = mt.tensor([[0.0], [1.0], [1.0], [0.0]], device=device)
    opt, loss_fn = mt.optim.SGD(model.parameters(), lr=0.5, momentum=0.9), nn.MSELoss()
    for _ in range(2000):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.01


def _zero_grad_all_ways(device):
    """zero_grad(set_to_none=False) on gradients that are expanded views (sum's backward hands one
    back: stride 0), compact tensors, and tensors carrying a graph (create_graph=True)."""
    model = nn.Linear(3, 2).to(device)
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    model.weight.sum().backward()                   # weight.grad: ones expanded to (2, 3)
    assert model.weight.grad.stride() == (0, 0)
    tweight = torch.zeros(2, 3, requires_grad=True)
    tweight.sum().backward()
    for zero in (opt.zero_grad, model.zero_grad):
        zero(set_to_none=False)
        tweight.grad.zero_()
        g = model.weight.grad
        assert g.shape == (2, 3) and g.device == mt.device(device) and not g.requires_grad
        np.testing.assert_array_equal(g.cpu().numpy(), tweight.grad.numpy())
        model.weight.sum().backward()               # accumulates onto the zeros
        tweight.sum().backward()
        np.testing.assert_array_equal(model.weight.grad.cpu().numpy(), tweight.grad.numpy())
    (model.bias * 3.0).sum().backward()
    kept = model.bias.grad
    opt.zero_grad(set_to_none=False)
    assert model.bias.grad is kept and kept.tolist() == [0.0, 0.0]  # a compact grad: zeroed in place
    x = mt.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    nn.parameter.zero_grads([x], set_to_none=False)
    assert x.grad.tolist() == [0.0, 0.0] and not x.grad.requires_grad and x.grad.grad_fn is None
    opt.zero_grad()                                 # the default: None
    assert model.weight.grad is None and model.bias.grad is None


def test_zero_grad_without_set_to_none_handles_expanded_gradients():
    _zero_grad_all_ways("cpu")


@pytest.mark.cuda
def test_zero_grad_without_set_to_none_handles_expanded_gradients_on_the_gpu():
    _zero_grad_all_ways("cuda")
