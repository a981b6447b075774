# phase: 05
"""The GEMM ladder on ``DeviceArray``s: ``C = op(A) @ op(B) (+ bias)`` with any rung of
``minitorch/cuda/gemm/NN_name.cu``.

Each rung is one ``.cu`` file with the same entry points (``gemm_nn_f32`` ... ``gemm_tt_f32``,
arguments in ``gemm.cuh``); what differs is how its blocks share work, which this module records
in a :class:`Rung`: threads per block, the C tile a block computes, shared memory, the dtypes it
has, the oldest GPU it runs on. :func:`gemm` reads the layout letters off the strides, so a
transposed view (``W.T``, ``grad.T``) is multiplied where it lies.
"""
from dataclasses import dataclass, field

import numpy as np

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
    # Tensor cores (sm_80+): 8 warps, 128 x 128 block tile, 3-stage cp.async pipeline.
    "10_tf32_mma": Rung("gemm/10_tf32_mma.cu", (256,), (128, 128), ("f32",), smem=110592, arch=80,
                        tensor_cores=True),
    # The same with a 128 x 256 block tile (64 x 64 warptiles: fewer smem bytes per mma, one block per SM).
    "10_tf32_mma_wide": Rung("gemm/10_tf32_mma.cu", (256,), (128, 256), ("f32",), smem=165888, arch=80,
                             tensor_cores=True, options=("-DTF32_BN=256",)),
    # bf16/fp16 on tensor cores (sm_80+): ldmatrix from swizzled smem tiles, 3 stages. tensor_cores
    # stays False: it marks float32 rounded to TF32 (allow_tf32), and this rung has no float32.
    "11_half_mma": Rung("gemm/11_half_mma.cu", (256,), (128, 128), ("bf16", "f16"), smem=98304, arch=80),
}


_big_smem = set()     # kernels whose dynamic shared memory limit was raised for their rung


def layout_of(shape2, strides2, itemsize):
    """('n' or 't', leading dimension in elements) for a matrix of ``shape2`` (rows, cols) and byte
    ``strides2``, or None when neither dimension has unit stride (the caller copies it first).
    A dimension of size 1 counts as unit-stride: its stride is never followed."""
    rows, cols = shape2
    s_row, s_col = (s // itemsize for s in strides2)
    if s_col == 1 or cols == 1:
        return "n", max(s_row, cols) if rows > 1 else max(cols, 1)
    if s_row == 1 or rows == 1:
        return "t", max(s_col, rows) if cols > 1 else max(rows, 1)
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
