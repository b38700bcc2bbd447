#!/bin/bash
# Session 39 call 3: two ways to shorten the merged pass's X_c at K = 128 (the state's chain, call 1) against
# main: wip/xc-early (every X_c load issued before the stage's wait, as at K = 64: 64 registers across the
# wait, ptxas spilling 488 B / 760 B in the merged instance) and wip/xc-l1 (the last 8 of the 16 words
# prefetched into L1 during the previous chunk's update, the first 8 by ld.global.cg so that they do not
# evict them: one L2 round trip a chunk instead of two; spills as main's).  wip/xc-early's suites only
# where its 8x4096x16x128 g backward is 2 % faster.  .devbinA = main's kernels (sgla alone), .devbin =
# wip/xc-early (full), .devbinC = wip/xc-l1 (sgla alone).  Carry [".devbin", ".devbinA", ".devbinC"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinA/*.xz .devbinC/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward \
4,8192,16,128,256:g:--backward 4,8192,32,64,64:g:--backward" \
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbin SGLA_DEVBIN_C=.devbinC SGLA_ROUNDS=3 SGLA_ITERS=20 timeout 360 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
r=$(grep "^8x4096x16x128x128 *bwd *B-g---backward " "$OUT/ab_summary.txt" | sed 's/.* \([0-9.]*\) of the first.*/\1/')
echo "B / A at 8x4096x16x128 g: $r"
if awk -v r="${r:-9}" 'BEGIN { exit !(r < 0.98) }'; then
  t1=$(date +%s)
  timeout 230 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
  sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
  mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
  echo "tests $(( $(date +%s) - t1 )) s"
fi
echo "took $(( $(date +%s) - t0 )) s"
