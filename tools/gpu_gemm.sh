#!/usr/bin/env bash
# The GEMM evidence in one GPU session (the lent H100, ../.library/device): run from the repo root
# with OUT set. Installs nothing heavy (torch, cupy, nvcc, ncu, compute-sanitizer are there; wheels
# under .whl/ are installed to /tmp/site if present, e.g. ml_dtypes).
#
#   OUT=... bash tools/gpu_gemm.sh                       # tests memcheck racecheck bench
#   OUT=... bash tools/gpu_gemm.sh tests bench tune ncu  # any of: tests memcheck racecheck bench tune ncu
#   BUDGET_S=540 (whole script), QUICK=1 (bench --quick), RUNGS=05,08 (bench/sanitize/ncu rungs)
#
# Each step runs under `timeout`, capped by what is left of BUDGET_S, and the script goes on when
# one fails; summary.txt gets one line per step. $OUT receives at most 8 files, none in folders:
#   summary.txt, test_gemm.log, test_gemm_junit.xml, memcheck_gemm.log, racecheck_gemm.log
#   (sanitizer logs cut to head+tail), bench_gemm-*.json, bench_gemm-*.md, extras.tar.gz (full
#   logs, bench stdout, tuned.json + tune_log.json, ncu/ reports); tuned.json and ncu_gemm.json
#   also lie in $OUT itself when fewer files were made (e.g. `tune ncu bench`).
# The tuned table is written to the tarball, not into the package: copy it to
# minitorch/cuda/gemm/tuned.json to ship it.
set -uo pipefail
export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
OUT=${OUT:-out/gpu_gemm}; W=/tmp/gpu_gemm; rm -rf "$W"; mkdir -p "$OUT" "$W/extra" "$W/bench"
BUDGET=${BUDGET_S:-540}; S="$OUT/summary.txt"; : > "$S"
STEPS=${*:-tests memcheck racecheck bench}
RUNG_ARG=${RUNGS:+--rungs $RUNGS}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD || echo "wheel install failed" | tee -a "$S"
else
  export PYTHONPATH=$PWD
fi
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, cupy, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, '| cupy', cupy.__version__, '| numpy', numpy.__version__)"
  python3 -c "import ml_dtypes; print('ml_dtypes', ml_dtypes.__version__)" 2>&1 | tail -n 1
  python3 -c "from minitorch.native.cuda.gemm import RUNGS; print('rungs:', ' '.join(f'{k}[{\",\".join(v.dtypes)}]' for k, v in RUNGS.items()))"
  echo "steps: $STEPS; budget ${BUDGET}s"; } 2>&1 | tee -a "$S"

# step NAME CAP_SECONDS COMMAND: run COMMAND (a bash string) under timeout, log a summary line.
step() {
  local name=$1 cap=$2 cmd=$3 left t t0 rc status
  left=$((BUDGET - SECONDS - 20))
  if [ "$left" -lt 30 ]; then printf '%-10s SKIPPED: budget spent\n' "$name" | tee -a "$S"; return; fi
  t=$(( cap < left ? cap : left )); t0=$SECONDS
  echo "== $name (timeout ${t}s): $cmd"
  timeout -k 10 "$t" bash -c "$cmd"; rc=$?
  case $rc in 0) status=ok;; 124|137) status="TIMEOUT(${t}s)";; *) status="FAILED(exit $rc)";; esac
  printf '%-10s %-16s %4ss  %s\n' "$name" "$status" $((SECONDS - t0)) "$(detail "$name")" | tee -a "$S"
}
# the one line of each step's own log that says how it went
detail() {
  case $1 in
    tests) grep -E "(passed|failed|error|no tests ran)" "$W/test_gemm.log" | tail -n 1;;
    memcheck|racecheck) grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitize_gemm:" "$W/$1_gemm.log" | tail -n 2 | tr '\n' ' ';;
    bench) grep -E "^checks:" "$W/bench.log" | cut -c1-300;;
    tune) grep -E "^tune_gemm:" "$W/extra/tune.log" | tail -n 1;;
    ncu) grep -E "^wrote" "$W/extra/ncu.log" | tail -n 1;;
  esac
}

for s in $STEPS; do case $s in
  tests) XDIST=$(python3 -c "import xdist" 2>/dev/null && echo "-n 4")    # 4 processes: NVRTC compiles in parallel
         step tests 240 "python3 -m pytest -q -m cuda -p no:randomly $XDIST -o addopts='-p no:cacheprovider' tests/test_gemm.py \
            --junitxml=$OUT/test_gemm_junit.xml > $W/test_gemm.log 2>&1";;
  memcheck|racecheck) step "$s" 150 "compute-sanitizer --tool $s --error-exitcode 9 python3 benchmarks/sanitize_gemm.py $RUNG_ARG \
            > $W/${s}_gemm.log 2>&1";;
  bench) bb=$(( BUDGET - SECONDS - 80 )); [ $bb -gt 240 ] && bb=240; [ $bb -lt 60 ] && bb=60   # timing stops, JSON still written
         step bench $((bb + 40)) "python3 benchmarks/bench_gemm.py ${QUICK:+--quick} $RUNG_ARG --out $W/bench \
            --budget-s $bb > $W/bench.log 2>&1";;
  tune) [ -f minitorch/cuda/gemm/tuned.json ] && cp minitorch/cuda/gemm/tuned.json "$W/extra/tuned.json"
        tb=$(( BUDGET - SECONDS - 80 )); [ $tb -gt 170 ] && tb=170; [ $tb -lt 30 ] && tb=30    # search stops, table still written
        step tune $((tb + 50)) "python3 tools/tune_gemm.py --budget-s $tb --out $W/extra/tuned.json --log $W/extra/tune_log.json \
            > $W/extra/tune.log 2>&1";;
  ncu) step ncu 150 "python3 benchmarks/ncu_gemm.py ${RUNGS:+--rungs $RUNGS} --out $W/extra/ncu > $W/extra/ncu.log 2>&1";;
  *) echo "unknown step $s (tests memcheck racecheck bench tune ncu)" | tee -a "$S";;
esac; done

# $OUT: logs (sanitizer logs cut to their first 300 and last 100 lines), the bench JSON + table, one tarball
[ -f "$W/test_gemm.log" ] && cp "$W/test_gemm.log" "$OUT/"
for s in memcheck racecheck; do
  f="$W/${s}_gemm.log"; [ -f "$f" ] || continue
  if [ "$(wc -l < "$f")" -gt 400 ]; then { head -n 300 "$f"; echo "... (cut: full log in extras.tar.gz)"; tail -n 100 "$f"; } > "$OUT/${s}_gemm.log"
  else cp "$f" "$OUT/"; fi
done
cp "$W"/bench/bench_gemm-*.json "$W"/bench/bench_gemm-*.md "$OUT/" 2>/dev/null
for f in "$W/extra/tuned.json" "$W/extra/ncu/ncu_gemm.json"; do     # handy outside the tarball, room permitting
  [ -f "$f" ] && [ "$(ls "$OUT" | wc -l)" -lt 7 ] && cp "$f" "$OUT/"
done
[ -f "$W/bench.log" ] && tail -n 60 "$W/bench.log"
tar -czf "$OUT/extras.tar.gz" -C "$W" . 2>/dev/null
echo "total ${SECONDS}s" | tee -a "$S"
echo "===== summary"; cat "$S"; ls -la "$OUT"
