#!/bin/bash
# Session 39 call 3: two ways to shorten the merged pass's X_c at K = 128 (the state's chain, call 1) against
# main, then main's suites (after the empty calls: B = 0 and H = 0 valid, test_gpu_backward's no_pairs):
#   B = wip/xc-early: every X_c load issued before the stage's wait, as at K = 64 (64 registers across the
#       wait, ptxas spilling 488 B / 760 B in the merged instance);
#   C = wip/xc-l1: the last 8 of the 16 words prefetched into L1 during the previous chunk's update, the
#       first 8 by ld.global.cg so that they do not evict them: one L2 round trip a chunk instead of two
#       (spills as main's).
# .devbin = main (full), .devbinB, .devbinC = the branches (sgla alone).
# Carry [".devbin", ".devbinB", ".devbinC"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinB/*.xz .devbinC/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward \
4,8192,16,128,256:g:--backward 4,8192,32,64,64:g:--backward" \
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC SGLA_ROUNDS=3 SGLA_ITERS=20 \
  timeout 300 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
t1=$(date +%s)
timeout 240 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
