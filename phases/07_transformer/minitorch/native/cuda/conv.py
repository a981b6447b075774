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

:func:`conv2d_max_pool2d` adds MaxPool2d(2) after the bias and ReLU: rung 03 pools in its epilogue
(one launch writes the pooled values and their argmax indices; the full-size y is never stored),
the other rungs run their forward, then pooling.cu's max_pool2d.

Shapes as cuDNN names them: x [N, C, H, W], weight [K, C/G, R, S], y [N, K, P, Q], contiguous
(the Tensor layer makes them so). ``stride``, ``dilation`` are (rows, cols), ``padding``
((top, bottom), (left, right)); the kernels pad only top/left explicitly and read past the input
as zeros, so the bottom/right padding lives in P and Q. The backend functions are the twins of
``cpu.py``'s ``conv2d``, ``conv2d_input_grad``, ``conv2d_weight_grad`` (``relu_out``: the saved
output of a fused ReLU; ``bias_grad``: dL/db too); none waits for the GPU,
except that with ``minitorch.backends.cudnn.benchmark`` set the first call of each new shape times
every rung once (a synchronization, as cuDNN's benchmark mode does) and keeps the fastest.
Otherwise the rung comes from the table ``minitorch/cuda/conv/tuned.json`` that
``benchmarks/tune_conv.py`` writes (timed per pass and shape on a GPU) or, for a shape it does
not hold, from :func:`choose`'s rule.
"""
import contextlib
import functools
import json
from pathlib import Path

import numpy as np

from ... import backends
from ...cuda.array import empty
from ..cpu import conv_out_size
from . import gemm as _gemm
from .creation import fill_
from .launch import SUFFIX, StructArg, cdiv, cp, kernel, launch_2d, launch_stride, sm_count
from .pooling import max_pool2d as _max_pool2d
from .reduce import sum as _sum

RUNGS = ("01_direct", "02_im2col", "03_implicit_gemm")
PASSES = ("forward", "input_grad", "weight_grad", "forward_maxpool2")   # the last: conv2d_max_pool2d
GEOM = np.dtype([(f, np.int32) for f in ("N", "C", "H", "W", "K", "R", "S", "P", "Q", "stride_h", "stride_w",
                                         "pad_h", "pad_w", "dil_h", "dil_w", "G")])   # conv.cuh's ConvGeom
TILES = ((8, 256), (16, 128), (64, 64), (16, 16))     # 03_implicit_gemm.cu's BM x BN configurations
IG_BK = 16                                            # its k-tile
WGRAD_THREADS = 256                                   # 01_direct.cu's weight-gradient block
INT_MAX = 2 ** 31 - 1     # 03_implicit_gemm.cu decodes GEMM indices in int: larger problems go elsewhere


@functools.lru_cache(maxsize=1024)
def geometry(x_shape, w_shape, stride, padding, dilation, groups):
    """The ``ConvGeom`` kernel argument (a StructArg) for input ``x_shape`` and weight ``w_shape``;
    cached, training loops repeat shapes. Also returns (P, Q). Its ``key``, the 16 ints
    comma-separated (the output size P, Q carries the bottom/right padding), names the problem in
    the tuned table."""
    n, c, h, w = x_shape
    k, _, r, s = w_shape
    p, q = conv_out_size(h, w, (r, s), stride, padding, dilation)
    values = (n, c, h, w, k, r, s, p, q, stride[0], stride[1], padding[0][0], padding[1][0],
              dilation[0], dilation[1], groups)
    if max(values) >= 2 ** 31:
        raise ValueError(f"conv2d: a size of {values} does not fit the kernels' 32-bit ints")
    arr = np.array(values, dtype=np.int32).view(GEOM)          # shape (1,): one struct
    arr.flags.writeable = False
    geom = StructArg(arr)
    geom.key = ",".join(map(str, values))
    # the pixels _pick compares with INT_MAX, as a Python int once here: reading them back out of
    # the struct array costs ~3 us of NumPy per call, and _pick runs at every conv pass
    geom.pixels = n * max(h * w, p * q)
    return geom, (p, q)


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
@functools.lru_cache(maxsize=4096)
def _tile(m, ncols, groups=1, min_blocks=1):
    """The (BM, BN) of TILES for a C of [m, ncols] per group: among the tiles that give at least
    ``min_blocks`` blocks (a GPU's worth: the small layers of a CNN are latency-bound, a half-empty
    GPU is the worst case), the one that wastes the least of its padded tiles (ties: the larger
    tile); if none gives that many blocks, the one that gives the most. Cached: every pass of
    every step asks again for the same few shapes (~8 us of Python each time)."""
    blocks = {t: cdiv(m, t[0]) * cdiv(ncols, t[1]) * groups for t in TILES}
    enough = [t for t in TILES if blocks[t] >= min_blocks]
    if not enough:
        return max(TILES, key=lambda t: (blocks[t], -t[0] * t[1]))
    return min(enough, key=lambda t: (cdiv(m, t[0]) * t[0] * cdiv(ncols, t[1]) * t[1], -t[0] * t[1]))


def _launchable_tile(m, ncols, kred, groups, splits, index, tile=None):
    """``tile`` or :func:`_tile`'s, after checking that one launch of it covers the problem."""
    bm, bn = tile or _tile(m, ncols, groups, sm_count(index))
    if cdiv(m, bm) > 65535 or groups * splits > 65535:
        raise ValueError(f"conv2d: {m} channels per group or {groups} groups are more than one launch covers")
    if max(m, ncols, kred) >= INT_MAX:
        raise ValueError(f"conv2d: a GEMM dimension of {(m, ncols, kred)} does not fit 03_implicit_gemm's ints")
    return bm, bn


def _igemm(pass_name, a_src, b_src, bias, out, geom, relu, m, ncols, kred, groups, splits=1, chunk=None,
           mask=None, dbias=None, tile=None):
    """Launch pass ``pass_name`` of 03_implicit_gemm.cu: C [m, ncols] per group, a reduction of
    ``kred`` split into ``splits`` chunks of ``chunk`` (a multiple of the k-tile; default all);
    ``mask``: a fused ReLU's output (dgrad, wgrad), ``dbias``: where wgrad writes db."""
    bm, bn = _launchable_tile(m, ncols, kred, groups, splits, out.device_id, tile)
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


def _igemm_forward_maxpool2(x, weight, bias, geom, pooled_shape, relu):
    """The forward with MaxPool2d(2) in its epilogue: (pooled values, int64 argmax indices), both
    ``pooled_shape`` [N, K, P//2, Q//2]; one column of the GEMM per pixel of a whole window."""
    y = empty(pooled_shape, x.dtype, x.device_id)
    indices = empty(pooled_shape, np.dtype(np.int64), x.device_id)
    n, k, po, qo = pooled_shape
    _, cg, r, s = weight.shape
    g = x.shape[1] // cg
    m, ncols = k // g, 4 * n * po * qo
    bm, bn = _launchable_tile(m, ncols, cg * r * s, g, 1, x.device_id)
    fn = kernel("conv/03_implicit_gemm.cu", f"conv2d_igemm_fwd_maxpool2_{bm}x{bn}_{_suffix(x)}", x.device_id)
    launch_2d(fn, (cdiv(ncols, bn), cdiv(m, bm), g), (256,), (weight, x, bias, y, indices, geom, np.bool_(relu)),
              x.device_id)
    return y, indices


def _igemm_input_grad(grad, weight, geom, out_shape, mask=None):
    dx = empty(out_shape, grad.dtype, grad.device_id)
    n, c, h, w = out_shape
    k, cg, r, s = weight.shape
    g = c // cg
    _igemm("dgrad", weight, grad, None, dx, geom, False, cg, n * h * w, k // g * r * s, g, mask=mask)
    return dx


@functools.lru_cache(maxsize=1024)
def _wgrad_split(m, ncols, kred, g, sms):
    """(BM, BN, splits, chunk) of the weight gradient's GEMM, C [m, ncols] per group of ``g``,
    reducing ``kred`` = N*P*Q, on a GPU of ``sms`` SMs. Cached: it depends on sizes only, and
    every step asks again."""
    bm, bn = _tile(m, ncols)                 # the splits below fill the GPU
    # about 4 k-tiles of the N*P*Q reduction per block, as many blocks as the GPU holds at once
    # (~8 per SM): the blocks of this small GEMM wait on memory, more of them hide it better
    tiles = cdiv(m, bm) * cdiv(ncols, bn) * g
    splits = max(1, min(cdiv(kred, 4 * IG_BK), cdiv(8 * sms, tiles), 65535 // g))
    chunk = cdiv(cdiv(kred, splits), IG_BK) * IG_BK                  # whole k-tiles per split
    splits = cdiv(kred, chunk)                                        # so that no split is empty
    return bm, bn, splits, chunk


def _igemm_weight_grad(grad, x, geom, out_shape, mask=None, bias_grad=False):
    """dL/dw, or (dL/dw, dL/db) when ``bias_grad``: db is one more column of the same GEMM."""
    n, k, p, q = grad.shape
    _, cg, r, s = out_shape
    g = x.shape[1] // cg
    m, ncols, kred = k // g, cg * r * s + bool(bias_grad), n * p * q
    bm, bn, splits, chunk = _wgrad_split(m, ncols, kred, g, sm_count(x.device_id))
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
    """The rung for one pass (one of PASSES) of a convolution of input ``x_shape`` with weight
    ``w_shape`` when the tuned table does not hold the shape: a fixed rule, no GPU, no synchronization.

    Rule: 03_implicit_gemm for every pass. Derived from the H100 timings of bench_conv.py
    (benchmarks/results/bench_conv-nvidia-h100-80gb-hbm3-20261124-142216.txt, batch 64, float32,
    microseconds per call of the Tensor op, L2 flushed; forward / forward+backward):

        layer       01_direct       02_im2col       03_implicit_gemm
        seed.conv1  12.5 / 227.2    137.8 / 489.8   11.0 / 186.6
        seed.conv2  28.2 / 192.3     42.8 / 596.9   17.5 / 248.0
        lenet.c1    16.5 / 190.3    130.3 / 423.6   17.2 / 167.5
        lenet.c3    29.4 / 188.4     59.1 / 536.5   24.6 / 114.9

    Forward (one kernel per call, steady numbers): 03 is the fastest on three layers and within
    5% of 01_direct on lenet.c1 (17.2 vs 16.5 us; with the fused ReLU 17.2 vs 16.6 us).
    Forward+backward (three passes through autograd: noisy, up to 2x between
    identical kernels: the old rule's "auto" ran 03 for every pass of lenet.c3 and measured 247.9
    against 03's 114.9 us): 03 is fastest on three layers; on seed.conv2 01_direct measured 192
    vs 248 us (235 vs 242 with the fused ReLU), within that noise. 03 is also the only rung whose
    backward takes a fused ReLU's mask and dL/db inside its GEMMs (01 and 02 add a pass each).
    02_im2col is never fastest (it writes and reads R*S copies of the input). Grouped and
    depthwise convolutions were not timed; they follow the same rule. Per-pass timings for the
    course's shapes come from benchmarks/tune_conv.py, into the table read before this rule.
    """
    if pass_name not in PASSES:
        raise KeyError(f"unknown conv pass {pass_name!r}; expected one of {PASSES}")
    return "03_implicit_gemm"


TUNED_JSON = Path(__file__).resolve().parents[2] / "cuda" / "conv" / "tuned.json"
_tuned = None


def tuned_table():
    """benchmarks/tune_conv.py's table ``{"sm_90": {"f32": {key: {"shape": ..., "rungs": {pass:
    rung}, "us": {pass: {rung: us}}}}}}`` (``key``: :func:`geometry`'s), read on first use ({}
    when the file is missing)."""
    global _tuned
    if _tuned is None:
        try:
            _tuned = json.loads(TUNED_JSON.read_text())
        except FileNotFoundError:
            _tuned = {}
    return _tuned


@functools.lru_cache(maxsize=4096)
def _tuned_rung(pass_name, key, suffix, index):
    """The table's rung for one pass of the problem ``key`` on GPU ``index`` (its compute
    capability's entry), or None. Cached: a training loop asks for the same few shapes."""
    arch = f"sm_{cp.cuda.Device(index).compute_capability}"
    row = tuned_table().get(arch, {}).get(suffix, {}).get(key)
    rung = row and row["rungs"].get(pass_name)
    return rung if rung in RUNGS else None


def _pick(pass_name, run, x_shape, w_shape, groups, dtype, index, geom):
    """The rung to run: the forced one, the timed fastest (benchmark mode), the tuned table's or
    :func:`choose`'s. Problems with more than 2**31 - 1 pixels in all take 01_direct (64-bit
    indices throughout)."""
    if _forced is not None:
        return _forced
    if geom.pixels >= INT_MAX:
        return "01_direct"
    if not backends.cudnn.benchmark:
        return (_tuned_rung(pass_name, geom.key, SUFFIX[dtype], index)
                or choose(pass_name, x_shape, w_shape, groups))
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


def _relu(activation):
    """Whether ``activation`` asks for the fused ReLU. Raises ValueError for one that is not None or 'relu'."""
    if activation not in (None, "relu"):
        raise ValueError(f"conv2d: activation must be None or 'relu', got {activation!r}")
    return activation == "relu"


def conv2d(x, weight, bias, stride, padding, dilation, groups, activation=None):
    """``y = weight * x (+ bias)``, then ``max(y, 0)`` when ``activation`` is 'relu' (in the
    kernels' epilogue; None: none): [N, K, P, Q], x's dtype.

    ``x`` [N, C, H, W] and ``weight`` [K, C/groups, R, S] contiguous, ``bias`` [K] (contiguous)
    or None, one floating dtype. Raises TypeError/ValueError for arrays the kernels cannot take
    and for an unknown activation. (:func:`conv2d_max_pool2d` also pools in the epilogue.)"""
    relu = _relu(activation)
    _check(x, weight)
    geom, (p, q) = geometry(x.shape, weight.shape, stride, padding, dilation, groups)
    out_shape = (x.shape[0], weight.shape[0], p, q)
    if 0 in out_shape or weight.size == 0:        # nothing to compute, or empty sums (C = 0)
        y = empty(out_shape, x.dtype, x.device_id)
        return y if y.size == 0 else _bias_act(fill_(y, 0), bias, geom, relu)

    def run(rung):
        return _FORWARD[rung](x, weight, bias, geom, out_shape, relu)
    return run(_pick("forward", run, x.shape, weight.shape, groups, x.dtype, x.device_id, geom))


POOL_WINDOW = ((2, 2), (2, 2), (0, 0), (1, 1))     # the fused pooling's kernel, stride, padding, dilation
FUSES_POOL = "03_implicit_gemm"                    # the rung that pools in its epilogue


def conv2d_max_pool2d(x, weight, bias, stride, padding, dilation, groups, activation=None):
    """``max_pool2d(conv2d(...), 2)``: kernel 2, stride 2, no padding, after the bias and the
    activation (as :func:`conv2d`). Returns (pooled [N, K, P//2, Q//2] of x's dtype, int64 indices
    ``p * Q + q`` of each maximum in its P x Q plane: max_pool2d's convention, the first maximum
    of a window in row-major order wins ties, a NaN wins). An odd last row or column of y is in
    no window and is not computed (rung 03). Same arguments and errors as :func:`conv2d`."""
    relu = _relu(activation)
    _check(x, weight)
    geom, (p, q) = geometry(x.shape, weight.shape, stride, padding, dilation, groups)
    out_shape = (x.shape[0], weight.shape[0], p, q)
    pooled_shape = out_shape[:2] + (p // 2, q // 2)
    if 0 in pooled_shape:
        return empty(pooled_shape, x.dtype, x.device_id), empty(pooled_shape, np.dtype(np.int64), x.device_id)
    if weight.size == 0:                            # empty sums (C = 0): conv2d fills y
        return _max_pool2d(conv2d(x, weight, bias, stride, padding, dilation, groups, activation), *POOL_WINDOW,
                           pooled_shape[2:])

    def run(rung):
        if rung == FUSES_POOL:
            return _igemm_forward_maxpool2(x, weight, bias, geom, pooled_shape, relu)
        return _max_pool2d(_FORWARD[rung](x, weight, bias, geom, out_shape, relu), *POOL_WINDOW, pooled_shape[2:])
    return run(_pick("forward_maxpool2", run, x.shape, weight.shape, groups, x.dtype, x.device_id, geom))


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
