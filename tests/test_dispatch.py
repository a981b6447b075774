"""Phase 05: the GEMM dispatch (minitorch/native/cuda/gemm.py) and the ops that use it.

CPU part:
- ``shape_class`` and ``choose``: the tuned table, the built-in order, allow_tf32 and the GPU's
  architecture, on a fake ladder (a private copy of gemm.py, its RUNGS replaced).
- ``matmul``/``linear`` of gemm.py on fake DeviceArrays (host memory, tests/fake_cuda.py) with
  a fake launcher that runs the kernel ABI of gemm.cuh in NumPy: np.matmul's shape rules, the
  layout letters and leading dimensions the kernels get (a transposed view is never copied), the
  bias epilogue, folding [B, T, K] @ [K, N] into one GEMM, and that the launch is the chosen rung's.
- The Tensor layer: ``F.linear``/``nn.Linear`` as one fused op against phase 03's composition
  and PyTorch (values, gradients, float64 gradcheck), ``bmm`` and its PyTorch errors.

GPU part (marked ``cuda``): the same ops on the real kernels, compared with the cpu results.
"""
import contextlib
import ctypes
import json
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

import minitorch
import minitorch as mt
from minitorch import nn
from minitorch.autograd import gradcheck
from minitorch.broadcast import broadcast_shape
import minitorch.nn.functional as F

import fake_cuda
from helpers import to_np

CUDA_PKG = Path(minitorch.__file__).resolve().parent / "native" / "cuda"
GEMM_PY = CUDA_PKG / "gemm.py"
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


# ---- a private gemm.py on fake DeviceArrays ----------------------------------------------------------
def read_at(ptr, dtype, shape, strides):
    """A NumPy copy of the elements at host address ``ptr`` with ``shape`` and element
    ``strides`` (any sign, 0 allowed): how a kernel would read them."""
    dtype = np.dtype(dtype)
    if math.prod(shape) == 0:
        return np.empty(shape, dtype)
    offsets = [(n - 1) * s for n, s in zip(shape, strides)]
    lo = sum(o for o in offsets if o < 0)
    hi = sum(o for o in offsets if o > 0) + 1
    buf = (ctypes.c_char * ((hi - lo) * dtype.itemsize)).from_address(ptr + lo * dtype.itemsize)
    return np.ndarray(shape, dtype, buffer=buf, offset=-lo * dtype.itemsize,
                      strides=tuple(s * dtype.itemsize for s in strides)).copy()


