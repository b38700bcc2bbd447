#!/bin/bash
# Session 32 call 3 (calls 1 and 2 in one, ~450 s; the device would not start for either): main f8a912c's
# full tests (bench/device_run.sh testsfla; the mma.sync forward with its column offset read at each use,
# not yet run on a GPU) beside the three GPU suites of a build of sm_80 PTX alone (.devbinJ, JIT-compiled
# here: every call on the path of GPUs before Hopper as compiled for sm_80; last run in session 5), fla's
# kernels for the backward rows compiling beside them; then issue 11's backward rows with the peak memory
# of one fwd + bwd beside fla at 8x4096x16x128 (both gates); then the portable forward in two rounds.
# Carry [".devbin", ".devbinJ", ".whl", ".triton_cache"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
for z in .devbinJ/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbinJ/tests/*
export CUDA_CACHE_MAXSIZE=4294967296
J=$OUT/jit   # (not $OUT/*.log: device_run.sh archives and removes those when it ends)
mkdir -p "$J"
for t in test_gpu_forward test_gpu_backward test_gpu_pool; do
  ( LD_LIBRARY_PATH=$PWD/.devbinJ/lib:${LD_LIBRARY_PATH:-} timeout ${SGLA_JIT_T:-300} .devbinJ/tests/$t > "$J/$t.log" 2>&1
    echo "sm_80 PTX (JIT) $t rc=$?" > "$J/rc_$t.txt" ) &
done
S=${SGLA_S:-8x4096x16x128}
SGLA_FLA_WARM_JOBS=4 SGLA_FLA_WARM_TIMEOUT=${SGLA_WARM_T:-300} SGLA_FLA_TIMEOUT=${SGLA_FLA_T:-200} \
  SGLA_FLA_ARGS="--shapes $S --gates gamma,g --bwd-shapes $S --rounds 3" \
  bash bench/device_run.sh testsfla > "$OUT/device_run_tail.log" 2>&1
echo "tests + fla: $(( $(date +%s) - t0 )) s"
wait
cat "$J"/rc_*.txt
tail -qn1 "$J"/test_gpu_*.log
grep -h "FAIL\|FATAL" "$J"/test_gpu_*.log | cut -c1-300 | head -12
sed -n '/^==== summary/,$p' "$OUT/device_run_tail.log"
BD=.devbin
if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
LOG=$OUT/portable.log
: > "$LOG"
for r in 1 2; do
  for cs in 8,4096,16,128,128:g 8,4096,16,128,128:gamma 16,2048,32,128,128:g 4,8192,32,64,64:g 1,65536,8,128,128:g; do
    IFS=: read -r shape gate <<< "$cs"
    for tag in new hop; do
      args="--config portable"; [ $tag = hop ] && args=
      timeout 30 $BD/sgla bench --backend cuda --gate "$gate" --iters 30 --warmup 3 --shape "$shape" $args 2>&1 \
        | grep -E "^[0-9]+x[0-9]" | sed "s/^/$tag-$gate /" >> "$LOG"
    done
  done
done
echo "portable rounds: $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$LOG"
