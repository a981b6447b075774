"""The fast kernel launcher of ``minitorch/native/cuda/launch.py``.

CPU part: a private copy of launch.py runs against a fake CuPy whose ``driver.launchKernel`` reads
``kernelParams`` the way the real driver does (at call time, each parameter's size known from the
kernel), so the argument packing - signature, slots, pointer array, struct arguments, stream,
grid padding, errors and the ``cupy`` fallback - is checked without a GPU.

GPU part (marked ``cuda``): ops launched through our Launchers and through CuPy's
``RawKernel.__call__`` give the same bytes.
"""
import ctypes
import struct
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

import minitorch
from fake_cuda import private_copy

LAUNCH_PY = Path(minitorch.__file__).resolve().parent / "native" / "cuda" / "launch.py"
STREAM = 0x5EED
LAYOUT_BYTES = 33 * 8


# ---- a fake CuPy -------------------------------------------------------------------------------
class FakeDriverError(RuntimeError):
    """Stands for cupy.cuda.driver.CUDADriverError: carries the CUresult in ``status``."""

    def __init__(self, status):
        super().__init__(f"CUresult {status}")
        self.status = status


class FakeArray:
    """Stands for minitorch.cuda.array.DeviceArray: the launcher reads only ``.ptr``."""

    def __init__(self, ptr):
        self.ptr = ptr


class FakeKernel:
    """Stands for cupy.RawKernel: ``.kernel.ptr`` is the CUfunction; calling it is the 'cupy'
    launch path (recorded). ``sizes``: the byte size of each parameter, as the compiled kernel
    tells the driver."""

    def __init__(self, name, handle, sizes):
        self.name, self.sizes = name, tuple(sizes)
        self.kernel = types.SimpleNamespace(ptr=handle)
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0):
        self.calls.append((grid, block, args, shared_mem))


class FakeDriver:
    """cupy.cuda.driver with a launchKernel that copies each parameter's bytes at call time."""

    CUDADriverError = FakeDriverError

    def __init__(self):
        self.kernels = {}        # CUfunction -> FakeKernel
        self.launches = []
        self.fail_with = []      # statuses to raise on the next calls

    def launchKernel(self, f, gx, gy, gz, bx, by, bz, shared_mem, stream, kernel_params, extra):
        if self.fail_with:
            raise FakeDriverError(self.fail_with.pop(0))
        sizes = self.kernels[f].sizes
        pointers = list((ctypes.c_uint64 * max(1, len(sizes))).from_address(kernel_params))[:len(sizes)]
        values = [ctypes.string_at(p, n) for p, n in zip(pointers, sizes)]
        self.launches.append(dict(f=f, grid=(gx, gy, gz), block=(bx, by, bz), shared_mem=shared_mem,
                                  stream=stream, params=kernel_params, extra=extra, pointers=pointers,
                                  values=values))


def fake_cupy(driver):
    cupy = types.ModuleType("cupy")
    cupy.stream_requests = []
    cupy.context_calls = []
    cupy.current_device = [0]        # what cudaGetDevice answers
    cupy.device_switches = []        # every `with cupy.cuda.Device(i)` entered

    def get_current_stream(device_id=-1):
        cupy.stream_requests.append(device_id)
        return types.SimpleNamespace(ptr=STREAM)

    class Device:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            cupy.device_switches.append(self.index)
            self.before, cupy.current_device[0] = cupy.current_device[0], self.index

        def __exit__(self, *exc):
            cupy.current_device[0] = self.before

    cupy.cuda = types.SimpleNamespace(
        driver=driver, get_current_stream=get_current_stream, Device=Device,
        runtime=types.SimpleNamespace(memGetInfo=lambda: cupy.context_calls.append("memGetInfo") or (1, 2),
                                      getDevice=lambda: cupy.current_device[0], getDeviceCount=lambda: 2,
                                      getDeviceProperties=lambda i: {"multiProcessorCount": 132}))
    return cupy


class FakeCPointer:
    """Stands for cupy.cuda.function.CPointer (a Cython class holding a void*)."""

    def __init__(self, p=0):
        self.ptr = p


