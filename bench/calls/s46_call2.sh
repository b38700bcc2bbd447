#!/bin/bash
# Session 46 call 2: main (.devbinY = b3eb9b8, grads by cp.async merged; its libsgla.so for torch) and
# wip/states-warps (.devbinW = ebb71cd: the states kernels' warps hold one m tile by up to four n tiles,
# the workspace states stored by pairs).  While fla 0.6's fp32 kernels compile (four processes): W's
# test_gpu_backward (SGLA_SEED 46001, as call 1: its log's md5 should equal call 1's Y log, the same
# digits) beside memcheck and racecheck of its small set.  Then the backward A/B of Y and W, two rounds,
# and the fp32 rows of main beside fla in one process (3 interleaved rounds).
# Carry [".devbinY", ".devbinW", ".whl"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=46001
BD=.devbinY . bench/calls/fla_env.sh
S=8x4096x16x128@f32,4x8192x32x64@f32
( python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 4 --rounds 0 \
    --no-ceilings > "$OUT/fla_warm.log" 2>&1; echo "fla warm rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_warm.log" ) &
WARM=$!
bwd_sanitizers .devbinW
bwd_test .devbinW W > "$OUT/test_W_summary.txt"
bwd_sanitizers_wait >> "$OUT/test_W_summary.txt"
wait $WARM; tail -2 "$OUT/fla_warm.log"
bwd_ab "8,4096,16,128,128:f32:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g" .devbinY .devbinW > "$OUT/ab_summary.txt"
timeout 300 python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --rounds 3 --no-ceilings \
  > "$OUT/fla_f32_bwd.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/failed/p;/^shape /,$p' "$OUT/fla_f32_bwd.log"
echo "== summary"
head -3 "$OUT/test_W_summary.txt"; tail -4 "$OUT/test_W_summary.txt"; md5sum "$OUT/test_W.log"
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
