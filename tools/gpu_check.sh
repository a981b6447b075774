#!/usr/bin/env bash
# One full GPU session on the lent H100 (see ../.library/device): install the notebook wheels,
# run the cuda tests, compute-sanitizer, and the benchmarks, or the phase notebooks at full size.
#   bash tools/gpu_check.sh tests      # pytest -m cuda, memcheck + racecheck, overhead + kernel benches
#   bash tools/gpu_check.sh notebooks PHASE...   # minitorch-course at full size on cuda
# Work goes to /tmp/gpuwork; $OUT gets one tarball of it and the logs (the device tool returns <= 8 files).
set -uo pipefail
export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
OUT=${OUT:-out/gpu}; W=/tmp/gpuwork; rm -rf "$W"; mkdir -p "$OUT" "$W"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH \
  && python3 -m ipykernel install --user --name python3 >/dev/null || { echo "wheel install failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$W/gpu.txt"
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" | tee -a "$W/gpu.txt"
mode=${1:-tests}; shift || true
if [ "$mode" = tests ]; then
  python3 -m pytest -q -m cuda -o addopts="-p no:cacheprovider" tests --deselect tests/test_nvcc.py 2>&1 | tee "$W/pytest_cuda.log" | tail -n 25
  echo "== memcheck on the Tensor-level cuda tests (XOR training excluded: 10^5 launches)"
  compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -m cuda -o addopts="-p no:cacheprovider" \
    tests/test_tensor.py tests/test_ops.py tests/test_autograd.py tests/test_nn.py tests/test_softmax.py \
    tests/test_reduce.py tests/test_indexing.py tests/test_data.py -k "not xor" \
    > "$W/memcheck_tests.log" 2>&1; echo "memcheck tests exit $?"; tail -n 4 "$W/memcheck_tests.log"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 python3 benchmarks/sanitize_kernels.py > "$W/${tool}_kernels.log" 2>&1
    echo "$tool kernels exit $?"; tail -n 2 "$W/${tool}_kernels.log"
  done
  compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -m cuda -o addopts="-p no:cacheprovider" \
    tests/test_softmax.py tests/test_reduce.py > "$W/racecheck_tests.log" 2>&1; echo "racecheck softmax+reduce tests exit $?"; tail -n 2 "$W/racecheck_tests.log"
  python3 benchmarks/bench_kernels.py --out "$W/results" 2>&1 | tail -n 40 | tee "$W/kernels.log"
  [ -n "${ALL_BENCH:-}" ] && python3 benchmarks/bench_overhead.py --out "$W/results" 2>&1 | tee "$W/overhead.log"
  [ -n "${ALL_BENCH:-}" ] && python3 benchmarks/bench_softmax.py --out "$W/results" 2>&1 | tail -n 15 | tee "$W/softmax.log"
else
  python3 -m minitorch.utils.course "$@" --device cuda -o "$W/course" 2>&1 | tee "$W/course.log" | tail -n 30
fi
tar -czf "$OUT/gpu_${mode}.tar.gz" -C "$W" . && for f in "$W"/*.log; do cp "$f" "$OUT"/; done
ls -la "$OUT"
