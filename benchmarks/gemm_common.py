"""What the GEMM evidence scripts share: bench_gemm.py, sanitize_gemm.py, tools/tune_gemm.py.

Pure parts (no GPU, tested on the CPU in tests/test_gemm_tools.py): which (rung, dtype) pairs
exist and what *kind* of arithmetic each is (fp32, tf32, bf16, f16, fp64), the tolerance of each
kind, argument parsing, the rung x size Markdown table, merging tuned tables.
GPU parts (import torch / CuPy / minitorch.native.cuda lazily): random operands in any layout as
torch tensors, wrapped as our DeviceArrays without copying; the float64 check; CUDA-event timing
with the L2 cache flushed; poisoned allocations.

A GEMM here is C [M, N] = op(A) [M, K] @ op(B) [K, N] (+ bias [N]), layout letters as in
minitorch/cuda/gemm/gemm.cuh: 'n' = stored as written, 't' = the transposed view of a contiguous
array. Sizes are written M x N x K everywhere in these scripts.
"""
import contextlib
import math
import re
import statistics

KINDS = ("fp32", "tf32", "bf16", "f16", "fp64")
LAYOUTS = ("nn", "nt", "tn", "tt")
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16"}
KIND_SUFFIX = {"fp32": "f32", "tf32": "f32", "bf16": "bf16", "f16": "f16", "fp64": "f64"}
MB = 1 << 20


# ---- rungs, kinds, tolerances (pure) -------------------------------------------------------------
def kind_of(spec, suffix):
    """The arithmetic a rung does on one of its dtypes: 'fp32' (float32 on the SIMT cores), 'tf32'
    (float32 inputs rounded to TF32 on the tensor cores: ``spec.tensor_cores``), 'bf16', 'f16',
    'fp64'. ``spec``: a gemm.Rung (anything with ``tensor_cores``); ``suffix``: 'f32', 'bf16'..."""
    if suffix == "f32":
        return "tf32" if getattr(spec, "tensor_cores", False) else "fp32"
    return {"f64": "fp64", "bf16": "bf16", "f16": "f16"}.get(suffix, suffix)


def rung_cases(rungs, suffixes, only=None):
    """[(rung name, suffix, kind)] for every rung in ``rungs`` (name -> Rung) and each of its
    dtypes that this build has kernels for (``suffixes``: the values of launch.SUFFIX), in rung
    order. ``only``: keep these rung names (or name prefixes such as '05'); unknown ones are
    skipped, so scripts run on a tree that has only some rungs."""
    out = []
    for name, spec in rungs.items():
        if only and not any(name == o or name.startswith(o + "_") or name.split("_")[0] == o for o in only):
            continue
        for suffix in spec.dtypes:
            if suffix in suffixes:
                out.append((name, suffix, kind_of(spec, suffix)))
    return out


# Unit roundoff of the inputs as the arithmetic sees them, and of the stored output.
_U_IN = {"fp64": 2.0 ** -53, "fp32": 2.0 ** -24, "tf32": 2.0 ** -10, "bf16": 0.0, "f16": 0.0}
_U_ACC = {"fp64": 2.0 ** -53, "fp32": 2.0 ** -24, "tf32": 2.0 ** -22, "bf16": 2.0 ** -22, "f16": 2.0 ** -22}
_U_OUT = {"fp64": 2.0 ** -53, "fp32": 2.0 ** -24, "tf32": 2.0 ** -24, "bf16": 2.0 ** -8, "f16": 2.0 ** -10}
# Absolute slack: float16 results under 2**-14 are subnormal, spaced 2**-24 apart (bf16 and float32
# have float32's range, so their subnormals never show up here).
ABS_FLOOR = {"fp64": 0.0, "fp32": 0.0, "tf32": 0.0, "bf16": 0.0, "f16": 2.0 ** -24}
NORM_TOL = {"fp64": 1e-12, "tf32": 5e-3, "bf16": 8e-3, "f16": 4e-3}


def elementwise_tol(kind, k):
    """Bound on (|C - C_ref| - ABS_FLOOR[kind]) / (|A| @ |B| + |bias|), element by element, for a
    correct kernel (:func:`elementwise_error` computes the left side).

    The classic bound for a length-K dot product in any summation order is gamma_K * |a|.|b| with
    gamma_K ~ K * u (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1);
    on top come the rounding of TF32 inputs (10 explicit mantissa bits: each product off by up to
    2 * 2^-10, truncation or rounding) and the final rounding of C to bf16 / f16. bf16 and f16
    products are exact in float32. The tensor-core accumulators are given 4x float32's roundoff
    (their adders are not IEEE round-to-nearest). Every constant has a factor 2 of slack; a
    wrong index, a skipped k-tile or an unwritten element is off by O(1/K) or more.
    """
    k = max(int(k), 1)
    return 2.0 * (2.0 * _U_IN[kind] + (k + 2) * _U_ACC[kind] + _U_OUT[kind])


