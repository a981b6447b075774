"""Where the float32 GEMM loses to cuBLAS SGEMM by shape and layout (TF32 off on both sides): the
probes behind the dispatcher's few-tiles rule and the float32 4096² analysis (issue 10).

    python benchmarks/probe_gemm_shapes.py squares   # each tuned class's configuration and the dispatcher
    python benchmarks/probe_gemm_shapes.py split     # small squares, K cut into S = 1..8 slices, per class
    python benchmarks/probe_gemm_shapes.py layouts   # 4096² and 8192² in nn/nt/tn/tt; nn as transpose + tn
    python benchmarks/probe_gemm_shapes.py gpt       # nanoGPT's fp32 MLP GEMMs (16384 tokens, 384 <-> 1536)

--config NAME:KEY=V,KEY=V,... (repeatable) adds a rung 09 configuration (the keys of gemm.TUNED_DEFAULTS
["09_pipelined"], the rest at their defaults) to the layouts and gpt probes, timed beside the
large class's entry of tuned.json ("tuned"), e.g.
    --config k16:BM=128,BN=256,BK=16,WM=64,WN=64,TM=8,STAGES=3,KUNROLL=16,MIN_BLOCKS=1,LEAN=1

All print % of cuBLAS (torch.mm) timed in the same process, the contenders taking turns
(gemm_common.time_interleaved_ms: CUDA events, L2 flushed, median). Each takes under two minutes
on an H100. Logs of the 2026-11-25 runs: benchmarks/results/logs/s8-square_probe.log,
s8-smallsplit_probe.log, s8-layout_probe.log.

- squares: square nn products 128...8192 and a few others, run with the small, medium and large
  class's configuration of tuned.json and through the dispatcher (gemm._mm): which configuration
  wins where the class boundaries put another one.
- split: 256...1536 cubes as split-K with S slices (gemm._split_k: one strided-batched GEMM and a
  sum) for every class's configuration: a block sharing its SM runs at about half speed, and a
  slice count that leaves a rest of K costs a second GEMM launch (gemm.few_tiles_plan's rule).
- layouts: the large class's configuration in each layout; shared memory holds both tiles k-major,
  so an 'n' A or a 't' B is copied 4 bytes at a time, and 'nn' computed as one transpose of A
  (transpose.cu) then 'tn' shows what those copies cost. With --config, each configuration in each
  layout too, and a summary line per size: % of cuBLAS (same layout) for every contender and layout,
  "dispatch" included (gemm._mm: what matmul runs, the big products' configuration per layout included).
- gpt: the six GEMMs of nanoGPT's MLP (fc 384 -> 1536 and proj 1536 -> 384 over 16384 tokens:
  forward 'nt', dX 'nn', dW 'tn'), cuBLAS against the dispatcher (gemm._mm: split-K where few
  tiles), the tuned large entry and each --config.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import gemm_common as C  # noqa: E402


def configs(G):
    """{class: (rung, options)} of tuned.json's float32 entries for sm_90."""
    return {cls: (e["rung"], tuple(e["options"])) for cls, e in G.tuned_table()["sm_90"]["fp32"].items()}


def squares(torch, G, gen):
    shapes = [(s, s, s) for s in (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)]
    shapes += [(1024, 4096, 1024), (2048, 1024, 2048), (16384, 384, 1536), (16384, 1536, 384)]
    for m, n, k in shapes:
        a, b, _ = C.operands(m, n, k, "nn", "f32", gen=gen)
        da, db = C.wrap(a), C.wrap(b)
        fns = {"torch": lambda: torch.mm(a, b), "dispatch": lambda: G._mm(da, db, None)}
        for cls, (rung, options) in configs(G).items():
            fns[cls] = lambda rung=rung, options=options: G.gemm(da, db, None, rung=rung, options=options)
        ms = C.time_interleaved_ms(fns, 10)
        print(f"{m}x{n}x{k} [{G.shape_class(m, n, k)}] cuBLAS {2 * m * n * k / 1e6 / ms['torch']:7.0f} GFLOP/s | "
              + " ".join(f"{f} {ms['torch'] / ms[f]:6.1%}" for f in ms if f != "torch"), flush=True)


def split(torch, G, gen):
    for s in (256, 384, 512, 768, 1024, 1536):
        a, b, _ = C.operands(s, s, s, "nn", "f32", gen=gen)
        da, db = C.wrap(a), C.wrap(b)
        fns = {"torch": lambda: torch.mm(a, b)}
        for cls, (rung, options) in configs(G).items():
            fns[cls] = lambda rung=rung, options=options: G.gemm(da, db, None, rung=rung, options=options)
            for slices in (2, 3, 4, 6, 8):
                if s // slices >= 32:
                    fns[f"{cls}/S{slices}"] = (lambda rung=rung, options=options, slices=slices:
                                               G._split_k(da, db, None, slices, rung, options))
        ms = C.time_interleaved_ms(fns, 10)
        ranked = sorted(((ms["torch"] / v, f) for f, v in ms.items() if f != "torch"), reverse=True)
        print(f"{s}^3 cuBLAS {ms['torch'] * 1e3:6.1f} us | " + " ".join(f"{f} {r:5.1%}" for r, f in ranked), flush=True)


def contenders(G, extra):
    """{name: (rung, options)}: "tuned" (tuned.json's large fp32 entry), then each --config."""
    out = {"tuned": configs(G)["large"]}
    for name, config in extra:
        out[name] = ("09_pipelined", G.rung_with("09_pipelined", config).options)
    return out


