#!/bin/bash
# One device call for the CUDA backend: GPU tests, compute-sanitizer
# (memcheck, racecheck) on the small case, `sgla bench --backend cuda`, and
# bench/fla_compare.py; logs under $OUT, a short summary printed last.
# Needs the build carried in build-cuda/ (and .whl/ for fla).
#   run: bash bench/device_run.sh [quick]     carry: [".devbin", ".whl"] (bench/stage_devbin.sh copies the build there)
set -u
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=${SGLA_BUILD:-.devbin}
MODE=${1:-full}
export PYTHONUNBUFFERED=1
SUM=$OUT/summary.txt
: > "$SUM"
note() { echo "$*" | tee -a "$SUM"; }

note "== $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) pwd=$(pwd) mode=$MODE"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | tee -a "$SUM"

if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; note "using carried libs"; fi
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site || note "fla wheel install failed"
fi
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)

# 1. correctness: the GPU tests (CPU-heavy fp64 reference) and the sanitizers, side by side
t0=$(date +%s)
( for t in $BD/tests/test_gpu_*; do
    SGLA_CUDA_VERSION=all timeout 300 $t > $OUT/test_$(basename $t).log 2>&1; echo "$(basename $t) rc=$?" ; done ) > /tmp/tests_rc.txt &
P1=$!
if [ -n "$SAN" ]; then
  ( for tool in memcheck racecheck; do
      SGLA_CUDA_VERSION=all SGLA_GPU_SMALL=1 timeout 240 $SAN --tool $tool --error-exitcode 1 $BD/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
      echo "sanitize_$tool rc=$?"; done ) > /tmp/san_rc.txt &
  P2=$!
else
  echo "compute-sanitizer not found" > /tmp/san_rc.txt; P2=
fi
wait $P1; [ -n "$P2" ] && wait $P2
cat /tmp/tests_rc.txt /tmp/san_rc.txt | tee -a "$SUM"
grep -h "FAIL\|passed\|configurations" $OUT/test_*.log | tail -15 | tee -a "$SUM"
tail -3 $OUT/san_memcheck.log $OUT/san_racecheck.log 2>/dev/null | tee -a "$SUM"
note "correctness took $(( $(date +%s) - t0 )) s"
timeout 180 $BD/sgla verify --level 4 > $OUT/verify.log 2>&1; note "sgla verify --level 4 (levels 4-5) rc=$?"
grep -E "^level|FAIL" $OUT/verify.log | tee -a "$SUM"

# 2. our bench: every version, both gate forms, bf16
if [ "$MODE" != "tests" ]; then
  t0=$(date +%s)
  for gate in gamma g; do
    timeout 240 $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --iters 30 >> $OUT/bench.log 2>&1
    echo "bench $gate rc=$?" >> "$SUM"
  done
  note "bench took $(( $(date +%s) - t0 )) s"
  # 3. fla side by side
  if [ "$MODE" = "full" ]; then
    t0=$(date +%s)
    SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout 400 python3 bench/fla_compare.py > $OUT/fla.log 2>&1
    note "fla_compare rc=$? took $(( $(date +%s) - t0 )) s"
  fi
fi
echo; echo "==== summary"; cat "$SUM"
[ -f $OUT/bench.log ] && grep -v "^  v" $OUT/bench.log
[ -f $OUT/verify.log ] && sed -n '/^level 5/,$p' $OUT/verify.log
[ -f $OUT/fla.log ] && sed -n '/^device\|^ceilings\|^fla /p;/^BxTxHxD/,$p' $OUT/fla.log