def elementwise_error(diff, scale, kind):
    """(|diff| - ABS_FLOOR[kind]) / scale, clipped at 0, element by element (NumPy or torch arrays)."""
    return (abs(diff) - ABS_FLOOR[kind]).clip(0) / scale


def norm_tol(kind, k):
    """Bound on ||C - C_ref|| / ||C_ref|| (Frobenius): fp32 3e-6 * sqrt(K) (a random walk of K
    roundings), tf32 5e-3, bf16 8e-3, f16 4e-3 (the output's own rounding is ~1e-3 and 2.5e-4),
    fp64 1e-12."""
    if kind == "fp32":
        return 3e-6 * math.sqrt(max(int(k), 1))
    return NORM_TOL[kind]


# ---- arguments and shapes (pure) -----------------------------------------------------------------
def parse_list(text, cast=str):
    """'128,256, 512' -> [128, 256, 512] with ``cast``; None or '' -> None."""
    if not text:
        return None
    return [cast(x.strip()) for x in text.split(",") if x.strip()]


def parse_shape(text):
    """'64x784x128' or '64x784x128:nt' -> (M, N, K, layout) (layout 'nn' when not given).

    Raises:
        ValueError: not three positive integers joined by 'x', or an unknown layout.
    """
    m = re.fullmatch(r"\s*(\d+)x(\d+)x(\d+)(?::(\w\w))?\s*", text)
    if not m or (m.group(4) or "nn") not in LAYOUTS:
        raise ValueError(f"shape {text!r}: expected MxNxK or MxNxK:layout with layout in {LAYOUTS}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "nn"


def gflops(m, n, k, ms, batch=1):
    """GFLOP/s of a GEMM (2*M*N*K flops a matrix) that took ``ms`` milliseconds."""
    return 2.0 * m * n * k * batch / (ms * 1e-3) / 1e9 if ms and ms > 0 else None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def markdown_tables(results, shapes):
    """One Markdown table per kind: a row per rung (in order of appearance) plus cuBLAS (through
    torch), a column per shape label in ``shapes``' order; a cell is 'GFLOP/s (% of cuBLAS)',
    'FAIL' for a rung that got a wrong answer, '-' where it was not timed.

    ``results``: dicts with 'kind', 'rung', 'shape' (the label), 'ok', 'gflops', 'torch_gflops',
    'pct' (keys may be missing or None).
    """
    out = []
    for kind in KINDS:
        rows = [r for r in results if r.get("kind") == kind]
        if not rows:
            continue
        labels = [s for s in shapes if any(r["shape"] == s for r in rows)]
        rungs = list(dict.fromkeys(r["rung"] for r in rows))
        cell = {(r["rung"], r["shape"]): r for r in rows}
        lines = [f"**{kind}** GFLOP/s (% of cuBLAS)", "",
                 "| rung | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
        for rung in rungs:
            cells = []
            for s in labels:
                r = cell.get((rung, s))
                if r is None:
                    cells.append("-")
                elif r.get("ok") is False:
                    cells.append("FAIL")
                elif r.get("gflops") is None:
                    cells.append(r.get("skipped") and "skip" or "-")
                else:
                    pct = f" ({r['pct']:.0f}%)" if r.get("pct") is not None else ""
                    cells.append(f"{r['gflops']:.0f}{pct}")
            lines.append(f"| {rung} | " + " | ".join(cells) + " |")
        torch_cells = []
        for s in labels:
            t = next((r.get("torch_gflops") for r in rows if r["shape"] == s and r.get("torch_gflops")), None)
            torch_cells.append(f"{t:.0f}" if t else "-")
        lines.append("| cuBLAS (torch) | " + " | ".join(torch_cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


# ---- the tuned table (pure) ----------------------------------------------------------------------
def merge_tuned(existing, new):
    """Merge tuned entries ``new`` into ``existing`` (both {arch: {kind: {class: entry}}}, entry
    = {"rung", "options", "gflops"}); a copy, neither argument is changed. For each (arch, kind,
    class) the entry of ``new`` wins: it was measured now, on this machine, with today's kernels
    (an older, faster number may come from a kernel since changed). Other entries are kept."""
    out = {arch: {kind: dict(classes) for kind, classes in kinds.items()} for arch, kinds in (existing or {}).items()}
    for arch, kinds in (new or {}).items():
        for kind, classes in kinds.items():
            out.setdefault(arch, {}).setdefault(kind, {}).update(classes)
    return out


# ---- GPU helpers (torch, CuPy, minitorch.native.cuda imported on first use) -----------------------
def cuda_modules():
    """(torch, cupy, gemm module, SUFFIX) or raise ImportError/RuntimeError naming what is missing.

    Sets ``minitorch.backends.cuda.matmul.allow_tf32 = True``: these scripts always name the rung
    they run, and a tensor-core rung must run as itself, whatever dispatch would allow."""
    import torch
    import cupy as cp
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no GPU")
    allow_named_rungs()
    from minitorch.native.cuda import gemm as G
    from minitorch.native.cuda.launch import SUFFIX
    return torch, cp, G, SUFFIX


def allow_named_rungs():
    """minitorch's TF32 switch on, so that gemm(..., rung='10_tf32_mma') is never refused or
    rerouted (the switch is for dispatch, which these scripts bypass)."""
    import minitorch
    minitorch.backends.cuda.matmul.allow_tf32 = True


def numpy_dtype(suffix):
    """The NumPy dtype whose kernels end in ``suffix`` (launch.SUFFIX read backwards), or None."""
    from minitorch.native.cuda.launch import SUFFIX
    return next((dt for dt, s in SUFFIX.items() if s == suffix), None)


def arch_name():
    """'sm_90' for the current GPU."""
    import cupy as cp
    return "sm_" + cp.cuda.Device().compute_capability


def wrap(t):
    """A torch cuda tensor (any strides, any of our dtypes) as a DeviceArray over the same
    memory, no copy; the tensor is kept alive as the owner. (from_cuda_array goes through the
    CUDA Array Interface, which torch does not give for bfloat16.)"""
    from minitorch.cuda.array import DeviceArray, is_c_contiguous
    dt = numpy_dtype({v: k for k, v in TORCH_DTYPES.items()}[str(t.dtype).replace("torch.", "")])
    shape = tuple(t.shape)
    strides = tuple(s * t.element_size() for s in t.stride())
    return DeviceArray(t, t.data_ptr(), shape, strides, dt, t.numel(),
                       is_c_contiguous(shape, strides, dt.itemsize), t.device.index or 0)


def to_torch(a):
    """A contiguous DeviceArray copied (device to device, stream-ordered) into a new torch tensor."""
    import torch
    import cupy as cp
    tdt = getattr(torch, TORCH_DTYPES[{v: k for k, v in _suffixes().items()}[a.dtype]])
    out = torch.empty(a.shape, dtype=tdt, device=f"cuda:{a.device_id}")
    if a.nbytes:
        cp.cuda.runtime.memcpyAsync(out.data_ptr(), a.ptr, a.nbytes, cp.cuda.runtime.memcpyDeviceToDevice,
                                    cp.cuda.get_current_stream().ptr)
    return out


def _suffixes():
    from minitorch.native.cuda.launch import SUFFIX
    return {s: dt for dt, s in SUFFIX.items()}


def operands(m, n, k, layout, suffix, batch=(), bias=False, gen=None, device="cuda"):
    """Fresh random torch operands: (a [*batch, M, K], b [*batch, K, N], bias [N] or None) of the
    dtype of ``suffix``, standard normal, with a 't' operand a transposed view of a contiguous
    array (so the kernel sees the layout, not a copy)."""
    import torch
    tdt = getattr(torch, TORCH_DTYPES[suffix])

    def rand(*shape):
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32).to(tdt)
    a = rand(*batch, k, m).transpose(-1, -2) if layout[0] == "t" else rand(*batch, m, k)
    b = rand(*batch, n, k).transpose(-1, -2) if layout[1] == "t" else rand(*batch, k, n)
    return a, b, (rand(n) if bias else None)


def check_torch(out, a, b, bias, kind):
    """(ok, normwise relative error, worst elementwise error / its bound) of ``out`` (a torch
    tensor) against A @ B (+ bias) in float64 on the GPU. NaN anywhere (an unwritten element of a
    poisoned output) fails."""
    import torch
    k = a.shape[-1]
    ad, bd = a.double(), b.double()
    ref = torch.matmul(ad, bd)
    scale = torch.matmul(ad.abs(), bd.abs())
    if bias is not None:
        ref = ref + bias.double()
        scale = scale + bias.double().abs()
    o = out.double()
    if o.shape != ref.shape or not bool(torch.isfinite(o).all()):
        return False, float("nan"), float("nan")
    diff = (o - ref).abs()
    rel = float(torch.linalg.vector_norm(diff) / torch.linalg.vector_norm(ref).clamp_min(1e-300))
    worst = (float(elementwise_error(diff, scale.clamp_min(1e-300), kind).max()) / elementwise_tol(kind, k)
             if diff.numel() else 0.0)
    return bool(rel <= norm_tol(kind, k) and worst <= 1.0), rel, worst


@contextlib.contextmanager
def poisoned():
    """Inside: every block our allocator hands out is first filled with 0xFF bytes (NaN for
    floats), so an output element a kernel never writes shows up as NaN."""
    import cupy as cp
    from minitorch.cuda import memory
    real = memory.Pool.malloc

    def malloc(self, nbytes, stream):
        block = real(self, nbytes, stream)
        cp.cuda.runtime.memsetAsync(block.ptr, 0xFF, block.size, stream)
        return block
    memory.Pool.malloc = malloc
    try:
        yield
    finally:
        memory.Pool.malloc = real


_flush = None


def flush_l2():
    """Overwrite the L2 cache (50 MB on an H100) with a 256 MB memset, queued on the current stream."""
    global _flush
    import cupy as cp
    if _flush is None:
        _flush = cp.empty(256 * MB, dtype=cp.uint8)
    cp.cuda.runtime.memsetAsync(_flush.data.ptr, 1, _flush.nbytes, cp.cuda.get_current_stream().ptr)


_spin = None
HOLD_US = 500


def hold_stream(us=HOLD_US):
    """Queue a one-thread kernel that spins for ``us`` microseconds (by the GPU's nanosecond
    %globaltimer) on the current stream: the work the host queues meanwhile waits behind it.
    nvbench's "blocking kernel" does the same, so that a timed call's launches are all queued
    before its start event is reached."""
    global _spin
    import cupy as cp
    if _spin is None:
        _spin = cp.RawKernel(r"""
extern "C" __global__ void hold_stream(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}""", "hold_stream")
    _spin((1,), (1,), (cp.int64(us * 1000),))


def time_ms(fn, repeats=10, warmup=3, flush=True):
    """Median milliseconds of ``fn()`` by CUDA events on the current stream (ours and torch's: the
    legacy default stream), after ``warmup`` calls. Before each timed call the L2 cache is flushed
    by a 256 MB memset, and then the stream is held for HOLD_US (:func:`hold_stream`); the host
    does not wait for either, so the start event, ``fn``'s launches and the end event are all
    queued while the GPU is busy: the number is the GPU's time from the first launch to the
    last, not the host's launch overhead (which the ~80 us memset alone hid only for calls that
    queue their work faster: a split-K product's two launches did not on some hosts)."""
    import cupy as cp
    for _ in range(warmup):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        cp.cuda.get_current_stream().synchronize()
        if flush:
            flush_l2()
        hold_stream()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def time_interleaved_ms(fns, repeats=10, warmup=3, prepare=None):
    """Median milliseconds of each of ``fns`` (name -> function), timed as :func:`time_ms` times
    one call (L2 flushed, CUDA events), but in rounds: each round times one call of every function
    in turn. On a shared host whose speed drifts over seconds (the lent VMs do, by 10-40%), that
    drift then hits every contender alike instead of whichever ran during a slow stretch. Each
    timed call follows one untimed call of the same function: switching contenders every call
    would time each with the CPU's caches full of the other's code, where a training loop runs
    warm. ``prepare(name)``, if given, runs untimed before the calls of ``name`` (e.g. to switch
    a dispatch table). Returns {name: median ms}."""
    for name, fn in fns.items():
        for _ in range(warmup):
            if prepare:
                prepare(name)
            fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            if prepare:
                prepare(name)
            times[name].append(time_ms(fn, repeats=1, warmup=1))
    return {name: statistics.median(t) for name, t in times.items()}


def set_torch_tf32(torch, allow):
    """Switch PyTorch's TF32 for matmul on or off (both the old flag and the float32 precision
    setting); return what it reads back, for the record."""
    torch.backends.cuda.matmul.allow_tf32 = bool(allow)
    torch.backends.cudnn.allow_tf32 = bool(allow)
    try:
        torch.set_float32_matmul_precision("high" if allow else "highest")
    except (AttributeError, RuntimeError):      # an older or newer torch: the flag above decides
        pass
    return {"torch.backends.cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "torch.backends.cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
            "float32_matmul_precision": torch.get_float32_matmul_precision()}


def write_record(record, out_dir, name):
    """Write a benchmark's ``record`` (a dict with ``env`` from minitorch.utils.race.environment) as
    ``<out_dir>/<name>-<GPU name as a slug>.json``, making the folder; returns the path."""
    import json
    from pathlib import Path
    from minitorch.utils.race import slug
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{slug(record['env'].get('gpu_name') or 'gpu')}.json"
    path.write_text(json.dumps(record, indent=1))
    return path
