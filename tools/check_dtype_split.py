"""Check the one-module-per-dtype split of the kernel files (minitorch/cuda/compiler.py,
SPLIT_BY_DTYPE; the MT_IF_<suffix> guards of common.cuh) with nvcc, no GPU needed.

    python tools/check_dtype_split.py              # check every file of SPLIT_BY_DTYPE
    python tools/check_dtype_split.py copy.cu      # only these files
    python tools/check_dtype_split.py --time       # also time cubin builds: whole file vs f32 module
    python tools/check_dtype_split.py --kernels phases/02_ops/minitorch/cuda   # a phase's snapshot

Each file is preprocessed (``nvcc -E``, seconds) once whole and once per dtype suffix with
-DMT_DTYPE_<suffix> (as compiler.py asks NVRTC to), and its kernels (the ``extern "C" __global__``
names left after the macros expand; ``--ptx``: the PTX ``.entry`` names of full compiles, minutes)
are compared:

  (a) the union of the per-suffix modules' kernels is the whole file's set: no kernel is lost;
  (b) every kernel of the <suffix> module ends in _<suffix> or in no dtype suffix at all: each
      kernel is guarded by the suffix its name ends in, so compiler.kernel finds it in the module
      it compiles for that name.

Prints one line per file and exits 1 on a failure. With --time it also prints, per file, how long
`nvcc -cubin` takes on the whole file and on its f32 module (what a float32 notebook waits for).
JSON of everything goes to $OUT/check_dtype_split.json when OUT is set.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minitorch.cuda.compiler import DTYPE_SUFFIXES, KERNEL_DIR, SPLIT_BY_DTYPE  # noqa: E402

ENTRY = re.compile(r"^\s*\.(?:visible\s+)?\.entry\s+(\w+)\s*\(", re.M)
EXTERN_C = re.compile(r'extern\s+"C"\s+')
GLOBAL = re.compile(r"\s*(?:__global__|__attribute__\(\(global\)\))")
ATTRIBUTES = re.compile(r"(?:__launch_bounds__\s*\(|__attribute__\s*\(\()(?:[^()]|\([^()]*\))*\)\)?")
KERNEL_HEAD = re.compile(r"\s*(?:void\s+)?(?:\s*)(\w+)\s*\(")


def nvcc_run(nvcc, path, defines, kind, arch, out_dir):
    """Compile ``path`` with ``-D`` ``defines`` to ``kind`` ('ptx', 'cubin', or 'i': preprocess
    only); (seconds, output path)."""
    out = Path(out_dir) / f"{path.stem}_{'_'.join(defines) or 'whole'}.{kind}"
    cmd = [nvcc, "-E" if kind == "i" else f"-{kind}", f"-arch={arch}", "-std=c++17", "-I", str(path.parent), "-o", str(out),
           *(f"-D{d}" for d in defines), str(path)]
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"nvcc failed on {path.name} {defines}:\n{run.stdout}{run.stderr}")
    return seconds, out


def entries(path):
    """The kernel names a PTX file defines, or a preprocessed source (``.i``) declares."""
    text = Path(path).read_text()
    if path.suffix == ".ptx":
        return set(ENTRY.findall(text))
    names = set()
    for m in EXTERN_C.finditer(text):             # nvcc -E spells __global__ __attribute__((global))
        head = text[m.end():m.end() + 400]
        if not GLOBAL.match(head):
            continue
        k = KERNEL_HEAD.match(ATTRIBUTES.sub(" ", GLOBAL.sub(" ", head, count=1)))
        if k:
            names.add(k.group(1))
    return names


def dtype_of(name):
    """The dtype suffix ``name`` ends in, or None."""
    last = name.rsplit("_", 1)[-1]
    return last if last in DTYPE_SUFFIXES else None


def check_file(path, nvcc, arch, jobs, tmp, kind="i"):
    """{'file', 'whole', 'per_suffix': {suffix: names}, 'errors': [...]} for one kernel file."""
    builds = [()] + [(f"MT_DTYPE_{s}",) for s in DTYPE_SUFFIXES]
    with ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(lambda d: nvcc_run(nvcc, path, d, kind, arch, tmp), builds))
    whole = entries(done[0][1])
    per_suffix = {s: entries(out) for s, (_, out) in zip(DTYPE_SUFFIXES, done[1:])}
    errors = []
    union = set().union(*per_suffix.values())
    if union != whole:
        errors.append(f"(a) union of the dtype modules differs from the whole file: missing "
                      f"{sorted(whole - union)[:8]}, extra {sorted(union - whole)[:8]}")
    for s, names in per_suffix.items():
        wrong = sorted(n for n in names if dtype_of(n) not in (None, s))
        if wrong:
            errors.append(f"(b) the {s} module has kernels of other dtypes: {wrong[:8]}")
    untagged = sorted(n for n in whole if dtype_of(n) is None)
    return {"file": path.name, "whole": sorted(whole), "untagged": untagged,
            "per_suffix": {s: sorted(n) for s, n in per_suffix.items()}, "errors": errors}


def time_file(path, nvcc, arch, tmp):
    """Seconds of `nvcc -cubin` on the whole file and on its f32 module (one after the other)."""
    whole, _ = nvcc_run(nvcc, path, (), "cubin", arch, tmp)
    f32, _ = nvcc_run(nvcc, path, ("MT_DTYPE_f32",), "cubin", arch, tmp)
    return {"whole_s": round(whole, 1), "f32_s": round(f32, 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="kernel files (default: all of SPLIT_BY_DTYPE)")
    p.add_argument("--kernels", type=Path, default=KERNEL_DIR,
                   help="the folder of .cu files (default minitorch/cuda; a phase's snapshot works too)")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("-j", type=int, default=2, help="parallel nvcc runs for the PTX checks")
    p.add_argument("--time", action="store_true", help="also time cubin builds: whole vs f32 module")
    p.add_argument("--ptx", action="store_true", help="compare PTX entries of full compiles (slow)")
    args = p.parse_args()
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        p.error("nvcc is not on PATH")
    files = args.files or sorted(f for f in SPLIT_BY_DTYPE if (args.kernels / f).exists())
    unknown = [f for f in files if f not in SPLIT_BY_DTYPE]
    if unknown:
        p.error(f"not in compiler.SPLIT_BY_DTYPE: {unknown}; expected some of {sorted(SPLIT_BY_DTYPE)}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for file in files:
            r = check_file(args.kernels / file, nvcc, args.arch, args.j, tmp, "ptx" if args.ptx else "i")
            if args.time:
                r.update(time_file(args.kernels / file, nvcc, args.arch, tmp))
            results.append(r)
            counts = " ".join(f"{s}:{len(n)}" for s, n in r["per_suffix"].items())
            print(f"{file:16s} whole {len(r['whole']):4d} kernels ({len(r['untagged'])} without a dtype) | "
                  f"{counts} | {'OK' if not r['errors'] else 'FAIL'}", flush=True)
            for e in r["errors"]:
                print("    " + e)
    if args.time:
        print(f"\nnvcc -cubin -arch={args.arch} seconds (this machine)")
        print(f"{'file':16s} {'whole':>7s} {'f32':>7s}")
        for r in results:
            print(f"{r['file']:16s} {r['whole_s']:7.1f} {r['f32_s']:7.1f}")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "check_dtype_split.json").write_text(json.dumps(results, indent=1))
    return 1 if any(r["errors"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
