#!/bin/bash
# Session 36 call 1: session 34-35's three waiting patches on main 6ef3657 (branch cand: blob-slot,
# dq-gate-tma, pool-gate-tma, one commit each), staged in .devbinB; main's sgla in .devbinN.
# Carry [".devbinB", ".devbinN"].  The candidate's suites (a superset of main's: main's own tests
# last ran at dcbc148), then bench/ab.sh A = main, B = cand on the rows each patch touches:
#   blob-slot: every backward (8x4096x16x128 g, g_gamma); dq-gate-tma: K = 64 g backward;
#   pool-gate-tma: K = 64 g pool rows (dense and mixed).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
SGLA_DEVBIN=.devbinB bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward \
4,8192,32,64,64:g:--backward 8,4096,16,64,64:g:--backward \
8,4096,16,64,64:g:--pool 1,65536,16,64,64:g:--varlen=64:--pool" \
SGLA_DEVBIN_A=.devbinN SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
