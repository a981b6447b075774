"""Issue 13 checks. The name audit (cpu is enough; any device):

    python benchmarks/check_api_gaps.py --names [--device cuda]   # every name of section 1, a table

lists each name of the issue's section 1, checks that it exists as minitorch.X / Tensor.X wherever
torch.X / torch.Tensor.X exists, runs it and compares its values with PyTorch's; the exit status is
the number of gaps (tests/test_api_audit.py runs it).

One GPU check of issue 13's second pass (unique(dim=), mode's index, scatter(reduce=) and
scatter_reduce, mixed index tensors, view(), tied state_dict): the cuda tests, compute-sanitizer
on the new kernels, and timings against PyTorch.

    python benchmarks/check_api_gaps.py            # everything; a table last, JSON to $OUT if set
    python benchmarks/check_api_gaps.py --kernels  # only the kernel driver (what the sanitizer runs)

New kernels: sort.cu ``mode_rows_{f32,f64,i64,bool}`` (one thread per row, libstdc++'s introsort
in a scratch copy) and index.cu ``scatter_{mul,max,min}_{f32,f64,i64}`` (atomicCAS loops).
"""
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def drive_kernels():
    """Every new kernel on awkward inputs (sizes around the block, collisions, NaN, views)."""
    import minitorch as mt
    rng = np.random.default_rng(0)
    for n in (1, 16, 17, 33, 1000):           # mode: insertion-only rows, introsort, heap-sort fallback
        for dtype in ("float32", "float64", "int64", "bool"):
            x = rng.integers(0, 4, (5, n)).astype(dtype)
            mt.tensor(x, device="cuda").mode(1)
            mt.tensor(x, device="cuda").t().mode(0)
    killer = np.zeros(2048, np.int64)
    for i in range(1, 1025):
        if i % 2:
            killer[i - 1], killer[i] = i, 1024 + i
        killer[1024 + i - 1] = 2 * i
    mt.tensor(killer, device="cuda").mode(0)
    for dtype in ("float32", "float64", "int64"):
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                x = mt.tensor(rng.integers(1, 3, (7, 33)).astype(dtype), device="cuda")
                i = mt.tensor(rng.integers(0, 7, (50, 33)), device="cuda")          # heavy collisions
                s = mt.tensor(rng.integers(1, 3, (50, 33)).astype(dtype), device="cuda")
                x.scatter_reduce(0, i, s, reduce, include_self=include_self)
                x.t().scatter_reduce(1, i.t(), s.t(), reduce, include_self=include_self)
        x = mt.tensor(rng.standard_normal((3, 4, 5)).astype(np.float32), device="cuda")
        idx = mt.tensor([2, 0], device="cuda")
        x[idx, 1:3] = 1.0
        x[:, idx, mt.tensor([[1], [4]], device="cuda")] = mt.ones(2, 1, device="cuda")
        x.unique(dim=1, return_inverse=True, return_counts=True)
    mt.cuda.synchronize()
    print("kernels driven")


