"""How long the first use of a kernel waits for NVRTC, with one module per dtype (compiler.py,
SPLIT_BY_DTYPE) and without (the whole file, as before). Needs a GPU and CuPy.

    python benchmarks/time_dtype_split.py          # cuda tests of the split, then the timings
    python benchmarks/time_dtype_split.py --no-tests

1. Runs the cuda tests that launch kernels of the split files (tests/test_dtype_split.py and the
   op tests of elementwise, copy, reduce, scan, sort, index, softmax, pooling, layernorm, the
   multi-tensor optimizers): a kernel missing from the module of its dtype fails there with
   CUDA_ERROR_NOT_FOUND.
2. Per split file, in a fresh Python with an empty CuPy kernel cache (CUPY_CACHE_DIR, so nothing
   comes from disk): seconds NVRTC takes for the whole file, and for the module of one float32
   kernel (what compiler.kernel now builds on its first use).
3. A first training step in float32 (MLP forward, cross-entropy, backward, SGD, argmax accuracy,
   layer norm, cumsum) in a fresh Python with an empty cache: seconds with the split, and with it
   turned off (compiler.dtype_options patched to always compile whole files).

Prints a table last; writes $OUT/time_dtype_split.json when OUT is set.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# a float32 kernel of each split file: its module is what a float32 notebook compiles first
F32_KERNEL = {
    "elementwise.cu": "add_f32", "copy.cu": "cast_i64_f32", "reduce.cu": "sum_blocks_f32",
    "scan.cu": "scan_rows_cumsum_f32", "softmax.cu": "softmax_block_f32",
    "layernorm.cu": "layer_norm_forward_warp_4x6_f32", "index.cu": "gather_f32", "sort.cu": "sort_tile_f32",
    "multi_tensor.cu": "adam_f32", "pooling.cu": "max_pool2d_f32",
}
CUDA_TESTS = ["tests/test_dtype_split.py", "tests/test_cuda_backend.py", "tests/test_ops.py",
              "tests/test_reduce.py", "tests/test_ops_reduce_api.py", "tests/test_softmax.py",
              "tests/test_half.py", "tests/test_transformer_layers.py", "tests/test_indexing.py",
              "tests/test_ops_shape_api.py", "tests/test_optim.py", "tests/test_pool_bn_dropout.py"]

# run in a fresh Python: prints seconds
COMPILE_ONE = """
import sys, time
sys.path.insert(0, {root!r})
import cupy
from minitorch.cuda import compiler
file, name, whole = sys.argv[1], sys.argv[2], sys.argv[3] == "whole"
cupy.cuda.Device(0).use()
start = time.perf_counter()
if whole:
    compiler._compile(compiler.KERNEL_DIR / file, cupy)
else:
    compiler.kernel(file, name, 0)
print(time.perf_counter() - start)
"""

FIRST_STEP = """
import sys, time
sys.path.insert(0, {root!r})
from minitorch.cuda import compiler
if sys.argv[1] == "whole":
    compiler.dtype_options = lambda file, name: ()      # every file compiled whole, as before
import minitorch as mt
from minitorch import nn
start = time.perf_counter()
mt.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
x = mt.randn(64, 784, device="cuda")
y = mt.randint(0, 10, (64,), device="cuda")
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
mt.optim.SGD(model.parameters(), lr=0.1).step()
accuracy = (model(x).argmax(1) == y).float().mean().item()
h = nn.functional.layer_norm(x, (784,)).cumsum(1).sum().item()
print(time.perf_counter() - start)
"""


def fresh_python(code, *args):
    """Seconds printed by ``code`` run in a new Python with an empty CuPy kernel cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CUPY_CACHE_DIR=cache, CUPY_CACHE_IN_MEMORY="0")
        run = subprocess.run([sys.executable, "-c", code.format(root=str(ROOT)), *args],
                             capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{run.stdout}{run.stderr}")
    return float(run.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--no-tests", action="store_true", help="only the timings")
    args = p.parse_args()
    result = {}
    if not args.no_tests:
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:randomly",
                              "-o", "addopts=-p no:cacheprovider", *CUDA_TESTS],
                             capture_output=True, text=True, cwd=ROOT)
        print(run.stdout[-6000:], run.stderr[-2000:], flush=True)
        result["tests_rc"] = run.returncode
        result["tests_tail"] = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-500:]
    rows = []
    for file, name in F32_KERNEL.items():
        whole = fresh_python(COMPILE_ONE, file, name, "whole")
        f32 = fresh_python(COMPILE_ONE, file, name, "split")
        rows.append({"file": file, "kernel": name, "whole_s": round(whole, 2), "f32_module_s": round(f32, 2)})
        print(f"{file}: whole {whole:.2f} s, f32 module {f32:.2f} s", flush=True)
    result["nvrtc"] = rows
    step = {mode: round(fresh_python(FIRST_STEP, mode), 2) for mode in ("whole", "split")}
    result["first_step_s"] = step

    import cupy
    result["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "time_dtype_split.json").write_text(json.dumps(result, indent=1))
    print(f"\n{result['device']}: NVRTC seconds on first use, empty CuPy cache")
    if "tests_rc" in result:
        print(f"cuda tests: rc {result['tests_rc']} ({result['tests_tail']})")
    print(f"{'file':16s} {'whole':>7s} {'f32 module':>11s}")
    for r in rows:
        print(f"{r['file']:16s} {r['whole_s']:7.2f} {r['f32_module_s']:11.2f}")
    print(f"first float32 training step: whole files {step['whole']:.2f} s, one module per dtype {step['split']:.2f} s")
    return result.get("tests_rc", 0)


if __name__ == "__main__":
    sys.exit(main())
