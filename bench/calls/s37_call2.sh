#!/bin/bash
# Session 37 call 2: wip/weights (a5115c5: the pair weights branch-free in one of two loops, gate or none,
# dv's weights shared in the merged pass; K = 64's X_c words loaded before the stage's wait) staged in
# .devbin; .devbinC = wip/weights-only (the same with X_c's loads where used), sgla alone; .devbinS =
# main's kernels, sgla alone.  Its suites, then bench/ab.sh A = main, B = wip/weights, C = weights alone.
# Carry [".devbin", ".devbinS", ".devbinC"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^san_\|^compute-sanitizer"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$OUT"/san_*.log 2>/dev/null | sort | uniq -c
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="4,8192,32,64,64:g:--backward 4,8192,32,64,64:gamma:--backward 8,4096,16,128,128:g:--backward \
8,4096,16,64,64:g 2,16384,8,256,256:g 64,1024,16,128,128:g" \
SGLA_DEVBIN_A=.devbinS SGLA_DEVBIN_B=.devbin SGLA_DEVBIN_C=.devbinC SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
