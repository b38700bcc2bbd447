#!/bin/bash
# Session 36 call 5 (asked as the nvidia-h200 kind): issue 14's K = 64 row beside main before gate g by TMA
# (A = e121813, .devbinM), then issue 11's backward rows beside fla 0.6 (s33 call 4's body: three shapes,
# both gates, fla's gated backward with its Triton check bypassed, peak memory).  No suites: main's
# kernels are call 3-4's, which ran them.  Carry [".devbin", ".devbinM", ".whl"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma" SGLA_DEVBIN_A=.devbinM SGLA_ROUNDS=3 SGLA_ITERS=30 \
  bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
SGLA_T2=300 bash bench/calls/s33_call4.sh
echo "took $(( $(date +%s) - t0 )) s"