def load_launch(monkeypatch, driver, env=None, cpointer=True):
    """A private copy of launch.py bound to the fake CuPy (the real module is left alone)."""
    cupy = fake_cupy(driver)
    monkeypatch.setattr(minitorch.cuda, "cupy_or_raise", lambda: cupy)
    array = types.ModuleType("minitorch.cuda.array")      # what launch.py imports DeviceArray from
    array.DeviceArray = FakeArray
    monkeypatch.setitem(sys.modules, "minitorch.cuda.array", array)
    function = types.ModuleType("cupy.cuda.function")
    function.CPointer = FakeCPointer
    monkeypatch.setitem(sys.modules, "cupy.cuda.function", function if cpointer else None)
    if env is None:
        monkeypatch.delenv("MINITORCH_LAUNCH", raising=False)
    else:
        monkeypatch.setenv("MINITORCH_LAUNCH", env)
    module = private_copy(monkeypatch, LAUNCH_PY, "minitorch.native.cuda._launch_under_test")
    module.fake_cupy = cupy
    return module


@pytest.fixture(params=[True, False], ids=["cpointer", "no-cpointer"])
def lm(request, monkeypatch):
    """(launch module copy, fake driver); with and without CuPy's CPointer for StructArg."""
    driver = FakeDriver()
    return load_launch(monkeypatch, driver, cpointer=request.param), driver


def kernel(driver, name, sizes):
    handle = 0x1000 + len(driver.kernels)
    k = driver.kernels[handle] = FakeKernel(name, handle, sizes)
    return k


def q(x):
    return struct.pack("<Q", x)


# ---- signature, slots, pointers ------------------------------------------------------------------
def test_pointers_and_int64_reach_the_kernel(lm):
    mod, driver = lm
    add = kernel(driver, "add_f32", (8, 8, 8, 8))
    a, b, out = FakeArray(0xA000), FakeArray(0xB000), FakeArray(0xC000)
    mod.launch(add, (3,), (256,), (a, b, out, np.int64(1000)))
    (rec,) = driver.launches
    assert rec["f"] == add.kernel.ptr
    assert rec["grid"] == (3, 1, 1) and rec["block"] == (256, 1, 1)
    assert rec["shared_mem"] == 0 and rec["stream"] == STREAM and rec["extra"] == 0
    assert rec["values"] == [q(0xA000), q(0xB000), q(0xC000), struct.pack("<q", 1000)]

    launcher = mod.launcher_for(add, (a, b, out, np.int64(1000)))
    assert launcher.format == "=QQQq"
    assert launcher.kinds == (mod._ARRAY,) * 3 + (mod._VALUE,)
    assert rec["params"] == launcher.params == launcher.pointers.ctypes.data
    # entry i of kernelParams is the address of 8-byte slot i
    assert rec["pointers"] == [launcher.slots.ctypes.data + 8 * i for i in range(4)]
    assert launcher.slots.nbytes == 32
    assert "add_f32" in repr(launcher)


def test_every_scalar_type_gets_its_exact_bytes(lm):
    mod, driver = lm
    sizes = (4, 8, 8, 4, 1, 8, 8, 8, 1)
    k = kernel(driver, "many", sizes)
    args = (np.float32(1.1), np.float64(-2.25), np.int64(-7), np.int32(-5), np.bool_(True), None,
            FakeArray(0xDEAD0), 3, False)
    mod.launch(k, (1,), (32,), args)
    (rec,) = driver.launches
    assert rec["values"] == [np.float32(1.1).tobytes(), np.float64(-2.25).tobytes(), np.int64(-7).tobytes(),
                             np.int32(-5).tobytes(), b"\x01", q(0), q(0xDEAD0), np.int64(3).tobytes(), b"\x00"]
    launcher = mod.launcher_for(k, args)
    assert launcher.format == "=f4xdqi4x?7xQQq?7x"
    assert struct.calcsize(launcher.format) == 8 * len(args)        # one 8-byte slot each
    assert launcher.kinds[5] == mod._NULL


def test_float32_special_values_round_trip(lm):
    mod, driver = lm
    k = kernel(driver, "fill_f32", (8, 4, 8))
    for v in (np.float32(np.inf), np.float32(-np.inf), np.float32(-0.0), np.float32(np.nan),
              np.float32(3.4028235e38), np.float32(1e-45)):
        mod.launch(k, (1,), (256,), (FakeArray(0x10), v, np.int64(1)))
        assert driver.launches[-1]["values"][1] == v.tobytes()


