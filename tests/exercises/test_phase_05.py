"""Grading tests of phase 05 (speed). Part 1, GEMM: the caching allocator's block split (05.1,
graded on a fake GPU: every cuda tensor of the phase needs it), reading BLAS layout letters off
strides, the shared-memory tiled K loop (rung 03), the register tile's outer product (rung 05), the
dispatch size class, half precision computed in float32, and the fused Linear's backward. Part 2:
nn.init's fans (05.8), Adam's update on the cpu (05.9) and in the fused kernel (05.10).

Run by ``minitorch-course check 05`` against a workspace, and by pytest against the repository.
``layout_of`` and ``shape_class`` live in a module that needs a GPU to import, so they are compiled
alone (``support.function_from``); the kernels run through ``gemm(a, b, rung=...)`` against a
float64 NumPy product; the Linear's backward is called on the node its forward recorded, with
PyTorch (cpu) as the reference.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import close, function_from  # noqa: E402

import minitorch as mt  # noqa: E402
from minitorch.utils.exercises import exercise  # noqa: E402


@exercise("05.2")
def test_layout_of_reads_blas_letters_off_strides():
    layout_of = function_from("native/cuda/gemm.py", "layout_of")
    f4, f8, f2 = 4, 8, 2                            # itemsizes: byte strides below are elements * these
    cases = [
        # (shape, strides in elements, itemsize, expected, what)
        ((5, 7), (7, 1), f4, ("n", 7), "a contiguous [5, 7] float32 matrix"),
        ((5, 7), (10, 1), f4, ("n", 10), "the rows [:, :7] of a [5, 10] matrix (padded rows)"),
        ((5, 7), (1, 5), f4, ("t", 5), "W.T of a contiguous [7, 5] W"),
        ((5, 7), (1, 8), f4, ("t", 8), "the .T view of the columns [:, :5] of a [7, 8] matrix"),
        ((3, 4), (4, 1), f8, ("n", 4), "a contiguous [3, 4] float64 matrix"),
        ((3, 4), (8, 1), f2, ("n", 8), "a [3, 4] half view with rows 8 elements apart"),
        ((1, 7), (7, 1), f4, ("n", 7), "a single contiguous row"),
        ((1, 7), (0, 1), f4, ("n", 7), "a single row whose row stride is 0 (never followed)"),
        ((1, 7), (7, 2), f4, ("t", 2), "a single row reading every other element (columns 2 apart)"),
        ((5, 1), (1, 1), f4, ("n", 1), "a [5] vector as a column (b.as_strided(shape + (1,)))"),
        ((5, 1), (7, 1), f4, ("n", 7), "the column [:, 2:3] of a [5, 7] matrix"),
        ((1, 1), (1, 1), f4, ("n", 1), "a 1 x 1 matrix"),
    ]
    for shape, strides, isz, want, what in cases:
        got = layout_of(shape, tuple(s * isz for s in strides), isz)
        assert got == want, (f"layout_of for {what} (shape {shape}, element strides {strides}) should be {want}, "
                             f"got {got!r}")
    for shape, strides, what in [((4, 7), (0, 1), "an expanded [7] -> [4, 7] (rows overlap: row stride 0)"),
                                 ((4, 7), (2, 1), "rows 2 elements apart but 7 long (they overlap)"),
                                 ((4, 7), (14, 2), "a view with no unit stride (every other column)"),
                                 ((4, 7), (-7, 1), "a view with a negative row stride (x[::-1])")]:
        got = layout_of(shape, tuple(s * f4 for s in strides), f4)
        assert got is None, f"layout_of for {what} should be None (the caller copies it first), got {got!r}"


@exercise("05.5")
def test_shape_class_by_elements_of_c():
    shape_class = function_from("native/cuda/gemm.py", "shape_class", {"SMALL": 2 ** 18, "MEDIUM": 2 ** 22})
    for (m, n, k, batch), want in [((512, 512, 512, 1), "small"), ((513, 512, 64, 1), "medium"),
                                   ((1, 1, 10 ** 9, 1), "small"), ((64, 64, 8, 64), "small"),
                                   ((64, 64, 8, 65), "medium"), ((2048, 2048, 2048, 1), "medium"),
                                   ((2049, 2048, 16, 1), "large"), ((1024, 1024, 4, 5), "large"),
                                   ((64, 784, 128, 1), "small"), ((1025, 4096, 1024, 1), "large")]:
        got = shape_class(m, n, k, batch)
        assert got == want, (f"shape_class({m}, {n}, {k}, batch={batch}) should be {want!r} "
                             f"(C has {m * n * batch} elements), got {got!r}")


@exercise("05.6")
def test_half_precision_is_computed_in_float32_and_rounded_once():
    import ml_dtypes
    from minitorch.native import cpu
    bf16, f16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
    rng = np.random.default_rng(55)
    x = rng.uniform(-4, 4, 1000).astype(f16)
    got = cpu.binary_scalar("mul", x, 0.1)
    assert got.dtype == f16, f"float16 * 0.1 should stay float16, got {got.dtype}"
    want = (x.astype(np.float32) * np.float32(0.1)).astype(f16)      # 0.1 kept as float32, one rounding
    close(got.astype(np.float32), want.astype(np.float32), "float16 * 0.1 (computed in float32, rounded once)",
          rtol=0, atol=0)
    big = cpu.binary_scalar("mul", np.array([60000.0, -1.0], f16), 2.0)
    assert np.isinf(big[0]) and big[1] == -2, f"float16 60000 * 2 is past 65504: inf, as on the GPU; got {big}"
    y = rng.uniform(0, 1, 5000).astype(bf16)
    got = cpu.sum(y, (0,))
    assert got.dtype == bf16, f"the sum of a bfloat16 array should be bfloat16, got {got.dtype}"
    want = np.float32(y.astype(np.float64).sum()).astype(bf16)      # the float32 path's answer, rounded once
    close(np.float32(got), np.float32(want), "the sum of 5000 bfloat16 values (accumulated in float32)",
          rtol=0, atol=0)
    a, b = rng.standard_normal((9, 300)).astype(bf16), rng.standard_normal((300, 5)).astype(bf16)
    got = cpu.matmul(a, b)
    assert got.dtype == bf16, f"a bfloat16 matmul should give bfloat16, got {got.dtype}"
    want = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(bf16)
    close(got.astype(np.float32), want.astype(np.float32), "a bfloat16 [9, 300] @ [300, 5] (sums in float32)",
          rtol=2 ** -7, atol=1e-6)
    z = rng.standard_normal((4, 6)).astype(f16)
    out = cpu.extreme(z, (1,))
    assert isinstance(out, tuple) and len(out) == 2, "max over a dim returns (values, indices): keep the tuple"
    vals, idx = out
    assert vals.dtype == f16 and idx.dtype == np.int64, \
        f"max's values should be float16 and its indices int64 (not rounded), got {vals.dtype} and {idx.dtype}"
    close(idx, z.argmax(axis=1), "the indices of a float16 max over dim 1", rtol=0, atol=0)
    close(vals.astype(np.float32), z.max(axis=1).astype(np.float32), "the values of a float16 max over dim 1",
          rtol=0, atol=0)


def _linear_node(x, w, b, need=(True, True, True)):
    """y = F.linear(x, w, b) on leaves that need a gradient where ``need`` says; its recorded node."""
    leaf = lambda a, n: None if a is None else mt.tensor(a, requires_grad=n)
    y = mt.nn.functional.linear(leaf(x, need[0]), leaf(w, need[1]), leaf(b, need[2]))
    assert y.grad_fn is not None and getattr(y.grad_fn.fn, "__name__", "") == "Linear", \
        "F.linear should record one Linear node (the fused op of minitorch/ops/linear.py)"
    return y.grad_fn


def _torch_linear_grads(x, w, b, g):
    ts = [None if a is None else torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    torch.nn.functional.linear(*ts).backward(torch.tensor(g))
    return [None if t is None else t.grad.numpy() for t in ts]


def _np(t):
    return None if t is None else t.detach().cpu().numpy()


@exercise("05.7")
def test_linear_backward_matches_torch():
    rng = np.random.default_rng(56)
    for xshape, bias in [((6, 4), True), ((2, 3, 4), True), ((4,), True), ((5, 4), False), ((2, 1, 3, 4), False)]:
        x, w = rng.standard_normal(xshape), rng.standard_normal((3, 4))
        b = rng.standard_normal(3) if bias else None
        g = rng.standard_normal(xshape[:-1] + (3,))
        node = _linear_node(x, w, b)
        grads = node.fn.backward(node.ctx, mt.tensor(g))
        assert len(grads) == 3, f"Linear.backward returns three gradients (x, weight, bias), got {len(grads)}"
        want = _torch_linear_grads(x, w, b, g)
        what = f"x {list(xshape)}, weight [3, 4], bias {'[3]' if bias else 'None'}"
        close(_np(grads[0]), want[0], f"Linear.backward with {what}: the gradient for x (grad @ W)")
        close(_np(grads[1]), want[1], f"Linear.backward with {what}: the gradient for the weight (grad^T @ x)")
        if bias:
            close(_np(grads[2]), want[2], f"Linear.backward with {what}: the gradient for the bias (grad summed)")
        else:
            assert grads[2] is None, f"Linear.backward with {what}: no bias, so its gradient is None"
    x, w, b, g = rng.standard_normal((5, 4)), rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 3))
    for need in [(False, True, False), (True, False, False), (False, False, True)]:
        node = _linear_node(x, w, b, need)
        grads = node.fn.backward(node.ctx, mt.tensor(g))
        want = _torch_linear_grads(x, w, b, g)
        for k, name in enumerate(("x", "weight", "bias")):
            if need[k]:
                close(_np(grads[k]), want[k], f"Linear.backward when only {name} needs a gradient: its gradient")
            else:
                assert grads[k] is None, \
                    f"Linear.backward should return None for {name}, which needs no gradient (needs_input_grad {need})"


# ---- kernels -------------------------------------------------------------------------------------

def _check_rung(rung, dtype=np.float32):
    """gemm(a, b, bias, rung=rung) against float64 NumPy: odd sizes, the four layouts, batches. An
    element may be off by (K + 3) roundings of ``dtype`` times (|A| @ |B| + |bias|): a dot product's
    rounding-error bound with a factor 2 of slack; a skipped tile or a wrong index is off by far more."""
    from minitorch.cuda import array
    from minitorch.native.cuda.gemm import gemm
    rng = np.random.default_rng(int(rung[:2]))

    def operand(rows, cols, letter, batch=()):
        # 't': the transposed view of a contiguous [..., cols, rows] array, so the kernel reads that layout
        host = rng.standard_normal(batch + ((cols, rows) if letter == "t" else (rows, cols))).astype(dtype)
        dev = array.from_numpy(host, 0)
        if letter == "t":
            axes = tuple(range(len(batch))) + (len(batch) + 1, len(batch))
            dev, host = dev.transpose(axes), host.transpose(axes)
        return dev, host.astype(np.float64)

    cases = [((1, 1, 1), "nn", (), False), ((7, 7, 7), "nn", (), True), ((33, 33, 33), "nt", (), True),
             ((127, 65, 257), "tn", (), False), ((1000, 7, 127), "tt", (), True), ((7, 1000, 33), "nn", (), True),
             ((129, 131, 1000), "nt", (), False), ((33, 65, 127), "nn", (3,), True), ((33, 65, 127), "nt", (3,), False),
             ((65, 33, 70), "tn", (2,), True), ((65, 33, 70), "tt", (2,), False), ((300, 257, 9), "nn", (), True)]
    for (m, n, k), layout, batch, bias in cases:
        da, a = operand(m, k, layout[0], batch)
        db, b = operand(k, n, layout[1], batch)
        bvec = rng.standard_normal(n).astype(dtype) if bias else None
        out = gemm(da, db, None if bvec is None else array.from_numpy(bvec, 0), rung=rung)
        got = array.to_numpy(out).astype(np.float64)
        want, scale = np.matmul(a, b), np.matmul(np.abs(a), np.abs(b))
        if bias:
            want, scale = want + bvec, scale + np.abs(bvec)
        where = (f"rung {rung} ({np.dtype(dtype)}) on M x N x K = {m}x{n}x{k}{f' in {batch[0]} batches' if batch else ''}, "
                 f"layout {layout}, bias {'[N]' if bias else 'None'}")
        assert got.shape == want.shape, f"{where}: the result has shape {got.shape}, expected {want.shape}"
        err = np.abs(got - want) / scale
        tol = (k + 3) * np.finfo(dtype).eps
        worst = tuple(int(i) for i in np.unravel_index(np.argmax(err), err.shape))
        assert np.isfinite(got).all() and err.max() <= tol, \
            (f"{where}: C{list(worst)} is {got[worst]:.6g}, expected {want[worst]:.6g} "
             f"({int((~(err <= tol)).sum())} of {got.size} elements wrong)")


@exercise("05.3", cuda=True, needs=("05.1", "05.2"))
def test_smem_tiled_rung_matches_float64():
    _check_rung("03_smem_tiling")


@exercise("05.4", cuda=True, needs=("05.1", "05.2"))
def test_blocktile_2d_rung_matches_float64():
    _check_rung("05_blocktile_2d")
    _check_rung("05_blocktile_2d", np.float64)


# ---- the caching allocator (05.1): graded on a fake GPU whose memory is host RAM -----------------

@exercise("05.1")
def test_split_cuts_a_block_and_links_the_rest():
    from support import fake_gpu
    MiB = 1 << 20
    with fake_gpu() as fake:
        from minitorch.cuda.allocator import SMALL, CachingAllocator
        pool = CachingAllocator(0, fake)

        def free_list():                                   # the small pool's free blocks on stream 0
            return [(size, ptr) for size, ptr, _ in pool.free_blocks[SMALL].get(0, [])]

        a = pool.malloc(1000, 0)
        (base, nbytes), = fake.live.items()
        assert a.ptr == base and a.size == 1024, \
            f"malloc(1000) should keep the first 1024 bytes of a fresh segment, got {a.size} bytes at offset {a.ptr - base}"
        assert free_list() == [(2 * MiB - 1024, base + 1024)], \
            (f"after malloc(1000) the rest of the 2 MiB segment (2096128 bytes at offset 1024) should be the one "
             f"cached free block, found (size, offset) {[(s, p - base) for s, p in free_list()]}")
        rest = a.block.next
        assert rest is not None and rest.prev is a.block and rest.next is None, \
            "the rest should be linked right after the block: block.next is the rest and rest.prev is the block"
        assert (rest.stream, rest.pool, rest.segment) == (a.block.stream, a.block.pool, a.block.segment), \
            "the rest should keep the block's stream, pool and segment"
        b = pool.malloc(4096, 0)
        c = pool.malloc(1024, 0)
        assert (b.ptr, c.ptr) == (base + 1024, base + 5120), \
            "further requests should be cut from the rest, one after the other"
        del b                                              # a 4096-byte hole between a and c
        d = pool.malloc(512, 0)                            # cut from the hole: its rest lies before c
        hole_rest = d.block.next
        assert d.ptr == base + 1024 and hole_rest is not None and hole_rest.ptr == base + 1536, \
            "malloc(512) should take the first 512 bytes of the freed 4096-byte block and leave the rest after it"
        assert hole_rest.size == 3584 and hole_rest.next is c.block and c.block.prev is hole_rest, \
            ("splitting a block that has a next neighbour should link the rest both ways with it: "
             "rest.next is that neighbour and neighbour.prev is the rest")
        stats = pool.memory_stats()
        assert stats["inactive_split_bytes.all.current"] == 2 * MiB - 1024 - 512 - 1024, \
            "the rest of every split should be cached (self._insert_free) and linked right after the block"
        del a, c, d                                        # merging everything back needs correct links
        assert free_list() == [(2 * MiB, base)] and pool.allocated == 0, \
            "once every block is free again the segment should merge back into one free 2 MiB block"
# ---- nn.init ---------------------------------------------------------------------------------------

@exercise("05.8")
def test_fan_in_and_fan_out_match_torch():
    from minitorch.nn.init import _calculate_fan_in_and_fan_out as fans
    for shape, what in [((5, 3), "a Linear weight [out=5, in=3]"), ((1, 1), "a [1, 1] weight"),
                        ((16, 8, 3, 3), "a conv2d weight [out=16, in=8, 3, 3]"),
                        ((7, 2, 5), "a conv1d weight [out=7, in=2, 5]"),
                        ((4, 6, 2, 3, 5), "a conv3d weight [out=4, in=6, 2, 3, 5]"),
                        ((3, 0, 2), "a weight with no inputs [3, 0, 2]")]:
        got = fans(mt.empty(*shape))
        want = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
        assert tuple(got) == want, f"(fan_in, fan_out) of {what} should be {want}, got {got}"
    for shape in [(5,), ()]:
        try:
            fans(mt.empty(*shape))
        except ValueError:
            continue
        raise AssertionError(f"a tensor of shape {shape} has fewer than 2 dimensions: raise ValueError, as PyTorch does")


# ---- Adam: the cpu update and the fused multi-tensor kernel -------------------------------------
_ADAM_CASES = [dict(lr=0.01), dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, amsgrad=True),
               dict(lr=0.02, weight_decay=0.2, maximize=True, decoupled_weight_decay=True),
               dict(lr=0.005, eps=1e-4, amsgrad=True, decoupled_weight_decay=True, weight_decay=0.5)]


def _adam_reference(shapes, grads, dtype, kw):
    """torch.optim.Adam's parameters after len(grads) steps from all-ones parameters of ``shapes``."""
    ts = [torch.ones(s, dtype=dtype, requires_grad=True) for s in shapes]
    opt = torch.optim.Adam(ts, **kw)
    for step in grads:
        for t, g in zip(ts, step):
            t.grad = torch.tensor(g, dtype=dtype)
        opt.step()
    return [t.detach().numpy() for t in ts]


