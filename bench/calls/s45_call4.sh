#!/bin/bash
# Session 45 call 4: the fp32 backward of .devbinU (8e3a1af: states and grads on mma.sync in 3xTF32) beside
# fla 0.6's (TF32), as s44_call2.sh; while fla's kernels compile (no timing then), test_gpu_backward of
# U and T2 (f502fd5) on one seed each way (SGLA_SEED 4242 and 777: is dh0's 1.09e-6 on the MIX30 rows
# the draw or the build?).  Carry [".devbinU", ".devbinT", ".whl"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbinU/tests/*.xz .devbinT/tests/*.xz .devbinT/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
BD=.devbinU . bench/calls/fla_env.sh
S=${SGLA_F32_SHAPES:-8x4096x16x128@f32,4x8192x32x64@f32}
( python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 4 --rounds 0 \
    --no-ceilings > "$OUT/fla_warm.log" 2>&1; echo "fla warm rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_warm.log" ) &
WARM=$!
export SGLA_GPU_EXPECT_HOPPER=1
for seed in 4242 777; do
  P=
  for b in U T; do
    ( SGLA_SEED=$seed timeout 200 .devbin$b/tests/test_gpu_backward > "$OUT/test_${b}_$seed.log" 2>&1
      echo "test $b seed $seed rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/test_${b}_$seed.log" ) &
    P="$P $!"
  done
  wait $P
done
for f in "$OUT"/test_*_*.log; do
  tail -2 "$f" | tr '\n' ' '; echo
  grep -h "FAIL" "$f" | cut -c1-240 | head -4
  grep -h "f32 gate=g/mix0" "$f" | sed 's/.*nseq=0: //'
done
wait $WARM; tail -2 "$OUT/fla_warm.log"
timeout 300 python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --rounds 3 --no-ceilings \
  > "$OUT/fla_f32_bwd.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/failed/p;/^shape /,$p' "$OUT/fla_f32_bwd.log"
