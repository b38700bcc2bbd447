#!/bin/bash
# Session 35 call 1: gate g by TMA in the forward's rows that read b (K = 64, 256).
# Carry [".devbin", ".devbinM", ".devbinA"] (.devbin: the change; .devbinM: main e121813, sgla alone;
# .devbinA: 8abba2c, before the workspace cap, sgla alone).
#   1. the change's suites: bash bench/device_run.sh tests;
#   2. bench/ab.sh, A = main, B = the change: the forward with gate g where it reads b, g_gamma beside;
#   3. bench/ab.sh, A = 8abba2c, B = main, C = the change: the uncapped backward.
# 1-2 (call 1 wrote its tests' summary to tests_run.log, which device_run.sh's archive then took):
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma \
8,4096,16,64,64:g 64,1024,16,64,64:g 2,16384,8,256,256:g 2,16384,8,256,256:gamma 16,4096,8,256,256:g \
1,65536,16,64,64:g 1,65536,16,64,64:g:--varlen=64 8,4096,16,128,128:g" \
  . bench/calls/tests_then_ab.sh
mv "$OUT/ab.log" "$OUT/ab_fwd.log"; mv "$OUT/ab_raw.log" "$OUT/ab_fwd_raw.log"
t2=$(date +%s)
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinM SGLA_DEVBIN_C=.devbin SGLA_ROUNDS=3 SGLA_ITERS=20 \
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 4,8192,32,64,64:g:--backward" \
  bash bench/ab.sh > "$OUT/ab_bwd_run.log" 2>&1
echo "ab backward (A 8abba2c, B main, C the change) rc=$? $(( $(date +%s) - t2 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
