#!/bin/bash
# Session 34 call 2: the time windows with their first pass on the forward's first-pass instance (dbb2c3b).
# Carry [".devbin", ".devbinA"] (.devbinA: 8abba2c, sgla alone).
#   1. test_gpu_backward (full), its memcheck and racecheck (SGLA_GPU_SMALL), the GPU pytest suite;
#   2. bench/ab.sh: the backward before / after, and 2, 3, 4 windows;
#   3. fla_compare without fla: uncapped and capped fwd + bwd, peak memory, two shapes.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for z in .devbinA/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbinA/sgla
. bench/calls/staged_bwd_tests.sh
t1=$(date +%s)
SGLA_ROUNDS=3 SGLA_ITERS=20 SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:g:--backward:--bwd-windows=2 \
8,4096,16,128,128:g:--backward:--bwd-windows=3 8,4096,16,128,128:g:--backward:--bwd-windows=4 \
4,8192,32,64,64:g:--backward 4,8192,32,64,64:g:--backward:--bwd-windows=2" \
  bash bench/ab.sh > "$OUT/ab_run.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" 2>/dev/null | grep bwd
t2=$(date +%s)
export SGLA_LIBRARY=$PWD/.devbin/libsgla.so
for spec in 8x4096x16x128:200 4x8192x32x64:100; do
  sh=${spec%%:*} lim=${spec##*:}
  timeout 150 python3 bench/fla_compare.py --shapes $sh --gates gamma,g --bwd-shapes $sh --rounds 3 --no-ceilings \
    --ws-limit $lim > "$OUT/cap_$sh.log" 2>&1
  echo "cap $sh $lim MiB rc=$?"
  sed -n '/^BxTxHxD/,/^bwd, fixed/p' "$OUT/cap_$sh.log"
done
echo "memory rows $(( $(date +%s) - t2 )) s"
