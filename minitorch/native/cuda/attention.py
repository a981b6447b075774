# phase: 07
"""FlashAttention on ``DeviceArray``s: the launchers of ``minitorch/cuda/attention/01_flash_fp32.cu``
(float32, rung 1), of ``01b_flash_fp32_tiled.cu`` (rung 1b: the same float32 kernels with GEMM-style
register tiling), of ``01c_flash_fp32_3xtf32.cu`` (rung 1c: rung 1b's kernels on TF32 tensor cores
at float32 accuracy, "3xTF32", what runs by default on sm_80 and later; rung 1b elsewhere) and, at the
end, of ``02_flash_mma.cu`` (bfloat16 / float16 on tensor cores) and of its forward on Hopper's wgmma,
``03_flash_wgmma.cu`` (sm_90 only; what the bf16/fp16 forward runs there for head dimensions 64 and 128).

Float32 inputs are ``q [B, H, L, D]``, ``k, v [B, H, S, D]`` (or ``[BH, L, D]``, ``[BH, S, D]``, read
as B = BH, H = 1; one head dimension D in {32, 64, 128} for all three). Rungs 1b and 1c read them through
their strides, rows contiguous and 16-byte aligned (:func:`rows_aligned`: the q, k, v head views a
GPT cuts from one [B, T, 3 C] GEMM output qualify), and writes O, dQ, dK, dV in PyTorch flash's
[B, T, H, D] memory layout (returned as [B, H, T, D] views); rung 1 needs C-contiguous arrays (the
Tensor layer copies what does not fit). Nothing here waits for the GPU.

Dropout (rungs 1b and 1c): ``seed`` (one uint64 Philox key in device memory, from
``attention_seed`` as the fused softmax draws it) and ``p`` drop the very elements that
``attention_softmax`` drops for the same key on the [BH * L, S] scores (``minitorch/cuda/philox.cuh``).

Grids (the kernels' tiles, see the .cu): forward and dQ: (BH, ceil(L / 64)) blocks (rung 1b's
forward and rung 1c: ceil(L / 128)); dK/dV: (BH, ceil(S / 64)) blocks (rung 1c and its one-pass
backward: ceil(S / 128)); 256 threads each. Shared memory is dynamic, up to ~116 KB for D = 128
(rung 1b: 172 KB, rung 1c: 222 KB): past 48 KB a kernel must opt in once
(cudaFuncSetAttribute(MaxDynamicSharedMemorySize)).
"""
import functools
import os

import numpy as np

from ...cuda.array import empty, non_overlapping_and_dense
from ..cpu import attention_dropout_threshold
from .elementwise import contiguous
from .creation import fill_
from .gemm import arch_of, target_kernel, tensor_map
from .launch import cdiv, cp, dtype_name, kernel, launch, launch_stride

FILE = "attention/01_flash_fp32.cu"
HEAD_DIMS = (32, 64, 128)
THREADS = 256
FBQ, FBK = 64, 64            # forward: query rows x keys per tile
KBK, KBQ = 64, 32            # dK/dV: keys per block x query rows per step
QBQ, QBK = 64, 32            # dQ: query rows per block x keys per step
TILED_FILE = "attention/01b_flash_fp32_tiled.cu"
TBQ, TBK = 128, 64           # rung 1b's forward: query rows per block x keys per tile
TSTEP = 64                   # rung 1b's backward: query rows (dK/dV) or keys (dQ) per step
X3_FILE = "attention/01c_flash_fp32_3xtf32.cu"     # rung 1c: TBQ x TBK tiles as rung 1b's forward
X3_ROWS, X3_STEP = 128, 32   # rung 1c's backward: keys (dK/dV) or queries (dQ) per block, the other per step
STATIC_SMEM = 48 * 1024
_F32 = np.dtype(np.float32)
_raised = {}                 # kernels already allowed their shared memory (kept alive: ids stay unique)


