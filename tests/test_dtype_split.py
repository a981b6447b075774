"""One NVRTC module per dtype (minitorch/cuda/compiler.py: SPLIT_BY_DTYPE, dtype_options; the
MT_IF_<suffix> guards of common.cuh).

CPU: the options each kernel name selects; compiler.kernel against a fake CuPy (which modules it
builds, with which options); and, where nvcc is on PATH, tools/check_dtype_split.py on the
kernels and on phase 02's snapshot (preprocessed, seconds): every kernel is in exactly the module of the suffix its name
ends in, and the per-dtype modules together hold the whole file.
GPU (marked cuda): add_f32 and add_f64 run, from two different modules.
"""
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import minitorch.cuda
from minitorch.cuda import compiler

ROOT = Path(__file__).resolve().parents[1]
NVCC = shutil.which("nvcc")


@pytest.mark.parametrize("file, name, expected", [
    ("elementwise.cu", "add_f32", ("-DMT_DTYPE_f32",)),
    ("elementwise.cu", "add_scalar_strided_f64", ("-DMT_DTYPE_f64",)),
    ("elementwise.cu", "eq_i64", ("-DMT_DTYPE_i64",)),               # returns bool, named for its input
    ("elementwise.cu", "logical_not_bool", ("-DMT_DTYPE_bool",)),
    ("copy.cu", "cast_f32_bool", ("-DMT_DTYPE_bool",)),               # casts: named for the output
    ("copy.cu", "cast_strided_bf16_f16", ("-DMT_DTYPE_f16",)),
    ("reduce.cu", "fold_blocks_count_nonzero_bool", ("-DMT_DTYPE_bool",)),
    ("layernorm.cu", "layer_norm_backward_params_final_bf16", ("-DMT_DTYPE_bf16",)),
    ("softmax.cu", "softmax_warp32_f32", ("-DMT_DTYPE_f32",)),
    ("scan.cu", "scan_lookback_cumprod_i64", ("-DMT_DTYPE_i64",)),
    ("elementwise.cu", "add_strided", ()),                            # no dtype suffix: whole file
    ("fill.cu", "fill_f32", ()),                                      # a file that is not split
    ("index.cu", "gather_f32", ("-DMT_DTYPE_f32",)),
    ("index.cu", "nonzero_count", ()),                                # in every module of index.cu
])
def test_dtype_options(file, name, expected):
    assert compiler.dtype_options(file, name) == expected, (
        f"dtype_options({file!r}, {name!r}) should be {expected}, got {compiler.dtype_options(file, name)}")


def test_dtype_suffixes_are_launch_py_suffixes():
    """compiler.py cannot import native/cuda/launch.py (that imports CuPy): the lists are kept equal."""
    text = (ROOT / "minitorch" / "native" / "cuda" / "launch.py").read_text()
    suffixes = set(re.findall(r'np\.dtype\([\w.]+\)\)?\s*(?:\]\s*=|:)\s*"(\w+)"', text))
    assert suffixes == set(compiler.DTYPE_SUFFIXES), (
        f"launch.py's SUFFIX names {sorted(suffixes)} but compiler.DTYPE_SUFFIXES is {compiler.DTYPE_SUFFIXES}")


def test_split_files_exist_and_use_the_guards():
    for file in compiler.SPLIT_BY_DTYPE:
        text = (compiler.KERNEL_DIR / file).read_text()
        assert "MT_IF_##" in text, f"{file} is in SPLIT_BY_DTYPE but guards no kernel with MT_IF_<suffix>"


class FakeRawModule:
    """cupy.RawModule as compiler.py uses it: records the options; get_function returns a tag."""
    built = []

    def __init__(self, code, options):
        self.code, self.options = code, options
        FakeRawModule.built.append(self)

    def compile(self):
        pass

    def get_function(self, name):
        return (self, name)


