#!/bin/bash
# Session 38 call 1: main 515557d (kernels as 92a99f2; host, CLI and Python review mends since): its suites, then
#   on an H200: issue 14's forward table and issue 11's backward rows beside fla 0.6 (the H200 rows
#     have not been measured since session 25; fla's kernels compile in 14 processes beside the suites);
#   on an H100: session 37's prepared ncu --set full of the merged backward pass at K = 64 and 128.
# Carry [".devbin", ".whl"] (bench/stage_devbin.sh at 515557d).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
case "$GPU" in *H200*) H200=1 ;; *) H200=0 ;; esac
S11=8x4096x16x128,4x8192x32x64,2x16384x8x256
if [ $H200 = 1 ]; then
  ( . bench/calls/fla_env.sh
    timeout 300 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 9 \
      --rounds 0 --no-ceilings > "$OUT/fla_warm.log" 2>&1 &
    timeout 300 python3 bench/fla_compare.py --shapes $S11 --gates gamma,g --bwd-shapes $S11 --warm-jobs 5 \
      --rounds 0 --no-ceilings > "$OUT/fla_warm_bwd.log" 2>&1; wait ) &
  WARM=$!
fi
timeout 330 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
echo "== tests rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
if [ $H200 = 1 ]; then
  wait $WARM; echo "warm rc=$? $(( $(date +%s) - t0 )) s"
  ( . bench/calls/fla_env.sh
    timeout 120 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 0 --rounds 3 \
      > "$OUT/fla_fwd.log" 2>&1
    echo "forward table rc=$? $(( $(date +%s) - t0 )) s"
    sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log"
    if [ $(( $(date +%s) - t0 )) -lt 330 ]; then
      timeout 150 python3 bench/fla_compare.py --shapes $S11 --gates gamma,g --bwd-shapes $S11 --warm-jobs 0 --rounds 3 \
        --no-ceilings > "$OUT/fla_bwd.log" 2>&1
      echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
      sed -n '/^device/p;/^shape /,$p' "$OUT/fla_bwd.log"
    fi )
elif [ $(( $(date +%s) - t0 )) -lt ${SGLA_NCU_BEFORE:-250} ]; then  # the device time left decides
  OUT=$OUT bash bench/calls/s37_call5.sh 2>&1 | tail -40   # K = 128 only (SGLA_NCU64=1: K = 64 too)
fi
echo "took $(( $(date +%s) - t0 )) s"
