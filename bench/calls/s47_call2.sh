#!/bin/bash
# Session 47 call 2: V = X with the staged states' copy and dg's <dS', S> stepped without a division
# (wip/grads-staged2 cf585ea, .devbinV; its test_gpu_backward has call 1's extra 16-bit case) against
# A = main 710ede5 (.devbinA) and X = c219099 (.devbinX).  The backward A/B first (SGLA_ROUNDS rounds),
# then V's test_gpu_backward (SGLA_SEED 47001) with memcheck and racecheck of its small set, then ncu's
# kernel times of V at K = 64 and 128.  Carry [".devbinA", ".devbinX", ".devbinV"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=47001
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 8,4096,16,32,32:f32:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinA .devbinX .devbinV > "$OUT/ab_summary.txt"
bwd_sanitizers .devbinV
bwd_test .devbinV V > "$OUT/summary_V.txt"
bwd_sanitizers_wait >> "$OUT/summary_V.txt"
[ "${SGLA_NCU:-1}" = 1 ] && bwd_ncu_times .devbinV 4,8192,32,64,64 8,4096,16,128,128 > "$OUT/ncu_summary.txt"
rm -f "$OUT"/*.csv "$OUT/ncu_err.log"
echo "== summary $(( $(date +%s) - t0 )) s"
head -3 "$OUT/summary_V.txt" | cut -c1-200; tail -4 "$OUT/summary_V.txt"
grep -h "FAIL" "$OUT/test_V.log" | cut -c1-200 | head -5
cat "$OUT/ncu_summary.txt" 2>/dev/null
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
