#!/usr/bin/env bash
# Phase 07's folder on the GPU in one call: its exercises' kernel grading (07.3 Welford in
# layernorm.cu, 07.7 the online softmax in attention/01_flash_fp32.cu), the workspace checks of
# tests/test_exercises.py with a GPU (stubbed kernels fail, filled-in ones pass), memcheck on the
# two graded kernels, and the notebook through papermill in quick and in full mode on cuda.
#   bash tools/gpu_check_07.sh            # everything (~5-10 min on an H100)
#   SKIP_FULL=1 bash tools/gpu_check_07.sh   # without the full-size notebook
# Prints a table last (step, exit status, seconds) and writes $OUT/gpu_check_07.json, the logs and
# the executed notebooks to $OUT (default out/gpu07).
set -uo pipefail
export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
OUT=${OUT:-out/gpu07}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then          # the lent machine: notebook wheels as tools/gpu_check.sh
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH \
    && python3 -m ipykernel install --user --name python3 >/dev/null || { echo "wheel install failed"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
NB=phases/07_transformer/07_transformer.ipynb
declare -a NAMES CODES SECS

step() {   # step NAME LOG COMMAND...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "== $name"
  "$@" > "$OUT/$log" 2>&1
  local rc=$?
  tail -n 6 "$OUT/$log"
  NAMES+=("$name"); CODES+=("$rc"); SECS+=($((SECONDS - t0)))
}

step "grading tests 07.x on cuda (07.3, 07.7)" grading_cuda.log \
  python3 -m pytest -q -p no:randomly -o "addopts=-p no:cacheprovider" -m cuda -rs tests/exercises/test_phase_07.py
step "all grading tests of phase 07" grading_all.log \
  python3 -m pytest -q -p no:randomly -o "addopts=-p no:cacheprovider" -rs tests/exercises/test_phase_07.py
step "test_exercises.py phase 07 with a GPU" test_exercises.log \
  python3 -m pytest -q -p no:randomly -o "addopts=-p no:cacheprovider" tests/test_exercises.py -k 07_transformer
step "memcheck: 07.3 + 07.7 kernels" memcheck.log \
  compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:randomly -o "addopts=-p no:cacheprovider" \
  -m cuda tests/exercises/test_phase_07.py
step "racecheck: 07.3 + 07.7 kernels" racecheck.log \
  compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:randomly -o "addopts=-p no:cacheprovider" \
  -m cuda tests/exercises/test_phase_07.py
step "notebook 07 quick on cuda (papermill)" notebook_quick.log \
  papermill -p QUICK True -p DEVICE cuda "$NB" "$OUT/07_quick.ipynb" --cwd phases/07_transformer
if [ -z "${SKIP_FULL:-}" ]; then
  step "notebook 07 full (1000 steps) on cuda" notebook_full.log \
    papermill -p QUICK False -p DEVICE cuda "$NB" "$OUT/07_full.ipynb" --cwd phases/07_transformer
fi

python3 - "$OUT" "${#NAMES[@]}" "${NAMES[@]}" "${CODES[@]}" "${SECS[@]}" <<'EOF'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
names, codes, secs = sys.argv[3:3 + n], sys.argv[3 + n:3 + 2 * n], sys.argv[3 + 2 * n:3 + 3 * n]
rows = [{"step": a, "exit": int(b), "seconds": int(c)} for a, b, c in zip(names, codes, secs)]
json.dump({"gpu": open(f"{out}/gpu.txt").read().strip(), "steps": rows}, open(f"{out}/gpu_check_07.json", "w"), indent=1)
print(f"\n{'step':48s} {'exit':>4s} {'s':>5s}")
for r in rows:
    print(f"{r['step']:48s} {r['exit']:4d} {r['seconds']:5d}   {'ok' if r['exit'] == 0 else 'FAILED: see the log'}")
EOF
