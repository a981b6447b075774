# GENERATED from minitorch/native/cuda/gemm.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 05
"""The GEMM ladder on ``DeviceArray``s: ``C = op(A) @ op(B) (+ bias)`` with any rung of
``minitorch/cuda/gemm/NN_name.cu``.

Each rung is one ``.cu`` file with the same entry points (``gemm_nn_f32`` ... ``gemm_tt_f32``,
arguments in ``gemm.cuh``); what differs is how its blocks share work, which this module records
in a :class:`Rung`: threads per block, the C tile a block computes, shared memory, the dtypes it
has, the oldest GPU it runs on. :func:`gemm` reads the layout letters off the strides, so a
transposed view (``W.T``, ``grad.T``) is multiplied where it lies.

Dispatch: :func:`matmul` and :func:`linear` (the backend functions the Tensor layer calls) ask
:func:`choose` for the rung of a product's (shape class, kind of arithmetic, GPU architecture):
first the tuned table ``minitorch/cuda/gemm/tuned.json`` that the autotuner writes, then a built-in
order (the highest rung that exists, runs on this GPU and has the dtype).
"""
import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...backends.cuda import matmul as _tf32_switch
from ...broadcast import broadcast_shape
from ...cuda import cupy_or_raise
from ...cuda.array import empty
from .launch import SUFFIX, broadcast_layout, cdiv, kernel, launch_2d


@dataclass(frozen=True)
class Rung:
    """One rung: ``file`` under minitorch/cuda/, ``block`` threads (x, y), ``tile`` = (BM, BN) the
    rows and columns of C one block computes, ``dtypes`` the kernel suffixes it has, ``smem``
    dynamic shared memory in bytes (0: static only), ``arch`` the oldest compute capability,
    ``tensor_cores`` whether float32 inputs are rounded to TF32 (only with allow_tf32),
    ``options`` NVRTC options (compile-time tile sizes for the tuned rungs)."""
    file: str
    block: tuple
    tile: tuple
    dtypes: tuple = ("f32",)
    smem: int = 0
    arch: int = 70
    tensor_cores: bool = False
    options: tuple = field(default=())


RUNGS = {
    "01_naive": Rung("gemm/01_naive.cu", (16, 16), (16, 16), ("f32", "f64")),
    # 1-D blocks: thread t of a block owns row t // BN (or t // (BN / TN)) of the C tile; the
    # kernels read only threadIdx.x, so block must stay (threads, 1). Shared memory is static.
    "02_coalesced": Rung("gemm/02_coalesced.cu", (1024, 1), (32, 32)),
    "03_smem_tiling": Rung("gemm/03_smem_tiling.cu", (1024, 1), (32, 32)),
    "04_blocktile_1d": Rung("gemm/04_blocktile_1d.cu", (512, 1), (64, 64)),
    "05_blocktile_2d": Rung("gemm/05_blocktile_2d.cu", (256, 1), (128, 128), ("f32", "f64")),
    "06_vectorized": Rung("gemm/06_vectorized.cu", (256, 1), (128, 128)),
    # Tensor cores (sm_80+): 8 warps, 128 x 128 block tile, 3-stage cp.async pipeline.
    "10_tf32_mma": Rung("gemm/10_tf32_mma.cu", (256,), (128, 128), ("f32",), smem=110592, arch=80,
                        tensor_cores=True),
    # bf16/fp16 on tensor cores (sm_80+): ldmatrix from swizzled smem tiles, 3 stages. tensor_cores
    # stays False: it marks float32 rounded to TF32 (allow_tf32), and this rung has no float32.
    "11_half_mma": Rung("gemm/11_half_mma.cu", (256,), (128, 128), ("bf16", "f16"), smem=98304, arch=80),
}


_big_smem = set()     # kernels whose dynamic shared memory limit was raised for their rung