def test_struct_argument_points_at_the_layout_bytes(lm):
    mod, driver = lm
    k = kernel(driver, "add_strided_f32", (8, 8, 8, 8, LAYOUT_BYTES))
    arrays = (FakeArray(0xA0), FakeArray(0xB0), FakeArray(0xC0))
    lay1 = mod.pack_layout((4, 5), ((5, 1), (0, 1), (5, 1)))
    lay2 = mod.pack_layout((3, 1, 7), ((7, 7, 1), (1, 1, 0), (7, 7, 1)))
    assert isinstance(lay1, mod.StructArg) and lay1.address == lay1.array.ctypes.data
    mod.launch(k, (2,), (256,), arrays + (np.int64(20), lay1))
    mod.launch(k, (2,), (256,), arrays + (np.int64(21), lay2))
    first, second = driver.launches
    assert first["pointers"][4] == lay1.address and second["pointers"][4] == lay2.address
    assert first["values"][4] == lay1.array.tobytes() and second["values"][4] == lay2.array.tobytes()
    assert first["values"][3] == np.int64(20).tobytes() and second["values"][3] == np.int64(21).tobytes()
    words = np.frombuffer(second["values"][4], dtype=np.int64)
    assert words[0] == 2 and list(words[1:3]) == [7, 3]          # ndim, sizes innermost first
    # the other entries still point at their slots
    launcher = mod.launcher_for(k, arrays + (np.int64(21), lay2))
    assert second["pointers"][:4] == [launcher.slots.ctypes.data + 8 * i for i in range(4)]


def test_values_are_repacked_on_every_launch(lm):
    mod, driver = lm
    k = kernel(driver, "scale", (8, 8, 4))
    for i in range(5):
        mod.launch(k, (1,), (64,), (FakeArray(0x100 * (i + 1)), np.int64(i), np.float32(i / 2)))
    for i, rec in enumerate(driver.launches):
        assert rec["values"] == [q(0x100 * (i + 1)), np.int64(i).tobytes(), np.float32(i / 2).tobytes()]


def test_one_launcher_per_kernel_and_argument_types(lm):
    mod, driver = lm
    k1, k2 = kernel(driver, "k1", (8, 8)), kernel(driver, "k2", (8, 8))
    a = FakeArray(0x1)
    l1 = mod.launcher_for(k1, (a, np.int64(1)))
    assert mod.launcher_for(k1, (FakeArray(0x2), np.int64(9))) is l1
    assert mod.launcher_for(k1, (None, np.int64(1))) is not l1               # None: another signature
    assert mod.launcher_for(k1, (a, np.float64(1))) is not l1
    assert mod.launcher_for(k2, (a, np.int64(1))) is not l1
    mod.launch(k1, (1,), (1,), (a, np.int64(5)))
    assert mod._local.launchers[k1][(FakeArray, np.int64)] is l1


def test_each_thread_has_its_own_launchers(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8,))
    mine = mod.launcher_for(k, (np.int64(1),))
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(mod.launcher_for(k, (np.int64(1),))))
    t.start()
    t.join()
    assert theirs[0] is not mine and theirs[0].slots.ctypes.data != mine.slots.ctypes.data


def test_grid_block_shared_memory_and_stream(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8,))
    mod.launch(k, (4, 5), (16, 16), (np.int64(0),), shared_mem=4096)
    mod.launch(k, (4, 5, 6), (8, 4, 2), (np.int64(0),), index=1)
    a, b = driver.launches
    assert a["grid"] == (4, 5, 1) and a["block"] == (16, 16, 1) and a["shared_mem"] == 4096
    assert b["grid"] == (4, 5, 6) and b["block"] == (8, 4, 2) and b["shared_mem"] == 0
    assert mod.fake_cupy.stream_requests == [-1, 1]      # the current stream, of the device given
    assert mod.fake_cupy.device_switches == [1]          # GPU 1 was made current for the launch
    mod.launch(k, (1,), (1,), (np.int64(0),), index=0)    # GPU 0 is current already: no switch
    assert mod.fake_cupy.device_switches == [1]


