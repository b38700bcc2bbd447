#!/bin/bash
# Session 44 call 2: the fp32 backward (CUDA cores, register tiles) beside fla 0.6's, whose tl.dot on
# fp32 inputs runs in TF32 on Hopper: time and every gradient's relative RMS against fp64 on the last
# slice, both gates, fwd+bwd peak memory.  Carry [".devbin", ".whl"] (.devbin: the build to time).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
. bench/calls/fla_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
S=${SGLA_F32_SHAPES:-8x4096x16x128@f32,4x8192x32x64@f32}
timeout ${SGLA_T:-420} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S \
  --warm-jobs 4 --rounds 3 --no-ceilings > "$OUT/fla_f32_bwd.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/failed/p;/^shape /,$p' "$OUT/fla_f32_bwd.log"
