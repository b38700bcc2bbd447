#!/bin/bash
# Session 34 call 5: batch groups under a workspace cap (the change after a770ee8).  Carry [".devbin", ".whl",
# ".triton_cache"].
#   1. test_gpu_backward (full), memcheck and racecheck (SGLA_GPU_SMALL), the torch backward tests;
#   2. sgla bench --backward at 64x1024x16x128: the usual plan and 2, 3 groups (2 rounds);
#   3. fla_compare with fla: 64x1024x16x128 (cap 220 MiB: groups) and 1x32768x16x128 (cap 200: windows).
. bench/calls/fla_env.sh
. bench/calls/staged_bwd_tests.sh "batch groups"
t1=$(date +%s)
SGLA_DEVBIN_A=.devbin SGLA_ROUNDS=1 SGLA_ITERS=20 SGLA_CASES="64,1024,16,128,128:g:--backward \
64,1024,16,128,128:g:--backward:--bwd-groups=2 64,1024,16,128,128:g:--backward:--bwd-groups=3 \
64,1024,16,128,128:gamma:--backward 64,1024,16,128,128:gamma:--backward:--bwd-groups=3" bash bench/ab.sh > "$OUT/ab_run.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" 2>/dev/null | grep bwd
grep -h "workspace" "$OUT/ab_raw.log" | sort -u | head -8
t2=$(date +%s)
S=64x1024x16x128,1x32768x16x128
timeout ${SGLA_T5:-300} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --ws-limit 220,200 \
  --warm-jobs 4 --rounds 3 --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "fla rows rc=$? $(( $(date +%s) - t2 )) s"
sed -n '/^warmed/p;/^shape /,$p' "$OUT/fla_bwd.log"
