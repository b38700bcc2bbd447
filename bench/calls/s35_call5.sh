#!/bin/bash
# Session 35 call 5: gate g by TMA at K = 64 as in call 3 (5e03157's kernels but for the entry check of gb),
# not where the call splits (gate_b's b there, as before), and without b's rows in the workspace.  Carry [".devbin", ".devbinM"] (.devbinM: main e121813, sgla alone).
#   1. the suites: bash bench/device_run.sh tests;
#   2. bench/ab.sh, A = main, B = this: K = 64's rows with gate g.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_DEVBIN_A=.devbinM SGLA_ROUNDS=3 SGLA_ITERS=30 SGLA_CASES="4,8192,32,64,64:g 8,4096,16,64,64:g \
64,1024,16,64,64:g 1,65536,16,64,64:g 1,65536,16,64,64:g:--varlen=64" \
  bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab forward rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
