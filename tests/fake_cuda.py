"""A fake of the few CuPy calls our memory layer makes, with "device memory" in host RAM.

``cuda.Memory(size)`` hands out a real host buffer (its address is the "device" pointer), and
``runtime.memcpyAsync`` is ``ctypes.memmove``, so arrays made through ``minitorch/cuda/array.py``
really hold and return their bytes. Used by the CPU tests of array.py and memory.py; it knows
nothing about kernels. ``private_copy`` (test_launch.py uses it too) runs a minitorch file afresh
against whatever fakes are patched in.
"""
import ctypes
import importlib.util
import sys
import types
from pathlib import Path

import minitorch
from minitorch.cuda import memory

ARRAY_PY = Path(minitorch.__file__).resolve().parent / "cuda" / "array.py"


class OutOfMemoryError(MemoryError):
    """Stands for cupy.cuda.memory.OutOfMemoryError."""


class CUDARuntimeError(RuntimeError):
    """Stands for cupy.cuda.runtime.CUDARuntimeError: what CuPy raises when cudaMalloc fails."""

    def __init__(self, status):
        self.status = status
        super().__init__("cudaErrorMemoryAllocation: out of memory" if status == ERROR_MEMORY_ALLOCATION
                         else f"CUDA error {status}")


ERROR_MEMORY_ALLOCATION = 2         # cudaErrorMemoryAllocation


class FakeCuda:
    """``cupy`` as minitorch/cuda/array.py and memory.py see it.

    Attributes:
        limit: bytes of "device memory"; a Memory beyond it raises CUDARuntimeError
            (cudaErrorMemoryAllocation), as cupy.cuda.Memory does.
        live: {ptr: size} of Memory objects not yet freed (freeing = the object dying).
        stream: the current stream's handle (0: the legacy default stream).
    """

    def __init__(self, limit=1 << 30):
        self.limit = limit
        self.live = {}
        self.mallocs = 0
        self.stream = 0
        self.device = 0
        fake = self

        class Memory:
            def __init__(self, size):
                if sum(fake.live.values()) + size > fake.limit:
                    raise CUDARuntimeError(ERROR_MEMORY_ALLOCATION)
                self._buffer = ctypes.create_string_buffer(max(size, 1))
                self.ptr, self.size = ctypes.addressof(self._buffer), size
                fake.live[self.ptr] = size
                fake.mallocs += 1

            def __del__(self):
                if hasattr(self, "ptr"):            # not when __init__ raised
                    fake.live.pop(self.ptr, None)

        class Device:
            def __init__(self, index):
                self.index = index

            def __enter__(self):
                self.before, fake.device = fake.device, self.index

            def __exit__(self, *exc):
                fake.device = self.before

        def memcpy_async(dst, src, nbytes, kind, stream):
            ctypes.memmove(dst, src, nbytes)

        self.cuda = types.SimpleNamespace(
            Memory=Memory, Device=Device,
            memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
            get_current_stream=lambda device_id=-1: types.SimpleNamespace(ptr=fake.stream),
            runtime=types.SimpleNamespace(
                memcpyAsync=memcpy_async, memcpyHostToDevice=1, memcpyDeviceToHost=2,
                streamSynchronize=lambda stream: None, getDevice=lambda: fake.device,
                pointerGetAttributes=lambda ptr: types.SimpleNamespace(device=fake.device),
                memGetInfo=lambda: (fake.limit - sum(fake.live.values()), fake.limit),
                CUDARuntimeError=CUDARuntimeError, errorMemoryAllocation=ERROR_MEMORY_ALLOCATION))