def parse_config(text):
    """"NAME:KEY=V,KEY=V" -> (NAME, {KEY: int(V)})."""
    name, _, items = text.partition(":")
    return name, {k: int(v) for k, v in (kv.split("=") for kv in items.split(",") if kv)}


def layouts(torch, G, gen, extra=()):
    from minitorch.native.cuda.matrix import transpose2d
    rung, options = configs(G)["large"]
    others = {name: ro for name, ro in contenders(G, extra).items() if name != "tuned"}
    for n in (4096, 8192):
        fns, operands = {}, {}
        for lay in C.LAYOUTS:
            a, b, _ = C.operands(n, n, n, lay, "f32", gen=gen)
            operands[lay] = (C.wrap(a), C.wrap(b))
            fns[f"ours {lay}"] = lambda da=operands[lay][0], db=operands[lay][1]: G.gemm(da, db, None, rung=rung,
                                                                                         options=options)
            for name, (r, o) in others.items():
                fns[f"{name} {lay}"] = (lambda da=operands[lay][0], db=operands[lay][1], r=r, o=o:
                                        G.gemm(da, db, None, rung=r, options=o))
            # what matmul runs: gemm._mm (its big rule included: gemm.big_choice)
            fns[f"dispatch {lay}"] = lambda da=operands[lay][0], db=operands[lay][1]: G._mm(da, db, None)
            fns[f"cuBLAS {lay}"] = lambda a=a, b=b: torch.mm(a, b)
        da, db = operands["nn"]

        def nn_as_tn():
            at = transpose2d(da)                     # [K, M] contiguous: A read as a 't' operand
            return G.gemm(at.as_strided((n, n), (at.strides[1], at.strides[0])), db, None, rung=rung, options=options)
        fns["ours nn as transpose + tn"] = nn_as_tn
        fns["the transpose alone"] = lambda: transpose2d(da)
        ms = C.time_interleaved_ms(fns, 7)
        for f, v in ms.items():
            print(f"{n}^2 {f:28s} {v:8.3f} ms {2 * n ** 3 / 1e6 / v:8.0f} GFLOP/s  "
                  f"{ms['cuBLAS nn'] / v:6.1%} of cuBLAS nn", flush=True)
        for name in ["dispatch", "ours", *others]:
            print(f"{n}^2 % of cuBLAS in the same layout, {'tuned' if name == 'ours' else name}: "
                  + "  ".join(f"{lay} {ms[f'cuBLAS {lay}'] / ms[f'{name} {lay}']:6.1%}" for lay in C.LAYOUTS),
                  flush=True)
        if n == 4096:       # a timing says nothing of a wrong product: each contender against cuBLAS
            errs = {}
            for lay in C.LAYOUTS:
                ref = fns[f"cuBLAS {lay}"]().double()
                for name in ["dispatch", "ours", *others]:
                    got = C.to_torch(fns[f"{name} {lay}"]()).double()
                    errs[f"{name} {lay}"] = float((got - ref).norm() / ref.norm())
            worst = max(errs, key=errs.get)
            print(f"{n}^2 relative error against cuBLAS (fp32 both; expect ~1e-6): worst {worst} {errs[worst]:.1e}; "
                  + " ".join(f"{f} {e:.0e}" for f, e in errs.items()), flush=True)


def gpt(torch, G, gen, extra=()):
    tokens, d, h = 16384, 384, 1536
    shapes = [("fc fwd", tokens, h, d, "nt"), ("fc dX", tokens, d, h, "nn"), ("fc dW", h, d, tokens, "tn"),
              ("proj fwd", tokens, d, h, "nt"), ("proj dX", tokens, h, d, "nn"), ("proj dW", d, h, tokens, "tn")]
    named = contenders(G, extra)
    for what, m, n, k, lay in shapes:
        a, b, _ = C.operands(m, n, k, lay, "f32", gen=gen)
        da, db = C.wrap(a), C.wrap(b)
        fns = {"cuBLAS": lambda: torch.mm(a, b), "dispatch": lambda: G._mm(da, db, None)}
        for name, (r, o) in named.items():
            fns[name] = lambda r=r, o=o: G.gemm(da, db, None, rung=r, options=o)
        ms = C.time_interleaved_ms(fns, 10)
        print(f"gpt {what:8s} {m}x{n}x{k} {lay} cuBLAS {2 * m * n * k / 1e6 / ms['cuBLAS']:6.0f} GFLOP/s | "
              + " ".join(f"{f} {ms['cuBLAS'] / v:6.1%}" for f, v in ms.items() if f != "cuBLAS"), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("probe", choices=("squares", "split", "layouts", "gpt"))
    p.add_argument("--config", action="append", default=[], type=parse_config,
                   help="NAME:KEY=V,... a rung 09 configuration to time too (layouts, gpt); repeatable")
    args = p.parse_args(argv)
    torch, _cp, G, _suffix = C.cuda_modules()
    C.set_torch_tf32(torch, False)
    import minitorch
    minitorch.backends.cuda.matmul.allow_tf32 = False    # float32 on both sides: the dispatcher too
    gen = torch.Generator(device="cuda").manual_seed(0)
    if args.probe in ("layouts", "gpt"):
        {"layouts": layouts, "gpt": gpt}[args.probe](torch, G, gen, args.config)
    else:
        {"squares": squares, "split": split}[args.probe](torch, G, gen)


if __name__ == "__main__":
    main()
