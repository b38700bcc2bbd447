#!/bin/bash
# Session 46 call 2: main (.devbinY = b3eb9b8, grads by cp.async merged; sgla only), wip/states-warps
# (.devbinW = ebb71cd: the states kernels' warps hold one m tile by up to four n tiles, the workspace
# states stored by pairs) and wip/bwd-tf32 (.devbinT = 462ab2d: SGLA_FLAG_ALLOW_TF32 in the fp32
# backward; its libsgla.so for torch).  While fla 0.6's fp32 kernels compile (four processes): W's and
# T's test_gpu_backward (SGLA_SEED 46001, as call 1: W's log should equal call 1's, md5
# 7be3c7743bef9be8133bd6fa7866cccd; T's adds a TF32 check of every fp32 case) each beside memcheck and
# racecheck of its small set.  Then the backward A/B of Y, W, T (f32t: --tf32), two rounds, and the
# fp32 rows beside fla in one process (3 interleaved rounds; sgla 3xTF32 and TF32 alone).
# Carry [".devbinY", ".devbinW", ".devbinT", ".whl"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=46001
BD=.devbinT . bench/calls/fla_env.sh
S=8x4096x16x128@f32,4x8192x32x64@f32
( python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 4 --rounds 0 \
    --no-ceilings > "$OUT/fla_warm.log" 2>&1; echo "fla warm rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_warm.log" ) &
WARM=$!
O=$OUT
for B in .devbinW .devbinT; do
  T=${B#.devbin}; OUT=$O/$T; mkdir -p "$OUT"
  bwd_sanitizers $B
  bwd_test $B $T > "$OUT/summary.txt"
  bwd_sanitizers_wait >> "$OUT/summary.txt"
done
OUT=$O
wait $WARM; tail -2 "$OUT/fla_warm.log"
bwd_ab "8,4096,16,128,128:f32:g 8,4096,16,128,128:f32t:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g" .devbinY .devbinW .devbinT > "$OUT/ab_summary.txt"
timeout 300 python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --rounds 3 --no-ceilings \
  > "$OUT/fla_f32_bwd.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/failed/p;/^shape /,$p' "$OUT/fla_f32_bwd.log"
echo "== summary"
for T in W T; do head -2 $O/$T/summary.txt; grep -c "FAIL" $O/$T/test_$T.log; tail -4 $O/$T/summary.txt; md5sum $O/$T/test_$T.log; done
grep -v "TF32 alone" $O/T/test_T.log | md5sum   # (T without its TF32 lines: call 1's digits?)
grep -h "TF32 alone" $O/T/test_T.log | sed 's/.*: dq/dq/' | sort | tail -4
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
