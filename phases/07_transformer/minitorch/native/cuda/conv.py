# GENERATED from minitorch/native/cuda/conv.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""2-D convolution on ``DeviceArray``s: a ladder of three rungs (``minitorch/cuda/conv/``), each
able to run the forward and both gradients, and :func:`choose`, which picks one per pass and shape.

    01_direct          one thread per output value (per input value for dL/dx; one block per
                       weight for dL/dw): the definition, no reuse between threads
    02_im2col          unfold the input into columns (02_im2col.cu), multiply with our GEMM, fold
                       the column gradient back (col2im); bias and ReLU in one extra pass
    03_implicit_gemm   the same products with the columns gathered into shared-memory tiles as
                       the GEMM needs them: one launch, bias and ReLU in the epilogue; dL/dw splits
                       its long reduction over blocks and adds the partial sums with our reduction;
                       the backward applies a fused ReLU's mask as it loads dy and computes dL/db
                       as one more column of dL/dw's GEMM (rungs 01 and 02 take an extra pass each)

Shapes as cuDNN names them: x [N, C, H, W], weight [K, C/G, R, S], y [N, K, P, Q], contiguous
(the Tensor layer makes them so). ``stride``, ``dilation`` are (rows, cols), ``padding``
((top, bottom), (left, right)); the kernels pad only top/left explicitly and read past the input
as zeros, so the bottom/right padding lives in P and Q. The backend functions are the twins of
``cpu.py``'s ``conv2d``, ``conv2d_input_grad``, ``conv2d_weight_grad`` (``relu_out``: the saved
output of a fused ReLU; ``bias_grad``: dL/db too); none waits for the GPU,
except that with ``minitorch.backends.cudnn.benchmark`` set the first call of each new shape times
every rung once (a synchronization, as cuDNN's benchmark mode does) and keeps the fastest.
"""
import contextlib
import functools

import numpy as np

from ... import backends
from ...cuda.array import empty
from ..cpu import conv_out_size
from . import gemm as _gemm
from .creation import fill_
from .launch import SUFFIX, StructArg, cdiv, cp, kernel, launch_2d, launch_stride, sm_count
from .reduce import sum as _sum

RUNGS = ("01_direct", "02_im2col", "03_implicit_gemm")
PASSES = ("forward", "input_grad", "weight_grad")
GEOM = np.dtype([(f, np.int32) for f in ("N", "C", "H", "W", "K", "R", "S", "P", "Q", "stride_h", "stride_w",
                                         "pad_h", "pad_w", "dil_h", "dil_w", "G")])   # conv.cuh's ConvGeom
TILES = ((8, 256), (16, 128), (64, 64), (16, 16))     # 03_implicit_gemm.cu's BM x BN configurations
IG_BK = 16                                            # its k-tile
WGRAD_THREADS = 256                                   # 01_direct.cu's weight-gradient block
INT_MAX = 2 ** 31 - 1     # 03_implicit_gemm.cu decodes GEMM indices in int: larger problems go elsewhere


@functools.lru_cache(maxsize=1024)
def geometry(x_shape, w_shape, stride, padding, dilation, groups):
    """The ``ConvGeom`` kernel argument (a StructArg) for input ``x_shape`` and weight ``w_shape``;
    cached, training loops repeat shapes. Also returns (P, Q)."""
    n, c, h, w = x_shape
    k, _, r, s = w_shape
    p, q = conv_out_size(h, w, (r, s), stride, padding, dilation)
    values = (n, c, h, w, k, r, s, p, q, stride[0], stride[1], padding[0][0], padding[1][0],
              dilation[0], dilation[1], groups)
    if max(values) >= 2 ** 31:
        raise ValueError(f"conv2d: a size of {values} does not fit the kernels' 32-bit ints")
    arr = np.array(values, dtype=np.int32).view(GEOM)          # shape (1,): one struct
    arr.flags.writeable = False
    return StructArg(arr), (p, q)


def _suffix(a):
    suf = SUFFIX.get(a.dtype)
    if suf not in ("f32", "f64", "f16", "bf16"):
        raise TypeError(f"cuda conv2d takes float32, float64, float16 or bfloat16 arrays, got {a.dtype}")
    return suf


# ---- rung 1: direct --------------------------------------------------------------------------
# Each rung's function computes one pass into a new array of shape ``out_shape`` and returns it.
def _direct_forward(x, weight, bias, geom, out_shape, relu):
    y = empty(out_shape, x.dtype, x.device_id)
    fn = kernel("conv/01_direct.cu", f"conv2d_direct_{_suffix(x)}", x.device_id)
    launch_stride(fn, y.size, 1, x.device_id, (x, weight, bias, y, geom, np.bool_(relu)))
    return y


def _direct_input_grad(grad, weight, geom, out_shape):
    dx = empty(out_shape, grad.dtype, grad.device_id)
    fn = kernel("conv/01_direct.cu", f"conv2d_direct_input_grad_{_suffix(grad)}", grad.device_id)
    launch_stride(fn, dx.size, 1, grad.device_id, (grad, weight, dx, geom))
    return dx


def _direct_weight_grad(grad, x, geom, out_shape):
    dw = empty(out_shape, x.dtype, x.device_id)
    fn = kernel("conv/01_direct.cu", f"conv2d_direct_weight_grad_{_suffix(x)}", x.device_id)
    blocks = min(dw.size, 65535 * 64)          # the kernel loops over weights past the grid
    launch_2d(fn, (blocks,), (WGRAD_THREADS,), (grad, x, dw, geom), x.device_id)
    return dw


# ---- rung 2: im2col + GEMM -------------------------------------------------------------------
def _im2col(x, geom, rs, pq):
    n, c = x.shape[:2]
    cols = empty((n, c * rs, pq), x.dtype, x.device_id)
    fn = kernel("conv/02_im2col.cu", f"im2col_{_suffix(x)}", x.device_id)
    launch_stride(fn, cols.size, 1, x.device_id, (x, cols, geom))
    return cols


def _im2col_forward(x, weight, bias, geom, out_shape, relu):
    n, k, p, q = out_shape
    g = int(geom.array["G"][0])
    cols = _im2col(x, geom, weight.shape[2] * weight.shape[3], p * q)
    # [G, K/G, C/G*R*S] @ [N, G, C/G*R*S, P*Q] -> [N, G, K/G, P*Q]: one batched GEMM, W broadcast
    y = _gemm.matmul(weight.reshape(g, k // g, -1), cols.reshape(n, g, -1, p * q)).reshape(out_shape)
    return _bias_act(y, bias, geom, relu)


def _im2col_input_grad(grad, weight, geom, out_shape):
    dx = empty(out_shape, grad.dtype, grad.device_id)
    n, k, p, q = grad.shape
    g = int(geom.array["G"][0])
    wg = weight.reshape(g, k // g, -1)                           # [G, K/G, C/G*R*S]
    wt = wg.as_strided((g, wg.shape[2], k // g), (wg.strides[0], wg.strides[2], wg.strides[1]))  # W^T: layout 't'
    dcols = _gemm.matmul(wt, grad.reshape(n, g, k // g, p * q))  # [N, G, C/G*R*S, P*Q]
    fn = kernel("conv/02_im2col.cu", f"col2im_{_suffix(grad)}", grad.device_id)
    launch_stride(fn, dx.size, 1, grad.device_id, (dcols, dx, geom))
    return dx


def _im2col_weight_grad(grad, x, geom, out_shape):
    n, k, p, q = grad.shape
    g = int(geom.array["G"][0])
    cols = _im2col(x, geom, out_shape[2] * out_shape[3], p * q).reshape(n, g, -1, p * q)
    colst = cols.as_strided(cols.shape[:2] + (p * q, cols.shape[2]),
                            cols.strides[:2] + (cols.strides[3], cols.strides[2]))     # im2col^T: layout 't'
    per_image = _gemm.matmul(grad.reshape(n, g, k // g, p * q), colst)                  # [N, G, K/G, C/G*R*S]
    return (per_image if n == 1 else _sum(per_image, (0,))).reshape(out_shape)


# ---- rung 3: implicit GEMM -------------------------------------------------------------------
def _tile(m, ncols, groups=1, min_blocks=1):
    """The (BM, BN) of TILES for a C of [m, ncols] per group: among the tiles that give at least
    ``min_blocks`` blocks (a GPU's worth: the small layers of a CNN are latency-bound, a half-empty
    GPU is the worst case), the one that wastes the least of its padded tiles (ties: the larger
    tile); if none gives that many blocks, the one that gives the most."""
    blocks = {t: cdiv(m, t[0]) * cdiv(ncols, t[1]) * groups for t in TILES}
    enough = [t for t in TILES if blocks[t] >= min_blocks]
    if not enough:
        return max(TILES, key=lambda t: (blocks[t], -t[0] * t[1]))
    return min(enough, key=lambda t: (cdiv(m, t[0]) * t[0] * cdiv(ncols, t[1]) * t[1], -t[0] * t[1]))


def _igemm(pass_name, a_src, b_src, bias, out, geom, relu, m, ncols, kred, groups, splits=1, chunk=None,
           mask=None, dbias=None, tile=None):
    """Launch pass ``pass_name`` of 03_implicit_gemm.cu: C [m, ncols] per group, a reduction of
    ``kred`` split into ``splits`` chunks of ``chunk`` (a multiple of the k-tile; default all);
    ``mask``: a fused ReLU's output (dgrad, wgrad), ``dbias``: where wgrad writes db."""
    bm, bn = tile or _tile(m, ncols, groups, sm_count(out.device_id))
    if cdiv(m, bm) > 65535 or groups * splits > 65535:
        raise ValueError(f"conv2d: {m} channels per group or {groups} groups are more than one launch covers")
    if max(m, ncols, kred) >= INT_MAX:
        raise ValueError(f"conv2d: a GEMM dimension of {(m, ncols, kred)} does not fit 03_implicit_gemm's ints")
    chunk = chunk or cdiv(kred, IG_BK) * IG_BK
    fn = kernel("conv/03_implicit_gemm.cu", f"conv2d_igemm_{pass_name}_{bm}x{bn}_{_suffix(out)}", out.device_id)
    launch_2d(fn, (cdiv(ncols, bn), cdiv(m, bm), groups * splits), (256,),
              (a_src, b_src, bias, out, geom, np.bool_(relu), chunk, mask, dbias), out.device_id)


def _igemm_forward(x, weight, bias, geom, out_shape, relu):
    y = empty(out_shape, x.dtype, x.device_id)
    n, c, _, _ = x.shape
    k, cg, r, s = weight.shape
    g = c // cg
    _igemm("fwd", weight, x, bias, y, geom, relu, k // g, n * out_shape[2] * out_shape[3], cg * r * s, g)
    return y


def _igemm_input_grad(grad, weight, geom, out_shape, mask=None):
    dx = empty(out_shape, grad.dtype, grad.device_id)
    n, c, h, w = out_shape
    k, cg, r, s = weight.shape
    g = c // cg
    _igemm("dgrad", weight, grad, None, dx, geom, False, cg, n * h * w, k // g * r * s, g, mask=mask)
    return dx


def _igemm_weight_grad(grad, x, geom, out_shape, mask=None, bias_grad=False):
    """dL/dw, or (dL/dw, dL/db) when ``bias_grad``: db is one more column of the same GEMM."""
    n, k, p, q = grad.shape
    _, cg, r, s = out_shape
    g = x.shape[1] // cg
    m, ncols, kred = k // g, cg * r * s + bool(bias_grad), n * p * q
    bm, bn = _tile(m, ncols)                 # the splits below fill the GPU
    # about 4 k-tiles of the N*P*Q reduction per block, as many blocks as the GPU holds at once
    # (~8 per SM): the blocks of this small GEMM wait on memory, more of them hide it better
    tiles = cdiv(m, bm) * cdiv(ncols, bn) * g
    splits = max(1, min(cdiv(kred, 4 * IG_BK), cdiv(8 * sm_count(x.device_id), tiles), 65535 // g))
    chunk = cdiv(cdiv(kred, splits), IG_BK) * IG_BK                  # whole k-tiles per split
    splits = cdiv(kred, chunk)                                        # so that no split is empty
    size = k * cg * r * s                                     # dw's elements; db's K follow them
    buf = empty((size + (k if bias_grad else 0), splits), x.dtype, x.device_id)   # split innermost
    _igemm("wgrad", grad, x, None, buf, geom, False, m, ncols, kred, g, splits, chunk,
           mask, buf[size:] if bias_grad else None, (bm, bn))
    total = buf.reshape(buf.shape[0]) if splits == 1 else _sum(buf, (1,))
    dw = total[:size].reshape(out_shape)
    return (dw, total[size:]) if bias_grad else dw


_FORWARD = {"01_direct": _direct_forward, "02_im2col": _im2col_forward, "03_implicit_gemm": _igemm_forward}
_INPUT_GRAD = {"01_direct": _direct_input_grad, "02_im2col": _im2col_input_grad,
               "03_implicit_gemm": _igemm_input_grad}
_WEIGHT_GRAD = {"01_direct": _direct_weight_grad, "02_im2col": _im2col_weight_grad,
                "03_implicit_gemm": _igemm_weight_grad}


# ---- dispatch --------------------------------------------------------------------------------
_forced = None
_timed = {}          # (pass, shapes, dtype, device) -> the fastest rung, in benchmark mode


@contextlib.contextmanager
def use_rung(name):
    """Within the block every convolution pass runs rung ``name`` (tests and benchmarks walk the
    ladder with it); ``None`` restores the dispatch.

    Raises:
        KeyError: an unknown rung.
    """
    global _forced
    if name is not None and name not in RUNGS:
        raise KeyError(f"unknown conv rung {name!r}; expected one of {RUNGS}")
    previous, _forced = _forced, name
    try:
        yield
    finally:
        _forced = previous


def choose(pass_name, x_shape, w_shape, groups):
    """The rung for one pass ('forward', 'input_grad', 'weight_grad') of a convolution of input
    ``x_shape`` with weight ``w_shape``: a fixed rule that needs no GPU and never synchronizes.

    A rule of thumb, not yet checked against timings on a GPU (``bench_conv.py`` measures each
    rung; benchmark mode picks by measurement). The direct rung where each output is a short sum
    (C/G*R*S terms for the forward, K/G*R*S for dL/dx: up to 32, e.g. a first layer on
    one-channel images or a depthwise conv): little to reuse, no shared memory, no second pass
    (but a fused ReLU's backward then takes a masking pass first). Everything longer, and
    every dL/dw (a long N*P*Q reduction, which the implicit GEMM splits over blocks), goes to the
    implicit GEMM. 02_im2col is never the rule's choice (it writes and reads R*S times the input)
    but benchmark mode may still find it fastest.
    """
    k, cg, r, s = w_shape
    if pass_name == "forward" and cg * r * s <= 32:
        return "01_direct"
    if pass_name == "input_grad" and k // groups * r * s <= 32:
        return "01_direct"
    return "03_implicit_gemm"


def _pick(pass_name, run, x_shape, w_shape, groups, dtype, index, geom):
    """The rung to run: the forced one, the timed fastest (benchmark mode) or :func:`choose`'s.
    Problems with more than 2**31 - 1 pixels in all take 01_direct (64-bit indices throughout)."""
    if _forced is not None:
        return _forced
    a = geom.array[0]
    if int(a["N"]) * max(int(a["H"]) * int(a["W"]), int(a["P"]) * int(a["Q"])) >= INT_MAX:
        return "01_direct"
    if not backends.cudnn.benchmark:
        return choose(pass_name, x_shape, w_shape, groups)
    key = (pass_name, x_shape, w_shape, groups, dtype, index)
    found = _timed.get(key)
    if found is None:
        found = _timed[key] = _fastest(run, index)
    return found


def _fastest(run, index, repeats=3):
    """Time ``run(rung)`` for every rung with CUDA events on the current stream (after one
    warm-up call that also compiles it); the rung of the smallest median. Synchronizes the host."""
    stream = cp.cuda.get_current_stream(index)
    times = {}
    for rung in RUNGS:
        run(rung)
        found = []
        for _ in range(repeats):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            run(rung)
            stop.record(stream)
            stop.synchronize()
            found.append(cp.cuda.get_elapsed_time(start, stop))
        times[rung] = sorted(found)[repeats // 2]
    return min(times, key=times.get)


# ---- the backend functions (cpu.py's twins) ------------------------------------------------------
def _check(x, weight):
    if x.ndim != 4 or weight.ndim != 4 or not x.c_contiguous or not weight.c_contiguous:
        raise ValueError(f"cuda conv2d takes contiguous 4-D arrays, got {x.shape} / {x.strides} and "
                         f"{weight.shape} / {weight.strides}")
    if x.dtype != weight.dtype:
        raise TypeError(f"cuda conv2d: input {x.dtype} and weight {weight.dtype} differ")


def _bias_act(y, bias, geom, relu):
    """y += bias[k], then max(y, 0) when relu, in place (02_im2col.cu's epilogue kernel)."""
    if bias is not None or relu:
        fn = kernel("conv/02_im2col.cu", f"bias_act_{_suffix(y)}", y.device_id)
        launch_stride(fn, y.size, 1, y.device_id, (y, bias, geom, np.bool_(relu)))
    return y


def conv2d(x, weight, bias, stride, padding, dilation, groups, activation=None):
    """``y = weight * x (+ bias)``, then ``max(y, 0)`` when ``activation`` is 'relu' (in the
    kernels' epilogue; None: none): [N, K, P, Q], x's dtype.

    ``x`` [N, C, H, W] and ``weight`` [K, C/groups, R, S] contiguous, ``bias`` [K] (contiguous)
    or None, one floating dtype. Raises TypeError/ValueError for arrays the kernels cannot take
    and for an unknown activation. (The epilogue is also where a fused pooling would go: not yet.)"""
    if activation not in (None, "relu"):
        raise ValueError(f"conv2d: activation must be None or 'relu', got {activation!r}")
    relu = activation == "relu"
    _check(x, weight)
    geom, (p, q) = geometry(x.shape, weight.shape, stride, padding, dilation, groups)
    out_shape = (x.shape[0], weight.shape[0], p, q)
    if 0 in out_shape or weight.size == 0:        # nothing to compute, or empty sums (C = 0)
        y = empty(out_shape, x.dtype, x.device_id)
        return y if y.size == 0 else _bias_act(fill_(y, 0), bias, geom, relu)

    def run(rung):
        return _FORWARD[rung](x, weight, bias, geom, out_shape, relu)
    return run(_pick("forward", run, x.shape, weight.shape, groups, x.dtype, x.device_id, geom))


def _mask(grad, relu_out):
    """dL/dy where the fused ReLU's output is positive, else 0 (one elementwise pass)."""
    from .elementwise import unary_backward
    return grad if relu_out is None else unary_backward("relu", grad, relu_out)


FUSES_BACKWARD = "03_implicit_gemm"     # the rung that takes the ReLU mask and the bias gradient itself


def conv2d_input_grad(grad, weight, x_shape, stride, padding, dilation, groups, relu_out=None):
    """dL/dx [N, C, H, W] from ``grad`` = dL/dy [N, K, P, Q] (contiguous) and ``weight``;
    ``relu_out``: the output of a fused ReLU (dy counts only where it is > 0), or None."""
    _check(grad, weight)
    x_shape = tuple(x_shape)
    geom, _ = geometry(x_shape, weight.shape, stride, padding, dilation, groups)
    if 0 in x_shape or grad.size == 0 or weight.size == 0:
        dx = empty(x_shape, grad.dtype, grad.device_id)
        return dx if dx.size == 0 else fill_(dx, 0)

    def run(rung):
        if rung == FUSES_BACKWARD:
            return _igemm_input_grad(grad, weight, geom, x_shape, relu_out)
        return _INPUT_GRAD[rung](_mask(grad, relu_out), weight, geom, x_shape)
    return run(_pick("input_grad", run, x_shape, weight.shape, groups, grad.dtype, grad.device_id, geom))


def conv2d_weight_grad(grad, x, weight_shape, stride, padding, dilation, groups, relu_out=None, bias_grad=False):
    """dL/dweight [K, C/groups, R, S] from ``grad`` = dL/dy [N, K, P, Q] and the input ``x``; with
    ``bias_grad`` also dL/dbias [K] (the tuple (dw, db)). ``relu_out`` as for conv2d_input_grad."""
    _check(grad, x)
    weight_shape = tuple(weight_shape)
    geom, _ = geometry(x.shape, weight_shape, stride, padding, dilation, groups)
    if 0 in weight_shape or grad.size == 0:
        dw = empty(weight_shape, x.dtype, x.device_id)
        dw = dw if dw.size == 0 else fill_(dw, 0)
        return (dw, _sum(_mask(grad, relu_out), (0, 2, 3))) if bias_grad else dw

    def run(rung):
        if rung == FUSES_BACKWARD:
            return _igemm_weight_grad(grad, x, geom, weight_shape, relu_out, bias_grad)
        g = _mask(grad, relu_out)
        dw = _WEIGHT_GRAD[rung](g, x, geom, weight_shape)
        return (dw, _sum(g, (0, 2, 3))) if bias_grad else dw
    return run(_pick("weight_grad", run, x.shape, weight_shape, groups, x.dtype, x.device_id, geom))
