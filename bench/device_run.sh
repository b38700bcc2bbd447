#!/bin/bash
# One device call for the CUDA backend, from a build staged by
# bench/stage_devbin.sh (carry [".devbin"], and ".whl" for fla):
#   1. correctness, in parallel: test_gpu_forward (every case on every plan),
#      compute-sanitizer memcheck and racecheck (SGLA_GPU_SMALL), the Python
#      suite (torch's CPU tests too); then `sgla verify --level 4` and bench/run_cuda_check.sh;
#   2. `sgla bench --backend cuda` on both gate forms, in interleaved rounds with
#      the cuda-history build when one is staged (.devbin/history/sgla), medians
#      over rounds;
#   3. (modes full, testsfla, fla) bench/fla_compare.py: sgla and fla in interleaved rounds.
# Logs under $OUT; a short summary is printed last.
#   run: bash bench/device_run.sh [full|nofla|bench|tests|testsfla|fla]   (nofla: 1 and 2; testsfla: 1 and 3;
#        fla: 3 alone, where the build's tests ran in an earlier call)
#   SGLA_BENCH_ARGS   extra `sgla bench` arguments (e.g. --shape 8,4096,16,128,128 ...)
#   SGLA_ROUNDS       bench rounds (default 2)
#   SGLA_BWD_SHAPES   shapes whose backward is timed too (default 8,4096,16,128,128; '' for none)
#   SGLA_FLA_TIMEOUT  seconds for fla_compare (default 300)
#   SGLA_FLA_ARGS     fla_compare's arguments;  SGLA_FLA_WARM_JOBS  processes that compile fla's kernels
#                     for those shapes while step 1 runs (default 0: none)
# fla's Triton kernels compile on first use (~40 s each): a cache brought back from an earlier call
# ($OUT/triton_cache.tgz, saved here as .triton_cache/cache.tgz and carried) is unpacked first, and
# the cache after the run goes back to $OUT (when under the 16 MiB a returned file may have).
set -u
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=${SGLA_DEVBIN:-.devbin}   # the staged build (bench/stage_devbin.sh)
MODE=${1:-full}
export PYTHONUNBUFFERED=1
SUM=$OUT/summary.txt
: > "$SUM"
note() { echo "$*" | tee -a "$SUM"; }