def test_launch_stride_1d_and_2d_go_through_the_launcher(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8, 8))
    mod._resident[k] = 264                               # as resident_blocks would cache it
    out = FakeArray(0x40)
    mod.launch_stride(k, 1000, 4, 0, (out, np.int64(1000)))           # ceil(1000 / 1024) = 1 block
    mod.launch_stride(k, 10**9, 1, 0, (out, np.int64(10**9)))         # capped at what fits
    mod.launch_stride(k, 0, 1, 0, (out, np.int64(0)))                 # nothing to do: no launch
    mod.launch_1d(k, 513, 0, (out, np.int64(513)))
    mod.launch_2d(k, (3, 70000, 2), (32, 8), (out, np.int64(1)), 0)
    mod.launch_2d(k, (0, 4), (32, 8), (out, np.int64(1)), 0)           # empty: no launch
    grids = [r["grid"] for r in driver.launches]
    assert grids == [(1, 1, 1), (264, 1, 1), (3, 1, 1), (3, 65535, 2)]
    assert [r["block"] for r in driver.launches] == [(256, 1, 1)] * 3 + [(32, 8, 1)]
    assert mod.fake_cupy.stream_requests[:2] == [0, 0]


def test_unsupported_argument_types_raise_type_error(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8,))
    for bad in (np.float16(1), [1, 2], np.zeros(3), "x"):
        with pytest.raises(TypeError, match="cannot pass"):
            mod.launch(k, (1,), (1,), (bad,))
    assert driver.launches == []


def test_driver_errors_propagate(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8,))
    driver.fail_with = [1]                                # CUDA_ERROR_INVALID_VALUE
    with pytest.raises(FakeDriverError) as e:
        mod.launch(k, (1,), (2048,), (np.int64(0),))
    assert e.value.status == 1 and driver.launches == []


def test_a_thread_without_context_gets_one_and_retries(lm):
    mod, driver = lm
    k = kernel(driver, "k", (8,))
    driver.fail_with = [201]                              # CUDA_ERROR_INVALID_CONTEXT
    mod.launch(k, (1,), (1,), (np.int64(7),))
    assert mod.fake_cupy.context_calls == ["memGetInfo"]
    assert [r["values"] for r in driver.launches] == [[np.int64(7).tobytes()]]


# ---- launch modes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cpointer", [True, False])
def test_env_cupy_launches_through_rawkernel(monkeypatch, cpointer):
    driver = FakeDriver()
    mod = load_launch(monkeypatch, driver, env="cupy", cpointer=cpointer)
    assert mod.launch_mode() == "cupy"
    k = kernel(driver, "k", (8, 8, LAYOUT_BYTES))
    lay = mod.pack_layout((2, 3), ((3, 1),))
    args = (FakeArray(0x10), np.int64(6), lay)
    mod.launch(k, (2,), (128,), args, shared_mem=64)
    assert driver.launches == []
    ((grid, block, passed, shared),) = k.calls
    assert (grid, block, shared) == ((2,), (128,), 64)
    assert passed[0] == np.uint64(0x10) and type(passed[0]) is np.uint64    # an array goes as its address
    assert passed[1] == args[1]
    # RawKernel gets the StructArg (a CPointer) or, without CPointer, the NumPy struct array
    assert passed[2] is (lay if cpointer else lay.array)
    if cpointer:
        assert isinstance(lay, FakeCPointer) and lay.ptr == lay.address

    assert mod.set_launch_mode("fast") == "cupy" and mod.launch_mode() == "fast"
    mod.launch(k, (2,), (128,), args)
    assert len(driver.launches) == 1 and len(k.calls) == 1
    assert mod.set_launch_mode("cupy") == "fast"
    with pytest.raises(ValueError):
        mod.set_launch_mode("turbo")


def test_without_launch_kernel_cupy_is_used(monkeypatch):
    driver = FakeDriver()
    driver_without = types.SimpleNamespace(CUDADriverError=FakeDriverError)
    mod = load_launch(monkeypatch, driver_without)
    assert mod.launch_mode() == "cupy"
    assert mod.set_launch_mode("fast") == "cupy" and mod.launch_mode() == "cupy"
    k = kernel(driver, "k", (8,))
    mod.launch(k, (1,), (1,), (np.int64(1),))
    assert len(k.calls) == 1


def test_unknown_env_value_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="MINITORCH_LAUNCH"):
        load_launch(monkeypatch, FakeDriver(), env="fastest")


