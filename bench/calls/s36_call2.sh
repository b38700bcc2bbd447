#!/bin/bash
# Session 36 call 2: main bf680f1 (blob-slot merged) with two scratch switches (branch cand, not on main):
# SGLA_X_GS=1 runs gate g's forward on the GS instance (consumer warps scan strided g; no gate_b, no
# TMA of g, no persistent grid) and SGLA_X_POOLTMA=1 a pool's prefills with g by TMA (call 1's
# pool-gate-tma).  Call 1 timed the pool's dense K = 64 row 4 % faster on GS than on g by TMA and the
# forward (TMA) slower than that pool row: is GS the faster form for the forward too?
# Carry [".devbinB"].  The build's suites (its switches off: main's code), then bench/ab.sh with
# A = B = the build (their spread), C = the build with both switches.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
SGLA_DEVBIN=.devbinB bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^sgla verify\|^level"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma 8,4096,16,64,64:g 8,4096,16,64,64:gamma \
64,1024,16,64,64:g 1,65536,16,64,64:g:--varlen=64 8,4096,16,128,128:g \
8,4096,16,64,64:g:--pool 1,65536,16,64,64:g:--varlen=64:--pool" \
SGLA_DEVBIN_A=.devbinB SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinB SGLA_ENV_C="SGLA_X_GS=1 SGLA_X_POOLTMA=1" \
SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