@pytest.fixture
def fake_cupy(monkeypatch):
    """compiler.kernel against a fake CuPy, with empty caches; yields the list of modules built."""
    FakeRawModule.built = []
    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: 0),
        Device=lambda dev: types.SimpleNamespace(compute_capability="90"),
        compiler=types.SimpleNamespace(CompileException=RuntimeError))
    fake = types.SimpleNamespace(cuda=cuda, RawModule=FakeRawModule)
    monkeypatch.setattr(minitorch.cuda, "cupy_or_raise", lambda: fake)
    monkeypatch.setattr(compiler, "_modules", {})
    monkeypatch.setattr(compiler, "_kernels", {})
    yield FakeRawModule.built


def test_kernel_builds_one_module_per_dtype(fake_cupy):
    add32, add_strided32 = (compiler.kernel("elementwise.cu", n, 0) for n in ("add_f32", "add_strided_f32"))
    add64 = compiler.kernel("elementwise.cu", "add_f64", 0)
    assert add32[0] is add_strided32[0], "two f32 kernels of elementwise.cu should share one module"
    assert add32[0] is not add64[0], "add_f32 and add_f64 should come from two modules"
    assert len(fake_cupy) == 2, f"expected 2 modules (f32, f64), NVRTC was asked for {len(fake_cupy)}"
    assert add32[0].options == compiler.OPTIONS + ("-DMT_DTYPE_f32",), add32[0].options
    assert add64[0].options == compiler.OPTIONS + ("-DMT_DTYPE_f64",), add64[0].options
    assert "#define MT_IF_f32" in add32[0].code, "the pasted source should hold common.cuh's guards"


def test_kernel_keeps_caller_options_and_whole_files(fake_cupy):
    rows = compiler.kernel("scan.cu", "scan_rows_cumsum_f32", 0, ("-DSCAN_ITEMS=8",))
    assert rows[0].options == compiler.OPTIONS + ("-DSCAN_ITEMS=8", "-DMT_DTYPE_f32"), rows[0].options
    fill = compiler.kernel("fill.cu", "fill_f32", 0)
    assert fill[0].options == compiler.OPTIONS, f"fill.cu is not split, got options {fill[0].options}"
    again = compiler.kernel("scan.cu", "scan_rows_cumsum_f32", 0, ("-DSCAN_ITEMS=8",))
    assert again is rows and len(fake_cupy) == 2, "a second request should hit the caches"


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("kernels", ["minitorch/cuda", "phases/02_ops/minitorch/cuda"])
def test_check_dtype_split_tool(kernels):
    """Every guarded kernel sits in the module of its own suffix and no kernel is lost (nvcc -E)."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "check_dtype_split.py"),
                          "--kernels", str(ROOT / kernels)], capture_output=True, text=True)
    assert run.returncode == 0, f"tools/check_dtype_split.py failed on {kernels}:\n{run.stdout}{run.stderr}"
    assert "elementwise.cu" in run.stdout and "FAIL" not in run.stdout, run.stdout


@pytest.mark.cuda
def test_f32_and_f64_kernels_come_from_two_modules():
    import cupy as cp
    import cupy_backend as gpu

    for dt in (np.float32, np.float64):
        a = cp.arange(1000, dtype=dt)
        b = cp.full(1000, 0.5, dtype=dt)
        got = cp.asnumpy(gpu.binary("add", a, b))
        assert got.dtype == dt, f"add of two {np.dtype(dt)} arrays gave {got.dtype}"
        np.testing.assert_array_equal(got, np.arange(1000, dtype=dt) + dt(0.5))
    modules = {opts: module for (path, _, opts), (_, module) in compiler._modules.items()
               if path.name == "elementwise.cu"}
    f32, f64 = modules.get(("-DMT_DTYPE_f32",)), modules.get(("-DMT_DTYPE_f64",))
    assert f32 is not None and f64 is not None, f"expected f32 and f64 modules, built: {list(modules)}"
    assert f32 is not f64
    f32.get_function("add_f32")
    with pytest.raises(Exception):       # CuPy's CUDADriverError: CUDA_ERROR_NOT_FOUND
        f32.get_function("add_f64")
    with pytest.raises(Exception):
        f64.get_function("add_f32")
