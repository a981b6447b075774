"""One GPU call for the float32 rungs of the attention ladder: rung 1 (``01_flash_fp32.cu``), rung 1b
(``01b_flash_fp32_tiled.cu``, register-tiled FFMA forward and backward) and rung 1c
(``01c_flash_fp32_3xtf32.cu``, forward and backward on TF32 tensor cores as 3xTF32),
checked, then timed against PyTorch's SDPA memory-efficient and math backends (issue 15's float32
target: >= 1.0x the efficient backend, which runs 3xTF32 on the tensor cores on sm_80+).

1. Correctness, outputs poisoned (NaN bytes: an unwritten element shows): each rung's output and
   log-sum-exp against float64 NumPy on ragged shapes (L, S in {1, 65, 129, 300, 513}, head dims 32,
   64, 128, causal and not, BH > 1), beside torch efficient's on the same inputs and rung 1c with one
   TF32 mma per product (plain TF32: what 3xTF32 buys); then, at L = 512, each rung's output and
   gradients (its own forward and backward) against torch's math backend (float32, TF32 off).
2. Timing, float32, TF32 off on both sides, B = 4, H = 8 (as bench_attention.py), L = S in
   512..4096, d 64 and 128, causal and not: the forward of rung 1, rung 1b, rung 1c, torch efficient,
   torch math; forward + backward of rung 1, rung 1b, rung 1c (its one-pass backward, and 3x_det: its
   deterministic one) and torch efficient.
   CUDA events, L2 flushed before each call, median of the repeats. Ours runs on raw arrays
   (minitorch.native.cuda), torch through F.scaled_dot_product_attention under sdpa_kernel.
   TFLOP/s: forward 4 B H L S d (x 0.5 causal), forward + backward 3.5 times that.
JSON to $OUT/probe_flash_fp32.json (or benchmarks/results/), a table last. About a minute on an H100.

    python benchmarks/probe_flash_fp32.py [--quick] [--deadline SECONDS]
"""
import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import minitorch  # noqa: E402
from gemm_common import poisoned, set_torch_tf32, time_ms  # noqa: E402
from bench_attention import flops  # noqa: E402  (B, H = 4, 8 there too)

import torch  # noqa: E402

B, H = 4, 8
DEADLINE_S = 80             # stop starting new timings after this (--deadline): the call stays under ~90 s
T0 = time.time()
#          BH   L    S    causal
CHECKS = [(3, 1, 65, False), (2, 65, 65, True), (3, 129, 300, False), (2, 300, 129, False),
          (2, 300, 300, True), (2, 513, 513, True)]


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def reference(q, k, v, scale, causal):
    """float64 output and natural log-sum-exp; q [BH, L, d], k, v [BH, S, d]."""
    s = np.einsum("bld,bsd->bls", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - mx)
    return e / e.sum(-1, keepdims=True) @ v, (mx + np.log(e.sum(-1, keepdims=True)))[..., 0]


def max_error(ours, ref):
    ours = np.asarray(ours, np.float64)
    return float("inf") if not np.isfinite(ours).all() else float(np.abs(ours - ref).max())


# name -> flash_attention's keywords; 1xtf32 (plain TF32) is shown, not held to float32's tolerance
RUNGS = {"3xtf32": {}, "tiled": {"tensor_cores": False}, "rung1": {"tiled": False}, "1xtf32": {"tf32_terms": 1}}
# backward variants: name -> (forward rung, flash_attention_backward's extra keywords); 3xtf32's backward
# is the one pass (dq by atomics), 3x_det the deterministic dK/dV then dQ
BACKWARDS = {"3xtf32": ("3xtf32", {}), "3x_det": ("3xtf32", {"deterministic": True}), "tiled": ("tiled", {}),
             "rung1": ("rung1", {})}


def rung_keywords(name):
    return RUNGS.get(name, {})


def backward_keywords(name):
    rung, extra = BACKWARDS[name]
    return {**rung_keywords(rung), **extra}


