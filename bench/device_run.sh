#!/bin/bash
# One device call for the CUDA backend: GPU tests, compute-sanitizer
# (memcheck, racecheck) on the small case, `sgla bench --backend cuda`, and
# bench/fla_compare.py; logs under $OUT, a short summary printed last.
# Needs the build carried in build-cuda/ (and .whl/ for fla).
#   run: bash bench/device_run.sh [full|nofla|tests]   carry: [".devbin", ".whl"] (bench/stage_devbin.sh copies the build there)
# Every kernel version is tested, sanitized and timed in its own process: a
# version that faults leaves a sticky error in its CUDA context only.
#   SGLA_VERSIONS        versions to test and sanitize (default: 0 9 1: the default,
#                        v13, its cu_seqlens fallback v9, and the article's kernel)
#   SGLA_BENCH_VERSIONS  versions to time (default: 0, the default kernel); a
#                        version whose test process timed out or died is not timed
#   SGLA_SAN_VERSIONS    versions to sanitize (default: SGLA_VERSIONS)
#   SGLA_SAN_TOOLS       compute-sanitizer tools (default: memcheck racecheck)
#   SGLA_BENCH_GATES     gate forms to time (default: gamma g)
#   SGLA_BENCH_ARGS      extra `sgla bench` arguments (e.g. --shape 8,4096,16,128,128 ...)
# Timeouts are short (tests 150 s, sanitizers 120 s, bench 100 s per process) so that a
# version that hangs costs one timeout, not the call.
set -u
T_START=$(date +%s)
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
if [ "$MODE" = full ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site || note "fla wheel install failed"
fi
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)

# 1. correctness: the GPU tests (CPU-heavy fp64 reference), one process per version,
#    and the sanitizers on the small set, one process per (tool, version); all in parallel
VERSIONS=${SGLA_VERSIONS:-0 9 1}
SANV=${SGLA_SAN_VERSIONS:-$VERSIONS}
t0=$(date +%s)
rm -f /tmp/rc_*.txt
for t in $BD/tests/test_gpu_*; do
  b=$(basename $t)
  if [ "$b" = test_gpu_forward ]; then
    for v in $VERSIONS; do
      ( SGLA_CUDA_VERSION=$v timeout 150 $t > $OUT/${b}_v$v.log 2>&1; echo "$b v$v rc=$?" > /tmp/rc_test_v$v.txt ) &
    done
  else
    ( timeout 150 $t > $OUT/$b.log 2>&1; echo "$b rc=$?" > /tmp/rc_test_$b.txt ) &
  fi
done
if [ "${SGLA_PYTEST:-1}" = 1 ] && python3 -c "import torch" 2>/dev/null; then
  # the gpu-marked Python tests against fp64 (the fla comparisons run last, when fla's kernels are compiled)
  ( PYTHONPATH=$PWD/python:${PYTHONPATH:-} SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout 200 \
      python3 -m pytest -p no:cacheprovider python/tests -m gpu -k "not vs_fla" -q -rs > $OUT/pytest_gpu.log 2>&1
    echo "pytest -m gpu (not fla) rc=$?" > /tmp/rc_test_pytest.txt ) &
fi
if [ -n "$SAN" ]; then
  for tool in ${SGLA_SAN_TOOLS:-memcheck racecheck}; do
    for v in $SANV; do
      ( SGLA_CUDA_VERSION=$v SGLA_GPU_SMALL=1 timeout 120 $SAN --tool $tool --error-exitcode 1 $BD/tests/test_gpu_forward > $OUT/san_${tool}_v$v.log 2>&1
        echo "sanitize_$tool v$v rc=$?" > /tmp/rc_san_${tool}_v$v.txt ) &
    done
  done
else
  echo "compute-sanitizer not found" > /tmp/rc_san.txt