def layout_of(shape2, strides2, itemsize):
    """('n' or 't', leading dimension in elements) for a matrix of ``shape2`` (rows, cols) and byte
    ``strides2``, or None when it is not one of the two BLAS layouts (the caller copies it first).

    'n': unit stride along the columns, rows ``ld >= cols`` apart (``x``, ``grad``); 't': unit
    stride along the rows, columns ``ld >= rows`` apart (``W.T``, ``x.transpose(-1, -2)``). A
    dimension of size 1 counts as unit-stride: its stride is never followed. None for views
    whose rows overlap (an expanded ``[N] -> [M, N]`` has row stride 0, from ``mean``/``sum``
    backward), negative strides or no unit stride at all: no kernel is asked to read those.
    """
    rows, cols = shape2
    s_row, s_col = (s // itemsize for s in strides2)
    if (s_col == 1 or cols == 1) and (rows == 1 or s_row >= max(cols, 1)):
        return "n", s_row if rows > 1 else max(cols, 1)
    if (s_row == 1 or rows == 1) and (cols == 1 or s_col >= max(rows, 1)):
        return "t", s_col if cols > 1 else max(rows, 1)
    return None


def gemm(a, b, bias=None, rung="01_naive", options=None):
    """``a @ b (+ bias)`` with rung ``rung`` (a key of :data:`RUNGS`).

    Shapes: ``a`` [..., M, K], ``b`` [..., K, N] with broadcast batch dimensions, ``bias`` [N] or
    None; returns a new contiguous [..., M, N] array of the same dtype. Both operands share a dtype
    the rung has; each may be any view whose rows or columns are unit-stride (others are copied).
    ``options`` replaces the rung's NVRTC options (the autotuner's tile sizes).

    Raises:
        KeyError: unknown rung.  TypeError: dtypes differ or the rung has none for them.
        ValueError: operands not 2-D or more, inner sizes or batch shapes that do not match, a
            bias that is not [N].
    """
    spec = RUNGS[rung]
    if a.dtype != b.dtype or SUFFIX.get(a.dtype) not in spec.dtypes:
        raise TypeError(f"gemm rung {rung} takes two arrays of one of {spec.dtypes}, got {a.dtype} and {b.dtype}")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"gemm takes operands of 2 or more dimensions, got shapes {a.shape} and {b.shape}")
    (m, k), (kb, n) = a.shape[-2:], b.shape[-2:]
    if k != kb:
        raise ValueError(f"gemm: inner sizes differ: {a.shape} @ {b.shape}")
    if bias is not None and (bias.shape != (n,) or bias.dtype != a.dtype):
        raise ValueError(f"gemm: bias must be [{n}] of {a.dtype}, got {bias.shape} of {bias.dtype}")
    from .elementwise import contiguous
    isz = a.itemsize
    la = layout_of(a.shape[-2:], a.strides[-2:], isz)
    if la is None:
        a = contiguous(a)
        la = layout_of(a.shape[-2:], a.strides[-2:], isz)
    lb = layout_of(b.shape[-2:], b.strides[-2:], isz)
    if lb is None:
        b = contiguous(b)
        lb = layout_of(b.shape[-2:], b.strides[-2:], isz)
    batch_shape, batch, layout = broadcast_layout(((a.shape[:-2], a.strides[:-2], isz),
                                                   (b.shape[:-2], b.strides[:-2], isz)))
    idx = a.device_id
    out = empty(batch_shape + (m, n), a.dtype, idx)
    if batch == 0 or m == 0 or n == 0:
        return out
    if k == 0:                       # an empty sum: zeros (plus the bias), no kernel needed
        from .creation import fill_
        fill_(out, 0)
        if bias is not None:
            from .elementwise import binary
            out = binary("add", out, bias)
        return out
    name = f"gemm_{la[0]}{lb[0]}_{SUFFIX[a.dtype]}"
    fn = kernel(spec.file, name, idx, spec.options if options is None else tuple(options))
    if spec.smem > 48 * 1024 and fn not in _big_smem:
        # A block may use more than 48 KB of dynamic shared memory only once the kernel's limit is
        # raised (cuFuncSetAttribute), once per compiled kernel.
        fn.max_dynamic_shared_size_bytes = spec.smem
        _big_smem.add(fn)
    bm, bn = spec.tile
    launch_2d(fn, (cdiv(n, bn), cdiv(m, bm), batch), spec.block,
              (a, b, out, bias, m, n, k, la[1], lb[1], batch, layout), idx, spec.smem)
    return out


# ---- dispatch: which rung for which product ----------------------------------------------------------
TUNED_JSON = Path(__file__).resolve().parents[2] / "cuda" / "gemm" / "tuned.json"
SMALL, MEDIUM = 2 ** 18, 2 ** 22      # elements of C (all batches): the autotuner's classes too
KINDS = {"f32": "fp32", "f64": "fp64", "bf16": "bf16", "f16": "f16"}   # table key per dtype suffix
# float64 is the correctness dtype (gradcheck): 05 is the last rung with simple f64 entry points; the
# later ones are built around 4-byte elements (float4 loads, shared-memory and register budgets)
F64_ORDER = ("05_blocktile_2d", "01_naive")


