#!/bin/bash
# Session 43 call 2: issue 11's other three backward rows beside fla 0.6 in one process (call 1 had
# 8x4096x16x128 and 4x8192x32x64): D = 256, many short sequences, one long sequence; both gates.
# .devbin = main's kernels (42565fd + tests).  Carry [".devbin", ".whl"].
. bench/calls/fla_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
S=2x16384x8x256,64x1024x16x128,1x32768x16x128
timeout ${SGLA_T3:-400} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S \
  --warm-jobs 6 --rounds 3 --no-ceilings > "$OUT/fla_bwd3.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/failed/p;/^shape /,$p' "$OUT/fla_bwd3.log"
