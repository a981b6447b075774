"""One GPU call for rung 02 of the attention ladder (``minitorch/cuda/attention/02_flash_mma.cu``) and
its Hopper forward, rung 03 (``03_flash_wgmma.cu``, sm_90 only): check every compile-time configuration,
then time the ladder against PyTorch's SDPA in bfloat16.

1. Correctness, on fresh random data with every output poisoned (our allocator fills each block with
   0xFF bytes first, NaN in bf16/fp16, so an element left unwritten shows): the forward of each ladder
   step and tile size, and of rung 03's configurations (bf16; head dims 32, 64, 128, rung 03's 64 and
   128; L = 129 vs S = 1000 and causal L = S = 1000, plus
   L = 1 and 17) against a float64 NumPy reference, output and log-sum-exp; the backward (bf16 and
   fp16) against float64 gradients. Errors: relative Frobenius error and the largest element error
   over the largest reference value. A configuration that fails is still timed, marked WRONG.
2. Timing, bf16, 16384 tokens (B = 16384 / L) and 2048 channels (H = 2048 / d), L = S in 512..8192,
   d 64 and 128, causal and not: the forward of each ladder step (baseline, swizzle, double buffer,
   exp2/FMA, then the best tile size; rung 03 tuned (TMA, warp-specialized), that pipelined, and the
   cp.async kernel, with BKV 64, pipelined, with 3 warpgroups), and forward + backward of the default configuration, against
   torch SDPA's flash backend and cuDNN's (when present). CUDA events around each call, L2 flushed
   (a 256 MB write) before each, median of the repeats. Our kernels are called on raw arrays
   (minitorch.native.cuda), torch through F.scaled_dot_product_attention.
   TFLOP/s: forward 4 B H L S d (x 0.5 causal), forward + backward 3.5 times that.
A failing case prints its error and the run goes on. JSON goes to $OUT/probe_flash_mma.json (or
benchmarks/results/), a short table is printed last. About 1-3 minutes on an H100 (mostly NVRTC
compiling one module per configuration).

``--backward`` checks and times the two backward paths only (issue 15's shape: B = 4, H = 8, L = S
in 1024 and 4096, d 64 and 128, causal and not): the one-pass kernel (dQ by float32 atomics, the
default, and compiled with 64 and with 128 keys per block, config ONEPASS_KEYS) and the deterministic two-kernel
one, each as forward + backward, against torch's flash backend; the ratio is torch's milliseconds
over ours (>= 1: we are faster). About 30 s.

    python benchmarks/probe_flash_mma.py [--quick | --rungs-only | --backward] [--no-tma]
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
from gemm_common import poisoned, time_ms  # noqa: E402

import ml_dtypes  # noqa: E402
import torch  # noqa: E402

DEADLINE_S = 210            # stop starting new timings after this (the whole call must stay < ~4 min)
TOKENS, CHANNELS = 16384, 2048
HALF = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
TOL = {"bfloat16": (2e-2, 5e-2), "float16": (5e-3, 1.5e-2)}   # (relative Frobenius, max element / max |ref|)
T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


# ---- references ---------------------------------------------------------------------------------
def reference(q, k, v, w, scale, causal):
    """float64 output, natural log-sum-exp and gradients of sum(out * w); q [BH, L, d], k, v [BH, S, d]."""
    s = q @ k.transpose(0, 2, 1) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    lse = np.log(np.exp(s - mx).sum(-1)) + mx[..., 0]
    p = np.exp(s - lse[..., None])
    out = p @ v
    dp = w @ v.transpose(0, 2, 1)
    ds = p * (dp - (w * out).sum(-1, keepdims=True))
    return out, lse, ds @ k * scale, ds.transpose(0, 2, 1) @ q * scale, p.transpose(0, 2, 1) @ w


def errors(ours, ref):
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    if not np.isfinite(ours).all():
        return float("inf"), float("inf")
    frob = np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-12)
    return float(frob), float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12))


def rounded(rng, shape, dtype, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(HALF[dtype]).astype(np.float64)


def to_dev(x, dtype):
    from minitorch.cuda.array import from_numpy
    return from_numpy(np.ascontiguousarray(x.astype(HALF[dtype])), 0)


def to_numpy(a):
    from minitorch.cuda.array import to_numpy as host
    return host(a)


CHECK_SHAPES = [(3, 129, 1000, False), (2, 1000, 1000, True), (2, 1, 17, False), (2, 17, 17, True)]


def check_forward(N, name, config, rng, rung=2, dims=(32, 64, 128)):
    worst = {"frob": 0.0, "max": 0.0, "lse": 0.0, "failures": []}
    for d in dims:
        for bh, L, S, causal in CHECK_SHAPES:
            q, k, v = (rounded(rng, (bh, n, d), "bfloat16") for n in (L, S, S))
            scale = 1 / np.sqrt(d)
            out, lse = N.flash_attention_mma(to_dev(q, "bfloat16"), to_dev(k, "bfloat16"), to_dev(v, "bfloat16"),
                                             scale, causal, config, rung=rung)
            r_out, r_lse = reference(q, k, v, np.zeros_like(q), scale, causal)[:2]
            frob, mx = errors(to_numpy(out), r_out)
            lse_err = float(np.abs(to_numpy(lse) - r_lse).max()) if np.isfinite(to_numpy(lse)).all() else float("inf")
            worst["frob"], worst["max"], worst["lse"] = max(worst["frob"], frob), max(worst["max"], mx), max(worst["lse"], lse_err)
            if frob > TOL["bfloat16"][0] or mx > TOL["bfloat16"][1] or lse_err > 1e-2:
                worst["failures"].append(f"d={d} BH={bh} L={L} S={S} causal={causal}: frob {frob:.2e} "
                                         f"max {mx:.2e} lse {lse_err:.2e}")
    worst["ok"] = not worst["failures"]
    log(f"forward {name:14s} {'ok' if worst['ok'] else 'WRONG'}  frob {worst['frob']:.2e} max {worst['max']:.2e} "
        f"lse {worst['lse']:.2e}", *worst["failures"][:4])
    return worst


def check_backward(N, dtype, rng, deterministic=False, config=None):
    worst = {"failures": []}
    for d in (32, 64, 128):
        for bh, L, S, causal in CHECK_SHAPES:
            q, k, v = (rounded(rng, (bh, n, d), dtype) for n in (L, S, S))
            w = rounded(rng, (bh, L, d), dtype, -1, 1)
            scale = 1 / np.sqrt(d)
            dq_, dk_, dv_ = (to_dev(x, dtype) for x in (q, k, v))
            out, lse = N.flash_attention_mma(dq_, dk_, dv_, scale, causal)
            grads = N.flash_attention_mma_backward(dq_, dk_, dv_, out, lse, to_dev(w, dtype), scale, causal,
                                                   deterministic, config)
            ref = reference(q, k, v, w, scale, causal)
            for gname, g, r in zip(("dq", "dk", "dv"), grads, ref[2:]):
                frob, mx = errors(to_numpy(g), r)
                worst[gname] = max(worst.get(gname, 0.0), frob)
                if frob > 1.5 * TOL[dtype][0] or mx > 1.5 * TOL[dtype][1]:
                    worst["failures"].append(f"{gname} d={d} BH={bh} L={L} S={S} causal={causal}: "
                                             f"frob {frob:.2e} max {mx:.2e}")
    worst["ok"] = not worst["failures"]
    path = "deterministic" if deterministic else f"one-pass {config or ''}"
    log(f"backward {dtype:9s} {path} {'ok' if worst['ok'] else 'WRONG'}",
        {k: f"{v:.2e}" for k, v in worst.items() if k in ("dq", "dk", "dv")}, *worst["failures"][:4])
    return worst


def _dims(rung, config):
    """The head dimensions a rung's configuration has kernels for."""
    return (32, 64, 128) if rung == 2 else (64,) if config.get("NWG") == 3 else (64, 128)


