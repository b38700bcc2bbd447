#!/bin/bash
# Session 38 call 2: wip/blob-cg (the reverse pass's blob loads by ld.global.cg, so that the 8-32 KB of
# state copy a chunk stops evicting the merged pass's spilled registers from L1; call 1's ncu of the
# K = 128 merged pass: L1 hit rate 3.5 %, 44 % of issue gaps on L1TEX scoreboards, 1.35 M spill
# requests) against main, then B's suites.  .devbinA = main 515557d (sgla alone), .devbinB = wip/blob-cg.
# Carry [".devbinA", ".devbinB"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbinA/*.xz .devbinB/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 4,8192,32,64,64:g:--backward \
2,16384,8,256,256:g:--backward 8,4096,16,128,128:g" \
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_ITERS=20 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
t1=$(date +%s)
SGLA_DEVBIN=.devbinB timeout 200 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