def _smem_floats(kind, d):
    """Floats of dynamic shared memory per block, as the kernel lays them out (rows padded to d + 1)."""
    dp = d + 1
    if kind == "fwd_3xtf32":         # Q rows padded to d + 4; K, V as big and small, the same; keep bits
        return (TBQ + 4 * TBK) * (d + 4) + TBQ * TBK // 32
    if kind in ("dkdv_3xtf32", "onepass_3xtf32"):   # K, V rows; Q, dO of a step big and small; lse, delta;
        #                                             keep bits (16-bit); the one-pass kernel: dS^T [rows][step + 4]
        onepass = X3_ROWS * (X3_STEP + 4) if kind == "onepass_3xtf32" else 0
        return (2 * X3_ROWS + 4 * X3_STEP) * (d + 4) + 2 * X3_STEP + X3_STEP * X3_ROWS // 32 + onepass
    if kind == "dq_3xtf32":          # Q, dO rows; K, V of a step big and small; keep bits (16-bit)
        return (2 * X3_ROWS + 4 * X3_STEP) * (d + 4) + X3_ROWS * X3_STEP // 32
    if kind == "fwd_tiled":          # Q, K, V rows padded to d + 4; P [TBQ][TBK + 16]; keep bits [TBQ][TBK / 32]
        return (TBQ + 2 * TBK) * (d + 4) + TBQ * (TBK + 16) + TBQ * TBK // 32
    if kind == "dkdv_tiled":         # K, V, Q, dO rows padded to d + 4; P^T, dS^T [KBK][TSTEP + 16]; lse, delta;
        #                              keep bits [TSTEP][KBK / 16] (16-bit)
        return 2 * (KBK + TSTEP) * (d + 4) + 2 * KBK * (TSTEP + 16) + 2 * TSTEP + TSTEP * KBK // 32
    if kind == "dq_tiled":           # Q, dO, K, V rows padded to d + 4; dS [QBQ][TSTEP + 16]; keep bits (16-bit)
        return 2 * (QBQ + TSTEP) * (d + 4) + QBQ * (TSTEP + 16) + QBQ * TSTEP // 32
    if kind == "fwd":
        return (FBQ + FBK) * dp + FBQ * (FBK + 1)
    if kind == "dkdv":
        return 2 * KBK * dp + 2 * KBQ * dp + 2 * KBK * (KBQ + 1) + 2 * KBQ
    return 2 * QBQ * dp + 2 * QBK * dp + QBQ * (QBK + 1)


def _kernel(name, d, idx, kind, file=FILE, options=()):
    fn = kernel(file, f"{name}_f32_d{d}", idx, options)
    smem = 4 * _smem_floats(kind, d)
    if smem > STATIC_SMEM and id(fn) not in _raised:
        with cp.cuda.Device(idx):
            fn.max_dynamic_shared_size_bytes = smem      # opt in once per kernel (see module doc)
        _raised[id(fn)] = fn
    return fn, smem


def _check(q, k, v):
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.dtype != _F32 or a.ndim not in (3, 4) or a.ndim != q.ndim:
            raise ValueError(f"flash_attention: {name} must be a float32 [B, H, len, D] or [BH, len, D] array like q, "
                             f"got {a.dtype} shape {a.shape}")
    d = q.shape[-1]
    if d not in HEAD_DIMS:
        raise ValueError(f"flash_attention: head dimension must be one of {HEAD_DIMS}, got {d}")
    if k.shape[:-2] != q.shape[:-2] or k.shape[-1] != d or v.shape != k.shape:
        expected = q.shape[:-2] + ("S", d)
        raise ValueError(f"flash_attention: expected k and v of shape {expected}, got {k.shape} and {v.shape}")