def shape_class(m, n, k, batch=1):
    """'small', 'medium' or 'large': the size class of a product with ``batch`` C matrices of
    ``m`` x ``n`` (``k`` does not enter: the class says how many blocks fill the GPU).
    ``m * n * batch <= 2**18`` is small (a few waves of blocks on an H100 at best), ``<= 2**22``
    medium, beyond that large. The autotuner (benchmarks) files its results under the same classes.
    """
    c = m * n * batch
    return "small" if c <= SMALL else "medium" if c <= MEDIUM else "large"


_tuned = None


def tuned_table():
    """The autotuner's table ``{"sm_90": {kind: {class: {"rung", "options", "gflops"}}}}``, read
    from ``minitorch/cuda/gemm/tuned.json`` on first use ({} when the file is missing)."""
    global _tuned
    if _tuned is None:
        try:
            _tuned = json.loads(TUNED_JSON.read_text())
        except FileNotFoundError:
            _tuned = {}
    return _tuned


def _usable(name, suffix, arch, tensor_cores_ok):
    """Whether rung ``name`` exists, has entry points for ``suffix``, runs on compute capability
    ``arch`` and (for float32) uses tensor cores only when ``tensor_cores_ok``."""
    spec = RUNGS.get(name)
    return (spec is not None and suffix in spec.dtypes and spec.arch <= arch
            and (suffix != "f32" or tensor_cores_ok or not spec.tensor_cores))


def _default(suffix, arch, tf32):
    """The built-in choice: the highest-numbered usable rung (rung names start with their number).
    float32 prefers a TF32 rung when ``tf32``, else only rungs without tensor cores; float64
    follows F64_ORDER first."""
    ranked = sorted(RUNGS, reverse=True)
    if suffix == "f64":
        ranked = [r for r in F64_ORDER if r in RUNGS] + ranked
    if suffix == "f32":
        tc = [r for r in ranked if RUNGS[r].tensor_cores]
        ranked = (tc if tf32 else []) + [r for r in ranked if not RUNGS[r].tensor_cores]
    for name in ranked:
        if _usable(name, suffix, arch, tf32):
            return name
    raise TypeError(f"no GEMM rung has {suffix} entry points for sm_{arch}")


@functools.lru_cache(maxsize=4096)
def _choose(cls, suffix, arch, tf32):
    kind = "tf32" if suffix == "f32" and tf32 else KINDS.get(suffix, suffix)
    entry = tuned_table().get(f"sm_{arch}", {}).get(kind, {}).get(cls)
    # a tuned entry is taken only if it is still valid here: the rung may have been renamed or
    # removed since the table was written, and the table must never override allow_tf32
    if entry and _usable(entry.get("rung"), suffix, arch, tf32):
        return entry["rung"], tuple(entry.get("options") or ())
    name = _default(suffix, arch, tf32)
    return name, RUNGS[name].options


def choose(m, n, k, batch, dtype_suffix, arch, allow_tf32=None):
    """The rung and NVRTC options for ``batch`` products ``[m, k] @ [k, n]`` of dtype
    ``dtype_suffix`` ('f32', 'f64', 'bf16', 'f16') on a GPU of compute capability ``arch`` (90
    for an H100): ``(rung name, options tuple)``.

    The tuned table's entry for (``sm_<arch>``, kind, :func:`shape_class`) wins when it names a
    usable rung; the kind is 'tf32' for float32 when ``allow_tf32`` (default: the switch
    ``minitorch.backends.cuda.matmul.allow_tf32``), else 'fp32', and 'bf16'/'f16' for half
    dtypes. Otherwise the built-in order: the highest rung without tensor cores for float32
    (with them first when TF32 is allowed), 05_blocktile_2d (else 01) for float64, the half
    rung for bf16/f16. Never a rung missing from RUNGS, above ``arch``, or using tensor cores on
    float32 unless TF32 is allowed.

    Raises:
        TypeError: no rung has the dtype on this architecture.
    """
    if allow_tf32 is None:
        allow_tf32 = _tf32_switch.allow_tf32
    return _choose(shape_class(m, n, k, batch), dtype_suffix, int(arch), bool(allow_tf32))