def _adam_run(backend, to_array, to_host, shapes, grads, dtype, kw):
    """backend.adam_step over the lists, step by step, as the optimizer calls it."""
    params = [to_array(np.ones(s, dtype)) for s in shapes]
    state = [[to_array(np.zeros(s, dtype)) for s in shapes] for _ in range(3)]
    beta1, beta2 = kw.get("betas", (0.9, 0.999))
    amsgrad = kw.get("amsgrad", False)
    for t, step in enumerate(grads, start=1):
        backend.adam_step(params, [to_array(g.astype(dtype)) for g in step], state[0], state[1],
                          state[2] if amsgrad else None, t, kw["lr"], beta1, beta2, kw.get("eps", 1e-8),
                          kw.get("weight_decay", 0.0), amsgrad, kw.get("maximize", False),
                          kw.get("decoupled_weight_decay", False))
    return [to_host(p) for p in params]


@exercise("05.9")
def test_adam_update_matches_torch():
    from minitorch.native import cpu
    rng = np.random.default_rng(59)
    shapes = [(3, 4), (5,), ()]
    for kw in _ADAM_CASES:
        grads = [[rng.standard_normal(s) for s in shapes] for _ in range(5)]
        got = _adam_run(cpu, lambda a: a, lambda a: a, shapes, grads, np.float64, kw)
        want = _adam_reference(shapes, grads, torch.float64, kw)
        for k, (g, w) in enumerate(zip(got, want)):
            close(g, w, f"parameter {k} (shape {shapes[k]}) after 5 Adam steps with {kw}", rtol=1e-10, atol=1e-12)


@exercise("05.10", cuda=True, needs=("05.1",))   # every cuda allocation of the phase splits blocks (05.1)
def test_fused_adam_kernel_matches_torch():
    from minitorch.cuda import array
    from minitorch.native import cuda as backend
    rng = np.random.default_rng(510)
    shapes = [(1,), (7, 33), (4096,), (5000,), (3, 1000), ()]     # chunks of 4096 elements: partial, whole, several
    for kw in _ADAM_CASES:
        grads = [[rng.standard_normal(s) for s in shapes] for _ in range(4)]
        got = _adam_run(backend, lambda a: array.from_numpy(a, 0), array.to_numpy, shapes, grads, np.float32, kw)
        want = _adam_reference(shapes, grads, torch.float32, kw)
        for k, (g, w) in enumerate(zip(got, want)):
            close(g, w, f"parameter {k} (shape {shapes[k]}) after 4 fused Adam steps (one launch each) with {kw}",
                  rtol=1e-5, atol=1e-6)