def _heads(a):
    """H and the element strides (sb, sh, st) of a [B, H, T, D] array, a [BH, T, D] one read as
    B = BH, H = 1 (struct Heads of the .cu). A size-1 dimension's stride is never used: 0."""
    shape, strides = a.shape[:-1], tuple(st // a.itemsize for st in a.strides[:-1])
    if a.ndim == 3:
        shape, strides = (shape[0], 1, shape[1]), (strides[0], 0, strides[1])
    strides = tuple(st if n > 1 else 0 for n, st in zip(shape, strides))
    return shape[1], tuple(np.int64(st) for st in strides)


def rows_aligned(a):
    """Whether rung 1b can read ``a`` where it lies: its rows (last dimension) contiguous and each
    16-byte aligned (the kernels copy them in 16-byte pieces), i.e. the address a multiple of 16
    and every other stride (of a dimension longer than 1) a multiple of 4 elements."""
    return (a.ptr % 16 == 0 and (a.strides[-1] == a.itemsize or a.shape[-1] == 1)
            and all(st % (4 * a.itemsize) == 0 for n, st in zip(a.shape[:-1], a.strides[:-1]) if n > 1))


def _runs_tiled(tiled, arrays):
    """Whether rung 1b runs: asked for (``tiled``) and every array :func:`rows_aligned`; else rung 1,
    which reads C-contiguous arrays only (ValueError for others)."""
    if tiled and all(rows_aligned(a) for a in arrays):
        return True
    for a in arrays:
        if not a.c_contiguous:
            raise ValueError("flash_attention: rung 1 (tiled=False, or arrays not 16-byte aligned) needs C-contiguous "
                             f"arrays, got shape {a.shape} strides {a.strides} address {a.ptr:#x}")
    return False


def _output(shape, tiled, idx):
    """A fresh float32 array of a [B, H, T, D] operand's shape. Rung 1b writes it in PyTorch flash's
    memory layout, [B, T, H, D], returned as its [B, H, T, D] view: the transpose back to [B, T, H, D]
    a GPT does next is then free (a [BH, T, D] array is that layout already, H = 1). Rung 1: contiguous."""
    if not tiled or len(shape) == 3:
        return empty(shape, _F32, idx)
    b, h, t, d = shape
    return empty((b, t, h, d), _F32, idx).transpose(0, 2, 1, 3)


def _tf32_options(tf32_terms):
    """Rung 1c's NVRTC options: TF32_TERMS=1 for plain TF32 (3xTF32 is the file's default)."""
    if tf32_terms not in (1, 3):
        raise ValueError(f"flash_attention: tf32_terms must be 3 (3xTF32) or 1 (plain TF32), got {tf32_terms}")
    return () if tf32_terms == 3 else ("-DTF32_TERMS=1",)


def _gradients(q, k, v, tiled, idx):
    """Fresh dq, dk, dv for rung 1b's or 1c's backward. When q, k and v are equally spaced pieces of one
    dense layout (a GPT's head views of one [B, T, 3C] product: one allocation, the same shape and strides,
    k starting d bytes after q and v d after k), the gradients are the same pieces of one fresh
    buffer, which the split's backward then takes whole (cuda.array.joined_view) instead of copying
    three gradients into it. Otherwise each is :func:`_output`."""
    if (tiled and q.ndim == 4 and q.owner is k.owner is v.owner and q.shape == k.shape == v.shape
            and q.strides == k.strides == v.strides):
        d = k.ptr - q.ptr
        if d > 0 and v.ptr - k.ptr == d and non_overlapping_and_dense((3,) + q.shape, (d,) + q.strides, 4):
            buffer = empty((3 * q.size,), _F32, idx)
            return tuple(buffer.as_strided(q.shape, q.strides, j * d) for j in range(3))
    return tuple(_output(a.shape, tiled, idx) for a in (q, k, v))


def _dropout_args(tiled, seed, p, arrays):
    """The tiled kernels' dropout arguments, for ``tiled`` = :func:`_runs_tiled`'s answer; dropout
    needs rung 1b (rung 1 has no such arguments): else ValueError."""
    if p > 0 and not tiled:
        raise ValueError("flash_attention: dropout runs in rung 1b only, which needs tiled=True and 16-byte "
                         f"aligned arrays; the addresses were {[hex(a.ptr) for a in arrays]}")
    if p > 0 and seed is None:
        raise ValueError(f"flash_attention: dropout_p = {p} needs a seed (attention_seed), got None")
    threshold, keep_scale = attention_dropout_threshold(p) if p > 0 else (0, 1.0)
    return (seed if p > 0 else None, np.bool_(p > 0), np.int32(threshold), np.float32(keep_scale))


def _strides(*arrays):
    """H (heads per batch element), then the (sb, sh, st) of each array: the tiled kernels' last arguments."""
    return (np.int64(_heads(arrays[0])[0]),) + sum((_heads(a)[1] for a in arrays), ())


@functools.lru_cache(maxsize=None)
def _has_3xtf32(d, idx):
    """Whether GPU ``idx`` runs rung 1c at head dimension ``d``: TF32 tensor cores (sm_80 and later) and
    room for its shared memory (at d = 128 the forward's 204 KB and the one-pass backward's 222 KB: an
    H100's 227 KB, not an A100's 163 KB nor sm_86 / sm_89's 99 KB). Cached: asked on every launch."""
    props = cp.cuda.runtime.getDeviceProperties(idx)
    smem = 4 * max(_smem_floats(kind, d) for kind in ("fwd_3xtf32", "onepass_3xtf32"))
    return props["major"] >= 8 and smem <= props.get("sharedMemPerBlockOptin", 0)


def flash_attention(q, k, v, scale, causal, tiled=True, seed=None, p=0.0, tensor_cores=True, tf32_terms=3):
    """``dropout(softmax(q k^T * scale), p) v`` (causal: key j seen by query i iff j <= i), never
    forming [L, S].

    Args: q [B, H, L, D], k, v [B, H, S, D] float32 (or [BH, L, D], [BH, S, D]), L, S >= 1; scale a
    float; tiled: run rung 1c or 1b, which read the arrays through their strides and need each
    :func:`rows_aligned` (the GPT's head views of one [B, T, 3 C] GEMM output are); otherwise, or with
    tiled=False (the notebook's ladder), rung 1, which needs them C-contiguous.
    tensor_cores: rung 1c (01c_flash_fp32_3xtf32.cu: 3xTF32 on the tensor cores, float32 accuracy)
    where the GPU has it (:func:`_has_3xtf32`), else rung 1b (01b_flash_fp32_tiled.cu: FFMA);
    False forces rung 1b. tf32_terms: rung 1c's products as 3 TF32 mmas (3xTF32) or 1 (plain TF32,
    ~1e-3 off: the notebook's and the tests' comparison).
    seed, p: dropout (see the module doc); p > 0 needs rung 1b or 1c (ValueError otherwise).
    Returns: (out of q's shape, lse [BH, L]) with lse the natural log-sum-exp of each row's scaled scores
    before dropout (the same from every rung: flash_attention_backward takes any without dropout).
    Rung 1b's and 1c's out of a 4-D q lies in memory as [B, L, H, D] (:func:`_output`); rung 1's is contiguous.
    Raises: ValueError for dtypes, shapes or head dimensions outside the above, rung 1 on
    non-contiguous arrays, dropout without rung 1b or 1c or without a seed.
    """
    _check(q, k, v)
    options = _tf32_options(tf32_terms)
    tiled = _runs_tiled(tiled, (q, k, v))
    drop = _dropout_args(tiled, seed, p, (q, k, v))     # raises for dropout without rung 1b or 1c
    L, d = q.shape[-2:]
    S = k.shape[-2]
    bh = int(np.prod(q.shape[:-2]))
    idx = q.device_id
    tiled = tiled and S > 0         # S = 0 (no keys, nothing to drop) runs rung 1, which reads q contiguous
    out = _output(q.shape, tiled, idx)
    lse = empty((bh, L), _F32, idx)
    if not (bh and L):
        return out, lse
    if tiled:       # rungs 1b and 1c: the same arguments and grid
        if tensor_cores and _has_3xtf32(d, idx):
            fn, smem = _kernel("flash_fwd_3xtf32", d, idx, "fwd_3xtf32", X3_FILE, options)
        else:
            fn, smem = _kernel("flash_fwd_tiled", d, idx, "fwd_tiled", TILED_FILE)
        extra, grid = drop + _strides(q, k, v, out), (bh, cdiv(L, TBQ))
    else:
        q = q if q.c_contiguous else contiguous(q)
        fn, smem = _kernel("flash_fwd", d, idx, "fwd")
        extra, grid = (), (bh, cdiv(L, FBQ))
    launch(fn, grid, (THREADS,), (q, k, v, out, lse, L, S, np.float32(scale), np.bool_(causal)) + extra,
           shared_mem=smem, index=idx)
    return out, lse


def flash_attention_backward(q, k, v, out, lse, grad, scale, causal, tiled=True, seed=None, p=0.0,
                             tensor_cores=True, tf32_terms=3, deterministic=False):
    """Gradients (dq, dk, dv) of :func:`flash_attention` from its inputs, output, log-sum-exp and the
    upstream gradient ``grad`` (float32, out's shape). FlashAttention-2's backward: delta =
    rowsum(grad * out), then one of two ways:

    * rung 1c (3xTF32 on the tensor cores: ``tensor_cores`` and :func:`_has_3xtf32`) without
      ``deterministic``: ONE kernel per key block computes dK, dV and adds dS K into dq with float32
      atomics (FA2's Algorithm 2, as PyTorch's backends), 5 products per pair of tiles; dq is zeroed by
      the delta kernel. The atomics add in the order blocks arrive, so dq's bits may differ between runs.
    * otherwise (``deterministic``: ``minitorch.use_deterministic_algorithms(True)``; rungs 1b and 1):
      dK, dV per key block, then dq per query block, which computes S and dP a second time (7
      products) but writes every element once: the same bits every run.

    tiled: rung 1c's or 1b's kernels when q, k, v, out and grad are :func:`rows_aligned` (read through
    their strides; dq, dk, dv of a 4-D q then lie in memory as [B, T, H, D], as rung 1b's out), else rung
    1's, which need all five C-contiguous (ValueError otherwise). Any rung's forward feeds any rung's
    backward. tf32_terms: as :func:`flash_attention`'s, for rung 1c.
    seed, p: the forward's dropout (the same key redraws the same mask); p > 0 needs rung 1b or 1c."""
    _check(q, k, v)
    if out.shape != q.shape or grad.shape != q.shape or grad.dtype != _F32 or out.dtype != _F32:
        raise ValueError(f"flash_attention_backward: expected out and grad of q's shape {q.shape}, float32, got "
                         f"{out.dtype} {out.shape} and {grad.dtype} {grad.shape}")
    options = _tf32_options(tf32_terms)
    tiled = _runs_tiled(tiled, (q, k, v, out, grad))
    drop = _dropout_args(tiled, seed, p, (q, k, v, grad))     # raises for dropout without rung 1b or 1c
    L, d = q.shape[-2:]
    S = k.shape[-2]
    bh = int(np.prod(q.shape[:-2]))
    idx = q.device_id
    dq, dk, dv = _gradients(q, k, v, tiled, idx)
    if not (bh and L and S):
        return dq, dk, dv
    delta = empty((bh, L), _F32, idx)
    rows = bh * L
    grid = (cdiv(rows * 32, THREADS),)
    common = (L, S, np.float32(scale), np.bool_(causal))
    if tiled:
        x3 = tensor_cores and _has_3xtf32(d, idx)
        onepass = x3 and not deterministic
        h, *strides = _strides(grad, out)
        zero_dq = (dq, *_strides(dq)[1:]) if onepass else (None, np.int64(0), np.int64(0), np.int64(0))
        launch(kernel(TILED_FILE, f"flash_bwd_dot_tiled_f32_d{d}", idx), grid, (THREADS,),
               (grad, out, delta, h, np.int64(L), np.int64(rows), *strides, *zero_dq), index=idx)
        common += drop
        dkdv_strides, dq_strides = _strides(q, k, v, grad, dk, dv), _strides(q, k, v, grad, dq)
        if onepass:
            fn, smem = _kernel("flash_bwd_onepass_3xtf32", d, idx, "onepass_3xtf32", X3_FILE, options)
            launch(fn, (bh, cdiv(S, X3_ROWS)), (THREADS,),
                   (q, k, v, grad, lse, delta, dk, dv) + common + dkdv_strides + zero_dq, shared_mem=smem, index=idx)
            return dq, dk, dv
        if x3:
            suffix, file, block_rows = "_3xtf32", X3_FILE, X3_ROWS
        else:
            suffix, file, block_rows, options = "_tiled", TILED_FILE, KBK, ()
    else:
        launch(kernel(FILE, f"flash_bwd_dot_f32_d{d}", idx), grid, (THREADS,), (grad, out, delta, rows), index=idx)
        dkdv_strides = dq_strides = ()
        suffix, file, block_rows, options = "", FILE, KBK, ()
    # rungs 1b and 1c take rung 1's arguments (then the dropout's and the strides) and threads; only
    # names, shared memory and the rows per block (keys for dK/dV, queries for dQ: KBK = QBQ, X3_ROWS) differ
    fn, smem = _kernel(f"flash_bwd_dkdv{suffix}", d, idx, f"dkdv{suffix}", file, options)
    launch(fn, (bh, cdiv(S, block_rows)), (THREADS,), (q, k, v, grad, lse, delta, dk, dv) + common + dkdv_strides,
           shared_mem=smem, index=idx)
    fn, smem = _kernel(f"flash_bwd_dq{suffix}", d, idx, f"dq{suffix}", file, options)
    launch(fn, (bh, cdiv(L, block_rows)), (THREADS,), (q, k, v, grad, lse, delta, dq) + common + dq_strides,
           shared_mem=smem, index=idx)
    return dq, dk, dv


# ---- bfloat16 / float16 on tensor cores: minitorch/cuda/attention/02_flash_mma.cu ----------------
# The kernel file's compile-time options are the steps of the attention ladder; each option tuple is
# its own NVRTC module (compiler.kernel). TUNED is what scaled_dot_product_attention runs (the
# file's defaults); LADDER lists the steps in the order the notebook times them.
MMA_FILE = "attention/02_flash_mma.cu"
MMA_DTYPES = {"bfloat16": "bf16", "float16": "f16"}
# TUNED: 128 x 128 tiles were the fastest in 6 of the 8 shapes bench'd on the H100 (2026-11-24,
# benchmarks/probe_flash_mma.py: bf16, d 64/128, L 1024/4096, causal or not)
TUNED = {"SWIZZLE": 1, "DOUBLE_BUFFER": 1, "EXP2_FMA": 1, "BQ": 128, "BKV": 128}
LADDER = (
    ("baseline", {"SWIZZLE": 0, "DOUBLE_BUFFER": 0, "EXP2_FMA": 0, "BQ": 128, "BKV": 64}),
    ("swizzle", {"SWIZZLE": 1, "DOUBLE_BUFFER": 0, "EXP2_FMA": 0, "BQ": 128, "BKV": 64}),
    ("double_buffer", {"SWIZZLE": 1, "DOUBLE_BUFFER": 1, "EXP2_FMA": 0, "BQ": 128, "BKV": 64}),
    ("exp2_fma", {"SWIZZLE": 1, "DOUBLE_BUFFER": 1, "EXP2_FMA": 1, "BQ": 128, "BKV": 64}),
    ("tuned", TUNED),
)
# Tile sizes the kernel accepts (its static_asserts): BQ = 128 with BKV = 32 is refused.
TILE_CHOICES = ((64, 32), (64, 64), (64, 128), (128, 64), (128, 128))
BWD_THREADS, BWD_ROWS = 128, 64          # backward: 4 warps, 64 keys (dK/dV) or queries (dQ) per block
# the one-pass backward's keys per block (2 threads a key) by head dimension, as OnepassKeys in the .cu
# (H100, bf16, L 4096, forward + backward: 4.28 vs 4.35 ms with 128 at d = 128, 2.33 vs 2.38 with 64
# at d = 64; benchmarks/probe_flash_mma.py --backward, 2026-11-25); config={"ONEPASS_KEYS": n} overrides
ONEPASS_KEYS = {32: 64, 64: 64, 128: 128}
ONEPASS_CHOICES = (64, 128)


def mma_options(config):
    """NVRTC options (``-DNAME=value``) of a forward configuration (a dict like TUNED)."""
    return tuple(f"-D{k}={int(v)}" for k, v in sorted(config.items()))


def _mma_fwd_smem(d, config):
    """Bytes of dynamic shared memory of the forward: Q [BQ][d], K and V [stages][BKV][d], 2-byte elements."""
    stages = 2 if config["DOUBLE_BUFFER"] else 1
    return 2 * d * (config["BQ"] + 2 * stages * config["BKV"])


def _mma_bwd_smem(kind, d, keys=BWD_ROWS):
    """Bytes of the backward kernels: 64 rows of two operands, a tile of the walked dimension of two
    (one pass: ``keys`` rows of K, V, two stages of the walked tile, and dS^T [keys][n]); 2-byte elements."""
    n = 32 if d == 128 else 64
    if kind == "onepass":      # K, V [keys][d]; Q, dO [2][n][d]; dS^T [keys][n]; lse, delta [2][n] (float32)
        return 2 * d * (2 * keys + 4 * n) + 2 * keys * n + 2 * 2 * n * 4
    extra = 2 * n * 4 if kind == "dkdv" else 0      # lse and delta of the query tile (float32)
    return 2 * d * (2 * BWD_ROWS + 2 * n) + extra


def _mma_kernel(name, suffix, d, idx, smem, options=()):
    fn = kernel(MMA_FILE, f"{name}_{suffix}_d{d}", idx, options)
    if smem > STATIC_SMEM and id(fn) not in _raised:
        with cp.cuda.Device(idx):
            fn.max_dynamic_shared_size_bytes = smem      # opt in once per kernel (see module doc)
        _raised[id(fn)] = fn
    return fn


def _check_mma(q, k, v):
    suffix = MMA_DTYPES.get(dtype_name(q.dtype))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.dtype != q.dtype or suffix is None or a.ndim != 3 or not a.c_contiguous or a.ptr % 16:
            raise ValueError(f"flash_attention_mma: {name} must be a C-contiguous, 16-byte aligned bfloat16 or "
                             f"float16 [BH, len, D] array like q, got {a.dtype} shape {a.shape} strides "
                             f"{a.strides} address {a.ptr:#x}")
    bh, _, d = q.shape
    if d not in HEAD_DIMS:
        raise ValueError(f"flash_attention_mma: head dimension must be one of {HEAD_DIMS}, got {d}")
    if k.shape[0] != bh or k.shape[2] != d or v.shape != k.shape:
        raise ValueError(f"flash_attention_mma: expected k and v of shape ({bh}, S, {d}), got {k.shape} and {v.shape}")
    return suffix


def flash_attention_mma(q, k, v, scale, causal, config=None, rung=None):
    """``softmax(q k^T * scale) v`` on tensor cores, float32 accumulation: rung 3 (03_flash_wgmma.cu,
    wgmma) where :func:`wgmma_applies`, else rung 2 (02_flash_mma.cu, mma.sync). Both write the same
    out and lse, which :func:`flash_attention_mma_backward` (rung 2's backward) takes.

    Args: q [BH, L, D], k, v [BH, S, D] bfloat16 or float16 (one dtype), C-contiguous, 16-byte
    aligned, D in {32, 64, 128}, S >= 1; scale > 0; causal a bool; config: the chosen rung's
    compile-time options (a dict like TUNED or WGMMA_TUNED; None = that rung's tuned ones, for rung 3
    WGMMA_TUNED with the head dimension's WGMMA_TUNED_BY_DIM); rung:
    2 or 3 to choose the kernel, None to let :func:`wgmma_applies` choose; a config without a rung
    means rung 2 (the attention ladder's steps are its options).
    Returns: (out [BH, L, D] of q's dtype, lse [BH, L] float32, the natural log-sum-exp of each row).
    Raises: ValueError for dtypes, shapes, layout or head dimension outside the above, rung 3 where
    it does not apply, a rung other than 2, 3 or None.
    """
    suffix = _check_mma(q, k, v)
    if rung is None:
        rung = 3 if config is None and wgmma_applies(q) else 2
    if rung == 3:
        return _flash_wgmma(q, k, v, scale, causal, suffix, config)
    if rung != 2:
        raise ValueError(f"flash_attention_mma: rung must be 2, 3 or None, got {rung!r}")
    config = TUNED if config is None else config
    bh, L, d = q.shape
    S = k.shape[1]
    idx = q.device_id
    out = empty((bh, L, d), q.dtype, idx)
    lse = empty((bh, L), _F32, idx)
    if bh and L:
        smem = _mma_fwd_smem(d, config)
        fn = _mma_kernel("flash_mma_fwd", suffix, d, idx, smem, mma_options(config))
        launch(fn, (bh, cdiv(L, config["BQ"])), (2 * config["BQ"],),
               (q, k, v, out, lse, L, S, np.float32(scale), np.bool_(causal)), shared_mem=smem, index=idx)
    return out, lse


def flash_attention_mma_backward(q, k, v, out, lse, grad, scale, causal, deterministic=False, config=None):
    """Gradients (dq, dk, dv) of :func:`flash_attention_mma`, of q's dtype, from its inputs, output,
    log-sum-exp and the upstream gradient ``grad`` [BH, L, D] (q's dtype, contiguous, aligned).
    FlashAttention-2's backward, after delta = rowsum(grad * out), one of two ways:

    * ``deterministic=False`` (FA2's Algorithm 2, as PyTorch's flash backend): ONE kernel per key
      tile computes dK, dV and adds dS K into a float32 dq buffer with atomics (5 tile products per
      pair of tiles); a last kernel scales and rounds it. The atomics add in the order blocks arrive,
      so dq's bits may differ between runs.
    * ``deterministic=True`` (``minitorch.use_deterministic_algorithms(True)``): dK, dV per key tile,
      then dq per query tile, which computes S and dP a second time (7 products) but writes every
      element once: the same bits every run.

    config: the one-pass kernel's compile-time options, {"ONEPASS_KEYS": 64 or 128} (keys per block;
    None: ONEPASS_KEYS[d], the file's defaults, compiled in the forward's module).
    """
    suffix = _check_mma(q, k, v)
    _check_mma(grad, out, out)
    bh, L, d = q.shape
    S = k.shape[1]
    idx = q.device_id
    dq = empty(q.shape, q.dtype, idx)
    dk = empty(k.shape, q.dtype, idx)
    dv = empty(v.shape, q.dtype, idx)
    if not (bh and L and S):
        return dq, dk, dv
    delta = empty((bh, L), _F32, idx)
    rows = bh * L
    opts = mma_options(TUNED)      # the backward ignores the forward's options: share its module
    launch(_mma_kernel("flash_mma_bwd_dot", suffix, d, idx, 0, opts), (cdiv(rows * 32, THREADS),), (THREADS,),
           (grad, out, delta, rows), index=idx)
    common = (L, S, np.float32(scale), np.bool_(causal))
    if not deterministic:
        keys = config["ONEPASS_KEYS"] if config else ONEPASS_KEYS[d]
        if config is not None:
            opts = mma_options(dict(TUNED, **config))
        dq_acc = fill_(empty(q.shape, _F32, idx), 0)       # float32 sums of dS K, unscaled
        smem = _mma_bwd_smem("onepass", d, keys)
        launch(_mma_kernel("flash_mma_bwd_onepass", suffix, d, idx, smem, opts), (bh, cdiv(S, keys)), (2 * keys,),
               (q, k, v, grad, lse, delta, dk, dv, dq_acc) + common, shared_mem=smem, index=idx)
        round_dq = kernel(MMA_FILE, f"flash_mma_bwd_dq_round_{suffix}", idx, opts)
        launch_stride(round_dq, dq.size // 2, 4, idx, (dq_acc, dq, dq.size // 2, np.float32(scale)))
        return dq, dk, dv
    smem = _mma_bwd_smem("dkdv", d)
    launch(_mma_kernel("flash_mma_bwd_dkdv", suffix, d, idx, smem, opts), (bh, cdiv(S, BWD_ROWS)), (BWD_THREADS,),
           (q, k, v, grad, lse, delta, dk, dv) + common, shared_mem=smem, index=idx)
    smem = _mma_bwd_smem("dq", d)
    launch(_mma_kernel("flash_mma_bwd_dq", suffix, d, idx, smem, opts), (bh, cdiv(L, BWD_ROWS)), (BWD_THREADS,),
           (q, k, v, grad, lse, delta, dq) + common, shared_mem=smem, index=idx)
    return dq, dk, dv


# ---- Hopper: minitorch/cuda/attention/03_flash_wgmma.cu (forward only, sm_90a) ------------------------
# Rung 3 is rung 2's forward on wgmma (see the .cu); it writes the same out and lse, so rung 2's
# backward follows it unchanged. Built for the arch-specific target sm_90a by gemm.target_kernel
# (CuPy's RawModule cannot ask NVRTC for it), so it runs on sm_90 GPUs only.
WGMMA_FILE = "attention/03_flash_wgmma.cu"
WGMMA_TARGET = "sm_90a"
WGMMA_HEAD_DIMS = (64, 128)
WGMMA_BQ = 128                           # query rows a block with NWG = 2 (the TMA variant's Q box)
# BKV: keys per K/V tile (64 or 128); PIPELINE 1: the softmax of tile j + 1 overlaps P(j) V(j) (0: in
# turn); NWG: warpgroups of 64 query rows a block, 128 threads each (3: head dimension 64 only); TMA 1:
# a producer warpgroup copies with the TMA engine, mbarriers instead of __syncthreads (NWG 2).
# TUNED: the fastest on the H100 (2026-11-25, benchmarks/probe_flash_mma.py --rungs-only, bf16, L 4096,
# TFLOP/s, d 128 / d 64 non-causal): TMA 582 / 382 (PIPELINE 1: 586 / 369), the cp.async kernel 412 /
# 293 (BKV 64: 351 / 335, PIPELINE 1: 370 / 265, NWG 3: - / 306); rung 2 303 / 223; PyTorch's flash
# backend 362 / 292, cuDNN 677 / 483. Causal: TMA 499 / 335 against flash 305 / 279.
WGMMA_TUNED = {"BKV": 128, "PIPELINE": 0, "NWG": 2, "TMA": 1}
WGMMA_TUNED_BY_DIM = {}                  # head dimension -> the options where it differs from WGMMA_TUNED
# MINITORCH_FLASH_RUNG=2 in the environment (read once, at import) keeps the bf16/fp16 forward on
# rung 2 everywhere (to time the ladder, or to rule rung 3 out); rung=3 still runs rung 3.
FORCE_RUNG_2 = os.environ.get("MINITORCH_FLASH_RUNG", "") in ("2", "02")


@functools.lru_cache(maxsize=None)
def _arch(idx):
    return arch_of(idx)


def wgmma_applies(q):
    """Whether :func:`flash_attention_mma` runs rung 3 for ``q`` by default: not forced off
    (FORCE_RUNG_2), a head dimension in WGMMA_HEAD_DIMS, and q on an sm_90 GPU (H100/H200)."""
    return not FORCE_RUNG_2 and q.shape[-1] in WGMMA_HEAD_DIMS and _arch(q.device_id) == 90


def _wgmma_smem(d, config):
    """Bytes of dynamic shared memory of rung 3: Q [64 NWG][d], K and V [2 buffers][BKV][d] (2-byte
    elements), and 1 KB to align the tiles to 1024 bytes (the 128-byte swizzle's atoms)."""
    return 2 * d * (64 * config["NWG"] + 4 * config["BKV"]) + 1024


def _flash_wgmma(q, k, v, scale, causal, suffix, config):
    """Rung 3's forward (arguments as :func:`flash_attention_mma`'s, already checked)."""
    bh, L, d = q.shape
    idx = q.device_id
    config = dict(WGMMA_TUNED, **WGMMA_TUNED_BY_DIM.get(d, {})) if config is None else config
    if d not in WGMMA_HEAD_DIMS or _arch(idx) != 90 or (config["NWG"] == 3 and d != 64):
        raise ValueError(f"flash_attention_mma: rung 3 (wgmma) needs an sm_90 GPU and a head dimension in "
                         f"{WGMMA_HEAD_DIMS} (64 with NWG = 3), got sm_{_arch(idx)}, {d} and NWG = {config['NWG']}")
    if config.get("TMA") and config["NWG"] != 2:
        raise ValueError(f"flash_attention_mma: rung 3's TMA variant needs NWG = 2, got {config}")
    out = empty((bh, L, d), q.dtype, idx)
    lse = empty((bh, L), _F32, idx)
    if bh and L:
        S = k.shape[1]
        if not S:           # (no keys: a tensor map needs every dimension >= 1; the cp.async kernel writes 0s)
            config = dict(config, TMA=0)
        smem = _wgmma_smem(d, config)
        tma = config.get("TMA", 0)
        name = f"flash_wgmma_{'tma_' if tma else ''}fwd_{suffix}_d{d}"
        fn = target_kernel(WGMMA_FILE, name, idx, mma_options(config), WGMMA_TARGET)
        if id(fn) not in _raised:
            with cp.cuda.Device(idx):
                fn.max_dynamic_shared_size_bytes = smem      # opt in once per kernel (see module doc)
            _raised[id(fn)] = fn
        if tma:
            operands, threads = _tma_operands(q, k, v, suffix, config["BKV"]), 128 * (config["NWG"] + 1)
        else:
            operands, threads = (q, k, v), 128 * config["NWG"]
        launch(fn, (bh * cdiv(L, 64 * config["NWG"]),), (threads,),
               operands + (out, lse, L, S, np.float32(scale), np.bool_(causal)), shared_mem=smem, index=idx)
    return out, lse


def _tma_operands(q, k, v, suffix, bkv):
    """The TMA variant's tensor maps of q [BH, L, D], k, v [BH, S, D] (gemm.tensor_map): dimensions
    {D, rows, BH} innermost first, boxes of 64 columns (128 bytes, the swizzle's span) by the tile's
    rows (128 queries, BKV keys); the copy engine fills past a head's last row with zeros.
    Raises ValueError past the copies' 32-bit coordinates."""
    bh, L, d = q.shape
    S = k.shape[1]
    if max(L, S, bh) >= 2 ** 31:
        raise ValueError(f"flash_attention_mma: the TMA copies' coordinates are 32-bit, got BH = {bh}, L = {L}, S = {S}")
    return tuple(tensor_map(a.ptr, suffix, (d, n, bh), (2 * d, 2 * d * n), (64, rows, 1))
                 for a, n, rows in ((q, L, WGMMA_BQ), (k, S, bkv), (v, S, bkv)))
