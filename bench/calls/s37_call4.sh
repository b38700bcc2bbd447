#!/bin/bash
# Session 37 call 4: wip/dg3 (be08915: dg3_kernel issues every load of its chunk before the first sum; a
# one-part instance where both passes have one column block) staged in .devbin; .devbinA = main's kernels
# (a5115c5 = fe0edeb), sgla alone.  Its suites, then bench/ab.sh A = main, B = wip/dg3 on backward rows
# (one part: K = 64, 128; four parts: K = 256).  Carry [".devbin", ".devbinA"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="4,8192,32,64,64:g:--backward 4,8192,32,64,64:gamma:--backward 8,4096,16,128,128:g:--backward \
64,1024,16,128,128:g:--backward 2,16384,8,256,256:g:--backward" \
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" | grep bwd