def read(a):
    """A fake DeviceArray's elements as a NumPy array (any strides)."""
    return read_at(a.ptr, a.dtype, a.shape, tuple(s // a.itemsize for s in a.strides))


def write(a, values):
    """Store ``values`` into the contiguous fake DeviceArray ``a``."""
    host = np.ascontiguousarray(values, dtype=a.dtype)
    ctypes.memmove(a.ptr, host.ctypes.data, host.nbytes)


def coalesce(shape, strides):
    """launch.py's coalesce (which cannot be imported without CuPy), for the fake launch module."""
    sizes, out = [], [[] for _ in strides]
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] == 1:
            continue
        if sizes and all(st[d] == o[-1] * sizes[-1] for st, o in zip(strides, out)):
            sizes[-1] *= shape[d]
        else:
            sizes.append(shape[d])
            for st, o in zip(strides, out):
                o.append(st[d])
    return sizes, out


class FakeLauncher:
    """The parts of launch.py that gemm.py imports, with a launch_2d that runs the kernel ABI of
    minitorch/cuda/gemm/gemm.cuh in float64 NumPy, and records every launch."""

    def __init__(self, array):
        self.array = array
        self.launches, self.copies = [], []
        self.module = types.ModuleType("minitorch.native.cuda.launch")
        m = self.module
        m.SUFFIX = {F32: "f32", F64: "f64", np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}
        m.cdiv = lambda a, b: (a + b - 1) // b
        m.kernel = lambda file, name, index, options=(): types.SimpleNamespace(file=file, name=name, options=options)
        m.broadcast_layout = self.broadcast_layout
        m.launch_2d = self.launch_2d
        m.sm_count = lambda index: 132         # an H100
        m.cp = None
        m.StructArg = lambda array: types.SimpleNamespace(array=array)
        m.broadcast_strides = lambda shape, strides, isz, out: tuple(
            0 if d < len(out) - len(shape) or shape[d - len(out) + len(shape)] == 1
            else strides[d - len(out) + len(shape)] // isz for d in range(len(out)))
        m.coalesce = coalesce

    @staticmethod
    def broadcast_layout(operands):
        """(shape, size, layout): the fake layout is (shape, element strides of each operand)."""
        shape = broadcast_shape(*(op[0] for op in operands))
        strides = []
        for s, st, isz in operands:
            pad = len(shape) - len(s)
            strides.append(tuple(0 if d < pad or s[d - pad] == 1 else st[d - pad] // isz for d in range(len(shape))))
        return shape, math.prod(shape), (shape, tuple(strides))

    def launch_2d(self, fn, grid, block, args, index, shared_mem=0):
        if fn.file == "gemm/13_wgmma_tma.cu":
            return self.launch_tma(fn, grid, block, args, shared_mem)
        if fn.file == "transpose.cu":                # transpose.cu's ABI: out [N, M] = a [M, N] (element strides)
            a, out, m, n, s0, s1 = args
            self.launches.append(dict(file=fn.file, name=fn.name, m=m, n=n))
            return write(out, read_at(a.ptr, a.dtype, (m, n), (s0, s1)).T)
        a, b, c, bias, m, n, k, lda, ldb, batch, (bshape, (sa, sb)) = args
        assert all(type(v) is int for v in (m, n, k, lda, ldb, batch)), "long long arguments are Python ints"
        la, lb = fn.name[5], fn.name[6]
        self.launches.append(dict(file=fn.file, name=fn.name, options=fn.options, grid=grid, block=block,
                                  m=m, n=n, k=k, lda=lda, ldb=ldb, batch=batch, bias=bias is not None,
                                  a=a, b=b))
        dt = c.dtype
        for z in range(batch):
            idx = np.unravel_index(z, bshape) if bshape else ()
            oa = sum(int(i) * s for i, s in zip(idx, sa))
            ob = sum(int(i) * s for i, s in zip(idx, sb))
            A = read_at(a.ptr + oa * dt.itemsize, dt, (m, k), (lda, 1) if la == "n" else (1, lda))
            B = read_at(b.ptr + ob * dt.itemsize, dt, (k, n), (ldb, 1) if lb == "n" else (1, ldb))
            C = A.astype(np.float64) @ B.astype(np.float64)
            if bias is not None:
                C = C + read(bias)
            host = np.ascontiguousarray(C, dtype=dt)
            ctypes.memmove(c.ptr + z * m * n * dt.itemsize, host.ctypes.data, host.nbytes)

    def launch_tma(self, fn, grid, block, args, shared_mem):
        """Rung 13's ABI (13_wgmma_tma.cu): operands as tensor maps (here the fake maps of
        tma_maps below: what cuTensorMapEncodeTiled was given), read through the maps' sizes and
        strides as the copy engine would, checking the rules TMA imposes on them."""
        map_a, map_b, c, bias, m, n, k, batch, a_batched, b_batched = args
        assert all(type(v) is int for v in (m, n, k, batch, a_batched, b_batched))
        la, lb = fn.name[5], fn.name[6]
        self.launches.append(dict(file=fn.file, name=fn.name, options=fn.options, grid=grid, block=block,
                                  m=m, n=n, k=k, batch=batch, bias=bias is not None, maps=(map_a, map_b),
                                  batched=(a_batched, b_batched), smem=shared_mem))
        dt = c.dtype
        bk = 128 // dt.itemsize                       # elements in 128 bytes: the tile's k depth
        bn = int(dict(o[2:].split("=") for o in fn.options)["BN"])
        for z in range(batch):
            ops = []
            for tm, letter, flag, shape, tile in ((map_a, la, a_batched, (m, k), 128),
                                                  (map_b, lb, b_batched, (k, n), bn)):
                # K-major ('n' A, 't' B): the map's unit-stride dimension 0 is k
                k_major = (letter == "n") == (tm is map_a)
                other = m if tm is map_a else n
                assert tm.dims[:2] == ((k, other) if k_major else (other, k))
                assert tm.box == ((bk, tile) if k_major else (64, bk)) + (1,)
                assert tm.address % 16 == 0 and all(s % 16 == 0 for s in tm.strides)
                assert tm.strides[0] >= tm.dims[0] * dt.itemsize and tm.strides[1] >= tm.strides[0] * tm.dims[1]
                assert (z if flag else 0) < tm.dims[2]
                row, step = tm.strides[0] // dt.itemsize, tm.strides[1] // dt.itemsize
                # op(x)[i, j]: rows of memory along i for 'n', along j for 't'
                ops.append(read_at(tm.address + (z if flag else 0) * step * dt.itemsize, dt, shape,
                                   (row, 1) if letter == "n" else (1, row)))
            C = ops[0].astype(np.float64) @ ops[1].astype(np.float64)
            if bias is not None:
                C = C + read(bias)
            host = np.ascontiguousarray(C, dtype=dt)
            ctypes.memmove(c.ptr + z * m * n * dt.itemsize, host.ctypes.data, host.nbytes)

    def contiguous(self, a):
        self.copies.append(a.shape)
        return self.array.from_numpy(read(a), a.device_id)


@pytest.fixture
def gm(monkeypatch):
    """(private copy of gemm.py on fake DeviceArrays, FakeLauncher, the fake array module)."""
    fake, array = fake_cuda.install(monkeypatch)
    monkeypatch.setitem(sys.modules, "minitorch.cuda.array", array)
    package = types.ModuleType("minitorch.native.cuda")     # the real __init__ needs CuPy
    package.__path__ = [str(CUDA_PKG)]
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda", package)
    launcher = FakeLauncher(array)
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda.launch", launcher.module)
    elementwise = types.ModuleType("minitorch.native.cuda.elementwise")
    elementwise.contiguous = launcher.contiguous
    elementwise.binary = lambda op, x, y: array.from_numpy(read(x) + read(y), x.device_id)
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda.elementwise", elementwise)
    reduce = types.ModuleType("minitorch.native.cuda.reduce")
    reduce.sum = lambda x, dims, keepdim=False, scale=1.0: array.from_numpy(read(x).sum(axis=dims), x.device_id)
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda.reduce", reduce)
    creation = types.ModuleType("minitorch.native.cuda.creation")
    creation.fill_ = lambda x, v: write(x, np.full(x.shape, v))
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda.creation", creation)
    mod = fake_cuda.private_copy(monkeypatch, GEMM_PY, "minitorch.native.cuda._gemm_under_test")
    monkeypatch.setattr(mod, "arch_of", lambda index: 90)
    # raising a kernel's shared-memory limit (rungs past 48 KB) enters the kernel's device
    monkeypatch.setattr(mod, "cp", types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda i: contextlib.nullcontext())))
    monkeypatch.setattr(mod, "TUNED_JSON", Path("/nonexistent/tuned.json"))
    mod.reload_tuned()
    return mod, launcher, array


def ladder(mod):
    """A full ladder as the other rungs will declare it (names, dtypes, arch, tensor cores)."""
    R = mod.Rung
    return {
        "01_naive": R("gemm/01_naive.cu", (16, 16), (16, 16), ("f32", "f64")),
        "02_coalesced": R("gemm/02_coalesced.cu", (256,), (32, 32)),
        "03_smem_tiling": R("gemm/03_smem_tiling.cu", (256,), (32, 32)),
        "05_blocktile_2d": R("gemm/05_blocktile_2d.cu", (256,), (128, 128), ("f32", "f64")),
        "07_autotuned": R("gemm/07_autotuned.cu", (256,), (128, 128), options=("-DBM=128", "-DBN=128")),
        "08_warptiling": R("gemm/08_warptiling.cu", (128,), (128, 128), arch=75),
        "09_pipelined": R("gemm/09_pipelined.cu", (128,), (128, 128), arch=80),
        "10_tf32_mma": R("gemm/10_tf32_mma.cu", (128,), (128, 128), arch=80, tensor_cores=True),
        "11_half_mma": R("gemm/11_half_mma.cu", (128,), (128, 256), ("bf16", "f16"), arch=80, tensor_cores=True),
    }


@pytest.fixture
def fake_ladder(gm, monkeypatch):
    mod = gm[0]
    monkeypatch.setattr(mod, "RUNGS", ladder(mod))
    mod.reload_tuned()
    return mod


def use_table(mod, monkeypatch, tmp_path, table):
    path = tmp_path / "tuned.json"
    path.write_text(json.dumps(table))
    monkeypatch.setattr(mod, "TUNED_JSON", path)
    mod.reload_tuned()
    return path


# ---- shape_class ----------------------------------------------------------------------------------
def test_shape_class_thresholds(gm):
    sc = gm[0].shape_class
    assert sc(512, 512, 1, 1) == "small"                  # 2**18
    assert sc(512, 512, 1, 1) == sc(1, 1, 10 ** 6, 2 ** 18) == "small"  # k does not count; batch does
    assert sc(2 ** 18 + 1, 1, 7, 1) == "medium"
    assert sc(64, 64, 7, 2 ** 10) == "medium"             # 2**22 (batched)
    assert sc(2048, 2048, 1, 1) == "medium"
    assert sc(2048, 2048, 1, 2) == "large" and sc(2 ** 22 + 1, 1, 1, 1) == "large"
    assert sc(0, 5, 5, 5) == "small"


# ---- choose: the built-in order -----------------------------------------------------------------------
def test_choose_without_table_takes_the_best_usable_rung(fake_ladder):
    ch = fake_ladder.choose
    for cls_shape in ((7, 7, 7, 1), (1024, 1024, 1024, 1), (4096, 4096, 4096, 8)):
        assert ch(*cls_shape, "f32", 90, allow_tf32=False) == ("09_pipelined", ())
    assert ch(64, 64, 64, 1, "f32", 80, allow_tf32=False)[0] == "09_pipelined"
    assert ch(64, 64, 64, 1, "f32", 75, allow_tf32=False)[0] == "08_warptiling"     # 09 needs sm_80
    assert ch(64, 64, 64, 1, "f32", 70, allow_tf32=False) == ("07_autotuned", ("-DBM=128", "-DBN=128"))
    assert ch(64, 64, 64, 1, "f64", 90) == ("05_blocktile_2d", ())
    assert ch(64, 64, 64, 1, "bf16", 90)[0] == ch(64, 64, 64, 1, "f16", 80)[0] == "11_half_mma"
    with pytest.raises(TypeError, match="bf16"):
        ch(64, 64, 64, 1, "bf16", 75)                    # no half rung below sm_80


def test_choose_f64_falls_back_to_naive(fake_ladder, monkeypatch):
    rungs = dict(fake_ladder.RUNGS)
    del rungs["05_blocktile_2d"]
    rungs["09_pipelined"] = fake_ladder.Rung("gemm/09_pipelined.cu", (128,), (128, 128), ("f32", "f64"), arch=80)
    monkeypatch.setattr(fake_ladder, "RUNGS", rungs)
    fake_ladder.reload_tuned()
    # 09 has f64 entry points, but the f64 order is 05 then 01: tiles past 05 are sized for 4 bytes
    assert fake_ladder.choose(300, 300, 300, 1, "f64", 90)[0] == "01_naive"


def test_choose_honours_allow_tf32(fake_ladder, monkeypatch):
    ch = fake_ladder.choose
    assert ch(2048, 2048, 2048, 1, "f32", 90, allow_tf32=True)[0] == "10_tf32_mma"
    assert ch(2048, 2048, 2048, 1, "f32", 75, allow_tf32=True)[0] == "08_warptiling"   # no TF32 rung there
    assert ch(2048, 2048, 2048, 1, "f64", 90, allow_tf32=True)[0] == "05_blocktile_2d"
    # default: PyTorch's switch, read on every call
    assert minitorch.backends.cuda.matmul.allow_tf32 is False
    assert ch(2048, 2048, 2048, 1, "f32", 90)[0] == "09_pipelined"
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", True)
    assert ch(2048, 2048, 2048, 1, "f32", 90)[0] == "10_tf32_mma"
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", False)
    assert ch(2048, 2048, 2048, 1, "f32", 90)[0] == "09_pipelined"


def _with_wgmma(mod, monkeypatch):
    """The fake ladder plus rung 12 as gemm.py declares it: sm_90a only, TF32 in 'nt' alone."""
    rungs = dict(mod.RUNGS)
    rungs["12_wgmma"] = mod.Rung("gemm/12_wgmma.cu", (256,), (128, 256), ("bf16", "f16", "f32"), arch=90,
                                 tensor_cores=True, target="sm_90a", entries=("gemm_nn_bf16", "gemm_nt_f32"),
                                 fallback="10_tf32_mma")
    monkeypatch.setattr(mod, "RUNGS", rungs)
    mod.reload_tuned()
    return mod


def test_choose_wgmma_only_on_sm_90(fake_ladder, monkeypatch):
    ch = _with_wgmma(fake_ladder, monkeypatch).choose
    assert ch(4096, 4096, 4096, 1, "bf16", 90)[0] == ch(64, 64, 64, 1, "f16", 90)[0] == "12_wgmma"
    assert ch(4096, 4096, 4096, 1, "bf16", 100)[0] == "11_half_mma"     # sm_90a code runs on sm_90 only
    assert ch(4096, 4096, 4096, 1, "bf16", 80)[0] == "11_half_mma"
    assert ch(4096, 4096, 4096, 1, "f32", 90, allow_tf32=True)[0] == "12_wgmma"
    assert ch(4096, 4096, 4096, 1, "f32", 90, allow_tf32=False)[0] == "09_pipelined"
    assert ch(4096, 4096, 4096, 1, "f32", 100, allow_tf32=True)[0] == "10_tf32_mma"


def test_wgmma_hands_missing_layouts_to_its_fallback(gm, monkeypatch, rng):
    mod, launcher, array = gm
    _with_wgmma(mod, monkeypatch)
    built = []
    monkeypatch.setattr(mod, "target_kernel", lambda file, name, index, options, target: built.append(
        (name, target)) or types.SimpleNamespace(file=file, name=name, options=options))
    x, w = rng.standard_normal((5, 7)).astype(F32), rng.standard_normal((3, 7)).astype(F32)
    check_product(mod.gemm(dev(array, x), dev(array, w).T, rung="12_wgmma"), x.astype(np.float64) @ w.T, F32)
    assert built == [("gemm_nt_f32", "sm_90a")] and launcher.launches[-1]["file"] == "gemm/12_wgmma.cu"
    w2 = np.ascontiguousarray(w.T)                   # [7, 3]: layout 'nn', which TF32 wgmma lacks
    check_product(mod.gemm(dev(array, x), dev(array, w2), rung="12_wgmma"), x.astype(np.float64) @ w2, F32)
    assert launcher.launches[-1]["file"] == "gemm/10_tf32_mma.cu" and len(built) == 1
    monkeypatch.setattr(mod, "arch_of", lambda index: 80)
    with pytest.raises(ValueError, match="sm_90a"):
        mod.gemm(dev(array, x), dev(array, w).T, rung="12_wgmma")


def _with_tma(mod, monkeypatch):
    """The fake ladder plus rungs 12 and 13 (its real Rung), kernels and tensor maps faked: each
    map is the namespace of what cuTensorMapEncodeTiled would have been given."""
    tma = mod.rung_with("13_wgmma_tma", {})
    _with_wgmma(mod, monkeypatch)
    monkeypatch.setitem(mod.RUNGS, "13_wgmma_tma", tma)
    monkeypatch.setattr(mod, "target_kernel", lambda file, name, index, options, target: types.SimpleNamespace(
        file=file, name=name, options=options))
    monkeypatch.setattr(mod, "tensor_map", lambda address, suffix, dims, strides, box: types.SimpleNamespace(
        address=address, suffix=suffix, dims=dims, strides=strides, box=box))
    mod.reload_tuned()
    return mod


def test_tma_rung_runs_only_where_the_table_names_it(fake_ladder, monkeypatch, tmp_path):
    mod = _with_tma(fake_ladder, monkeypatch)
    assert not mod.RUNGS["13_wgmma_tma"].by_default
    assert mod.choose(8192, 8192, 8192, 1, "bf16", 90)[0] == "12_wgmma"
    assert mod.choose(4096, 4096, 4096, 1, "f32", 90, allow_tf32=True)[0] == "12_wgmma"
    options = ["-DBN=256", "-DSTAGES=4", "-DGROUP_M=8"]
    use_table(mod, monkeypatch, tmp_path, {"sm_90": {"bf16": {"large": {"rung": "13_wgmma_tma", "options": options,
                                                                         "gflops": 1.0}}}})
    assert mod.choose(8192, 8192, 8192, 1, "bf16", 90) == ("13_wgmma_tma", tuple(options))
    assert mod.choose(64, 64, 64, 1, "bf16", 90)[0] == "12_wgmma"          # other classes: unchanged


def test_tma_rung_geometry(gm):
    mod = gm[0]
    spec = mod.rung_with("13_wgmma_tma", {})
    assert spec.block == (384,) and spec.tile == (128, 256) and spec.target == "sm_90a" and spec.tma
    assert spec.smem == 4 * (128 + 256) * 128 + 1024 and spec.fallback == "12_wgmma"
    assert mod.rung_with("13_wgmma_tma", {"BN": 128, "STAGES": 6}).smem == 6 * 256 * 128 + 1024
    with pytest.raises(ValueError, match="227 KB"):
        mod.rung_with("13_wgmma_tma", {"BN": 256, "STAGES": 5})
    configs = list(mod.tuning_configs("13_wgmma_tma"))
    assert mod.rung_with("13_wgmma_tma", {}).options in configs and len(configs) == 2 * (2 + 4)


@pytest.mark.parametrize("config", [{}, {"BN": 128, "STAGES": 6, "GROUP_M": 0}], ids=["default", "bn128"])
def test_tma_rung_gets_tensor_maps(gm, monkeypatch, rng, config):
    """'nt' float32 (TF32) products that TMA can read go to rung 13 with maps whose sizes,
    strides and boxes the fake launch checks and reads through (one matrix, batches, a broadcast
    operand, bias, edge tiles), on a persistent grid of at most one block per SM."""
    mod, launcher, array = gm
    _with_tma(mod, monkeypatch)
    cases = [((130, 72), (260, 72)), ((3, 130, 72), (3, 300, 72)), ((2, 5, 36), (7, 36)), ((1, 4), (9, 4))]
    for xs, ws in cases:
        x, w = rng.standard_normal(xs).astype(F32), rng.standard_normal(ws).astype(F32)
        bias = rng.standard_normal(ws[-2]).astype(F32)
        wt = dev(array, w).transpose(0, 2, 1) if len(ws) > 2 else dev(array, w).T
        got = mod.gemm(dev(array, x), wt, dev(array, bias), rung="13_wgmma_tma", config=config)
        want = x.astype(np.float64) @ np.swapaxes(w, -1, -2) + bias
        check_product(got, want, F32)
        last = launcher.launches[-1]
        assert last["file"] == "gemm/13_wgmma_tma.cu" and last["name"] == "gemm_nt_f32", (xs, ws, last["file"])
        bm, bn = 128, config.get("BN", 256)
        batch = xs[0] if len(xs) > 2 else 1
        assert last["block"] == (384,) and last["grid"] == (min(-(-xs[-2] // bm) * -(-ws[-2] // bn) * batch, 132),)
        assert last["batched"] == (int(batch > 1), int(len(ws) > 2))
        assert last["smem"] == mod.rung_with("13_wgmma_tma", config).smem


def test_tma_rung_hands_what_tma_cannot_read_to_rung_12(gm, monkeypatch, rng):
    mod, launcher, array = gm
    _with_tma(mod, monkeypatch)

    def run(x, w, want):
        check_product(mod.gemm(x, w, rung="13_wgmma_tma"), want, F32)
        return launcher.launches[-1]["file"]

    x, w = rng.standard_normal((33, 7)).astype(F32), rng.standard_normal((5, 7)).astype(F32)
    # rows of 7 floats (28 bytes): not a multiple of 16 bytes
    assert run(dev(array, x), dev(array, w).T, x.astype(np.float64) @ w.T) == "gemm/12_wgmma.cu"
    # 'nn' float32: TF32 wgmma reads only K-major operands, so B is transposed once (transpose.cu)
    # and rung 13's 'nt' kernel runs on the copy
    x, w = rng.standard_normal((33, 8)).astype(F32), rng.standard_normal((8, 12)).astype(F32)
    assert run(dev(array, x), dev(array, w), x.astype(np.float64) @ w) == "gemm/13_wgmma_tma.cu"
    assert [(r["file"], r["name"]) for r in launcher.launches[-2:]] == [("transpose.cu", "transpose_f32"),
                                                                         ("gemm/13_wgmma_tma.cu", "gemm_nt_f32")]
    # 'tn' and 'tt' likewise (A transposed, and both); with K = 7 the copies' rows (28 bytes) are
    # not 16-byte aligned, and rung 12 takes the product in 'nt' on the copies
    assert run(dev(array, x.T.copy()).T, dev(array, w.T.copy()).T, x.astype(np.float64) @ w) == "gemm/13_wgmma_tma.cu"
    assert run(dev(array, x.T.copy()).T, dev(array, w), x.astype(np.float64) @ w) == "gemm/13_wgmma_tma.cu"
    x7, w7 = rng.standard_normal((33, 7)).astype(F32), rng.standard_normal((7, 12)).astype(F32)
    assert run(dev(array, x7), dev(array, w7), x7.astype(np.float64) @ w7) == "gemm/12_wgmma.cu"
    assert launcher.launches[-1]["name"] == "gemm_nt_f32"
    # a view starting one float into its buffer: base address not 16-byte aligned
    buf = dev(array, rng.standard_normal(33 * 8 + 1).astype(F32))
    xv = buf.as_strided((33, 8), (32, 4), offset=4)
    w = rng.standard_normal((5, 8)).astype(F32)
    assert run(xv, dev(array, w).T, read(xv).astype(np.float64) @ w.T) == "gemm/12_wgmma.cu"
    # batch dimensions that do not merge into one: b broadcast over the outer of two
    x, w = rng.standard_normal((2, 3, 8, 8)).astype(F32), rng.standard_normal((3, 4, 8)).astype(F32)
    assert run(dev(array, x), dev(array, w).transpose(0, 2, 1),
               x.astype(np.float64) @ np.swapaxes(w, -1, -2)) == "gemm/12_wgmma.cu"
    monkeypatch.setattr(mod, "arch_of", lambda index: 80)
    with pytest.raises(ValueError, match="13_wgmma_tma is built for sm_90a"):
        mod.gemm(dev(array, x[0, 0]), dev(array, w[0]).T, rung="13_wgmma_tma")


def test_choose_never_leaves_the_rules(fake_ladder):
    rungs = fake_ladder.RUNGS
    for arch in (70, 75, 80, 86, 90):
        for suffix in ("f32", "f64", "bf16", "f16"):
            for tf32 in (False, True):
                for shape in ((1, 1, 1, 1), (1000, 1000, 7, 1), (4096, 4096, 64, 4)):
                    try:
                        name, options = fake_ladder.choose(*shape, suffix, arch, allow_tf32=tf32)
                    except TypeError:
                        assert suffix in ("bf16", "f16") and arch < 80
                        continue
                    spec = rungs[name]
                    assert suffix in spec.dtypes and spec.arch <= arch
                    assert not (suffix == "f32" and not tf32 and spec.tensor_cores)
                    assert isinstance(options, tuple)


# ---- choose: the tuned table ----------------------------------------------------------------------------
TABLE = {
    "sm_90": {
        "fp32": {"small": {"rung": "05_blocktile_2d", "options": ["-DBM=64", "-DBN=64"], "gflops": 900.0},
                 "large": {"rung": "07_autotuned", "options": ["-DBM=128", "-DBN=128"], "gflops": 48000.0}},
        "tf32": {"large": {"rung": "10_tf32_mma", "options": ["-DSTAGES=4"], "gflops": 300000.0}},
        "bf16": {"medium": {"rung": "11_half_mma", "options": ["-DBN=128"], "gflops": 400000.0}},
    },
    "sm_80": {"fp32": {"small": {"rung": "02_coalesced", "options": [], "gflops": 100.0}}},
}


def test_choose_reads_the_table_per_class_kind_and_arch(fake_ladder, monkeypatch, tmp_path):
    use_table(fake_ladder, monkeypatch, tmp_path, TABLE)
    ch = fake_ladder.choose
    # options set a tuned rung's geometry (07-11); a fixed rung like 05 keeps its own, whatever the table says
    assert ch(64, 64, 64, 1, "f32", 90, allow_tf32=False) == ("05_blocktile_2d", ())
    assert ch(4096, 4096, 4096, 1, "f32", 90, allow_tf32=False) == ("07_autotuned", ("-DBM=128", "-DBN=128"))
    assert ch(1024, 1024, 1024, 1, "f32", 90, allow_tf32=False) == ("09_pipelined", ())     # medium: not tuned
    assert ch(4096, 4096, 4096, 1, "f32", 90, allow_tf32=True) == ("10_tf32_mma", ("-DSTAGES=4",))
    assert ch(64, 64, 64, 1, "f32", 90, allow_tf32=True)[0] == "10_tf32_mma"   # tf32 small: built-in order
    assert ch(1024, 1024, 64, 1, "bf16", 90) == ("11_half_mma", ("-DBN=128",))
    assert ch(64, 64, 64, 1, "f32", 80, allow_tf32=False) == ("02_coalesced", ())
    assert ch(64, 64, 64, 1, "f32", 86, allow_tf32=False)[0] == "09_pipelined"     # no sm_86 table
    assert ch(64, 64, 64, 1, "f64", 90)[0] == "05_blocktile_2d"


def test_a_bad_table_entry_is_never_taken(fake_ladder, monkeypatch, tmp_path):
    table = {"sm_90": {"fp32": {
        "small": {"rung": "10_tf32_mma", "options": [], "gflops": 1.0},        # tensor cores on fp32
        "medium": {"rung": "12_wgmma", "options": [], "gflops": 1.0},          # not in RUNGS
        "large": {"rung": "11_half_mma", "options": [], "gflops": 1.0}}},      # no f32 entry points
        "sm_75": {"fp32": {"small": {"rung": "09_pipelined", "options": [], "gflops": 1.0}}}}   # needs sm_80
    use_table(fake_ladder, monkeypatch, tmp_path, table)
    for shape in ((64, 64, 64, 1), (1024, 1024, 64, 1), (4096, 4096, 64, 1)):
        assert fake_ladder.choose(*shape, "f32", 90, allow_tf32=False)[0] == "09_pipelined"
    assert fake_ladder.choose(64, 64, 64, 1, "f32", 75, allow_tf32=False)[0] == "08_warptiling"


def test_the_table_is_read_once(fake_ladder, monkeypatch, tmp_path):
    path = use_table(fake_ladder, monkeypatch, tmp_path, TABLE)
    assert fake_ladder.choose(64, 64, 64, 1, "f32", 90, allow_tf32=False)[0] == "05_blocktile_2d"
    path.write_text(json.dumps({}))
    assert fake_ladder.choose(64, 64, 64, 1, "f32", 90, allow_tf32=False)[0] == "05_blocktile_2d"
    fake_ladder.reload_tuned()
    assert fake_ladder.choose(64, 64, 64, 1, "f32", 90, allow_tf32=False)[0] == "09_pipelined"


def test_the_shipped_ladder_and_table_obey_the_rules(monkeypatch):
    """With the real RUNGS and the real tuned.json (when it ships): every choice is valid, and the
    table has the autotuner's schema and names only rungs that exist."""
    fake, array = fake_cuda.install(monkeypatch)
    monkeypatch.setitem(sys.modules, "minitorch.cuda.array", array)
    package = types.ModuleType("minitorch.native.cuda")
    package.__path__ = [str(CUDA_PKG)]
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda", package)
    monkeypatch.setitem(sys.modules, "minitorch.native.cuda.launch", FakeLauncher(array).module)
    mod = fake_cuda.private_copy(monkeypatch, GEMM_PY, "minitorch.native.cuda._gemm_real_table")
    table = mod.tuned_table()
    assert isinstance(table, dict)
    for arch_key, kinds in table.items():
        assert arch_key.startswith("sm_") and arch_key[3:].isdigit()
        for kind, classes in kinds.items():
            assert kind in ("fp32", "tf32", "bf16", "f16")
            for cls, entry in classes.items():
                # big, big_<layout>: float32 products at least BIG_MIN in every dimension
                assert cls in ("small", "medium", "large", "big", "big_nn", "big_nt", "big_tn", "big_tt")
                assert entry["rung"] in mod.RUNGS, f"tuned.json names {entry['rung']}, not in RUNGS"
                assert all(isinstance(o, str) for o in entry["options"]) and entry["gflops"] >= 0
    assert "01_naive" in mod.RUNGS
    for arch in (80, 90):
        for suffix in sorted({s for r in mod.RUNGS.values() for s in r.dtypes}):
            for tf32 in (False, True):
                for shape in ((7, 7, 7, 1), (1000, 1000, 1000, 1), (4096, 4096, 4096, 1)):
                    name, options = mod.choose(*shape, suffix, arch, allow_tf32=tf32)
                    spec = mod.RUNGS[name]
                    assert suffix in spec.dtypes and spec.arch <= arch
                    assert not (suffix == "f32" and not tf32 and spec.tensor_cores)


# ---- matmul and linear on fake DeviceArrays -------------------------------------------------------
def dev(array, x):
    return array.from_numpy(np.asarray(x), 0)


def check_product(got, want, dtype):
    host = read(got)
    assert host.shape == want.shape and host.dtype == dtype and got.c_contiguous
    np.testing.assert_allclose(host, want, rtol=1e-5 if dtype == F32 else 1e-12, atol=1e-5 if dtype == F32 else 1e-12)


MATMUL_SHAPES = [((33, 65), (65, 17)), ((1, 1), (1, 1)), ((127, 1), (1, 5)), ((2, 1, 5, 7), (3, 7, 4)),
                 ((7,), (7, 4)), ((3, 7), (7,)), ((7,), (7,)), ((3, 0), (0, 4)), ((0, 3), (3, 4)),
                 ((4, 2, 3), (3, 5)), ((6,), (2, 6, 3)), ((2, 3, 4), (4,)), ((5, 1, 3, 2), (1, 4, 2, 6))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_matmul_follows_np_matmul(gm, rng, shapes, dtype):
    mod, launcher, array = gm
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    got = mod.matmul(dev(array, a), dev(array, b))
    check_product(got, np.matmul(a.astype(np.float64), b.astype(np.float64)), dtype)
    assert not launcher.copies


def test_transposed_views_reach_the_kernel_as_layouts_without_copies(gm, rng):
    mod, launcher, array = gm
    x, w, g = (rng.standard_normal(s).astype(F32) for s in ((9, 5), (7, 5), (9, 7)))
    X, W, G = dev(array, x), dev(array, w), dev(array, g)
    cases = [(X, W.T, x @ w.T, "nt", 5, 5), (G.T, X, g.T @ x, "tn", 7, 5), (G, W, g @ w, "nn", 7, 5),
             (W, X.T, w @ x.T, "nt", 5, 5), (W.T, G.T[:, :], w.T @ g.T, "tt", 5, 7)]
    for A, B, want, layout, lda, ldb in cases:
        check_product(mod.matmul(A, B), want.astype(np.float64), F32)
        rec = launcher.launches[-1]
        assert rec["name"] == f"gemm_{layout}_f32" and (rec["lda"], rec["ldb"]) == (lda, ldb)
    # batched: x.transpose(-1, -2) of a [B, M, K] tensor is 't' too
    xb, gb = rng.standard_normal((3, 9, 5)).astype(F32), rng.standard_normal((3, 9, 7)).astype(F32)
    XB, GB = dev(array, xb), dev(array, gb)
    check_product(mod.matmul(XB.transpose(0, 2, 1), GB), np.swapaxes(xb, 1, 2).astype(np.float64) @ gb, F32)
    assert launcher.launches[-1]["name"] == "gemm_tn_f32" and launcher.launches[-1]["batch"] == 3
    assert not launcher.copies


def test_split_k_time(gm):
    time = gm[0].split_k_time
    assert time(36, 16384, 264, 1) == 16384                     # one wave walking all of K
    assert time(1024, 16384, 264, 1) == 4 * 16384               # 1024 blocks: 4 waves of 264
    assert time(36, 16384, 264, 7) == 2336 + 32                 # 252 blocks: one wave, then the rest's
    assert time(36, 16384, 264, 8) == 2 * 2048                  # 288 blocks: a second wave of 24
    assert time(1, 16384, 264, 31) == 512 + 512                 # a rest as long as a slice costs a wave


def test_split_k_slices_rule(gm):
    split = gm[0].split_k_slices
    # 132 SMs x 2 blocks of 128 x 128 (the large fp32 configuration): 264 slots
    assert split(36, 16384, 264) == 7        # 1536 x 384 weight gradient: 252 blocks, not 4 x 36 = 144
    assert split(9, 16384, 264) == 28        # 384 x 384: 252 blocks of 576 and a rest of 256
    assert split(1, 16384, 264) == 32        # 31 would leave a rest of 512: a second wave
    assert split(54, 16384, 132) == 7        # 64 x 128 tiles, one block per SM: 378 blocks, 3 waves
    assert split(1024, 16384, 264) == 1      # 4096 x 4096: as fast split or not
    assert split(36, 2048, 264) == 1         # short K: not worth a second pass
    assert split(36, 4096, 264) == 7         # K = 4096: up to 8 slices of 512
    assert split(36, 4095, 264) == 1
    assert split(0, 16384, 264) == 1
    for tiles in (1, 5, 36, 100, 140, 300):  # never a slice shorter than the minimum, never slower
        for k in (4096, 5000, 16384, 100003):
            s = split(tiles, k, 264)
            assert 1 <= s <= 32 and k // s >= 512
            assert gm[0].split_k_time(tiles, k, 264, s) <= gm[0].split_k_time(tiles, k, 264, 1)


def test_split_k_length(gm):
    mod = gm[0]
    length = mod.split_k_length
    assert length(16384, 7) == 2336 and 16384 - 7 * 2336 == 32     # 2340 rounded down to whole k-tiles
    assert length(16384, 28) == 576 and 16384 - 28 * 576 == 256
    assert length(16384, 4) == 4096                                  # even: no rest
    assert length(8229, 16) == 512                                   # odd K: a rest of 37
    for k, s in ((4096, 8), (100003, 32), (5000, 9)):
        n = length(k, s)
        assert n % 32 == 0 and 0 <= k - s * n < 32 * s
    with pytest.raises(ValueError, match="shorter than 32"):
        length(100, 8)


def test_the_power_of_two_rule_is_kept_for_the_benchmark(gm):
    before = gm[0]._power_of_two_slices
    assert before(1536, 384, 16384, 132) == 4 and before(384, 384, 16384, 132) == 16
    assert before(1536, 384, 4099, 132) == 1 and before(4096, 4096, 16384, 132) == 1


def test_is_narrow(gm):
    narrow = gm[0].is_narrow
    assert narrow(256, 64, (128, 128)) and narrow(64, 256, (128, 128)) and narrow(256, 1, (64, 128))
    assert not narrow(256, 65, (128, 128))           # lm_head's 65: a 64-wide tile wastes as much
    assert not narrow(256, 64, (64, 64)) and not narrow(64, 256, (64, 128))
    assert not narrow(1024, 1024, (128, 128))


SMALL_64 = ["-DBM=64", "-DBN=64", "-DBK=16", "-DWM=32", "-DWN=32", "-DWNITER=2", "-DTM=4", "-DTN=4",
            "-DSTAGES=3", "-DKUNROLL=8", "-DMIN_BLOCKS=4", "-DELEM_COPY=0", "-DLEAN=1"]
LARGE_128 = ["-DBM=128", "-DBN=128", "-DBK=16", "-DWM=32", "-DWN=64", "-DWNITER=2", "-DTM=4", "-DTN=4",
             "-DSTAGES=3", "-DKUNROLL=8", "-DMIN_BLOCKS=2", "-DELEM_COPY=0", "-DLEAN=1"]
MEDIUM_64x128 = ["-DBM=64", "-DBN=128", "-DBK=16", "-DWM=32", "-DWN=32", "-DWNITER=1", "-DTM=4", "-DTN=4",
                 "-DSTAGES=3", "-DKUNROLL=16", "-DMIN_BLOCKS=0", "-DELEM_COPY=0", "-DLEAN=0"]
SHAPE_TABLE = {"sm_90": {"fp32": {
    "small": {"rung": "09_pipelined", "options": SMALL_64, "gflops": 872.0},
    "medium": {"rung": "09_pipelined", "options": MEDIUM_64x128, "gflops": 28361.2},
    "large": {"rung": "09_pipelined", "options": LARGE_128, "gflops": 41309.0}}}}


BIG_NN = ["-DBM=128", "-DBN=256", "-DBK=16", "-DWM=64", "-DWN=64", "-DWNITER=2", "-DTM=8", "-DTN=4",
          "-DSTAGES=4", "-DKUNROLL=16", "-DMIN_BLOCKS=1", "-DELEM_COPY=0", "-DLEAN=1"]
BIG = ["-DBM=256", "-DBN=128", "-DBK=16", "-DWM=64", "-DWN=64", "-DWNITER=2", "-DTM=8", "-DTN=4",
       "-DSTAGES=5", "-DKUNROLL=16", "-DMIN_BLOCKS=1", "-DELEM_COPY=0", "-DLEAN=1"]


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_big_float32_products_run_their_layouts_configuration(gm, monkeypatch, tmp_path, rng, layout):
    """A float32 product at least BIG_MIN (here 16) in every dimension runs where it lies (no
    transpose launched) with the table's "big_<layout>" configuration, else its "big" one, in
    every call (the second replays the filed plan); batched too; one dimension under BIG_MIN
    runs the large class's choice."""
    mod, launcher, array = gm
    table = json.loads(json.dumps(SHAPE_TABLE))
    table["sm_90"]["fp32"]["big"] = {"rung": "09_pipelined", "options": BIG, "gflops": 48700.0}
    table["sm_90"]["fp32"]["big_nn"] = {"rung": "09_pipelined", "options": BIG_NN, "gflops": 46400.0}
    use_table(mod, monkeypatch, tmp_path, table)
    monkeypatch.setattr(mod, "BIG_MIN", 16)

    def operand(batch, rows, cols, letter):
        x = rng.standard_normal((*batch, rows, cols)).astype(F32)
        if letter == "n":
            return x, dev(array, x)
        swap = (*range(len(batch)), len(batch) + 1, len(batch))        # the last two axes
        return x, dev(array, np.ascontiguousarray(x.transpose(swap))).transpose(swap)
    for batch, (m, n, k), big in (((), (40, 36, 20), True), ((3,), (40, 36, 20), True), ((), (40, 36, 12), False)):
        (a, da), (b, db) = operand(batch, m, k, layout[0]), operand(batch, k, n, layout[1])
        for _ in range(2):
            launcher.launches.clear()
            got = mod.matmul(da, db, None)
            np.testing.assert_allclose(read(got), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
            assert [r["name"] for r in launcher.launches] == [f"gemm_{layout}_f32"], launcher.launches
            expected = (BIG_NN if layout == "nn" else BIG) if big else mod.choose(m, n, k, 1, "f32", 90)[1]
            assert launcher.launches[-1]["options"] == tuple(expected)


def test_few_tiles_plan_matches_the_h100_measurements(gm, monkeypatch, tmp_path):
    """The plans behind the comment in gemm.py (132 SMs, the shipped classes' tiles): small
    products split K so that one block per SM does the work; a full wave of 128 x 128 tiles takes
    the large configuration; nothing splits into a rest of K or below FEW_TILES_MIN_K."""
    mod = gm[0]
    use_table(mod, monkeypatch, tmp_path, SHAPE_TABLE)
    small, medium, large = (("09_pipelined", tuple(o)) for o in (SMALL_64, MEDIUM_64x128, LARGE_128))

    def plan(m, n, k):
        return mod.few_tiles_plan(m, n, k, mod.choose(m, n, k, 1, "f32", 90, allow_tf32=False), large, 132)

    assert plan(128, 128, 128) == (small, 1)          # K under FEW_TILES_MIN_K
    assert plan(256, 256, 256) == (small, 4)          # 16 tiles x 4 = 64 blocks (8 would be 32 long)
    assert plan(384, 384, 384) == (small, 3)          # 36 x 3 = 108 blocks
    assert plan(512, 512, 512) == (small, 2)          # 128 blocks; large x 8 ties at 128 but needs more slices
    assert plan(768, 768, 768) == (large, 3)          # medium: 72 tiles, x 2 = 144 > 132; large: 36 x 3
    assert plan(1024, 1024, 1024) == (medium, 1)      # 128 tiles of 64 x 128; large x 2 ties with more slices
    assert plan(2048, 2048, 2048) == (large, 1)       # 256 large tiles: a full wave
    assert plan(2048, 1024, 2048) == (large, 1)       # 128 large tiles fit one per SM; medium's 256 do not
    assert plan(1000, 1000, 1000) == (medium, 1)      # no slice count divides 1000 into whole k-tiles
    # narrow: the 128-wide large tiles are never taken for a product 64 or fewer wide
    assert plan(64, 4096, 1024)[0] == small and plan(64, 4096, 1024)[0] != large


def test_few_tiles_split_runs_and_is_exact(gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, SHAPE_TABLE)
    monkeypatch.setattr(mod, "sm_count", lambda index: 132)
    a, b, bias = (rng.standard_normal(s).astype(F32) for s in ((384, 384), (384, 384), (384,)))
    got = mod.matmul(dev(array, a), dev(array, b), dev(array, bias))
    np.testing.assert_allclose(read(got), a.astype(np.float64) @ b + bias, rtol=1e-5, atol=1e-4)
    (launch,) = launcher.launches                     # one strided-batched GEMM; the bias is added after the sum
    assert (launch["batch"], launch["k"], launch["options"], launch["bias"]) == (3, 128, tuple(SMALL_64), False)
    launcher.launches.clear()
    monkeypatch.setattr(mod, "SHAPE_RULES", False)    # the rules off: one launch of the whole K
    mod.matmul(dev(array, a), dev(array, b))
    assert [(r["batch"], r["k"]) for r in launcher.launches] == [(1, 384)]


def test_narrow_products_take_the_64_wide_small_configuration(gm, monkeypatch, tmp_path):
    mod = gm[0]
    use_table(mod, monkeypatch, tmp_path, SHAPE_TABLE)
    small, large = ("09_pipelined", tuple(SMALL_64)), ("09_pipelined", tuple(LARGE_128))
    # attention at nanoGPT's shapes: 384 batches, T = 256, head dim 64
    assert mod.choose(256, 256, 64, 384, "f32", 90, allow_tf32=False) == large      # q @ k^T: 256 wide
    assert mod.choose(256, 64, 256, 384, "f32", 90, allow_tf32=False) == small      # p @ v: 64 wide
    assert mod.choose(64, 256, 256, 384, "f32", 90, allow_tf32=False) == small
    assert mod.choose(256, 65, 256, 384, "f32", 90, allow_tf32=False) == large      # 65: not narrow
    assert mod.choose(8192, 48, 384, 1, "f32", 90, allow_tf32=False) == small       # medium's 64 x 128 too
    assert mod.choose(48, 8192, 384, 1, "f32", 90, allow_tf32=False)[1] == tuple(MEDIUM_64x128)  # BM is 64
    assert mod.resident_blocks(*small) == 4 and mod.resident_blocks(*large) == 2
    assert mod.resident_blocks("09_pipelined", tuple(MEDIUM_64x128)) == 1 and mod.resident_blocks("05_blocktile_2d", ()) == 1
    monkeypatch.setattr(mod, "SHAPE_RULES", False)                                   # the rule before
    assert mod.choose(256, 64, 256, 384, "f32", 90, allow_tf32=False) == large


def test_narrow_rule_needs_a_64_wide_small_configuration(gm, fake_ladder, monkeypatch, tmp_path):
    # no table: the small class's choice is the same 128 x 128 default, so nothing changes
    mod = gm[0]
    assert mod.choose(256, 64, 256, 384, "f32", 90, allow_tf32=False) == mod.choose(256, 256, 256, 384, "f32", 90,
                                                                                  allow_tf32=False)
    # TF32 and half: the small entries tile 128 x 128 as well
    assert fake_ladder.choose(256, 64, 256, 384, "f32", 90, allow_tf32=True)[0] == "10_tf32_mma"


def test_narrow_matmul_launches_64_wide_tiles(gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, SHAPE_TABLE)
    a, b = rng.standard_normal((300, 65, 57)).astype(F32), rng.standard_normal((300, 57, 63)).astype(F32)
    check_product(mod.matmul(dev(array, a), dev(array, b)), a.astype(np.float64) @ b, F32)   # 1.2 M: medium
    rec = launcher.launches[-1]
    assert rec["options"] == tuple(SMALL_64) and rec["grid"] == (1, 2, 300) and rec["block"] == (128,)


@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_tall_k_products_are_split_and_summed(gm, monkeypatch, rng, layout, with_bias):
    """The slices (one batched GEMM) and the rest of K (one GEMM, with the bias) write one
    [slices + 1, M, N] buffer that one reduction sums: no elementwise add."""
    mod, launcher, array = gm
    monkeypatch.setattr(sys.modules["minitorch.native.cuda.elementwise"], "binary", None)   # not called
    m, n, k = 300, 200, 8192 + 37                            # odd K: 16 slices of 512 and a rest of 37
    a, b = rng.standard_normal((m, k)).astype(F32), rng.standard_normal((k, n)).astype(F32)
    A = dev(array, np.ascontiguousarray(a.T)).T if layout[0] == "t" else dev(array, a)
    B = dev(array, np.ascontiguousarray(b.T)).T if layout[1] == "t" else dev(array, b)
    bias = rng.standard_normal(n).astype(F32) if with_bias else None
    got = mod.matmul(A, B, dev(array, bias) if with_bias else None)
    want = a.astype(np.float64) @ b + (bias if with_bias else 0)
    np.testing.assert_allclose(read(got), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    # no table: rung 09's default 128 x 128 tiles, one block per SM: 6 tiles for 132 slots
    slices = mod.split_k_slices(6, k, 132)
    assert mod.slices_for(m, n, k, "09_pipelined", (), 132) == slices
    length = mod.split_k_length(k, slices)
    assert (slices, length) == (16, 512)
    batched, rest = launcher.launches[-2:]
    assert batched["batch"] == slices and batched["k"] == length and not batched["bias"]
    assert rest["batch"] == 1 and rest["k"] == 37 and rest["bias"] == with_bias
    assert batched["name"] == rest["name"] == f"gemm_{layout}_f32"
    assert not launcher.copies                               # the slices are views


def test_split_k_slices_run_the_large_configuration(gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, SHAPE_TABLE)
    a, b = rng.standard_normal((300, 8192 + 37)).astype(F32), rng.standard_normal((8192 + 37, 200)).astype(F32)
    got = mod.matmul(dev(array, a), dev(array, b))          # 300 x 200: a small product, a long K
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(read(got), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    batched, rest = launcher.launches[-2:]
    # 6 tiles of 128 x 128 on 132 x 2 slots: 16 slices of 512 (96 blocks, one wave) and a rest of 37
    assert (batched["batch"], batched["k"], rest["k"]) == (16, 512, 37)
    assert batched["options"] == rest["options"] == tuple(LARGE_128) and batched["block"] == (256,)
    launcher.launches.clear()
    mod.matmul(dev(array, a[:, :2048]), dev(array, b[:2048]))   # K = 2048: its own class, 4 slices (few tiles)
    assert [(r["options"], r["batch"], r["k"]) for r in launcher.launches] == [(tuple(SMALL_64), 4, 512)]


def test_split_k_divides_k_exactly_without_a_rest(gm, rng):
    mod, launcher, array = gm
    g, x = rng.standard_normal((8192, 300)).astype(F32), rng.standard_normal((8192, 200)).astype(F32)
    got = mod.matmul(dev(array, g).T, dev(array, x))         # [300, 8192] @ [8192, 200], a 'tn' weight gradient
    want = g.T.astype(np.float64) @ x
    np.testing.assert_allclose(read(got), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    assert launcher.launches[-1]["batch"] == 16 and launcher.launches[-1]["k"] == 512
    launcher.launches.clear()
    got = mod.matmul(dev(array, g).T[:, :2048], dev(array, x)[:2048])   # K = 2048: the few-tiles rule's equal slices
    np.testing.assert_allclose(read(got), g[:2048].T.astype(np.float64) @ x[:2048], rtol=1e-5, atol=1e-3)
    (slices, k), = [(r["batch"], r["k"]) for r in launcher.launches]     # one launch: no rest of K
    assert slices > 1 and slices * k == 2048


def test_split_k_uses_the_rule_before_when_the_shape_rules_are_off(gm, monkeypatch, rng):
    mod, launcher, array = gm
    monkeypatch.setattr(mod, "SHAPE_RULES", False)
    g, x = rng.standard_normal((8192, 300)).astype(F32), rng.standard_normal((8192, 200)).astype(F32)
    got = mod.matmul(dev(array, g).T, dev(array, x))
    np.testing.assert_allclose(read(got), g.T.astype(np.float64) @ x, rtol=1e-5, atol=1e-3)
    assert launcher.launches[-1]["batch"] == mod._power_of_two_slices(300, 200, 8192, 132) == 8


def test_views_without_a_blas_layout_are_copied_first(gm, rng):
    mod, launcher, array = gm
    base = rng.standard_normal((40, 66)).astype(F32)
    A = dev(array, base)[:, ::2].T                      # [33, 40]: no unit stride at all
    c = rng.standard_normal((40, 4)).astype(F32)
    check_product(mod.matmul(A, dev(array, c)), base[:, ::2].T.astype(np.float64) @ c, F32)
    assert launcher.copies == [(33, 40)]
    # an expanded row vector ([N] -> [M, N], row stride 0, as mean() backward makes) is copied,
    # never read with a leading dimension that is not its own
    v = rng.standard_normal(5).astype(F32)
    V = dev(array, v)
    expanded = V.as_strided((6, 5), (0, 4))
    w = rng.standard_normal((5, 3)).astype(F32)
    check_product(mod.matmul(expanded, dev(array, w)), np.broadcast_to(v, (6, 5)).astype(np.float64) @ w, F32)
    assert launcher.copies[-1] == (6, 5)


def test_layout_of(gm):
    lo = gm[0].layout_of
    assert lo((3, 4), (16, 4), 4) == ("n", 4)
    assert lo((3, 4), (40, 4), 4) == ("n", 10)           # a slice of wider rows
    assert lo((3, 4), (4, 12), 4) == ("t", 3)            # the .T of a [4, 3]
    assert lo((1, 4), (999, 4), 4) == ("n", 4)           # one row: its stride is never followed
    assert lo((1, 4), (4, 8), 4) == ("t", 2)             # one row of stride 2: 't' with ld 2
    assert lo((4, 1), (8, 4), 4) == ("n", 2)
    assert lo((3, 4), (0, 4), 4) is None                 # rows overlap (expanded)
    assert lo((1, 4), (4, 0), 4) is None                 # one element repeated
    assert lo((3, 4), (-16, 4), 4) is None               # negative strides
    assert lo((3, 4), (8, 24), 4) is None                # no unit stride


def test_batched_rows_fold_into_one_gemm(gm, rng):
    mod, launcher, array = gm
    x, w = rng.standard_normal((4, 6, 5)).astype(F32), rng.standard_normal((5, 3)).astype(F32)
    check_product(mod.matmul(dev(array, x), dev(array, w)), x.astype(np.float64) @ w, F32)
    rec = launcher.launches[-1]
    assert (rec["m"], rec["n"], rec["k"], rec["batch"]) == (24, 3, 5, 1)
    # a batch stride that is not "the next rows" stays batched (here: every batch is one matrix)
    X = dev(array, x).as_strided((4, 6, 5), (0, 20, 4))
    check_product(mod.matmul(X, dev(array, w)), np.broadcast_to(x[0], (4, 6, 5)).astype(np.float64) @ w, F32)
    rec = launcher.launches[-1]
    assert (rec["m"], rec["batch"]) == (6, 4)
    # a sliced batch of rows still folds when the rows are evenly spaced: [:, ::2] of [4, 12, 5]
    big = rng.standard_normal((4, 12, 5)).astype(F32)
    check_product(mod.matmul(dev(array, big)[:, ::2], dev(array, w)), big[:, ::2].astype(np.float64) @ w, F32)
    assert launcher.launches[-1]["batch"] == 1 and launcher.launches[-1]["lda"] == 10
    assert not launcher.copies


def test_linear_is_one_nt_gemm_with_the_bias(gm, rng):
    mod, launcher, array = gm
    for xs in ((9, 5), (2, 3, 5), (5,), (0, 5)):
        x = rng.standard_normal(xs)
        w, b = rng.standard_normal((7, 5)), rng.standard_normal(7)
        got = mod.linear(dev(array, x), dev(array, w), dev(array, b))
        check_product(got, x @ w.T + b, F64)
        if math.prod(xs):
            rec = launcher.launches[-1]
            assert rec["name"] == "gemm_nt_f64" and rec["bias"] and rec["batch"] == 1
        check_product(mod.linear(dev(array, x), dev(array, w)), x @ w.T, F64)
    # k == 0: the bias alone
    got = mod.linear(dev(array, np.zeros((3, 0))), dev(array, np.zeros((4, 0))), dev(array, np.arange(4.0)))
    check_product(got, np.tile(np.arange(4.0), (3, 1)), F64)
    assert not launcher.copies


def test_matmul_launches_the_chosen_rung(fake_ladder, gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, TABLE)
    a, b = rng.standard_normal((70, 33)).astype(F32), rng.standard_normal((33, 300)).astype(F32)
    mod.matmul(dev(array, a), dev(array, b))
    rec = launcher.launches[-1]
    assert rec["file"] == "gemm/05_blocktile_2d.cu" and rec["options"] == ()     # a fixed rung: its own geometry
    assert rec["grid"] == (math.ceil(300 / 128), 1, 1)   # the rung's tile (BM, BN) = (128, 128)
    monkeypatch.setattr(mod, "arch_of", lambda index: 80)
    mod.matmul(dev(array, a), dev(array, b))
    assert launcher.launches[-1]["file"] == "gemm/02_coalesced.cu"
    monkeypatch.setattr(mod, "arch_of", lambda index: 90)
    mod.matmul(dev(array, a.astype(F64)), dev(array, b.astype(F64)))
    assert launcher.launches[-1]["file"] == "gemm/05_blocktile_2d.cu" and launcher.launches[-1]["name"].endswith("f64")


def test_a_repeated_product_runs_its_plan_and_gets_the_right_values(fake_ladder, gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, TABLE)
    a, b, bias = (rng.standard_normal(s).astype(F32) for s in ((70, 33), (33, 300), (300,)))
    first = read(mod.matmul(dev(array, a), dev(array, b), dev(array, bias)))
    assert len(mod._plans) == 1
    monkeypatch.setattr(mod, "choose", lambda *args, **kw: pytest.fail("a planned product chose again"))
    a2, b2, bias2 = (x + 1 for x in (a, b, bias))          # same shapes, other values and addresses
    again = read(mod.matmul(dev(array, a2), dev(array, b2), dev(array, bias2)))
    one, two = launcher.launches[-2:]
    assert (one["file"], one["grid"], one["m"], one["n"], one["k"]) == (two["file"], two["grid"], 70, 300, 33)
    np.testing.assert_allclose(first, a.astype(np.float64) @ b + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(again, a2.astype(np.float64) @ b2 + bias2, rtol=1e-5, atol=1e-5)


def test_a_plan_is_never_used_for_another_layout_bias_dtype_or_switch(fake_ladder, gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    use_table(mod, monkeypatch, tmp_path, TABLE)
    a, b = rng.standard_normal((600, 200)).astype(F32), rng.standard_normal((200, 600)).astype(F32)
    A, B = dev(array, a), dev(array, b)
    want = a.astype(np.float64) @ b

    def run(x, y, *bias):
        out = read(mod.matmul(x, y, *bias))
        return out, launcher.launches[-1]

    got, rec = run(A, B)
    assert rec["name"] == "gemm_nn_f32" and rec["file"] == "gemm/09_pipelined.cu"   # medium, fp32: not tuned
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    bt = dev(array, np.ascontiguousarray(b.T))                 # the same B as a transposed view: layout 't'
    got, rec = run(A, bt.T)
    assert rec["name"] == "gemm_nt_f32" and rec["ldb"] == 200
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    got, rec = run(A, B, dev(array, np.ones(600, F32)))        # with a bias: its own plan
    assert rec["bias"]
    np.testing.assert_allclose(got, want + 1, rtol=1e-5, atol=1e-4)
    got, rec = run(dev(array, a[:70, :33]), dev(array, b[:33]))  # other shapes: the small class's tuned rung
    assert rec["file"] == "gemm/05_blocktile_2d.cu" and (rec["m"], rec["k"]) == (70, 33)
    got, rec = run(dev(array, a.astype(F64)), dev(array, b.astype(F64)))
    assert rec["name"] == "gemm_nn_f64"
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", True)     # medium tf32: built-in order
    assert run(A, B)[1]["file"] == "gemm/10_tf32_mma.cu"
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", False)
    assert run(A, B)[1]["file"] == "gemm/09_pipelined.cu"
    monkeypatch.setattr(mod, "arch_of", lambda index: 75)                        # another GPU architecture
    assert run(A, B)[1]["file"] == "gemm/08_warptiling.cu"
    monkeypatch.setattr(mod, "arch_of", lambda index: 90)
    monkeypatch.setattr(mod, "SHAPE_RULES", False)                                # the benchmark's switch
    run(A, B)
    assert len(mod._plans) == 8


def test_a_plan_asks_for_its_kernel_at_every_launch(fake_ladder, gm, monkeypatch, rng):
    """compiler.forget_edited() drops kernels whose .cu changed (a notebook's edit): a plan must not
    keep launching the old one, so it names the kernel and looks it up each time."""
    mod, launcher, array = gm
    A, B = dev(array, rng.standard_normal((70, 33)).astype(F32)), dev(array, rng.standard_normal((33, 300)).astype(F32))
    mod.matmul(A, B)
    asked = []
    lookup = mod.kernel
    monkeypatch.setattr(mod, "kernel", lambda *args: asked.append(args) or lookup(*args))
    mod.matmul(A, B)
    assert [args[:2] for args in asked] == [("gemm/09_pipelined.cu", "gemm_nn_f32")]


def test_reload_tuned_forgets_the_plans(fake_ladder, gm, monkeypatch, tmp_path, rng):
    mod, launcher, array = gm
    A, B = dev(array, rng.standard_normal((70, 33)).astype(F32)), dev(array, rng.standard_normal((33, 300)).astype(F32))
    mod.matmul(A, B)
    assert launcher.launches[-1]["file"] == "gemm/09_pipelined.cu" and mod._plans     # no table: built-in order
    use_table(mod, monkeypatch, tmp_path, TABLE)                                      # rewritten table, reloaded
    assert not mod._plans
    mod.matmul(A, B)
    assert launcher.launches[-1]["file"] == "gemm/05_blocktile_2d.cu"


def test_copied_operands_file_no_plan(gm, rng):
    mod, launcher, array = gm
    a = rng.standard_normal((6, 5, 4)).astype(F32)
    strided = dev(array, a)[:, :, ::2]            # [6, 5, 2], no unit stride: copied first
    b = dev(array, rng.standard_normal((2, 3)).astype(F32))
    np.testing.assert_allclose(read(mod.matmul(strided, b)), a[:, :, ::2] @ read(b), rtol=1e-5, atol=1e-5)
    assert launcher.copies and not mod._plans



def test_split_k_files_its_decision_and_its_launches(gm, rng):
    """A split product files a SplitPlan under its key and Plans for its batched GEMM and its rest;
    the second call replays them: the same launches, the same values, no new choice."""
    mod, launcher, array = gm
    a, b = rng.standard_normal((8, 8192 + 37)).astype(F32), rng.standard_normal((8192 + 37, 8)).astype(F32)
    da, db, bias = dev(array, a), dev(array, b), dev(array, np.arange(8, dtype=F32))
    first = read(mod.matmul(da, db, bias))
    split = [p for p in mod._plans.values() if isinstance(p, mod.SplitPlan)]
    assert len(split) == 1 and split[0].slices > 1 and len(mod._plans) == 3    # the decision, slices, rest
    calls = [(r["batch"], r["k"], r["bias"]) for r in launcher.launches]
    launcher.launches.clear()
    mod.choose = None                                 # a replay must not choose again
    second = read(mod.matmul(da, db, bias))
    assert [(r["batch"], r["k"], r["bias"]) for r in launcher.launches] == calls
    np.testing.assert_array_equal(second, first)
    np.testing.assert_allclose(first, a.astype(np.float64) @ b + np.arange(8), rtol=1e-5, atol=1e-3)


def test_matmul_errors(gm):
    mod, _, array = gm
    with pytest.raises(ValueError, match="inner sizes"):
        mod.matmul(dev(array, np.ones((2, 3), F32)), dev(array, np.ones((4, 2), F32)))
    with pytest.raises(TypeError):
        mod.matmul(dev(array, np.ones((2, 3), np.int64)), dev(array, np.ones((3, 2), np.int64)))
    with pytest.raises(TypeError):
        mod.matmul(dev(array, np.ones((2, 3), F32)), dev(array, np.ones((3, 2), F64)))
    with pytest.raises(ValueError):
        mod.matmul(dev(array, np.ones((), F32)), dev(array, np.ones((3, 2), F32)))
    with pytest.raises(ValueError):
        mod.matmul(dev(array, np.ones((2, 2, 3), F32)), dev(array, np.ones((3, 3, 2), F32)))


# ---- the Tensor layer: F.linear / nn.Linear as one op ---------------------------------------------------
def composition(x, w, b):
    """Phase 03's F.linear, kept here as the reference the fused op must equal."""
    out = x @ w.T
    return out + b if b is not None else out


LINEAR_SHAPES = [((9, 50), 7), ((1, 1), 1), ((2, 3, 5), 4), ((5,), 3), ((4, 1, 3, 2), 6), ((0, 3), 2), ((33, 127), 65)]


@pytest.mark.parametrize("xs,out", LINEAR_SHAPES, ids=str)
@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "no-bias"])
def test_linear_fused_equals_composition_and_torch(device, rng, xs, out, with_bias):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal((out, xs[-1])).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32) if with_bias else None
    g = rng.standard_normal(xs[:-1] + (out,)).astype(np.float32)

    def ours(fn):
        tx, tw = (mt.tensor(v, device=device, requires_grad=True) for v in (x, w))
        tb = mt.tensor(b, device=device, requires_grad=True) if with_bias else None
        y = fn(tx, tw, tb)
        y.backward(mt.tensor(g, device=device))
        return [to_np(y), to_np(tx.grad), to_np(tw.grad)] + ([to_np(tb.grad)] if with_bias else [])

    fused, composed = ours(F.linear), ours(composition)
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x, w))
    tb = torch.tensor(b, requires_grad=True) if with_bias else None
    ty = torch.nn.functional.linear(tx, tw, tb)
    ty.backward(torch.tensor(g))
    ref = [ty.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()] + ([tb.grad.numpy()] if with_bias else [])
    for f, c, r in zip(fused, composed, ref):
        assert f.shape == r.shape and f.dtype == np.float32
        scale = max(1.0, np.abs(r).max(initial=0))
        np.testing.assert_allclose(f, r, rtol=1e-5, atol=1e-5 * scale)
        np.testing.assert_allclose(f, c, rtol=1e-5, atol=1e-5 * scale)


def test_linear_is_one_node_and_nn_linear_uses_it(device, rng):
    layer = nn.Linear(6, 3, device=device)
    x = mt.tensor(rng.standard_normal((4, 2, 6)).astype(np.float32), device=device)
    y = layer(x)
    assert y.grad_fn.name() == "LinearBackward" and y.shape == (4, 2, 3)
    assert F.linear(x, layer.weight).grad_fn.name() == "LinearBackward"
    with pytest.raises(RuntimeError, match=r"input shape \(9, 3\).*weight shape \(3, 6\)"):
        layer(mt.ones(9, 3, device=device))
    with pytest.raises(RuntimeError, match="at least 1D"):
        F.linear(mt.tensor(1.0, device=device), layer.weight)


@pytest.mark.parametrize("xs,out,with_bias", [((3, 4), 5, True), ((2, 3, 4), 2, True), ((4,), 3, False),
                                               ((1, 2, 1, 3), 1, True)], ids=str)
def test_linear_gradcheck(device, rng, xs, out, with_bias):
    inputs = [mt.tensor(rng.standard_normal(xs), dtype=mt.float64, device=device, requires_grad=True),
              mt.tensor(rng.standard_normal((out, xs[-1])), dtype=mt.float64, device=device, requires_grad=True)]
    if with_bias:
        inputs.append(mt.tensor(rng.standard_normal(out), dtype=mt.float64, device=device, requires_grad=True))
    assert gradcheck(lambda *t: F.linear(*t), inputs)


def test_linear_only_the_needed_gradients(device, rng):
    x = mt.tensor(rng.standard_normal((3, 4)).astype(np.float32), device=device)
    w = mt.tensor(rng.standard_normal((2, 4)).astype(np.float32), device=device, requires_grad=True)
    b = mt.tensor(rng.standard_normal(2).astype(np.float32), device=device)
    F.linear(x, w, b).sum().backward()
    assert x.grad is None and b.grad is None
    np.testing.assert_allclose(to_np(w.grad), np.tile(to_np(x).sum(0), (2, 1)), rtol=1e-5)


def test_linear_promotes_and_falls_back_like_phase_03(rng):
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float32)
    w = mt.tensor(rng.standard_normal((2, 4)), dtype=mt.float64)
    y = F.linear(x, w)
    assert y.dtype is mt.float64
    np.testing.assert_allclose(y.numpy(), composition(x.double(), w, None).numpy(), rtol=1e-12)
    b2 = mt.tensor(rng.standard_normal((3, 2)), dtype=mt.float64)   # not [out]: broadcast as in phase 03
    np.testing.assert_allclose(F.linear(x, w, b2).numpy(), composition(x.double(), w, b2).numpy(), rtol=1e-12)
    with pytest.raises(TypeError):
        F.linear(mt.ones(3, 4, dtype=mt.int64), mt.ones(2, 4, dtype=mt.int64))


# ---- bmm -------------------------------------------------------------------------------------------
BMM_ERRORS = [((2, 3), (2, 3, 4), "float32", "float32"), ((2, 3, 4), (3, 4), "float32", "float32"),
              ((2, 3, 4), (3, 4, 5), "float32", "float32"), ((2, 3, 4), (2, 5, 5), "float32", "float32"),
              ((2, 3, 4), (2, 4, 5), "float32", "float64"), ((2, 3, 4), (2, 4, 5), "int64", "float64"),
              ((2, 3), (3, 4, 5), "float32", "float64"), ((4,), (4,), "float32", "float32")]


@pytest.mark.parametrize("sa,sb,da,db", BMM_ERRORS, ids=str)
def test_bmm_errors_match_pytorch(device, sa, sb, da, db):
    with pytest.raises(RuntimeError) as theirs:
        torch.bmm(torch.ones(sa, dtype=getattr(torch, da)), torch.ones(sb, dtype=getattr(torch, db)))
    a, b = mt.ones(*sa, dtype=getattr(mt, da), device=device), mt.ones(*sb, dtype=getattr(mt, db), device=device)
    with pytest.raises(RuntimeError) as ours:
        mt.bmm(a, b)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as method:
        a.bmm(b)
    assert str(method.value) == str(theirs.value)


def test_bmm_type_errors():
    with pytest.raises(TypeError, match="mat2"):
        mt.bmm(mt.ones(2, 3, 4), 3)
    with pytest.raises(TypeError, match="floating"):
        mt.bmm(mt.ones(2, 3, 4, dtype=mt.int64), mt.ones(2, 4, 5, dtype=mt.int64))


@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 4, 5)), ((1, 1, 1), (1, 1, 1)), ((3, 33, 7), (3, 7, 65)),
                                    ((0, 3, 4), (0, 4, 5)), ((2, 3, 0), (2, 0, 4))], ids=str)
def test_bmm_values_and_gradients_vs_torch(device, rng, shapes):
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    ta, tb = (mt.tensor(v, device=device, requires_grad=True) for v in (a, b))
    y = mt.bmm(ta, tb)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(mt.tensor(g, device=device))
    ra, rb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ry = torch.bmm(ra, rb)
    ry.backward(torch.tensor(g))
    for ours, theirs in ((y, ry), (ta.grad, ra.grad), (tb.grad, rb.grad)):
        np.testing.assert_allclose(to_np(ours), theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    # transposed operands (views) give the same
    np.testing.assert_allclose(to_np(ta.detach().transpose(1, 2).bmm(ta.detach())),
                               np.swapaxes(a, 1, 2) @ a, rtol=1e-5, atol=1e-5)


def test_bmm_gradcheck(device, rng):
    inputs = [mt.tensor(rng.standard_normal(s), dtype=mt.float64, device=device, requires_grad=True)
              for s in ((2, 3, 4), (2, 4, 5))]
    assert gradcheck(mt.bmm, inputs)


# ---- the GPU: dispatched matmul / linear / bmm against cpu ------------------------------------------
@pytest.mark.cuda
@pytest.mark.parametrize("allow_tf32", [False, True], ids=["fp32", "tf32"])
def test_cuda_dispatch_matches_cpu(rng, monkeypatch, allow_tf32):
    """matmul (forward and both backward layouts), F.linear and bmm on the GPU, through whatever
    rung the dispatch picks, against the cpu results; TF32 with its looser tolerance."""
    monkeypatch.setattr(minitorch.backends.cuda.matmul, "allow_tf32", allow_tf32)
    tol = 2e-2 if allow_tf32 else 1e-4
    for xs, out in ((9, 50), 7), ((3, 33, 127), 65), ((2, 1, 300, 64), 257), ((1000,), 7), ((4, 1024), 1024):
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal((out, xs[-1])).astype(np.float32)
        b = rng.standard_normal(out).astype(np.float32)
        g = rng.standard_normal(xs[:-1] + (out,)).astype(np.float32)
        results = {}
        for device in ("cpu", "cuda"):
            tx, tw, tb = (mt.tensor(v, device=device, requires_grad=True) for v in (x, w, b))
            y = F.linear(tx, tw, tb) + composition(tx, tw, tb)
            y.backward(mt.tensor(g, device=device))
            results[device] = [to_np(y), to_np(tx.grad), to_np(tw.grad), to_np(tb.grad)]
        for c, gpu in zip(results["cpu"], results["cuda"]):
            scale = np.abs(c).max(initial=1.0)
            np.testing.assert_allclose(gpu, c, rtol=tol, atol=tol * scale)
    a, b = rng.standard_normal((5, 33, 70)).astype(np.float32), rng.standard_normal((5, 70, 17)).astype(np.float32)
    got = mt.bmm(mt.tensor(a, device="cuda"), mt.tensor(b, device="cuda"))
    np.testing.assert_allclose(to_np(got), a @ b, rtol=tol, atol=tol * np.abs(a @ b).max())


@pytest.mark.cuda
def test_cuda_split_k_weight_gradient(rng):
    """A Linear over 8192 rows: its weight gradient (K = 8192, 12 x 3 output tiles) takes the
    split-K path; values and gradients against float64, odd sizes (not multiples of the tiles)."""
    from minitorch.native.cuda import gemm as G
    assert _split_plan(G, 301, 199, 8192)[0] > 1
    x = rng.standard_normal((8192, 199)).astype(np.float32)
    w = rng.standard_normal((301, 199)).astype(np.float32)
    g = rng.standard_normal((8192, 301)).astype(np.float32)
    tx, tw = (mt.tensor(v, device="cuda", requires_grad=True) for v in (x, w))
    y = F.linear(tx, tw)
    y.backward(mt.tensor(g, device="cuda"))
    want_w = g.T.astype(np.float64) @ x
    np.testing.assert_allclose(to_np(tw.grad), want_w, rtol=1e-4, atol=1e-4 * np.abs(want_w).max())
    np.testing.assert_allclose(to_np(y), x.astype(np.float64) @ w.T, rtol=1e-4, atol=1e-3)
    for dtype in (np.float32, np.float64):                  # a plain tall-K product, both layouts of A
        a, b = rng.standard_normal((4096 * 3, 131)).astype(dtype), rng.standard_normal((4096 * 3, 77)).astype(dtype)
        want = a.T.astype(np.float64) @ b
        got = mt.tensor(a, device="cuda").T @ mt.tensor(b, device="cuda")
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(to_np(got), want, rtol=tol, atol=tol * np.abs(want).max())
        got = mt.tensor(np.ascontiguousarray(a.T), device="cuda") @ mt.tensor(b, device="cuda")
        np.testing.assert_allclose(to_np(got), want, rtol=tol, atol=tol * np.abs(want).max())


def _split_plan(G, m, n, k):
    """(slices, common length) the dispatch picks for one f32 [m, k] @ [k, n] on GPU 0."""
    slices = G.slices_for(m, n, k, *G.choose(m, n, k, 1, "f32", G.arch_of(0), size_class="large"), G.sm_count(0))
    return slices, (G.split_k_length(k, slices) if slices > 1 else k)


@pytest.mark.cuda
@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_cuda_split_k_with_a_ragged_rest_vs_float64(rng, layout, dtype, poisoned_allocator):
    """Odd M, N, K (K not a multiple of the slice count nor of 32): the slices' batched GEMM, the
    rest's GEMM with the bias, the reduction; every layout, against float64 on the host. The
    output comes from a poisoned pool (NaN): an unwritten element fails."""
    from minitorch.native.cuda import gemm as G
    m, n, k = 301, 199, 3 * 4096 + 37
    slices, length = _split_plan(G, m, n, k) if dtype == np.float32 else (0, 0)
    if dtype == np.float32:
        assert slices > 1 and k - slices * length > 0, (slices, length)     # the ragged path runs
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    A = mt.tensor(np.ascontiguousarray(a.T), device="cuda").T if layout[0] == "t" else mt.tensor(a, device="cuda")
    B = mt.tensor(np.ascontiguousarray(b.T), device="cuda").T if layout[1] == "t" else mt.tensor(b, device="cuda")
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want = a.astype(np.float64) @ b
    for with_bias in (False, True):
        got = G.matmul(A._data, B._data, mt.tensor(bias, device="cuda")._data if with_bias else None).get()
        ref = want + (bias if with_bias else 0)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max() * np.sqrt(k) / 10)


@pytest.mark.cuda
@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
def test_cuda_narrow_products_vs_float64(rng, layout, poisoned_allocator):
    """Batched products 63 or 64 wide (attention's P @ V and its gradients, odd sizes) in a class
    whose configuration tiles 128 wide: the narrow rule's 64-wide tiles, against float64."""
    from minitorch.native.cuda import gemm as G
    for batch, m, n, k in ((300, 255, 63, 257), (384, 256, 64, 256), (300, 64, 255, 257), (7, 1, 64, 3)):
        rung, options = G.choose(m, n, k, batch, "f32", G.arch_of(0))
        if G.arch_of(0) == 90 and G.shape_class(m, n, k, batch) != "small":
            assert not G.is_narrow(m, n, G.tile_of(rung, options)), (m, n, rung, options)
        a = rng.standard_normal((batch, m, k)).astype(np.float32)
        b = rng.standard_normal((batch, k, n)).astype(np.float32)
        A = mt.tensor(np.ascontiguousarray(np.swapaxes(a, 1, 2)), device="cuda").transpose(1, 2) \
            if layout[0] == "t" else mt.tensor(a, device="cuda")
        B = mt.tensor(np.ascontiguousarray(np.swapaxes(b, 1, 2)), device="cuda").transpose(1, 2) \
            if layout[1] == "t" else mt.tensor(b, device="cuda")
        got = to_np(mt.bmm(A, B))
        want = a.astype(np.float64) @ b
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.cuda
def test_cuda_float32_never_uses_tensor_cores_by_default():
    from minitorch.native.cuda import gemm
    assert minitorch.backends.cuda.matmul.allow_tf32 is False
    arch = gemm.arch_of(0)
    for m, n, k, batch in ((7, 7, 7, 1), (1024, 1024, 1024, 1), (4096, 4096, 4096, 1), (64, 64, 64, 4096)):
        name, _ = gemm.choose(m, n, k, batch, "f32", arch)
        assert name in gemm.RUNGS and not gemm.RUNGS[name].tensor_cores and gemm.RUNGS[name].arch <= arch


@pytest.mark.cuda
@pytest.mark.parametrize("view", ["stepped", "expanded"])
def test_cuda_linear_reads_a_strided_bias(rng, view):
    """The kernels read bias[n]: a bias that is a view with another stride is copied first."""
    x = rng.standard_normal((33, 7)).astype(np.float32)
    w = rng.standard_normal((9, 7)).astype(np.float32)
    base = rng.standard_normal(18).astype(np.float32)
    out = {}
    for dev in ("cpu", "cuda"):
        b = mt.tensor(base, device=dev)
        b = b[::2] if view == "stepped" else b[:1].expand(9)
        out[dev] = F.linear(mt.tensor(x, device=dev), mt.tensor(w, device=dev), b).cpu().numpy()
    np.testing.assert_allclose(out["cuda"], out["cpu"], rtol=1e-4, atol=1e-4)


@pytest.mark.cuda
def test_cuda_float64_gradcheck_through_the_dispatch(rng):
    inputs = [mt.tensor(rng.standard_normal(s), dtype=mt.float64, device="cuda", requires_grad=True)
              for s in ((2, 3, 4), (5, 4), (5,))]
    assert gradcheck(lambda *t: F.linear(*t), inputs)
    inputs = [mt.tensor(rng.standard_normal(s), dtype=mt.float64, device="cuda", requires_grad=True)
              for s in ((2, 3, 4), (2, 4, 5))]
    assert gradcheck(mt.bmm, inputs)


# ---- matmul backward: x [..., M, K] @ W [K, N] folds W's gradient into one 'tn' product ---------------
@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (4,)), ((3, 0, 4), (4, 2)),
                                   ((2, 3, 0), (0, 5)), ((5, 2, 7), (7, 1))], ids=str)