def check_all(N, record, configs, tiles, rng, wgmma=None):
    """Every forward configuration (rung 02's, then rung 03's in ``wgmma``: name -> options) and both
    backward dtypes against the references (record["check"])."""
    runs = ([(n, c, 2) for n, c in list(configs.items()) + list(tiles.items())]
            + [(n, c, 3) for n, c in (wgmma or {}).items()])
    for name, cfg, rung in runs:
        try:
            record["check"][f"fwd {name}"] = check_forward(N, name, cfg, rng, rung, _dims(rung, cfg))
        except Exception as e:                       # noqa: BLE001 - one failure must not stop the rest
            record["check"][f"fwd {name}"] = {"ok": False, "failures": [repr(e)]}
            log(f"forward {name}: ERROR", repr(e)); traceback.print_exc()
    for dtype in HALF:
        try:
            record["check"][f"bwd {dtype}"] = check_backward(N, dtype, rng)
        except Exception as e:                       # noqa: BLE001
            record["check"][f"bwd {dtype}"] = {"ok": False, "failures": [repr(e)]}
            log(f"backward {dtype}: ERROR", repr(e)); traceback.print_exc()


# ---- timing -------------------------------------------------------------------------------------
def flops(bh, L, d, causal, backward):
    f = 4 * bh * L * L * d * (0.5 if causal else 1.0)
    return f * 3.5 if backward else f


