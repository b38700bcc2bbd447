#!/bin/bash
# Session 32 call 1 (~400 s): main f8a912c (the mma.sync forward with its column offset read at each use,
# not yet run on a GPU) -- the full tests (bench/device_run.sh testsfla: the three GPU suites, memcheck and
# racecheck, pytest, verify level 4, run_cuda_check), fla's kernels for the backward rows compiling beside
# them, then issue 11's backward rows with the peak memory of one fwd + bwd beside fla at 8x4096x16x128
# (both gates), then the portable forward beside main before the column blocks (.devbinA, cbbb3b4) in two
# interleaved rounds.  Carry [".devbin", ".devbinA", ".whl", ".triton_cache"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
S=${SGLA_S:-8x4096x16x128}
SGLA_FLA_WARM_JOBS=4 SGLA_FLA_WARM_TIMEOUT=${SGLA_WARM_T:-300} SGLA_FLA_TIMEOUT=${SGLA_FLA_T:-200} \
  SGLA_FLA_ARGS="--shapes $S --gates gamma,g --bwd-shapes $S --rounds 3" \
  bash bench/device_run.sh testsfla > "$OUT/device_run_tail.log" 2>&1
echo "tests + fla: $(( $(date +%s) - t0 )) s"
sed -n '/^==== summary/,$p' "$OUT/device_run_tail.log"
BD=.devbin
if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
[ -f .devbinA/sgla.xz ] && unxz -f .devbinA/sgla.xz && chmod +x .devbinA/sgla
LOG=$OUT/portable.log
: > "$LOG"
for r in 1 2; do
  for cs in 8,4096,16,128,128:g 8,4096,16,128,128:gamma 16,2048,32,128,128:g 4,8192,32,64,64:g 1,65536,8,128,128:g; do
    IFS=: read -r shape gate <<< "$cs"
    for tag in new old; do
      bin=$BD; [ $tag = old ] && bin=.devbinA
      timeout 30 $bin/sgla bench --backend cuda --gate "$gate" --iters 30 --warmup 3 --shape "$shape" --config portable 2>&1 \
        | grep -E "^[0-9]+x[0-9]" | sed "s/^/$tag-$gate /" >> "$LOG"
    done
  done
done
echo "portable rounds: $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$LOG"
