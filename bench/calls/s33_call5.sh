#!/bin/bash
# Session 33 call 5 (~150 s): main at f2eb4b2 (its last kernel change 0bb092f: the mma.sync forward's one-stage
# row tiles m and 3 - m) -- bench/device_run.sh tests on .devbin (sm_90a) beside the sm_80 PTX build's suites
# (.devbinJ, JIT-compiled here, bench/calls/s32_call4.sh) -- then the portable rows of this build, one stage and
# two, two rounds (call 2's B gave one stage 0.3140 ms at 8x4096x16x128 g, A 0.3230; two stages A 0.2905).
# Carry [".devbin", ".devbinJ"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/calls/s33_call1.sh  # main's suites beside the JIT build's
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=2 SGLA_CASES="8,4096,16,128,128:g:--config=portable-one-stage
8,4096,16,128,128:g:--config=portable 4,8192,32,64,64:g:--config=portable" bash bench/ab.sh > /dev/null 2>&1
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
echo "took $(( $(date +%s) - t0 )) s"
