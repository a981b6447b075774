"""Grading tests of phase 06 (cnn, part 1): softmax and log-softmax with the max trick, their
backward, the cross-entropy backward, and the softmax kernel.

Run by ``minitorch-course check 06`` against a workspace, and by pytest against the repository.
The cpu backend's functions are called on NumPy arrays, PyTorch (cpu) is the reference.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close  # noqa: E402

from minitorch.utils.exercises import exercise  # noqa: E402


def _logits(rng, rows=6, n=10, dtype=np.float32):
    x = (rng.standard_normal((rows, n)) * 4).astype(dtype)
    x[0] += 1000                                # exp(1000) overflows: only the max trick survives
    return x


@exercise("06.1")
def test_softmax_with_the_max_trick():
    from minitorch.native import cpu
    rng = np.random.default_rng(61)
    for dtype in (np.float32, np.float64):
        x = _logits(rng, dtype=dtype)
        y = cpu.softmax(x)
        assert y.dtype == dtype, f"softmax of {np.dtype(dtype)} should keep the dtype, got {y.dtype}"
        close(y, torch.softmax(torch.tensor(x), dim=1).numpy(), f"softmax of {np.dtype(dtype)} logits (row 0 near 1000)")
    close(cpu.softmax(np.array([[-np.inf, 0.0, -np.inf]])), [[0.0, 1.0, 0.0]], "softmax of a row with -inf")


@exercise("06.2")
def test_log_softmax():
    from minitorch.native import cpu
    rng = np.random.default_rng(62)
    x = _logits(rng)
    close(cpu.log_softmax(x), torch.log_softmax(torch.tensor(x), dim=1).numpy(), "log_softmax (row 0 near 1000)",
          rtol=1e-5, atol=1e-4)
    close(cpu.log_softmax(np.array([[0.0, -200.0]], np.float32)), [[0.0, -200.0]],
          "log_softmax([0, -200]): softmax underflows to 0 there, its log must not be -inf")


@exercise("06.4")
def test_softmax_backward():
    from minitorch.native import cpu
    rng = np.random.default_rng(63)
    x, g = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    tx = torch.tensor(x, requires_grad=True)
    y = torch.softmax(tx, dim=1)
    y.backward(torch.tensor(g))
    close(cpu.softmax_backward(y.detach().numpy(), g), tx.grad.numpy(), "softmax_backward(y, grad)")


@exercise("06.5")
def test_cross_entropy_backward():
    from minitorch.native import cpu
    rng = np.random.default_rng(64)
    x = rng.standard_normal((8, 10))
    t = rng.integers(0, 10, 8)
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    for reduction, grad in (("mean", np.array(1.0)), ("sum", np.array(0.5)), ("none", rng.standard_normal(8))):
        tx = torch.tensor(x, requires_grad=True)
        torch.nn.functional.cross_entropy(tx, torch.tensor(t), reduction=reduction).backward(torch.tensor(grad))
        scale = 1 / 8 if reduction == "mean" else 1.0
        close(cpu.cross_entropy_backward(x, t, lse, grad, scale), tx.grad.numpy(),
              f"cross_entropy_backward for reduction={reduction!r}")
    bad = cpu.cross_entropy_backward(x[:2], np.array([3, 10]), lse[:2], np.array(1.0))
    assert np.isnan(bad[1]).all() and not np.isnan(bad[0]).any(), \
        "a target outside [0, n) gives a NaN gradient row (and only that row)"


@exercise("06.3", cuda=True)
def test_softmax_kernel_rows_up_to_1024():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(65)
    for rows, n in [(1, 1), (5, 10), (64, 10), (33, 100), (7, 513), (1000, 1024), (3, 17)]:
        x = _logits(rng, rows, n)
        want = torch.softmax(torch.tensor(x), dim=1).numpy()
        close(array.to_numpy(backend.softmax(array.from_numpy(x, 0))), want, f"softmax kernel on [{rows}, {n}]")
        want = torch.log_softmax(torch.tensor(x), dim=1).numpy()
        close(array.to_numpy(backend.log_softmax(array.from_numpy(x, 0))), want, f"log_softmax kernel on [{rows}, {n}]",
              atol=1e-4)


# ---- convolution (06.6 - 06.7) -------------------------------------------------------------------
def _conv_case(rng, dtype=np.float64):
    x = rng.standard_normal((2, 3, 7, 6)).astype(dtype)
    w = rng.standard_normal((4, 3, 3, 2)).astype(dtype)
    return x, w


@exercise("06.6")
def test_im2col_with_stride_tricks():
    from minitorch.native import cpu
    rng = np.random.default_rng(66)
    x, _ = _conv_case(rng)
    for stride, pad, dil in (((1, 1), (0, 0), (1, 1)), ((2, 1), (1, 2), (1, 1)), ((1, 2), (1, 1), (2, 1))):
        cols = cpu.im2col(x, (3, 2), stride, ((pad[0], pad[0]), (pad[1], pad[1])), dil)
        want = torch.nn.functional.unfold(torch.tensor(x), (3, 2), dilation=dil, padding=pad, stride=stride).numpy()
        assert cols.shape == want.shape, \
            f"im2col with stride {stride}, padding {pad}, dilation {dil} should give shape {want.shape}, got {cols.shape}"
        close(cols, want, f"im2col with stride {stride}, padding {pad}, dilation {dil} (torch's unfold)")
    cols = cpu.im2col(x, (3, 3), (1, 1), ((1, 0), (0, 2)), (1, 1))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2)))
    want = torch.nn.functional.unfold(torch.tensor(padded), (3, 3)).numpy()
    close(cols, want, "im2col with uneven padding ((1, 0), (0, 2)): pad top 1, bottom 0, left 0, right 2")


@exercise("06.7", cuda=True)
def test_direct_conv_kernel():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    from minitorch.native.cuda import conv
    rng = np.random.default_rng(67)
    cases = [((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), ((1, 1), (0, 0)), (1, 1), 1),
             ((1, 4, 13, 9), (6, 2, 3, 3), (2, 1), ((1, 1), (2, 2)), (2, 1), 2),
             ((3, 1, 28, 28), (8, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)]
    for x_shape, w_shape, stride, pad, dil, groups in cases:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        b = rng.standard_normal(w_shape[0]).astype(np.float32)
        want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride,
                                          (pad[0][0], pad[1][0]), dil, groups).numpy()
        with conv.use_rung("01_direct"):
            y = backend.conv2d(array.from_numpy(x, 0), array.from_numpy(w, 0), array.from_numpy(b, 0),
                               stride, pad, dil, groups)
        close(array.to_numpy(y), want, f"the direct conv kernel on x {x_shape}, weight {w_shape}, stride {stride}, "
              f"padding {pad}, dilation {dil}, groups {groups}", rtol=1e-4, atol=1e-4)


@exercise("06.8")
def test_max_pool_backward_through_the_saved_indices():
    from minitorch.native import cpu
    rng = np.random.default_rng(68)
    #         input shape    kernel   stride   padding  dilation
    for shape, k, s, p, d in [((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), (1, 1)),
                              ((1, 2, 6, 5), (3, 2), (1, 1), (0, 0), (1, 1)),     # overlapping windows
                              ((2, 1, 9, 8), (2, 2), (2, 2), (0, 0), (2, 2))]:
        x = rng.integers(0, 4, size=shape).astype(np.float64)                    # ties: the first max is saved
        t = torch.tensor(x, requires_grad=True)
        y, idx = torch.nn.functional.max_pool2d(t, k, s, p, d, return_indices=True)
        g = rng.standard_normal(tuple(y.shape))
        y.backward(torch.tensor(g))
        dx = cpu.max_pool2d_backward(g, idx.numpy(), shape[-2:], k, s, p, d)
        close(dx, t.grad.numpy(), f"max pool backward of a {shape} input, kernel {k}, stride {s} "
              "(where windows overlap, every output that chose an element adds its gradient there)")


@exercise("06.9")
def test_welford_merge_of_two_partial_statistics():
    from minitorch.native import cpu
    rng = np.random.default_rng(69)
    a, b = rng.standard_normal((5, 3)) + 100, rng.standard_normal((2, 3)) * 3 - 1
    part = lambda v: (np.full(3, float(len(v))), v.mean(axis=0), ((v - v.mean(axis=0)) ** 2).sum(axis=0))  # noqa: E731
    n, mean, m2 = cpu.welford_merge(part(a), part(b))
    both = np.concatenate([a, b])
    close(n, np.full(3, 7.0), "the merged count is the sum of the counts")
    close(mean, both.mean(axis=0), "the merged mean is the mean of all 7 values", atol=1e-9)
    close(m2, ((both - both.mean(axis=0)) ** 2).sum(axis=0), "the merged M2 is the sum of squared deviations "
          "from the merged mean", atol=1e-9)
    empty = (np.zeros(3), np.zeros(3), np.zeros(3))
    for got, what in ((cpu.welford_merge(part(a), empty), "merging an empty part"),
                      (cpu.welford_merge(empty, part(a)), "merging into an empty part")):
        assert all(np.isfinite(v).all() for v in got), f"{what} must not divide by zero"
        close(got[1], a.mean(axis=0), f"{what} keeps the other part's mean", atol=1e-9)
        close(got[2], part(a)[2], f"{what} keeps the other part's M2", atol=1e-9)
    both_empty = cpu.welford_merge(empty, empty)
    assert all(np.isfinite(v).all() for v in both_empty), "merging two empty parts gives count 0, not NaN"
