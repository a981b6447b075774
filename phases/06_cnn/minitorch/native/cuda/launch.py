# GENERATED from minitorch/native/cuda/launch.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 01
"""Launching our kernels: names per dtype, grid sizes, the device's shape.

CuPy is used for memory (allocation, host<->device copies), module loading, streams and cuRAND
only. Every launch goes to CuPy's current stream and nothing here waits for the GPU. Arrays are
our ``DeviceArray``s (minitorch/cuda/array.py): a kernel receives each one as its device address.
"""
import functools

import numpy as np

from ...cuda import cupy_or_raise
from ...cuda.array import DeviceArray
from ...cuda.compiler import kernel

cp = cupy_or_raise()     # importing the cuda backend means cuda was asked for: fail early and clearly

SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",      # kernel names end in these
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}
BLOCK = 256              # threads per block for 1-D kernels: a multiple of the 32-thread warp


def kernel_for(file, op, dtype, index):
    """``op`` specialised for NumPy ``dtype`` on GPU ``index``:
    ``kernel_for('fill.cu', 'fill', np.dtype('float32'), 0)`` is fill_f32."""
    return kernel(file, f"{op}_{SUFFIX[dtype]}", index)


def launch(fn, grid, block, args, shared_mem=0, index=-1):
    """Queue the kernel ``fn`` on CuPy's current stream: ``grid`` (a tuple of 1 to 3 block counts,
    each >= 1) blocks of ``block`` (1 to 3 thread counts) threads, ``shared_mem`` bytes of dynamic
    shared memory per block, ``args`` a tuple of the kernel's arguments (DeviceArrays, NumPy
    scalars of the exact C types). ``index``: the GPU that ``fn`` and the arrays belong to (-1:
    the current one). Returns at once: the GPU runs the kernel later, in stream order.

    Here CuPy's ``RawKernel.__call__`` packs the arguments and launches; phase 02 replaces this
    function with one that packs them itself (see "launching" there), same results.
    """
    with cp.cuda.Device(index if index >= 0 else cp.cuda.runtime.getDevice()):
        fn(grid, block, _as_cupy_args(args), shared_mem=shared_mem)


def _as_cupy_args(args):
    """RawKernel's arguments: a kernel's ``float* x`` parameter is 8 bytes holding an address, so a
    DeviceArray is passed as its address, a 64-bit unsigned NumPy scalar."""
    return tuple(np.uint64(a.ptr) if type(a) is DeviceArray else a for a in args)