def test_matmul_backward_with_a_shared_matrix_vs_torch(device, rng, sa, sb):
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    ta, tb = (mt.tensor(v, device=device, requires_grad=True) for v in (a, b))
    y = ta @ tb
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(mt.tensor(g, device=device))
    ra, rb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    (ra @ rb).backward(torch.tensor(g))
    np.testing.assert_allclose(to_np(ta.grad), ra.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(tb.grad), rb.grad.numpy(), rtol=1e-5, atol=1e-4)


def test_matmul_backward_with_a_shared_matrix_gradcheck(device, rng):
    for sa, sb in (((2, 3, 4), (4, 5)), ((2, 2, 3, 4), (4,))):
        inputs = [mt.tensor(rng.standard_normal(s), dtype=mt.float64, device=device, requires_grad=True)
                  for s in (sa, sb)]
        assert gradcheck(lambda a, b: a @ b, inputs)
        # a strided (non-contiguous) batch: the flattening copies it, gradients unchanged
        assert gradcheck(lambda a, b: a.transpose(0, 1) @ b, inputs)


@pytest.mark.parametrize("xs,out", [((3, 0), 2), ((0, 4), 3), ((2, 3), 0)], ids=str)
def test_linear_empty_shapes_vs_torch(device, xs, out):
    x, w, b = np.ones(xs, np.float32), np.ones((out, xs[-1]), np.float32), np.ones(out, np.float32)
    tx, tw, tb = (mt.tensor(v, device=device, requires_grad=True) for v in (x, w, b))
    y = F.linear(tx, tw, tb)
    y.sum().backward()
    rx, rw, rb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    ry = torch.nn.functional.linear(rx, rw, rb)
    ry.sum().backward()
    for ours, theirs in ((y, ry), (tx.grad, rx.grad), (tw.grad, rw.grad), (tb.grad, rb.grad)):
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(to_np(ours), theirs.detach().numpy())
