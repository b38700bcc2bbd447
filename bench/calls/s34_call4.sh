#!/bin/bash
# Session 34 call 4: time windows where the passes split along time (the change after dbb2c3b).
# Carry [".devbin"].
#   1. test_gpu_backward (full), memcheck and racecheck (SGLA_GPU_SMALL), the torch backward tests;
#   2. sgla bench --backward, usual and in 2 windows, at shapes whose passes split (3 rounds interleaved);
#   3. fla_compare without fla: uncapped and capped fwd + bwd and peak memory there.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
. bench/calls/staged_bwd_tests.sh "time windows.*T=(2048|1500|1100)"
t1=$(date +%s)
SGLA_DEVBIN_A=.devbin SGLA_ROUNDS=2 SGLA_ITERS=20 SGLA_CASES="1,32768,16,128,128:g:--backward \
1,32768,16,128,128:g:--backward:--bwd-windows=2 2,16384,8,256,256:g:--backward 2,16384,8,256,256:g:--backward:--bwd-windows=2 \
8,4096,16,128,128:g:--backward:--bwd-windows=2" bash bench/ab.sh > "$OUT/ab_run.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" 2>/dev/null | grep " A-" | grep bwd
t2=$(date +%s)
export SGLA_LIBRARY=$PWD/.devbin/libsgla.so
S=1x32768x16x128,2x16384x8x256
timeout 200 python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --rounds 3 --no-ceilings \
  --ws-limit 200,300 > "$OUT/cap.log" 2>&1
echo "cap rc=$?"
sed -n '/^BxTxHxD/,/^bwd, fixed/p' "$OUT/cap.log"
echo "memory rows $(( $(date +%s) - t2 )) s"