def launch_1d(fn, n, index, args):
    """Run ``fn`` on GPU ``index`` with one thread per element: ceil(n / BLOCK) blocks of BLOCK threads."""
    if n > 0:
        launch(fn, ((n + BLOCK - 1) // BLOCK,), (BLOCK,), args, 0, index)


@functools.lru_cache(maxsize=None)
def sm_count(index):
    """Number of streaming multiprocessors: sizes grids that stride over large inputs."""
    return cp.cuda.runtime.getDeviceProperties(index)["multiProcessorCount"]

# ---- finding and sizing kernels -----------------------------------------------------------------
import math          # noqa: E402 - phase 02 adds these
import os            # noqa: E402
import struct        # noqa: E402
import threading     # noqa: E402

from ...broadcast import broadcast_shape   # noqa: E402


_resident = {}       # kernel -> blocks of BLOCK threads that run at once on the whole GPU


def cdiv(a, b):
    """ceil(a / b) for positive integers: how many blocks of b cover a items."""
    return (a + b - 1) // b


def blocks_per_gpu(fn, block, index):
    """How many ``block``-thread blocks of ``fn`` GPU ``index`` runs at once: SMs x blocks per SM.

    Blocks per SM depend on the kernel's registers and shared memory (the occupancy calculator,
    cuOccupancyMaxActiveBlocksPerMultiprocessor). Not cached: callers keep their own caches.
    """
    try:
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, block, 0)
    except Exception:    # older CuPy: estimate from registers (65536 per SM, 2048 threads per SM)
        per_sm = min(2048 // block, 65536 // (block * (cdiv(fn.num_regs, 8) * 8)))
    return max(1, per_sm) * sm_count(index)


def resident_blocks(fn, index):
    """How many BLOCK-thread blocks of ``fn`` the GPU runs at once (``blocks_per_gpu``), cached
    per kernel."""
    found = _resident.get(fn)
    if found is None:
        found = _resident[fn] = blocks_per_gpu(fn, BLOCK, index)
    return found


# ---- launching: packing the kernel's arguments ourselves ------------------------------------------
# A launch is one driver call:
#
#     cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream,
#                    kernelParams, extra)
#
# ``kernelParams`` is a C array of ``void*``, one per kernel parameter, each pointing at that
# parameter's value. For ``add_f32(const float* a, const float* b, float* out, long long n)`` that
# is four pointers: to the 8-byte device address of a, of b, of out, and to the 8-byte n. The
# driver knows each parameter's size from the compiled kernel and copies the values when the
# launch is queued, so the memory they sit in may be reused as soon as the call returns.
#
# CuPy's RawKernel.__call__ builds that array generically, on every call: for each argument it
# asks what type it is and boxes the value in a small C object, then checks the thread's CUDA
# context. About 6.5 us for add_f32 (measured on an H100 host), while the driver's own work is
# about 1 us. But a kernel of ours is always called with the same argument types, so the packing
# can be decided once per (kernel, argument types) and kept in a Launcher:
#
#   slots     8 bytes per argument (a NumPy byte buffer), rewritten on each launch by one
#             struct.pack_into: a device address or an int64 fills its slot, a float32 uses 4 of
#             its 8 bytes, a bool 1.
#   pointers  a uint64 array, the kernelParams: entry i is the address of slot i, fixed once. A
#             by-value struct (the Layout below, 264 bytes) does not fit in a slot: its entry is
#             set on each launch to the struct's own host bytes, which outlive the call.
#
# A launch is then: pack the values, cuLaunchKernel(..., pointers' address, 0), which CuPy
# exposes as cupy.cuda.driver.launchKernel (errors raise cupy.cuda.driver.CUDADriverError, as
# from RawKernel). Same bytes reach the kernel as through CuPy, on the same (current) stream.
#
# MINITORCH_LAUNCH=cupy in the environment (read once, at import) launches through
# RawKernel.__call__ instead, to compare; so does a CuPy without cupy.cuda.driver.launchKernel.
# The buffers are reused, so each thread has its own Launchers.

# struct codes of one 8-byte slot per argument type ('x' pads: a slot is always 8 bytes).
# Bare Python numbers are converted as CuPy converts them (int -> int64, float -> double): ops pass
# a `long long` as a Python int, every other C type as a NumPy scalar of that exact type
# (docs/CONTRIBUTING.md).
_SCALAR_SLOTS = {
    np.float64: "d", np.float32: "f4x", np.int64: "q", np.int32: "i4x", np.bool_: "?7x",
    float: "d", int: "q", bool: "?7x",
}
_ARRAY, _NULL, _STRUCT, _VALUE = "device address", "null pointer", "struct", "value"


def _slot(kind):
    """(what the argument is, its struct code) for an argument of type ``kind``."""
    if kind in _SCALAR_SLOTS:
        return _VALUE, _SCALAR_SLOTS[kind]
    if issubclass(kind, DeviceArray):
        return _ARRAY, "Q"                   # its .ptr: the address of its first element
    if kind is type(None):
        return _NULL, "Q"                    # 0: a null pointer (an unused optional array)
    if issubclass(kind, StructArg):
        return _STRUCT, "Q"                  # slot unused (written 0): pointers[i] -> the struct
    raise TypeError(f"cannot pass a {kind.__module__}.{kind.__qualname__} to a kernel: use a "
                    f"DeviceArray, a NumPy scalar of the exact C type, None or a StructArg")


class Launcher:
    """Launches one kernel with one list of argument types (see the comment above).

    ``fn``: a cupy.RawKernel of the current device (``kernel(file, name, device)`` gives one per device); ``kinds``:
    the type of each argument. Raises TypeError for a type that has no slot (see ``_slot``).
    """

    def __init__(self, fn, kinds):
        self.fn = fn
        self.function = fn.kernel.ptr        # the CUfunction, of the device current now
        slots = [_slot(kind) for kind in kinds]
        self.kinds = tuple(what for what, _ in slots)
        self.format = "=" + "".join(code for _, code in slots)    # '=': no padding but ours
        self.pack_into = struct.Struct(self.format).pack_into
        n = max(1, len(slots))
        self.slots = np.zeros(8 * n, dtype=np.uint8)
        self._slots = memoryview(self.slots)    # pack_into writes through this (cheaper)
        self.pointers = self.slots.ctypes.data + 8 * np.arange(n, dtype=np.uint64)
        self.params = self.pointers.ctypes.data                   # the kernelParams argument
        self.arrays = tuple(i for i, what in enumerate(self.kinds) if what is _ARRAY)
        self.nulls = tuple(i for i, what in enumerate(self.kinds) if what is _NULL)
        self.structs = tuple(i for i, what in enumerate(self.kinds) if what is _STRUCT)
        self.others = self.nulls or self.structs

    def run(self, gx, gy, gz, bx, by, bz, shared_mem, stream, args):
        """Pack ``args`` and launch on ``stream`` (a CUstream handle; 0: the legacy default)."""
        values = list(args)
        for i in self.arrays:
            values[i] = values[i].ptr
        if self.others:
            for i in self.nulls:
                values[i] = 0
            for i in self.structs:
                self.pointers[i] = values[i].address
                values[i] = 0
        self.pack_into(self._slots, 0, *values)
        _launch_kernel(self.function, gx, gy, gz, bx, by, bz, shared_mem, stream, self.params, 0)

    def __repr__(self):
        return f"Launcher({getattr(self.fn, 'name', self.fn)}: {', '.join(self.kinds)}; slots {self.format!r})"


_ONES = ((), (1, 1), (1,), ())       # pads a grid or block of 1, 2, 3 dimensions to 3
_driver = cp.cuda.driver
_launch_kernel = getattr(_driver, "launchKernel", None)
_current_stream = cp.cuda.get_current_stream
_get_device = cp.cuda.runtime.getDevice
_several_gpus = cp.cuda.runtime.getDeviceCount() > 1   # with one GPU every array is on the current one
_CUDA_ERROR_INVALID_CONTEXT = 201    # no CUDA context current in this thread (a new thread)
_local = threading.local()           # .launchers: {fn: {argument types: Launcher}}, per thread

LAUNCH_MODES = ("fast", "cupy")
_mode = os.environ.get("MINITORCH_LAUNCH", "fast")
if _mode not in LAUNCH_MODES:
    raise ValueError(f"MINITORCH_LAUNCH={_mode!r}: expected one of {', '.join(LAUNCH_MODES)}")
_fast = _mode == "fast" and _launch_kernel is not None


def launch_mode():
    """'fast' (our Launchers) or 'cupy' (RawKernel.__call__): how kernels are launched now."""
    return "fast" if _fast else "cupy"


def set_launch_mode(mode):
    """Launch through our Launchers ('fast') or CuPy's RawKernel.__call__ ('cupy'); returns the
    previous mode. 'fast' stays 'cupy' when this CuPy has no cupy.cuda.driver.launchKernel."""
    global _fast
    if mode not in LAUNCH_MODES:
        raise ValueError(f"launch mode {mode!r}: expected one of {', '.join(LAUNCH_MODES)}")
    previous = launch_mode()
    _fast = mode == "fast" and _launch_kernel is not None
    return previous


def launcher_for(fn, args):
    """The Launcher of kernel ``fn`` for arguments of ``args``' types (made on first use)."""
    kinds = tuple(map(type, args))
    try:
        per_kernel = _local.launchers.setdefault(fn, {})
    except AttributeError:               # this thread's first launch
        per_kernel = {}
        _local.launchers = {fn: per_kernel}
    found = per_kernel.get(kinds)
    if found is None:
        found = per_kernel[kinds] = Launcher(fn, kinds)
    return found


def _launch_fast(fn, gx, gy, gz, bx, by, bz, shared_mem, index, args):
    """launch() in 'fast' mode, the grid and block already padded to three dimensions."""
    if _several_gpus and index >= 0 and _get_device() != index:   # fn belongs to GPU `index`: launch there
        with cp.cuda.Device(index):
            return _launch_fast(fn, gx, gy, gz, bx, by, bz, shared_mem, index, args)
    try:
        launcher = _local.launchers[fn][tuple(map(type, args))]
    except (AttributeError, KeyError):   # first launch of fn with these types (in this thread)
        launcher = launcher_for(fn, args)
    stream = _current_stream(index).ptr
    try:
        launcher.run(gx, gy, gz, bx, by, bz, shared_mem, stream, args)
    except _driver.CUDADriverError as e:
        if e.status != _CUDA_ERROR_INVALID_CONTEXT:
            raise
        # A thread that never made a runtime call has no current context; RawKernel makes one
        # with a runtime call before every launch (cupy's _ensure_context): we do it on demand.
        cp.cuda.runtime.memGetInfo()
        launcher.run(gx, gy, gz, bx, by, bz, shared_mem, stream, args)


def _launch_cupy(fn, grid, block, args, shared_mem):
    """launch() in 'cupy' mode: RawKernel.__call__ converts the arguments and launches."""
    if _StructPointer is None:           # this CuPy takes a struct as its NumPy array
        args = tuple(a.array if type(a) is StructArg else a for a in args)
    fn(grid, block, _as_cupy_args(args), shared_mem=shared_mem)


def launch(fn, grid, block, args, shared_mem=0, index=-1):  # noqa: F811 - replaces phase 01's
    """Queue the kernel ``fn`` on CuPy's current stream: ``grid`` (a tuple of 1 to 3 block counts,
    each >= 1) blocks of ``block`` (1 to 3 thread counts) threads, ``shared_mem`` bytes of dynamic
    shared memory per block. ``args``: a tuple of DeviceArrays (passed as device addresses), NumPy
    scalars of the exact C types, None (a null pointer) and StructArg (by-value structs).
    ``index``: the GPU that ``fn`` and the arrays belong to (made current for the launch if it
    is not), or -1 for the current one.

    Returns at once; the GPU runs the kernel later, in stream order.

    Raises:
        cupy.cuda.driver.CUDADriverError: the driver refused the launch (too many threads per
            block, too much shared memory...), as RawKernel.__call__ raises it.
        TypeError: an argument of a type that has no kernel equivalent.
    """
    if _fast:
        gx, gy, gz = grid + _ONES[len(grid)]
        bx, by, bz = block + _ONES[len(block)]
        _launch_fast(fn, gx, gy, gz, bx, by, bz, shared_mem, index, args)
    else:
        _launch_cupy(fn, grid, block, args, shared_mem)


_BLOCK = (BLOCK,)


def launch_stride(fn, n, per_thread, index, args):
    """Run a grid-stride kernel over ``n`` items: enough blocks for every thread to get about
    ``per_thread`` items, but never more than fill the GPU once (then each thread loops).
    ``index``: the GPU that ``fn`` and the arrays belong to."""
    if n > 0:
        cap = _resident.get(fn) or resident_blocks(fn, index)
        blocks = (n + per_thread * BLOCK - 1) // (per_thread * BLOCK)
        if blocks > cap:
            blocks = cap
        if _fast:                        # launch(), minus padding the grid: the hot path
            _launch_fast(fn, blocks, 1, 1, BLOCK, 1, 1, 0, index, args)
        else:
            _launch_cupy(fn, (blocks,), _BLOCK, args, 0)


_YZ_MAX = 65535                      # the largest grid y and z


def launch_2d(fn, grid, block, args, index, shared_mem=0):
    """Run ``fn`` on a 2-D/3-D ``grid`` of ``block``-shaped blocks on GPU ``index`` (y and z capped
    at 65535: our 2-D kernels loop over what does not fit), ``shared_mem`` bytes of dynamic shared
    memory per block."""
    # padded to three dimensions and capped here, then straight to _launch_fast as launch_stride
    # does (not through launch()): a launch-bound training step makes a dozen of these calls
    gx, gy, gz = grid + _ONES[len(grid)]
    gy, gz = min(gy, _YZ_MAX), min(gz, _YZ_MAX)
    if gx > 0 and gy > 0 and gz > 0:
        if _fast:
            bx, by, bz = block + _ONES[len(block)]
            _launch_fast(fn, gx, gy, gz, bx, by, bz, shared_mem, index, args)
        else:
            _launch_cupy(fn, (gx, gy, gz)[:len(grid)], block, args, shared_mem)


# ---- describing strided operands to a kernel ----------------------------------------------------
# The C struct ``Layout`` of minitorch/cuda/common.cuh, byte for byte: every field a 64-bit integer
# (so no padding to mirror), dimensions innermost first, strides in elements.
#
# How the bytes reach the kernel: cuLaunchKernel takes, for each argument, a pointer to its value
# and copies sizeof(argument) bytes from there when the launch is queued. Our Launcher (above) sets
# that pointer to the struct array's host bytes (StructArg.address). For the 'cupy' launch mode:
# CuPy documents passing a NumPy array of size one as a struct argument ("custom user
# structures"), and does exactly that with the array's data pointer - but it builds the array's
# __array_interface__ dict on every launch, about 6 us for this structured dtype (measured on an
# H100 host), more than the launch itself. So a StructArg is also a cupy.cuda.function.CPointer
# (what CuPy makes internally from such an array), holding the same address. Same bytes.
MAX_DIMS = 8
MAX_OPERANDS = 3
LAYOUT = np.dtype([("ndim", np.int64), ("shape", np.int64, (MAX_DIMS,)),
                   ("strides", np.int64, (MAX_OPERANDS, MAX_DIMS))])
_WORDS = LAYOUT.itemsize // 8          # 33 int64s
_STRIDES_AT = 1 + MAX_DIMS             # word where operand 0's strides start


try:
    from cupy.cuda.function import CPointer as _StructPointer
except ImportError:      # a CuPy without it: RawKernel gets the NumPy array itself (slower, same bytes)
    _StructPointer = None


class StructArg(_StructPointer or object):
    """A by-value struct kernel argument: ``array`` (a NumPy struct array of size one, kept alive)
    and ``address``, where its host bytes are."""

    def __init__(self, array):
        address = array.ctypes.data
        if _StructPointer is not None:
            super().__init__(address)
        self.array = array
        self.address = address


def coalesce(shape, strides):
    """Drop size-1 dimensions and merge neighbours that can be walked as one.

    ``shape`` is outermost first; ``strides`` holds one tuple of element strides per operand.
    Returns (sizes, per-operand strides), both innermost first. Two dimensions merge when, for
    every operand, stepping the outer one equals stepping the inner one all the way: a contiguous
    [4, 5] array is one dimension of 20. Fewer dimensions = fewer divisions in the kernel.
    """
    sizes, out = [], [[] for _ in strides]
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        if n == 1:
            continue
        if sizes and all(st[d] == o[-1] * sizes[-1] for st, o in zip(strides, out)):
            sizes[-1] *= n
        else:
            sizes.append(n)
            for st, o in zip(strides, out):
                o.append(st[d])
    return sizes, out


@functools.lru_cache(maxsize=4096)
def pack_layout(shape, strides):
    """The ``Layout`` kernel argument for walking ``shape`` (outermost first) in row-major order,
    reading operand k at element strides ``strides[k]``. Cached: training loops repeat shapes.
    Returns a StructArg (its ``.array`` is the NumPy struct).

    Raises:
        ValueError: when more than MAX_DIMS dimensions remain after merging.
    """
    sizes, per_operand = coalesce(shape, strides)
    if len(sizes) > MAX_DIMS:
        raise ValueError(f"cuda kernels take at most {MAX_DIMS} non-mergeable dimensions, "
                         f"got shape {shape} with strides {strides}")
    words = [0] * _WORDS
    words[0] = len(sizes)
    words[1:1 + len(sizes)] = sizes
    for k, st in enumerate(per_operand):
        at = _STRIDES_AT + k * MAX_DIMS
        words[at:at + len(st)] = st
    arg = np.array(words, dtype=np.int64).view(LAYOUT)      # shape (1,): one struct
    arg.flags.writeable = False                             # shared by every call that hits the cache
    return StructArg(arg)


def broadcast_strides(shape, strides, itemsize, out_shape):
    """Element strides that read an array of ``shape``/byte ``strides`` as if it had ``out_shape``:
    0 along broadcast dimensions (missing on the left, or of size 1)."""
    # >>> exercise 02.3: broadcasting is a stride of 0
    # hint: dimensions missing on the left, or of size 1 where out_shape is bigger, are read with stride 0
    # hint: strides are in bytes here: divide by itemsize to get element strides
    pad = len(out_shape) - len(shape)
    return tuple(0 if d < pad or shape[d - pad] == 1 else strides[d - pad] // itemsize
                 for d in range(len(out_shape)))
    # <<< exercise


@functools.lru_cache(maxsize=4096)
def broadcast_layout(operands):
    """For operands ``((shape, byte strides, itemsize), ...)``: (out shape, out size, Layout).

    The Layout is None when the output is empty (nothing to launch). Cached on the operands'
    shapes and strides, so a repeated op costs one dictionary lookup here.
    """
    out_shape = broadcast_shape(*(op[0] for op in operands))
    size = math.prod(out_shape)
    if size == 0:
        return out_shape, 0, None
    strides = tuple(broadcast_strides(s, st, isz, out_shape) for s, st, isz in operands)
    return out_shape, size, pack_layout(out_shape, strides)
UNROLL = 4           # common.cuh's UNROLL: 16-byte vectors each thread has in flight in scan()
import ml_dtypes     # noqa: E402 - NumPy's bfloat16 dtype

SUFFIX[np.dtype(np.float16)] = "f16"             # __half kernels
SUFFIX[np.dtype(ml_dtypes.bfloat16)] = "bf16"    # __nv_bfloat16 kernels


@functools.lru_cache(maxsize=None)
def dtype_name(dtype):
    """``dtype.name`` of a NumPy dtype, cached: NumPy 2 computes the name in Python (~4 us a call,
    more than a launch), and the softmax, cross-entropy, batch norm, layer norm and attention
    functions ask for it at every call."""
    return dtype.name