# ---- on the GPU: both launch modes give the same bytes -----------------------------------------
def _ops_on_gpu(gpu, cp, rng):
    """Results of a spread of ops (every launch site style) as host arrays."""
    f32 = lambda *s: cp.asarray(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    f64 = lambda *s: cp.asarray(rng.standard_normal(s))                     # noqa: E731
    a, b = f32(1000), f32(1000)
    m, n = f64(33, 17), f64(17, 9)
    x3 = f32(4, 1, 5)
    y2 = f32(3, 1)
    out = {
        "add": gpu.binary("add", a, b),
        "add_bcast": gpu.binary("mul", x3, y2),
        "sub_strided": gpu.binary("sub", m[:, :9], m[:, 1:10]),
        "scalar": gpu.binary_scalar("pow", a, 2.0),
        "scalar_strided": gpu.binary_scalar("sub", m.T, 1.5, reflected=True),
        "lt": gpu.binary("lt", a, b),
        "unary": gpu.unary("sigmoid", a),
        "unary_strided": gpu.unary("exp", m[::2, ::3]),
        "where": gpu.where(gpu.binary("gt", a, b), a, b),
        "cast": gpu.cast(m.T, np.float32),
        "cast_i64": gpu.cast(a, np.int64),
        "matmul": gpu.matmul(m, n),
        "matmul_batch": gpu.matmul(f32(2, 3, 4, 5), f32(3, 5, 6)),
        "transpose": gpu.transpose2d(m),
        "transpose_naive": gpu.transpose2d_naive(m),
        "fill": gpu.fill_(cp.empty((777,), dtype=np.float32), 2.5),
        "arange": gpu.arange(-3.0, 0.25, 50, minitorch.float64),
        "sum_threads": gpu.sum(m, (1,)),
        "sum_blocks": gpu.sum(f32(3, 100000), (1,)),
        "sum_splits": gpu.sum(f32(300000), (0,)),
        "mean_cols": gpu.sum(m, (0,), True, 1 / 33),
        "relu_bw": gpu.unary_backward("relu", a, b),
    }
    p, g, buf = f32(513), f32(513), f32(513)
    gpu.sgd_step(p, g, None, 0.1, 0.0, 0.0, 0.01, False, False, True)
    gpu.sgd_step(p, g, buf, 0.1, 0.9, 0.1, 0.0, True, False, False)
    out.update({"sgd_param": p, "sgd_buf": buf})
    logits = f32(37, 1500)
    target = cp.asarray(rng.integers(0, 1500, 37))
    loss, lse = gpu.cross_entropy(logits, target)
    out.update({"softmax": gpu.softmax(f32(5, 33)), "log_softmax_long": gpu.log_softmax(logits),
                "ce_loss": loss, "ce_lse": lse})
    cp.cuda.get_current_stream().synchronize()
    return {k: cp.asnumpy(v) for k, v in out.items()}


@pytest.mark.cuda
def test_fast_and_cupy_launches_give_identical_bytes():
    import cupy as cp
    import cupy_backend as gpu          # the cuda backend, CuPy arrays in and out

    from minitorch.native.cuda import launch

    previous = launch.launch_mode()
    try:
        results = {}
        for mode in ("cupy", "fast"):
            launch.set_launch_mode(mode)
            assert launch.launch_mode() == mode
            results[mode] = _ops_on_gpu(gpu, cp, np.random.default_rng(1234))
        assert launch._local.launchers, "the fast mode made no Launcher"
    finally:
        launch.set_launch_mode(previous)
    assert results["fast"].keys() == results["cupy"].keys()
    for name, want in results["cupy"].items():
        got = results["fast"][name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name


@pytest.mark.cuda
def test_fast_launch_from_a_new_thread():
    """A thread that made no CUDA runtime call yet: the launcher makes the context current."""
    import cupy as cp
    import cupy_backend as gpu          # the cuda backend, CuPy arrays in and out

    from minitorch.native.cuda import launch

    previous = launch.set_launch_mode("fast")
    try:
        a = cp.arange(1000, dtype=cp.float32)
        want = cp.asnumpy(gpu.binary("add", a, a))
        got, errors = [], []

        def work():
            try:
                r = gpu.binary("add", a, a)
                cp.cuda.get_current_stream().synchronize()
                got.append(cp.asnumpy(r))
            except Exception as e:       # reported below, not lost in the thread
                errors.append(e)

        t = threading.Thread(target=work)
        t.start()
        t.join()
    finally:
        launch.set_launch_mode(previous)
    assert not errors, errors
    np.testing.assert_array_equal(got[0], want)