fi
wait
cat /tmp/rc_test_*.txt /tmp/rc_san*.txt | tee -a "$SUM"
for f in $OUT/test_*.log; do echo "$(basename $f): $(grep -c '^FAIL' $f) FAIL lines; $(grep -h 'passed\|configurations' $f | tr '\n' ' ')"; done | tee -a "$SUM"
grep -h "^FAIL\|FATAL" $OUT/test_*.log | head -20 | tee -a "$SUM"
[ -f $OUT/pytest_gpu.log ] && tail -1 $OUT/pytest_gpu.log | tee -a "$SUM"
for f in $OUT/san_*.log; do [ -f "$f" ] && echo "$(basename $f): $(tail -1 $f)"; done | tee -a "$SUM"
note "correctness took $(( $(date +%s) - t0 )) s"
timeout 120 $BD/sgla verify --level 4 > $OUT/verify.log 2>&1; note "sgla verify --level 4 (levels 4-5) rc=$?"
grep -E "^level|FAIL" $OUT/verify.log | tee -a "$SUM"

# 2. our bench: each version in its own process, both gate forms, bf16
if [ "$MODE" != "tests" ]; then
  t0=$(date +%s)
  BENCHV=${SGLA_BENCH_VERSIONS:-0}
  for v in $BENCHV; do
    trc=$(sed -n 's/.* rc=//p' /tmp/rc_test_v$v.txt 2>/dev/null)
    if [ -n "$trc" ] && [ "$trc" != 0 ] && [ "$trc" != 1 ]; then note "bench v$v skipped: its test process ended rc=$trc"; continue; fi
    for gate in ${SGLA_BENCH_GATES:-gamma g}; do
      SGLA_CUDA_VERSION=$v timeout 100 $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --iters 30 ${SGLA_BENCH_ARGS:-} >> $OUT/bench.log 2>&1
      echo "bench v$v $gate rc=$?" >> "$SUM"
    done
  done
  note "bench took $(( $(date +%s) - t0 )) s"
  # 3. fla side by side
  if [ "$MODE" = "full" ]; then
    t0=$(date +%s)
    # time every version that passed its tests (a faulting one would poison the process)
    FLAV=""
    for v in $BENCHV; do [ "$(sed -n 's/.* rc=//p' /tmp/rc_test_v$v.txt 2>/dev/null)" = 0 ] && FLAV="$FLAV${FLAV:+,}$v"; done
    SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout ${SGLA_FLA_TIMEOUT:-300} python3 bench/fla_compare.py --versions "${FLAV:-0}" > $OUT/fla.log 2>&1
    note "fla_compare (versions ${FLAV:-0}) rc=$? took $(( $(date +%s) - t0 )) s"
    left=$(( ${SGLA_BUDGET_S:-560} - ($(date +%s) - T_START) ))
    if [ "${SGLA_PYTEST:-1}" = 1 ] && [ $left -gt 40 ]; then
      PYTHONPATH=$PWD/python:${PYTHONPATH:-} SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout $left \
        python3 -m pytest -p no:cacheprovider python/tests -m gpu -k "vs_fla" -q -rs > $OUT/pytest_fla.log 2>&1
      note "pytest -m gpu -k vs_fla rc=$? ($(tail -1 $OUT/pytest_fla.log))"
    else
      note "pytest -k vs_fla skipped: ${left}s left"
    fi
  fi
fi
echo; echo "==== summary"; cat "$SUM"
[ -f $OUT/bench.log ] && { grep "^  v" $OUT/bench.log | sort -u; grep -m1 "^BxTxHxKxV" $OUT/bench.log; grep -v "^  v\|^sgla bench\|^BxTxHxKxV" $OUT/bench.log | sort -s -k1,1 -k3,3; }
[ -f $OUT/verify.log ] && sed -n '/^level 5/,$p' $OUT/verify.log
[ -f $OUT/fla.log ] && sed -n '/^device\|^ceilings\|^fla /p;/^BxTxHxD/,$p' $OUT/fla.log
exit 0  # the summary above is the result; rc != 0 would only mean that the last optional log was absent