# ---- the name audit (--names): issue 13 section 1, name by name ------------------------------------------
# section -> [(name, call)], call(lib, x, m, i) on lib = minitorch or torch: x float64 [3, 4], m a bool
# mask [3, 4], i int64 [2, 4] in [0, 3). A name with a dot ("autograd.grad") is looked up attribute by attribute.
NAMES = {
    "02 copies and in-place": [
        ("clone", lambda L, x, m, i: x.clone()),
        ("copy_", lambda L, x, m, i: x.clone().copy_(x * 2)),
        ("add_", lambda L, x, m, i: x.clone().add_(x, alpha=2)),
        ("sub_", lambda L, x, m, i: x.clone().sub_(1.5, alpha=2)),
        ("mul_", lambda L, x, m, i: x.clone().mul_(x)),
        ("div_", lambda L, x, m, i: x.clone().div_(3)),
        ("zero_", lambda L, x, m, i: x.clone().zero_()),
        ("fill_", lambda L, x, m, i: x.clone().fill_(2.5)),
        ("clamp_", lambda L, x, m, i: x.clone().clamp_(-0.5, 0.5)),
        ("masked_fill_", lambda L, x, m, i: x.clone().masked_fill_(m, 1.0)),
        ("uniform_", lambda L, x, m, i: x.clone().uniform_(-1, 1).shape),
        ("normal_", lambda L, x, m, i: x.clone().normal_(0, 2).shape),
        ("requires_grad_", lambda L, x, m, i: x.clone().requires_grad_().requires_grad),
    ],
    "02 elementwise": [
        ("clamp", lambda L, x, m, i: L.clamp(x, min=-0.5)),
        ("clip", lambda L, x, m, i: x.clip(None, 0.5)),
        ("sin", lambda L, x, m, i: L.sin(x)), ("cos", lambda L, x, m, i: x.cos()),
        ("erf", lambda L, x, m, i: L.erf(x)), ("rsqrt", lambda L, x, m, i: x.abs().rsqrt()),
        ("log1p", lambda L, x, m, i: L.log1p(x.abs())), ("expm1", lambda L, x, m, i: x.expm1()),
        ("sign", lambda L, x, m, i: L.sign(x)), ("floor", lambda L, x, m, i: x.floor()),
        ("ceil", lambda L, x, m, i: L.ceil(x)), ("round", lambda L, x, m, i: L.round(x * 10)),
        ("remainder", lambda L, x, m, i: L.remainder(x, 0.7)), ("__mod__", lambda L, x, m, i: x % 0.7),
        ("floor_divide", lambda L, x, m, i: L.floor_divide(x, 0.7)), ("__floordiv__", lambda L, x, m, i: x // 0.7),
        ("logical_and", lambda L, x, m, i: L.logical_and(m, x > 0)),
        ("logical_or", lambda L, x, m, i: L.logical_or(m, x > 0)), ("logical_not", lambda L, x, m, i: m.logical_not()),
        ("isnan", lambda L, x, m, i: L.isnan(x / 0 * 0)), ("isinf", lambda L, x, m, i: (x / 0).isinf()),
        ("isfinite", lambda L, x, m, i: L.isfinite(x / 0)),
        ("nan_to_num", lambda L, x, m, i: L.nan_to_num(x / 0, nan=0.0, posinf=1.0)),
        ("allclose", lambda L, x, m, i: L.allclose(x, x + 1e-9)), ("isclose", lambda L, x, m, i: x.isclose(x + 1e-3)),
        ("masked_fill", lambda L, x, m, i: L.masked_fill(x, m, -1.0)),
        ("type_as", lambda L, x, m, i: i.type_as(x)),
        ("new_zeros", lambda L, x, m, i: x.new_zeros(2, 3)), ("new_ones", lambda L, x, m, i: x.new_ones((2,))),
        ("new_full", lambda L, x, m, i: x.new_full((2,), 3.5)), ("new_tensor", lambda L, x, m, i: i.new_tensor([1.5])),
        ("half", lambda L, x, m, i: x.half().float()), ("bfloat16", lambda L, x, m, i: x.bfloat16().float()),
    ],
    "04 shape and indexing": [
        ("split", lambda L, x, m, i: L.split(x, 2, dim=1)), ("chunk", lambda L, x, m, i: x.chunk(3, 1)),
        ("unbind", lambda L, x, m, i: L.unbind(x, 1)), ("repeat", lambda L, x, m, i: x.repeat(2, 1, 3)),
        ("tile", lambda L, x, m, i: L.tile(x, (2,))), ("roll", lambda L, x, m, i: L.roll(x, (1, -1), (0, 1))),
        ("flip", lambda L, x, m, i: L.flip(x, (0,))), ("mT", lambda L, x, m, i: x.mT),
        ("movedim", lambda L, x, m, i: L.movedim(x, 0, 1)), ("narrow", lambda L, x, m, i: L.narrow(x, 1, 1, 2)),
        ("gather", lambda L, x, m, i: L.gather(x, 0, i)), # scatter: rows of x's column ranks, distinct within a column (with repeated indices the
        # element that wins is unspecified, in PyTorch too, so the two libraries may differ)
        ("scatter", lambda L, x, m, i: L.scatter(x, 0, L.argsort(x, 0)[:2], x[:2])),
        ("scatter_", lambda L, x, m, i: x.clone().scatter_(0, i, 2.0)),
        ("scatter_add", lambda L, x, m, i: L.scatter_add(x, 0, i, x[:2])),
        ("index_put_", lambda L, x, m, i: x.clone().index_put_((i[0],), x[0, 0], accumulate=True)),
        ("take_along_dim", lambda L, x, m, i: L.take_along_dim(x, i, 0)),
        ("tril", lambda L, x, m, i: L.tril(x, -1)), ("triu", lambda L, x, m, i: x.triu(1)),
        ("diagonal", lambda L, x, m, i: L.diagonal(x, 1)), ("where", lambda L, x, m, i: L.where(m)),
    ],
    "04 reductions and scans": [
        ("all", lambda L, x, m, i: L.all(m, 1)), ("any", lambda L, x, m, i: m.any()),
        ("prod", lambda L, x, m, i: L.prod(x, 1)), ("amax", lambda L, x, m, i: L.amax(x, (0, 1))),
        ("amin", lambda L, x, m, i: x.amin(-1, keepdim=True)), ("logsumexp", lambda L, x, m, i: L.logsumexp(x, 1)),
        ("norm", lambda L, x, m, i: [L.norm(x, p) for p in (1, 2, math.inf, "fro")] + [x.norm(dim=1)]),
        ("cumsum", lambda L, x, m, i: L.cumsum(x, 1)), ("cumprod", lambda L, x, m, i: x.cumprod(0)),
        ("sort", lambda L, x, m, i: L.sort(x, 1, descending=True)), ("argsort", lambda L, x, m, i: L.argsort(x, 0)),
        ("topk", lambda L, x, m, i: L.topk(x, 2)), ("kthvalue", lambda L, x, m, i: L.kthvalue(x, 2, 1)),
        ("median", lambda L, x, m, i: L.median(x)), ("mode", lambda L, x, m, i: L.mode(i, 0)),
        ("unique", lambda L, x, m, i: L.unique(i, sorted=True, return_counts=True)),
        ("bincount", lambda L, x, m, i: L.bincount(i.flatten())), ("histc", lambda L, x, m, i: L.histc(x, 5, -1, 1)),
        ("count_nonzero", lambda L, x, m, i: L.count_nonzero(m, 0)),
    ],
    "02/04 creation": [
        ("linspace", lambda L, x, m, i: L.linspace(0, 1, 5, device=x.device)),
        ("logspace", lambda L, x, m, i: L.logspace(0, 2, 3, device=x.device)),
        ("eye", lambda L, x, m, i: L.eye(2, 3, device=x.device)),
        ("randint", lambda L, x, m, i: L.randint(0, 5, (3,), device=x.device).shape),
        ("randperm", lambda L, x, m, i: L.randperm(6, device=x.device).sort()[0]),
        ("multinomial", lambda L, x, m, i: L.multinomial(x.abs(), 2).shape),
        ("bernoulli", lambda L, x, m, i: L.bernoulli(x.abs().clamp(0, 1)).shape),
        ("empty_strided", lambda L, x, m, i: L.empty_strided((2, 3), (1, 2), device=x.device).stride()),
        ("Generator", lambda L, x, m, i: L.rand(3, generator=L.Generator(device=x.device).manual_seed(0),
                                                device=x.device).shape),
        ("einsum", lambda L, x, m, i: L.einsum("ij,kj->ik", x, x)),
    ],
    "03 autograd": [
        ("data", lambda L, x, m, i: x.data),
        ("register_hook", lambda L, x, m, i: _hooked(L, x)),
        ("retain_grad", lambda L, x, m, i: _retained(L, x)),
        ("autograd.grad", lambda L, x, m, i: _second(L, x)),
        ("autograd.Function", lambda L, x, m, i: _custom(L, x)),
        ("autograd.detect_anomaly", lambda L, x, m, i: _anomaly(L, x)),
    ],
}


def _leaf(x):
    return x.detach().clone().requires_grad_()


def _hooked(L, x):
    w = _leaf(x)
    w.register_hook(lambda g: g * 3)
    (w * w).sum().backward()
    return w.grad


def _retained(L, x):
    w = _leaf(x)
    y = w * 2
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad


def _second(L, x):
    w = _leaf(x)
    g, = L.autograd.grad(L.tanh(w).sum(), w, create_graph=True)
    return L.autograd.grad(g.sum(), w)[0]


def _custom(L, x):
    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            idx = a.argmax()
            ctx.mark_non_differentiable(idx)
            return a * a * a, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            a, = ctx.saved_tensors
            return 3 * a * a * g
    w = _leaf(x)
    y, _ = Cube.apply(w)
    y.sum().backward()
    return w.grad


def _anomaly(L, x):
    import warnings
    w = _leaf(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.autograd.detect_anomaly():
            try:
                (w * 0).sqrt().sum().backward()
            except RuntimeError as e:
                return "Sqrt" in str(e)
    return False


def _values(result):
    """An op's result as a flat list of NumPy arrays (tensors of either library, tuples, numbers)."""
    if isinstance(result, (tuple, list)):
        return [v for r in result for v in _values(r)]
    if hasattr(result, "detach"):
        return [np.asarray(result.detach().cpu().numpy())]
    return [np.asarray(result)]


def _lookup(owner, name):
    for part in name.split("."):
        owner = getattr(owner, part, None)
    return owner


def _missing(name):
    """``torch.X`` / ``Tensor.X`` names that PyTorch has and minitorch lacks."""
    import torch
    import minitorch as mt
    return [f"{where}.{name}" for where, theirs, ours in (("torch", torch, mt), ("Tensor", torch.Tensor, mt.Tensor))
            if _lookup(theirs, name) is not None and _lookup(ours, name) is None]


def _status(call, device, inputs):
    """"ok", "DIFFERS" (values or shapes unlike PyTorch's) or "FAILS: the error"."""
    import torch
    import minitorch as mt
    try:
        ours = _values(call(mt, *(mt.tensor(v, device=device) for v in inputs)))
        theirs = _values(call(torch, *(torch.tensor(v) for v in inputs)))
    except Exception as e:                   # noqa: BLE001 - the audit reports every failure
        return f"FAILS: {type(e).__name__}: {str(e)[:80]}"
    same = len(ours) == len(theirs) and all(
        a.shape == b.shape and np.allclose(a.astype(float), b.astype(float), equal_nan=True)
        for a, b in zip(ours, theirs))
    return "ok" if same else "DIFFERS"


def audit_names(device="cpu"):
    """Every name of issue 13 section 1 (``NAMES``): it exists as ``minitorch.X`` / ``Tensor.X``
    wherever PyTorch has ``torch.X`` / ``torch.Tensor.X``, runs on ``device``, and gives torch's
    values on the same inputs (only the shape for random draws). Returns (rows, gaps): rows of
    (section, name, missing names, status), and the names with a problem."""
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal((3, 4)), rng.random((3, 4)) < 0.5, rng.integers(0, 3, (2, 4)))
    rows, gaps = [], []
    for section, entries in NAMES.items():
        for name, call in entries:
            missing, status = _missing(name), _status(call, device, inputs)
            if missing or status != "ok":
                gaps.append(name)
            rows.append((section, name, ", ".join(missing) or "-", status))
    return rows, gaps


def _time(fn, sync, repeat=10):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    sync()
    return (time.perf_counter() - start) / repeat * 1e3


def timings():
    import torch
    import minitorch as mt
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(0)
    rows = []

    def both(name, ours, theirs):
        t_ours = _time(ours, mt.cuda.synchronize)
        t_theirs = _time(theirs, torch.cuda.synchronize if dev == "cuda" else (lambda: None))
        rows.append({"op": name, "ours_ms": round(t_ours, 3), f"torch_{dev}_ms": round(t_theirs, 3)})

    x = rng.integers(0, 50, (4096, 1000))
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    both("mode 4096 rows x 1000 (int64)", lambda: a.mode(1), lambda: b.mode(1))
    x = rng.standard_normal((1024,)).astype(np.float32)
    i = rng.integers(0, 1024, (1 << 24,))
    s = rng.uniform(0.999, 1.001, (1 << 24,)).astype(np.float32)
    a, ia, sa = (mt.tensor(v, device="cuda") for v in (x, i, s))
    b, ib, sb = (torch.tensor(v, device=dev) for v in (x, i, s))
    for reduce in ("sum", "prod", "amax"):
        both(f"scatter_reduce {reduce} 16M -> 1024 (f32)", lambda: a.scatter_reduce(0, ia, sa, reduce),
             lambda: b.scatter_reduce(0, ib, sb, reduce))
    x = rng.integers(0, 3, (100_000, 4))
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    both("unique dim=0, 100k x 4 (int64)", lambda: a.unique(dim=0), lambda: torch.unique(b, dim=0))
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    a, b = mt.tensor(x, device="cuda"), torch.tensor(x, device=dev)
    ia, ib = mt.tensor(rng.permutation(4096)[:2048], device="cuda"), torch.tensor(rng.permutation(4096)[:2048], device=dev)
    va, vb = mt.ones(2048, 512, device="cuda"), torch.ones(2048, 512, device=dev)

    def write_ours():
        a[ia, 256:768] = va

    def write_theirs():
        b[ib, 256:768] = vb
    both("x[idx, 256:768] = v, 2048 x 512 (f32)", write_ours, write_theirs)
    both("x[idx, 256:768] read", lambda: a[ia, 256:768], lambda: b[ib, 256:768])
    return rows


def main():
    if "--names" in sys.argv:
        device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
        rows, gaps = audit_names(device)
        for row in rows:
            print(f"{row[0]:26s} {row[1]:24s} {row[2]:24s} {row[3]}")
        print(f"{len(rows)} names on {device}; {len(gaps)} gaps: {', '.join(gaps) or 'none'}")
        sys.exit(len(gaps))
    if "--kernels" in sys.argv:
        drive_kernels()
        return
    env = dict(os.environ, PYTHONPATH=f"{ROOT}:{os.environ.get('PYTHONPATH', '')}")
    steps = []

    def run(name, cmd):
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        print(f"== {name}: exit {r.returncode}\n" + "\n".join(tail), flush=True)
        steps.append({"step": name, "exit": r.returncode, "tail": tail})

    pytest = [sys.executable, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:randomly", "-o", "addopts=-p no:cacheprovider"]
    run("cuda tests (test_api_gaps.py)", pytest + ["tests/test_api_gaps.py"])
    run("cuda tests (test_inplace_autograd.py, test_api_audit.py)",
        pytest + ["tests/test_inplace_autograd.py", "tests/test_api_audit.py"])
    run("cuda tests (mode, unique, setitem, scatter in older files)",
        pytest + ["tests/test_ops_reduce_api.py", "tests/test_indexing.py", "tests/test_ops_shape_api.py",
                  "-k", "mode or unique or setitem or scatter or index_put"])
    for tool in ("memcheck", "racecheck"):
        run(f"compute-sanitizer {tool} (new kernels)",
            ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, __file__, "--kernels"])
    rows = timings()
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "check_api_gaps.json").write_text(json.dumps({"steps": steps, "timings": rows}, indent=1))
    print(f"\n{'step':58s} exit")
    for s in steps:
        print(f"{s['step']:58s} {s['exit']}")
    keys = list(rows[0])
    print(f"\n{keys[0]:42s} {keys[1]:>10s} {keys[2]:>14s}")
    for r in rows:
        print(f"{r[keys[0]]:42s} {r[keys[1]]:10.3f} {r[keys[2]]:14.3f}")


if __name__ == "__main__":
    main()
