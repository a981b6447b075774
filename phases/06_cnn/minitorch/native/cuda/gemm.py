# GENERATED from minitorch/native/cuda/gemm.py by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
# phase: 05
"""The GEMM ladder on ``DeviceArray``s: ``C = op(A) @ op(B) (+ bias)`` with any rung of
``minitorch/cuda/gemm/NN_name.cu``.

Each rung is one ``.cu`` file with the same entry points (``gemm_nn_f32`` ... ``gemm_tt_f32``,
arguments in ``gemm.cuh``); what differs is how its blocks share work, which this module records
in a :class:`Rung`: threads per block, the C tile a block computes, shared memory, the dtypes it
has, the oldest GPU it runs on. :func:`gemm` reads the layout letters off the strides, so a
transposed view (``W.T``, ``grad.T``) is multiplied where it lies.
"""
import functools
import itertools
from dataclasses import dataclass, field, replace

import numpy as np

from ...cuda.array import empty
from .launch import SUFFIX, broadcast_layout, cdiv, cp, kernel, launch_2d


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
}


# ---- the tuned rungs (07-09): tile sizes are compile-time parameters --------------------------
# Each of these files reads its tile sizes from macros (-DBM=128 ...); the values below are the
# files' own defaults, written out so that Python always knows the block, tile and shared memory
# that go with a compiled kernel. rung_with(rung, config) makes the Rung of any configuration;
# tuning_configs(rung) lists the configurations tools/tune_gemm.py tries.
TUNED_DEFAULTS = {
    "07_autotuned": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
    "08_warptile": {"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 32, "WNITER": 2, "TM": 8, "TN": 4},
    "09_pipelined": {"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 32, "WNITER": 2, "TM": 8, "TN": 4,
                     "STAGES": 3},
}

# The values the autotuner tries for each parameter (tuning_configs keeps the valid combinations).
TUNING_SPACE = {
    "07_autotuned": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                     "TM": [4, 8, 16], "TN": [4, 8]},
    "08_warptile": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16],
                    "WM": [32, 64, 128], "WN": [32, 64], "WNITER": [1, 2, 4], "TM": [4, 8], "TN": [4]},
    "09_pipelined": {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16],
                     "WM": [32, 64, 128], "WN": [32, 64], "WNITER": [1, 2, 4], "TM": [4, 8], "TN": [4],
                     "STAGES": [2, 3, 4]},
}

# Accumulators (C elements) per thread worth trying: more do not fit in 255 registers without
# spilling (with nvcc 13, sm_80/sm_90; rung 09's pipeline state costs registers too); fewer than
# 32 leave too few FMAs per shared-memory read, and fewer than 128 threads too few warps to hide
# latency. Not validity rules: such configurations are correct, only not worth timing.
_ACCUMULATORS = {"07_autotuned": (16, 128), "08_warptile": (32, 128), "09_pipelined": (32, 64)}
_MIN_THREADS = 128
STATIC_SMEM = 48 * 1024      # shared memory a block may declare statically (rungs 07, 08)
MAX_SMEM = 227 * 1024        # the most dynamic shared memory any GPU gives one block (sm_90)

# file and oldest GPU here; block, tile, smem and options are filled in from the defaults below
RUNGS.update({
    "07_autotuned": Rung("gemm/07_autotuned.cu", (), ()),
    "08_warptile": Rung("gemm/08_warptile.cu", (), ()),
    "09_pipelined": Rung("gemm/09_pipelined.cu", (), (), arch=80),    # cp.async
})