def reload_tuned():
    """Forget the loaded table and the cached choices (after the autotuner rewrote tuned.json, or
    a test replaced RUNGS)."""
    global _tuned
    _tuned = None
    _choose.cache_clear()


@functools.lru_cache(maxsize=None)
def arch_of(index):
    """Compute capability of GPU ``index`` as an int (90 for sm_90)."""
    return int(cupy_or_raise().cuda.Device(index).compute_capability)


def _mm(a, b, bias):
    """gemm() with the rung :func:`choose` picks; ``a`` [..., M, K], ``b`` [..., K, N]."""
    (m, k), n = a.shape[-2:], b.shape[-1]
    batch = math.prod(broadcast_shape(a.shape[:-2], b.shape[:-2]))
    suffix = SUFFIX.get(a.dtype)
    if suffix is None or a.dtype != b.dtype:
        raise TypeError(f"cuda matmul takes two arrays of one floating dtype, got {a.dtype} and {b.dtype}")
    rung, options = choose(m, n, k, batch, suffix, arch_of(a.device_id))
    return gemm(a, b, bias, rung, options)


def matmul(a, b, bias=None):
    """``a @ b (+ bias)`` with the fastest usable rung of the ladder (see :func:`choose`).

    ``a`` [..., M, K] and ``b`` [..., K, N] with broadcast batch dimensions, as ``np.matmul``
    (1-D operands too: a [K] is one row, b [K] one column, and that dimension is dropped from the
    result); ``bias`` [N] or None, added in the GEMM's epilogue. Both one dtype a rung has
    (float32, float64; bf16/f16 with the half rung). Any strides: transposed views go to the
    kernel as layout 't', nothing is copied unless neither dimension of a matrix is unit-stride.
    A batched ``a`` times a 2-D ``b`` (``x @ W.T`` with x [B, T, K]) is one GEMM of B*T rows when
    ``a``'s batches lie one after the other in memory.

    Returns a new contiguous array of the broadcast shape.

    Raises:
        TypeError: dtypes differ or no rung has them.  ValueError: 0-d operands, inner sizes that
            differ, batch shapes that do not broadcast, a bias that is not [N].
    """
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    a2 = a.as_strided((1,) + a.shape, (a.itemsize * a.shape[0],) + a.strides) if a.ndim == 1 else a
    b2 = b.as_strided(b.shape + (1,), b.strides + (b.itemsize,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: inner sizes differ: {a.shape} @ {b.shape}")
    out_shape = (broadcast_shape(a2.shape[:-2], b2.shape[:-2]) + ((a2.shape[-2],) if a.ndim > 1 else ())
                 + ((b2.shape[-1],) if b.ndim > 1 else ()))
    if b2.ndim == 2 and a2.ndim > 2:
        # [B, T, K] @ [K, N]: when a's batches lie row after row in memory they are more rows of
        # one matrix: one GEMM of B*T rows (one launch, a bigger grid, the shape class it really is)
        a2 = _fold_rows(a2) or a2
    out = _mm(a2, b2, bias)
    return out.reshape(out_shape)


def _fold_rows(a):
    """``a`` [..., M, K] as one [prod(...) * M, K] matrix view, or None when its batch and row
    dimensions are not one evenly strided run of rows (or the view is not a BLAS layout)."""
    row, inner = None, 1           # row: byte stride of the merged row dimension
    for size, stride in zip(reversed(a.shape[:-1]), reversed(a.strides[:-1])):
        if size == 1:
            continue
        if row is None:            # the innermost dimension that moves: its stride is the row's
            row = stride
        elif stride != row * inner:
            return None
        inner *= size
    if row is None:                # a single row: any stride will do
        row = a.itemsize * max(a.shape[-1], 1)
    view = a.as_strided((math.prod(a.shape[:-1]), a.shape[-1]), (row, a.strides[-1]))
    return view if layout_of(view.shape, view.strides, a.itemsize) is not None else None


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` (``nn.Linear``): one GEMM in layout 'nt' (``weight`` read where
    it lies, transposed by its strides) with the bias added in the epilogue.

    Shapes: ``x`` [..., in], ``weight`` [out, in], ``bias`` [out] or None -> [..., out]; one dtype.

    Raises:
        as :func:`matmul`.
    """
    return matmul(x, weight.T, bias)