def torch_efficient(q, k, v, scale, causal):
    """torch's memory-efficient SDPA (float32, TF32 off) of float32 NumPy [BH, L, d] arrays, as float64."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    tq, tk, tv = (torch.tensor(x, device="cuda")[None] for x in (q, k, v))
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale)
    return out[0].double().cpu().numpy()


def check_rungs(NA, array, rng):
    """Largest |error| of each rung's output and lse (and torch efficient's output) over CHECKS and
    head dims, one line per case; failures listed."""
    worst = {name: {"out": 0.0, "lse": 0.0} for name in RUNGS}
    worst["torch_efficient"], worst["failures"] = {"out": 0.0}, []
    log("max |error| vs float64 (out / lse), float32 inputs:")
    for d in (32, 64, 128):
        for bh, L, S, causal in CHECKS:
            q = 2 * rng.uniform(-2, 2, (bh, L, d))
            k, v = (rng.uniform(-2, 2, (bh, S, d)) for _ in range(2))
            q, k, v = (x.astype(np.float32) for x in (q, k, v))
            scale = 1 / np.sqrt(d)
            want, want_lse = reference(*(x.astype(np.float64) for x in (q, k, v)), scale, causal)
            dev = [array.from_numpy(x, 0) for x in (q, k, v)]
            line = []
            for name in RUNGS:
                out, lse = NA.flash_attention(*dev, scale, causal, **rung_keywords(name))
                e_out, e_lse = max_error(array.to_numpy(out), want), max_error(array.to_numpy(lse), want_lse)
                worst[name]["out"] = max(worst[name]["out"], e_out)
                worst[name]["lse"] = max(worst[name]["lse"], e_lse)
                line.append(f"{name} {e_out:.1e}/{e_lse:.1e}")
                if name != "1xtf32" and not (e_out < 1e-4 and e_lse < 1e-4):
                    worst["failures"].append(f"{name} d={d} BH={bh} L={L} S={S} causal={causal}: "
                                             f"out {e_out:.2e} lse {e_lse:.2e}")
            e_torch = max_error(torch_efficient(q, k, v, scale, causal), want)
            worst["torch_efficient"]["out"] = max(worst["torch_efficient"]["out"], e_torch)
            log(f"  d={d:3d} BH={bh} L={L:3d} S={S:3d} causal={causal!s:5s}:", " ".join(line),
                f"torch_efficient {e_torch:.1e}")
    worst["ok"] = not worst["failures"]
    log("rungs vs float64:", "ok" if worst["ok"] else "WRONG",
        {k: v for k, v in worst.items() if k not in ("failures", "ok")}, *worst["failures"][:6])
    return worst


def check_against_torch(NA, array, d, causal):
    """Max |ours - torch math| (float32, TF32 off) at B = 2, H = 4, L = 512: each rung's output and
    gradients of sum(out)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    tq, tk, tv = (torch.randn(8, 512, d, device="cuda", requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.MATH):
        ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    ref.sum().backward()
    q, k, v = (array.from_numpy(t.detach().cpu().numpy(), 0) for t in (tq, tk, tv))
    scale = 1 / d ** 0.5
    g = array.from_numpy(np.ones((8, 512, d), np.float32), 0)
    errs = {}
    for rung in BACKWARDS:
        out, lse = NA.flash_attention(q, k, v, scale, causal, **rung_keywords(BACKWARDS[rung][0]))
        grads = NA.flash_attention_backward(q, k, v, out, lse, g, scale, causal, **backward_keywords(rung))
        errs[f"{rung} out"] = max_error(array.to_numpy(out), ref.detach().cpu().numpy())
        for name, ours, t in zip(("dq", "dk", "dv"), grads, (tq, tk, tv)):
            errs[f"{rung} {name}"] = max_error(array.to_numpy(ours), t.grad.cpu().numpy())
    errs["ok"] = all(e < (1e-4 if k.endswith("out") else 1e-3) for k, e in errs.items())
    log(f"vs torch math d={d} causal={causal}:", "ok" if errs["ok"] else "WRONG", errs)
    return errs


def cases(NA, L, d, causal):
    """name -> closure running it once: our rungs on raw arrays, torch's backends on tensors."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q, k, v = (minitorch.randn(B * H, L, d, device="cuda")._data for _ in range(3))
    g = minitorch.ones(B * H, L, d, device="cuda")._data
    tq, tk, tv = (torch.randn(B, H, L, d, device="cuda") for _ in range(3))
    tl = [t.clone().requires_grad_(True) for t in (tq, tk, tv)]
    tg = torch.ones_like(tq)
    scale = 1 / d ** 0.5

    def ours_fwd(rung):
        def run():
            NA.flash_attention(q, k, v, scale, causal, **rung_keywords(rung))
        return run

    def ours_fb(rung):
        def run():
            out, lse = NA.flash_attention(q, k, v, scale, causal, **rung_keywords(BACKWARDS[rung][0]))
            NA.flash_attention_backward(q, k, v, out, lse, g, scale, causal, **backward_keywords(rung))
        return run

    def torch_fwd(be):
        def run():
            with sdpa_kernel(be):
                sdpa(tq, tk, tv, is_causal=causal)
        return run

    def torch_fb():
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            out = sdpa(*tl, is_causal=causal)
        out.backward(tg)
        for t in tl:
            t.grad = None
    return {"fwd rung1": ours_fwd("rung1"),
            "fwd tiled": ours_fwd("tiled"),
            "fwd 3xtf32": ours_fwd("3xtf32"),
            "fwd torch_efficient": torch_fwd(SDPBackend.EFFICIENT_ATTENTION),
            "fwd torch_math": torch_fwd(SDPBackend.MATH),
            "fwdbwd rung1": ours_fb("rung1"),
            "fwdbwd tiled": ours_fb("tiled"),
            "fwdbwd 3xtf32": ours_fb("3xtf32"),
            "fwdbwd 3x_det": ours_fb("3x_det"),
            "fwdbwd torch_efficient": torch_fb}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="L 4096 and 1024 only, d 128 first")
    p.add_argument("--deadline", type=float, default=DEADLINE_S, help="seconds after which no timing starts")
    args = p.parse_args()
    if not (minitorch.cuda.is_available() and torch.cuda.is_available()):
        sys.exit("probe_flash_fp32 needs CuPy, a CUDA GPU and a CUDA build of PyTorch")
    from minitorch.cuda import array
    from minitorch.native.cuda import attention as NA
    log("rung 1c runs here (d 32 / 64 / 128):", [NA._has_3xtf32(d, 0) for d in (32, 64, 128)])
    record = {"probe": "flash_fp32", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "tf32": set_torch_tf32(torch, False), "batch": B, "heads": H,
              "timing": "CUDA events, L2 flushed, median of 10 after 3",
              "flops": "forward 4 B H L^2 d (x0.5 causal); fwd+bwd 3.5x", "check": {}, "rows": []}

    # 1. correctness
    rng = np.random.default_rng(int(time.time()))
    with poisoned():
        try:
            record["check"]["rungs"] = check_rungs(NA, array, rng)
        except Exception as e:                       # noqa: BLE001 - a failure must not stop the timing
            record["check"]["rungs"] = {"ok": False, "failures": [repr(e)]}
            log("rungs: ERROR", repr(e)); traceback.print_exc()
        for d in (64, 128):
            for causal in (False, True):
                key = f"torch d{d}{' causal' if causal else ''}"
                try:
                    record["check"][key] = check_against_torch(NA, array, d, causal)
                except Exception as e:               # noqa: BLE001
                    record["check"][key] = {"ok": False, "error": repr(e)}
                    log("vs torch: ERROR", repr(e)); traceback.print_exc()

    # 2. timing
    # --quick: issue 15's headline shape (d 128, L 4096) first, in case the deadline cuts the sweep
    lengths = [4096, 1024] if args.quick else [512, 1024, 2048, 4096]
    for d in ((128, 64) if args.quick else (64, 128)):
        for causal in (False, True):
            for L in lengths:
                row = {"d": d, "causal": causal, "L": L}
                for name, fn in cases(NA, L, d, causal).items():
                    if time.time() - T0 > args.deadline:
                        row[name] = {"skipped": "time budget"}
                        continue
                    try:
                        ms = time_ms(fn)
                        row[name] = {"ms": ms, "TFLOPs": flops(L, d, causal, name.startswith("fwdbwd")) / ms / 1e9}
                    except Exception as e:           # noqa: BLE001
                        row[name] = {"error": repr(e)[:300]}
                record["rows"].append(row)
                log(f"d={d} causal={causal} L={L}:", " ".join(
                    f"{n}={r['TFLOPs']:.1f}" for n, r in row.items() if isinstance(r, dict) and "TFLOPs" in r))
                torch.cuda.empty_cache()

    out_dir = Path(os.environ.get("OUT") or Path(__file__).resolve().parent / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "probe_flash_fp32.json").write_text(json.dumps(record, indent=1, default=str))
    print_table(record)
    log("wrote", out_dir / "probe_flash_fp32.json")


def print_table(record):
    print("\ncorrectness:", ", ".join(f"{k} {'ok' if v.get('ok') else 'WRONG'}" for k, v in record["check"].items()))
    tf = lambda r, key: f"{r[key]['TFLOPs']:7.1f}" if "TFLOPs" in r.get(key, {}) else "      -"

    def ratio(r, a, b):
        if "TFLOPs" in r.get(a, {}) and "TFLOPs" in r.get(b, {}):
            return f"{r[a]['TFLOPs'] / r[b]['TFLOPs']:6.2f}x"
        return "      -"
    print("\nfloat32 TFLOP/s, TF32 off (ratios: rung 1c (3xtf32) and rung 1b (tiled) / torch efficient)")
    print(f"{'d':>3} {'causal':>6} {'L':>5} |   rung1   tiled  3xtf32 t_effic  t_math  1c/eff  1b/eff "
          f"||   rung1   tiled  3xtf32  3x_det t_effic  1c/eff det/eff  1b/eff  (forward + backward; 3x_det: "
          f"rung 1c's deterministic backward)")
    for r in record["rows"]:
        fwd = " ".join(tf(r, f"fwd {n}") for n in ("rung1", "tiled", "3xtf32", "torch_efficient", "torch_math"))
        fb = " ".join(tf(r, f"fwdbwd {n}") for n in ("rung1", "tiled", "3xtf32", "3x_det", "torch_efficient"))
        print(f"{r['d']:>3} {str(r['causal']):>6} {r['L']:>5} | {fwd} "
              f"{ratio(r, 'fwd 3xtf32', 'fwd torch_efficient')} {ratio(r, 'fwd tiled', 'fwd torch_efficient')} || {fb} "
              f"{ratio(r, 'fwdbwd 3xtf32', 'fwdbwd torch_efficient')} {ratio(r, 'fwdbwd 3x_det', 'fwdbwd torch_efficient')} "
              f"{ratio(r, 'fwdbwd tiled', 'fwdbwd torch_efficient')}")


if __name__ == "__main__":
    main()