def private_copy(monkeypatch, path, name):
    """A fresh module run from the source file ``path`` under the dotted ``name`` (its package
    decides what relative imports mean): it sees whatever fakes are patched in now, and the real
    module stays untouched. Registered in sys.modules until monkeypatch undoes it."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def install(monkeypatch, limit=1 << 30):
    """Point minitorch.cuda at a fresh FakeCuda with fresh pools; returns (fake, private copy of
    array.py bound to it). The real modules are restored by monkeypatch afterwards."""
    fake = FakeCuda(limit)
    monkeypatch.setattr(minitorch.cuda, "cupy_or_raise", lambda: fake)
    monkeypatch.setattr(memory, "_pools", {})
    return fake, private_copy(monkeypatch, ARRAY_PY, "minitorch.cuda._array_under_test")


class FakeGPU(FakeCuda):
    """All of ``cupy`` that minitorch's cuda backend uses, kernels included, for measuring host
    cost without a GPU (benchmarks/hostcost_step.py): memory as in :class:`FakeCuda`; NVRTC
    "compiles" nothing and every kernel is a stub; ``driver.launchKernel`` only counts
    (``launches``); the device is an H100 (sm_90, 132 SMs), so the dispatchers choose the rungs
    the H100 runs. Kernels never run: the values in device memory are garbage, the host work
    (dispatch, allocation, argument packing, autograd) is the real one.
    """

    def __init__(self, limit=1 << 34):
        super().__init__(limit)
        self.launches = 0
        fake = self

        class CPointer:
            def __init__(self, ptr=0):
                self.ptr = ptr

        class RawKernel:
            def __init__(self, name):
                self.name, self.num_regs, self.max_threads_per_block = name, 64, 1024
                self.kernel = types.SimpleNamespace(ptr=id(self))
                self.max_dynamic_shared_size_bytes = 48 * 1024

            def __call__(self, grid, block, args, shared_mem=0):
                fake.launches += 1

        class RawModule:
            def __init__(self, code=None, options=(), path=None):
                self.functions = {}

            def compile(self):
                pass

            def get_function(self, name):
                return self.functions.setdefault(name, RawKernel(name))

        class Device(self.cuda.Device):
            compute_capability = "90"

            def use(self):
                fake.device = self.index

        def launch_kernel(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra):
            fake.launches += 1

        class Event:
            def record(self, stream=None):
                pass

            def synchronize(self):
                pass

        self.cuda.get_current_stream = lambda device_id=-1: fake.current
        properties = {"name": b"Fake H100 (tests/fake_cuda.py)", "major": 9, "minor": 0,
                      "multiProcessorCount": 132, "totalGlobalMem": self.limit, "sharedMemPerBlockOptin": 232448}
        runtime = self.cuda.runtime
        runtime.getDeviceCount = lambda: 1
        runtime.getDeviceProperties = lambda index: properties
        runtime.deviceSynchronize = lambda: None
        runtime.driverGetVersion = runtime.runtimeGetVersion = lambda: 12040
        self.cuda.Device = Device
        self.cuda.Event = Event
        self.cuda.get_elapsed_time = lambda start, stop: 1.0
        self.cuda.driver = types.SimpleNamespace(
            launchKernel=launch_kernel, CUDADriverError=type("CUDADriverError", (RuntimeError,), {}),
            occupancyMaxActiveBlocksPerMultiprocessor=lambda fn, block, smem: 2048 // block)
        self.cuda.function = types.SimpleNamespace(CPointer=CPointer)

        def curand_draw(handle, ptr, n, *params):      # cuRAND's generators launch a kernel each
            fake.launches += 1

        self.cuda.curand = types.SimpleNamespace(
            CURAND_RNG_PSEUDO_PHILOX4_32_10=1, createGenerator=lambda kind: object(),
            setPseudoRandomGeneratorSeed=lambda handle, seed: None, setStream=lambda handle, stream: None,
            generateUniform=curand_draw, generateUniformDouble=curand_draw, generateNormal=curand_draw,
            generateNormalDouble=curand_draw, generate=curand_draw, generateLongLong=curand_draw)
        self.cuda.compiler = types.SimpleNamespace(CompileException=type("CompileException", (Exception,), {}))
        self.RawModule = RawModule
        self.RawKernel = RawKernel

    # The current stream is one object whose ptr is a plain attribute, as cheap to read as CuPy's
    # (C code): a fresh object or a Python property per call would bill the fake's cost to the
    # code measured. ``fake.stream = handle`` still switches it, as with FakeCuda.
    @property
    def stream(self):
        return self.current.ptr

    @stream.setter
    def stream(self, handle):
        if "current" not in self.__dict__:
            self.current = types.SimpleNamespace(ptr=handle)
        self.current.ptr = handle


def install_gpu():
    """Make ``import cupy`` give a fresh :class:`FakeGPU` (registered in sys.modules for good: for a
    process of its own, such as a benchmark, before minitorch's cuda backend is first imported).
    Returns the FakeGPU."""
    fake = FakeGPU()
    module = types.ModuleType("cupy")
    module.cuda, module.RawModule, module.RawKernel = fake.cuda, fake.RawModule, fake.RawKernel
    sys.modules.update({"cupy": module, "cupy.cuda": fake.cuda, "cupy.cuda.function": fake.cuda.function})
    minitorch.cuda._probe.cache_clear()
    return fake