note "== $(date -u +%FT%TZ) build of $(cat $BD/COMMIT 2>/dev/null | tr "\n" " ")mode=$MODE"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | tee -a "$SUM"
for z in $BD/*.xz $BD/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
# an sm_90a build on a compute capability 9.0 device runs the Hopper kernels: the suites check it (the checks
# they keep for those kernels cannot then go quiet)
case "$(cat $BD/COMMIT 2>/dev/null)" in
  *90a*) [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)" = 9.0 ] \
           && export SGLA_GPU_EXPECT_HOPPER=1 ;;
esac
case $MODE in full|nofla|bench|tests|testsfla|fla) ;; *) echo "device_run.sh: no mode $MODE" >&2; exit 2 ;; esac
FLA=0; case $MODE in full|testsfla|fla) FLA=1 ;; esac
if [ $FLA = 1 ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site || note "wheel install failed"
fi
# Triton's compile cache for fla: the one carried in, if any, unpacked once
if [ $FLA = 1 ]; then
  export TRITON_CACHE_DIR=/tmp/triton_cache
  mkdir -p "$TRITON_CACHE_DIR"
  [ -f .triton_cache/cache.tgz ] && tar xzf .triton_cache/cache.tgz -C "$TRITON_CACHE_DIR" 2>/dev/null
fi
# fla's compiles (CPU) overlap the tests: processes that fill Triton's cache for step 3's shapes
if [ $FLA = 1 ] && [ "${SGLA_FLA_WARM_JOBS:-0}" -gt 0 ]; then
  SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout ${SGLA_FLA_WARM_TIMEOUT:-360} python3 bench/fla_compare.py ${SGLA_FLA_ARGS:-} --rounds 0 --no-ceilings \
    --warm-jobs "$SGLA_FLA_WARM_JOBS" > $OUT/fla_warm.log 2>&1 &
  WARM_PID=$!
fi
warm_done() {
  [ -n "${WARM_PID:-}" ] || return 0
  wait "$WARM_PID"
  note "$(grep -h "warmed" $OUT/fla_warm.log) (beside the tests)"
  WARM_PID=
}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)

# 1. correctness
if [ "$MODE" != bench ] && [ "$MODE" != fla ]; then
  t0=$(date +%s)
  rm -f /tmp/rc_*.txt
  for t in test_gpu_forward test_gpu_backward test_gpu_pool; do
    ( timeout 200 $BD/tests/$t > $OUT/$t.log 2>&1; echo "$t rc=$?" > /tmp/rc_test_$t.txt ) &
  done
  if [ -n "$SAN" ]; then
    for tool in memcheck racecheck; do
      ( for t in test_gpu_forward test_gpu_backward test_gpu_pool; do
          SGLA_GPU_SMALL=1 timeout 150 $SAN --tool $tool --error-exitcode 1 $BD/tests/$t > $OUT/san_${tool}_$t.log 2>&1
          echo "compute-sanitizer $tool $t rc=$?" >> /tmp/rc_san_$tool.txt
        done ) &
    done
  else
    echo "compute-sanitizer not found" > /tmp/rc_san.txt
  fi
  if python3 -c "import torch" 2>/dev/null; then
    ( PYTHONPATH=$PWD/python:${PYTHONPATH:-} SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout 200 \
        python3 -m pytest -p no:cacheprovider python/tests -k "not vs_fla" -q -rs > $OUT/pytest_gpu.log 2>&1
      echo "pytest, all but fla's (torch's CPU tests too: CI has no torch) rc=$?" > /tmp/rc_pytest.txt ) &
  fi
  for j in $(jobs -p); do [ "$j" != "${WARM_PID:-}" ] && wait "$j"; done  # (not the warming)
  cat /tmp/rc_*.txt | tee -a "$SUM"
  tail -qn1 $OUT/test_gpu_forward.log $OUT/test_gpu_backward.log $OUT/test_gpu_pool.log | tee -a "$SUM"
  grep -h "FAIL\|FATAL" $OUT/test_gpu_forward.log $OUT/test_gpu_backward.log $OUT/test_gpu_pool.log | cut -c1-300 | head -12 | tee -a "$SUM"
  for f in $OUT/san_*.log; do [ -f "$f" ] && echo "$(basename $f): $(tail -1 $f)"; done | tee -a "$SUM"
  [ -f $OUT/pytest_gpu.log ] && tail -1 $OUT/pytest_gpu.log | tee -a "$SUM"
  timeout 120 $BD/sgla verify --level 4 > $OUT/verify.log 2>&1; note "sgla verify --level 4 rc=$?"
  grep -E "^level [45]:|FAIL" $OUT/verify.log | tee -a "$SUM"
  bash bench/run_cuda_check.sh $BD/sgla > $OUT/run_cuda_check.log 2>&1; note "run_cuda_check rc=$? $(tail -1 $OUT/run_cuda_check.log)"
  note "correctness took $(( $(date +%s) - t0 )) s"
fi

# 2. sgla bench, this build and (when staged) the cuda-history build in interleaved rounds
if [ "$MODE" != tests ] && [ "$MODE" != testsfla ] && [ "$MODE" != fla ]; then
  warm_done  # (its compiles and checks would share the GPU with the timings)
  t0=$(date +%s)
  for r in $(seq 1 ${SGLA_ROUNDS:-2}); do
    for gate in gamma g; do
      timeout 120 $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --iters 30 ${SGLA_BENCH_ARGS:-} >> $OUT/bench_new.log 2>&1
      [ -x $BD/history/sgla ] && SGLA_CUDA_VERSION=13 timeout 120 $BD/history/sgla bench --backend cuda --dtype bf16 \
        --gate $gate --iters 30 ${SGLA_BENCH_ARGS:-} >> $OUT/bench_history.log 2>&1
    done
  done
  for sh in ${SGLA_BWD_SHAPES-8,4096,16,128,128}; do  # the backward on its usual path ('' for none)
    for gate in gamma g; do
      timeout 90 $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --backward --iters 20 --shape $sh 2>&1 \
        | grep -E ' bwd |FAIL|backward:' | tee -a $OUT/bench_bwd.log | tee -a "$SUM" > /dev/null
    done
  done
  note "bench took $(( $(date +%s) - t0 )) s"
  grep -h "FAIL" $OUT/bench_new.log | head -5 | tee -a "$SUM"
  python3 - "$OUT" <<'PY' | tee -a "$SUM"
import re, statistics, sys, os, collections
out = sys.argv[1]
rows = collections.defaultdict(list)
for tag in ("new", "history"):
    p = os.path.join(out, f"bench_{tag}.log")
    if not os.path.exists(p): continue
    for line in open(p):
        f = line.split()
        if len(f) < 9 or not re.match(r"\d+x\d+x\d+x\d+x\d+$", f[0]) or f[1] != "bf16": continue
        # new: shape dtype gate row nseg ms ...; history: shape dtype gate vN ms ... floor xfloor
        ms, floor = (float(f[5]), float(f[8])) if tag == "new" else (float(f[4]), float(f[7]))
        rows[(f[0], f[2], tag)].append((ms, floor))
print(f"{'BxTxHxKxV':<22} {'gate':<6} {'new ms':>8} {'x floor':>7} {'history':>8} {'x floor':>7} {'new/hist':>8}  (medians of rounds; ms of each round)")
for (sh, gate) in sorted({(k[0], k[1]) for k in rows}):
    n = rows.get((sh, gate, "new"), []); h = rows.get((sh, gate, "history"), [])
    mn = statistics.median(x[0] for x in n) if n else float("nan")
    mh = statistics.median(x[0] for x in h) if h else float("nan")
    fl = (n or h)[0][1]
    print(f"{sh:<22} {gate:<6} {mn:8.4f} {mn/fl:7.2f} {mh:8.4f} {mh/fl:7.2f} {mn/mh:8.3f}  "
          f"new {[round(x[0], 4) for x in n]} hist {[round(x[0], 4) for x in h]}")
PY
fi

# 3. fla side by side
if [ $FLA = 1 ]; then
  t0=$(date +%s)
  warm_done
  SGLA_LIBRARY=$PWD/$BD/libsgla.so timeout ${SGLA_FLA_TIMEOUT:-300} python3 bench/fla_compare.py ${SGLA_FLA_ARGS:-} > $OUT/fla.log 2>&1
  note "fla_compare rc=$? took $(( $(date +%s) - t0 )) s"
  tar czf /tmp/triton_cache.tgz -C "$TRITON_CACHE_DIR" . 2>/dev/null &&
    [ "$(stat -c %s /tmp/triton_cache.tgz)" -lt 16000000 ] && cp /tmp/triton_cache.tgz "$OUT/" &&
    note "Triton's cache back in \$OUT/triton_cache.tgz ($(du -h /tmp/triton_cache.tgz | cut -f1)): keep it as .triton_cache/cache.tgz and carry it"
fi
echo; echo "==== summary"; cat "$SUM"
[ -f $OUT/fla.log ] && sed -n '/^device\|^ceilings\|^fla /p;/^BxTxHxD\|^shape /,$p' $OUT/fla.log
# one archive of the logs (the device call returns a few files only)
( cd "$OUT" && ls *.log >/dev/null 2>&1 && tar czf logs.tgz *.log && rm -f *.log )
exit 0
