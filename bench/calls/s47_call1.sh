#!/bin/bash
# Session 47 call 1: the fp32 backward's gradient kernel with its block's S and dS' staged in shared
# memory where they fit beside two blocks an SM (K x V small: 64 x 64 and below), against main.
# A = main 710ede5 (.devbinA); X = wip/grads-staged c219099 (.devbinX): the staging (0000339) and
# block_sum by warp butterflies; Y = X + S and dS' sent to L2 where they are not staged (dd0090c,
# .devbinY); Z = Y + the states kernels sending the block after next's rows and gates to L2 (ec201b2, .devbinZ; its test_gpu_backward 612e6a4: one case more).
# The backward A/B first (SGLA_ROUNDS rounds), then the test_gpu_backward of X and Z (SGLA_SEED 47001)
# with memcheck and racecheck of Z's small set, then ncu's kernel times of A and Z.
# Carry [".devbinA", ".devbinX", ".devbinY", ".devbinZ"] (sgla; X and Z their test_gpu_backward too).
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=47001
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 4,8192,32,64,64:f32:gamma 8,4096,16,32,32:f32:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinA .devbinX .devbinY .devbinZ > "$OUT/ab_summary.txt"
( bwd_test .devbinX X > "$OUT/summary_X.txt" ) &
PX=$!
bwd_sanitizers .devbinZ
bwd_test .devbinZ Z > "$OUT/summary_Z.txt"
bwd_sanitizers_wait >> "$OUT/summary_Z.txt"
wait $PX
[ "${SGLA_NCU:-1}" = 1 ] && { bwd_ncu_times .devbinA 4,8192,32,64,64 8,4096,16,128,128; bwd_ncu_times .devbinZ 4,8192,32,64,64 8,4096,16,128,128; } > "$OUT/ncu_summary.txt"
echo "== summary $(( $(date +%s) - t0 )) s"
head -2 "$OUT/summary_X.txt"; head -2 "$OUT/summary_Z.txt"; tail -4 "$OUT/summary_Z.txt"
grep -h "FAIL" "$OUT/test_X.log" "$OUT/test_Z.log" | cut -c1-200 | head -5
cat "$OUT/ncu_summary.txt" 2>/dev/null
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