def _geometry(rung, c):
    """(threads per block, (BM, BN), dynamic shared memory bytes) of configuration ``c`` (a full
    dict) of tuned rung ``rung``, after checking the rules the file's static_asserts check.
    Raises ValueError naming every broken rule."""
    broken = []

    def need(ok, rule):
        if not ok:
            broken.append(rule)

    bm, bn, bk, tm, tn = c["BM"], c["BN"], c["BK"], c["TM"], c["TN"]
    if any(not isinstance(v, int) or v <= 0 for v in c.values()):
        raise ValueError(f"{rung}: every parameter must be a positive int, got {c}")
    need(bk % 4 == 0 and bm % 4 == 0 and bn % 4 == 0, "BM, BN, BK multiples of 4 (float4 loads)")
    need(tm % 4 == 0 and tn % 4 == 0, "TM, TN multiples of 4 (float4 shared-memory reads)")
    smem = 0
    if rung == "07_autotuned":
        need(bm % tm == 0 and bn % tn == 0, "TM divides BM and TN divides BN")
        threads = (bm // tm) * (bn // tn)
        need(bk * (bm + 4 + bn + 4) * 4 <= STATIC_SMEM, "BK * (BM+4 + BN+4) * 4 <= 48 KB")
    else:
        wm, wn, wniter = c["WM"], c["WN"], c["WNITER"]
        need(bm % wm == 0 and bn % wn == 0, "WM divides BM and WN divides BN")
        threads = 32 * (bm // wm) * (bn // wn)
        per_sub = 32 * tm * tn * wniter
        wmiter = (wm * wn) // per_sub
        need(wmiter >= 1 and (wm * wn) % per_sub == 0, "WM*WN a multiple of 32*TM*TN*WNITER")
        if wmiter >= 1:
            need(wm % wmiter == 0 and wn % wniter == 0, "WMITER divides WM and WNITER divides WN")
            wsubm, wsubn = wm // wmiter, wn // wniter
            need(wsubm % tm == 0 and wsubn % tn == 0 and (wsubm // tm) * (wsubn // tn) == 32,
                 "the 32 lanes tile a WSUBM x WSUBN sub-tile exactly")
        if rung == "08_warptile":
            need(bk * (bm + 4 + bn + 4) * 4 <= STATIC_SMEM, "BK * (BM+4 + BN+4) * 4 <= 48 KB")
        else:
            stages = c["STAGES"]
            need(2 <= stages <= 4, "STAGES from 2 to 4")
            smem = stages * bk * (bm + 4 + bn + 4) * 4
            need(smem <= MAX_SMEM, "STAGES * BK * (BM+4 + BN+4) * 4 <= 227 KB")
            # copy_tile: the block's copies cover each tile exactly, both ways (both layouts of
            # an operand are compiled into one module)
            need(threads >= 32, "at least one warp")
            if threads >= 32:
                need(threads % bk == 0 and all(r % (threads // bk) == 0 for r in (bm, bn)),
                     "NUM_THREADS % BK == 0 and BM, BN multiples of NUM_THREADS / BK")
                need(all(threads % (r // 4) == 0 and bk % (threads // (r // 4)) == 0
                         for r in (bm, bn) if threads >= r // 4) and threads >= max(bm, bn) // 4,
                     "NUM_THREADS a multiple of BM/4 and BN/4, and BK of NUM_THREADS / (BM/4), / (BN/4)")
    need(threads % 32 == 0 and threads <= 256, "NUM_THREADS a multiple of 32, at most 256")
    if "NUM_THREADS" in c:
        need(c["NUM_THREADS"] == threads, f"NUM_THREADS equal to the derived {threads}")
    if broken:
        raise ValueError(f"{rung}: invalid configuration {c}: needs " + "; ".join(broken))
    return threads, (bm, bn), smem


def config_of(rung, options):
    """The configuration dict of NVRTC ``options`` ("-DBM=64", ...) for tuned rung ``rung``,
    filled in with the rung's defaults. Raises ValueError for an option that is not -DNAME=int
    of one of the rung's parameters (or NUM_THREADS)."""
    config = dict(TUNED_DEFAULTS[rung])
    for opt in options:
        name, eq, value = opt[2:].partition("=") if opt.startswith("-D") else ("", "", "")
        if not eq or not (name in config or name == "NUM_THREADS") or not value.lstrip("-").isdigit():
            raise ValueError(f"{rung}: option {opt!r} is not -DNAME=int with NAME one of "
                             f"{', '.join(TUNED_DEFAULTS[rung])}")
        config[name] = int(value)
    return config


def options_of(rung, config):
    """The NVRTC options of ``config`` (a dict, may be partial) for tuned rung ``rung``: one
    -DNAME=value per parameter, in the rung's parameter order (one module per distinct tuple)."""
    full = {**TUNED_DEFAULTS[rung], **config}
    return tuple(f"-D{k}={full[k]}" for k in TUNED_DEFAULTS[rung])


@functools.lru_cache(maxsize=None)
def _rung_with(rung, items):
    config = dict(items)
    threads, tile, smem = _geometry(rung, config)
    return replace(RUNGS[rung], block=(threads,), tile=tile, smem=smem, options=options_of(rung, config))


def rung_with(rung, config):
    """The :class:`Rung` of tuned rung ``rung`` ("07_autotuned", "08_warptile", "09_pipelined")
    compiled with ``config``: a dict of parameters ({"BM": 64, "BK": 16, ...}; missing ones keep
    the defaults of :data:`TUNED_DEFAULTS`) or a tuple of NVRTC options ("-DBM=64", ...). Its
    block, tile, dynamic shared memory and options all follow the configuration.

    Raises:
        KeyError: ``rung`` is not a tuned rung.
        ValueError: an unknown parameter, or a configuration the kernel rejects (the rules of its
            static_asserts, each broken one named).
    """
    if rung not in TUNED_DEFAULTS:
        raise KeyError(f"{rung!r} is not a tuned rung: one of {', '.join(TUNED_DEFAULTS)}")
    if isinstance(config, (tuple, list)):
        config = config_of(rung, config)
    unknown = set(config) - set(TUNED_DEFAULTS[rung]) - {"NUM_THREADS"}
    if unknown:
        raise ValueError(f"{rung}: unknown parameters {sorted(unknown)}; it has {', '.join(TUNED_DEFAULTS[rung])}")
    full = {**TUNED_DEFAULTS[rung], **config}
    return _rung_with(rung, tuple(sorted(full.items())))


def tuning_configs(rung, max_smem=MAX_SMEM):
    """Yield the NVRTC option tuples ("-DBM=..", "-DBN=..", ...) of every configuration of tuned
    rung ``rung`` in :data:`TUNING_SPACE` that the kernel accepts, that has at least 128 threads
    and keeps _ACCUMULATORS[rung] (low, high) accumulators a thread (more spill registers) and needs at most
    ``max_smem`` bytes of dynamic shared memory (the device's opt-in limit, e.g.
    cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]). Each tuple is accepted by
    ``gemm(..., rung=rung, options=...)`` and by :func:`rung_with`.

    Raises:
        KeyError: ``rung`` is not a tuned rung.
    """
    space = TUNING_SPACE[rung]
    names = list(space)
    for values in itertools.product(*(space[n] for n in names)):
        config = dict(zip(names, values))
        try:
            spec = rung_with(rung, config)
        except ValueError:
            continue
        threads = spec.block[0]
        low, high = _ACCUMULATORS[rung]
        if not low <= config["BM"] * config["BN"] // threads <= high or threads < _MIN_THREADS \
                or spec.smem > max_smem:
            continue
        yield spec.options


for _name in TUNED_DEFAULTS:
    RUNGS[_name] = rung_with(_name, {})


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


_smem_raised = set()     # kernels whose dynamic shared memory limit gemm() has raised


def gemm(a, b, bias=None, rung="01_naive", options=None, config=None):
    """``a @ b (+ bias)`` with rung ``rung`` (a key of :data:`RUNGS`).

    Shapes: ``a`` [..., M, K], ``b`` [..., K, N] with broadcast batch dimensions, ``bias`` [N] or
    None; returns a new contiguous [..., M, N] array of the same dtype. Both operands share a dtype
    the rung has; each may be any view whose rows or columns are unit-stride (others are copied).
    ``options`` replaces the rung's NVRTC options (the autotuner's tile sizes). For a tuned rung
    (07-09) the launch follows them: ``options=("-DBM=64", ...)`` or ``config={"BM": 64, ...}``
    (parameters not given keep their defaults) give the block, tile and shared memory of that
    configuration (:func:`rung_with`).

    Raises:
        KeyError: unknown rung.  TypeError: dtypes differ or the rung has none for them.
        ValueError: operands not 2-D or more, inner sizes or batch shapes that do not match, a
            bias that is not [N]; for a tuned rung, an invalid configuration.
    """
    spec = RUNGS[rung]
    if rung in TUNED_DEFAULTS and (options is not None or config is not None):
        merged = config_of(rung, options) if options is not None else dict(TUNED_DEFAULTS[rung])
        spec = rung_with(rung, {**merged, **(config or {})})
        options = None                  # spec.options now holds them, in canonical order
    elif config is not None:
        raise ValueError(f"gemm: rung {rung} has no compile-time configuration")
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
    if spec.smem > STATIC_SMEM and fn not in _smem_raised:
        # Past 48 KB a kernel must opt in to more dynamic shared memory, once per kernel
        # (cudaFuncSetAttribute(MaxDynamicSharedMemorySize)); the launch fails otherwise.
        with cp.cuda.Device(idx):
            fn.max_dynamic_shared_size_bytes = spec.smem
        _smem_raised.add(fn)
    bm, bn = spec.tile
    launch_2d(fn, (cdiv(n, bn), cdiv(m, bm), batch), spec.block,
              (a, b, out, bias, m, n, k, la[1], lb[1], batch, layout), idx, spec.smem)
    return out