BWD_B, BWD_H = 4, 8            # issue 15's shape


def backward_paths(N, rng):
    """--backward: both backward paths checked (bf16, fp16) then timed as forward + backward against
    torch's flash backend; returns the record."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    record = {"probe": "flash_mma --backward", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "B": BWD_B, "H": BWD_H, "timing": "CUDA events, L2 flushed, median of 10 after 3", "check": {},
              "rows": []}
    with poisoned():
        paths = {"one-pass": (False, None), "one-pass k64": (False, {"ONEPASS_KEYS": 64}),
                 "one-pass k128": (False, {"ONEPASS_KEYS": 128}),
                 "deterministic": (True, None)}
        for dtype in HALF:
            for path, (det, config) in paths.items():
                name = f"bwd {dtype} {path}"
                try:
                    record["check"][name] = check_backward(N, dtype, rng, det, config)
                except Exception as e:           # noqa: BLE001 - one failure must not stop the rest
                    record["check"][name] = {"ok": False, "failures": [repr(e)]}
                    log(f"{name}: ERROR", repr(e)); traceback.print_exc()
    print(f"\nbf16, B {BWD_B} H {BWD_H}, ms (ratio = torch flash ms / ours: >= 1 means we are faster)")
    print("fb_1pass: one-pass backward (default: keys per block NA.ONEPASS_KEYS[d]), fb_k64 / fb_k128: 64 or 128 "
          "keys per block (4 or 8 warps), fb_det: deterministic; t_: torch flash; bwd = fb - fwd")
    print(f"{'d':>3} {'causal':>6} {'L':>5} | {'fwd':>6} {'t_fwd':>6} | {'fb_1pass':>8} {'fb_k64':>7} {'fb_k128':>7} "
          f"{'fb_det':>7} {'t_fb':>6} | {'bwd_1pass':>9} {'bwd_det':>7} {'t_bwd':>6} | {'r_fb_1pass':>10} "
          f"{'r_fb_det':>8} {'r_bwd_1pass':>11}")
    bh = BWD_B * BWD_H
    for d in (64, 128):
        for causal in (False, True):
            for L in (1024, 4096):
                q, k, v, g = (minitorch.randn(bh, L, d, device="cuda", dtype=minitorch.bfloat16)._data
                              for _ in range(4))
                tl = [torch.randn(BWD_B, BWD_H, L, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                      for _ in range(3)]
                tg = torch.randn_like(tl[0])
                scale = 1 / d ** 0.5

                def ours_fb(det, config=None):
                    out, lse = N.flash_attention_mma(q, k, v, scale, causal)
                    N.flash_attention_mma_backward(q, k, v, out, lse, g, scale, causal, det, config)

                def torch_fwd():
                    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.no_grad():
                        torch.nn.functional.scaled_dot_product_attention(*tl, is_causal=causal)

                def torch_fb():
                    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                        out = torch.nn.functional.scaled_dot_product_attention(*tl, is_causal=causal)
                    out.backward(tg)
                    for t in tl:
                        t.grad = None
                ms = {"fwd": time_ms(lambda: N.flash_attention_mma(q, k, v, scale, causal)),
                      "t_fwd": time_ms(torch_fwd), "fb_1pass": time_ms(lambda: ours_fb(False)),
                      "fb_k64": time_ms(lambda: ours_fb(False, {"ONEPASS_KEYS": 64})),
                      "fb_k128": time_ms(lambda: ours_fb(False, {"ONEPASS_KEYS": 128})),
                      "fb_det": time_ms(lambda: ours_fb(True)), "t_fb": time_ms(torch_fb)}
                ms.update(bwd_1pass=ms["fb_1pass"] - ms["fwd"], bwd_det=ms["fb_det"] - ms["fwd"],
                          t_bwd=ms["t_fb"] - ms["t_fwd"])
                ratios = {"r_fb_1pass": ms["t_fb"] / ms["fb_1pass"], "r_fb_det": ms["t_fb"] / ms["fb_det"],
                          "r_bwd_1pass": ms["t_bwd"] / ms["bwd_1pass"]}
                record["rows"].append({"d": d, "causal": causal, "L": L, "ms": ms, "ratios": ratios})
                print(f"{d:>3} {str(causal):>6} {L:>5} | {ms['fwd']:6.2f} {ms['t_fwd']:6.2f} | {ms['fb_1pass']:8.2f} "
                      f"{ms['fb_k64']:7.2f} {ms['fb_k128']:7.2f} {ms['fb_det']:7.2f} {ms['t_fb']:6.2f} | "
                      f"{ms['bwd_1pass']:9.2f} {ms['bwd_det']:7.2f} {ms['t_bwd']:6.2f} | {ratios['r_fb_1pass']:10.2f} "
                      f"{ratios['r_fb_det']:8.2f} {ratios['r_bwd_1pass']:11.2f}", flush=True)
    print("\ncorrectness:", ", ".join(f"{k} {'ok' if v.get('ok') else 'WRONG'}" for k, v in record["check"].items()))
    return record


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="L 1024 and 4096 only")
    p.add_argument("--no-tma", action="store_true", help="leave out rung 03's TMA variant")
    p.add_argument("--rungs-only", action="store_true",
                   help="L 4096 only, rung 02's tuned forward (no ladder steps or tiles), rung 03 and torch")
    p.add_argument("--backward", action="store_true", help="only the two backward paths against torch flash")
    args = p.parse_args()
    if not (minitorch.cuda.is_available() and torch.cuda.is_available()):
        sys.exit("probe_flash_mma needs CuPy, a CUDA GPU and a CUDA build of PyTorch")
    from minitorch.native import cuda as N
    out_dir = Path(os.environ.get("OUT") or Path(__file__).resolve().parent / "results")
    if args.backward:
        record = backward_paths(N, np.random.default_rng(int(time.time())))
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "probe_flash_mma_backward.json").write_text(json.dumps(record, indent=1, default=str))
        return
    from minitorch.native.cuda import attention as NA
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch_backends = {"torch_flash": SDPBackend.FLASH_ATTENTION}
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        torch_backends["torch_cudnn"] = SDPBackend.CUDNN_ATTENTION
    configs = dict(NA.LADDER)
    tiles = {f"tiles_{bq}x{bkv}": dict(NA.TUNED, BQ=bq, BKV=bkv) for bq, bkv in NA.TILE_CHOICES}
    if args.rungs_only:
        configs, tiles = {"tuned": NA.TUNED}, {}
    # rung 03 (wgmma, sm_90 only): tuned (TMA, warp-specialized) and the cp.async kernel's configurations
    hopper = torch.cuda.get_device_capability() == (9, 0)
    tuned, cp_async = dict(NA.WGMMA_TUNED), dict(NA.WGMMA_TUNED, TMA=0)
    wgmma = {"wgmma": tuned, "wgmma_tma_pipelined": dict(tuned, TMA=1, PIPELINE=1),
             "wgmma_cp_async": cp_async, "wgmma_bkv64": dict(cp_async, BKV=64),
             "wgmma_pipelined": dict(cp_async, PIPELINE=1), "wgmma_192": dict(cp_async, NWG=3)} if hopper else {}
    if args.no_tma:
        wgmma = {k: v for k, v in wgmma.items() if not v["TMA"]}
    record = {"probe": "flash_mma", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "ladder": {k: v for k, v in NA.LADDER}, "tiles": tiles, "tuned": NA.TUNED,
              "tokens": TOKENS, "channels": CHANNELS, "timing": "CUDA events, L2 flushed, median of 9 after 2",
              "flops": "forward 4 B H L^2 d (x0.5 causal); fwd+bwd 3.5x", "check": {}, "rows": []}

    # 1. correctness
    rng = np.random.default_rng(int(time.time()))
    with poisoned():
        check_all(N, record, configs, tiles, rng, wgmma)

    # 2. timing
    lengths = [4096] if args.rungs_only else [1024, 4096] if args.quick else [512, 1024, 2048, 4096, 8192]
    for d in (128, 64):
        for causal in (False, True):
            for L in lengths:
                B, H = TOKENS // L, CHANNELS // d
                bh = B * H
                row = {"d": d, "causal": causal, "L": L, "B": B, "H": H}
                try:
                    tq, tk, tv = (torch.randn(B, H, L, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                    q, k, v = (minitorch.randn(bh, L, d, device="cuda", dtype=minitorch.bfloat16)._data
                               for _ in range(3))
                except Exception as e:               # noqa: BLE001
                    log(f"d={d} causal={causal} L={L}: setup failed", repr(e))
                    continue
                scale = 1 / d ** 0.5
                cases = {f"fwd {n}": (lambda c=c: N.flash_attention_mma(q, k, v, scale, causal, c))
                         for n, c in list(configs.items()) + list(tiles.items())}
                cases.update({f"fwd {n}": (lambda c=c: N.flash_attention_mma(q, k, v, scale, causal, c, rung=3))
                              for n, c in wgmma.items()})
                for n, be in torch_backends.items():
                    def run(be=be):
                        with sdpa_kernel(be):
                            torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
                    cases[f"fwd {n}"] = run
                g = minitorch.ones(bh, L, d, device="cuda", dtype=minitorch.bfloat16)._data

                def ours_fb():
                    out, lse = N.flash_attention_mma(q, k, v, scale, causal)
                    N.flash_attention_mma_backward(q, k, v, out, lse, g, scale, causal)
                cases["fwdbwd tuned"] = ours_fb
                tl = [t.detach().clone().requires_grad_(True) for t in (tq, tk, tv)]
                tg = torch.ones_like(tq)
                for n, be in torch_backends.items():
                    def run_fb(be=be):
                        with sdpa_kernel(be):
                            out = torch.nn.functional.scaled_dot_product_attention(*tl, is_causal=causal)
                        out.backward(tg)
                        for t in tl:
                            t.grad = None
                    cases[f"fwdbwd {n}"] = run_fb
                for name, fn in cases.items():
                    if time.time() - T0 > DEADLINE_S:
                        row[name] = {"skipped": "time budget"}
                        continue
                    try:
                        ms = time_ms(fn)
                        row[name] = {"ms": ms, "TFLOPs": flops(bh, L, d, causal, name.startswith("fwdbwd")) / ms / 1e9}
                    except Exception as e:           # noqa: BLE001
                        row[name] = {"error": repr(e)[:300]}
                record["rows"].append(row)
                log(f"d={d} causal={causal} L={L}:", " ".join(
                    f"{n.split()[-1]}={r['TFLOPs']:.0f}" for n, r in row.items() if isinstance(r, dict) and "TFLOPs" in r))
                torch.cuda.empty_cache()

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "probe_flash_mma.json").write_text(json.dumps(record, indent=1, default=str))
    print_table(record, configs, tiles)
    log("wrote", out_dir / "probe_flash_mma.json")


WGMMA_ROWS = ("wgmma", "wgmma_tma_pipelined", "wgmma_cp_async", "wgmma_bkv64", "wgmma_pipelined", "wgmma_192")


def print_table(record, configs, tiles):
    print("\ncorrectness:", ", ".join(f"{k} {'ok' if v.get('ok') else 'WRONG'}" for k, v in record["check"].items()))
    tf = lambda r, key: f"{r[key]['TFLOPs']:6.0f}" if "TFLOPs" in r.get(key, {}) else "     -"
    ratio = lambda r, a, b: (f"{r[a]['TFLOPs'] / r[b]['TFLOPs']:5.2f}x" if "TFLOPs" in r.get(a, {}) and "TFLOPs" in r.get(b, {})
                             else "     -")
    steps = list(configs)
    print("\nbf16 TFLOP/s (forward: rung 02's ladder steps, its best tile, rung 03 (wgmma: tuned "
          "= TMA; TMA pipelined; the cp.async kernel, with BKV 64, pipelined, 3 warpgroups), torch; fwd+bwd: ours default vs torch)")
    print(f"{'d':>3} {'causal':>6} {'L':>5} | " + " ".join(f"{s[:6]:>6}" for s in steps)
          + " | best_tile      |  wgmma w_tmap w_cpas  w_b64 w_pipe  w_192 | t_flash t_cudnn 03/fla || fb_ours fb_flash fb_cudnn")
    for r in record["rows"]:
        best = max(((r[f"fwd {t}"]["TFLOPs"], t) for t in tiles if "TFLOPs" in r.get(f"fwd {t}", {})), default=None)
        best_s = f"{best[0]:6.0f} {best[1][6:]:>7}" if best else "     -        "
        print(f"{r['d']:>3} {str(r['causal']):>6} {r['L']:>5} | " + " ".join(tf(r, f"fwd {s}") for s in steps)
              + f" | {best_s} | " + " ".join(tf(r, f"fwd {w}") for w in WGMMA_ROWS)
              + f" | {tf(r, 'fwd torch_flash')}  {tf(r, 'fwd torch_cudnn')} {ratio(r, 'fwd wgmma', 'fwd torch_flash')} || "
              + f"{tf(r, 'fwdbwd tuned')}  {tf(r, 'fwdbwd torch_flash')}   {tf(r, 'fwdbwd torch_cudnn')}")


if __name__ == "__main__":
    main()
