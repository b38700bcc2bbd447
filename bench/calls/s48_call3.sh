#!/bin/bash
# Session 48 call 3: H (wip/grads-hd 1e8a0c6, .devbinH: the gradient kernel with K = V = 64 or 128 a
# compile-time constant for fp32 3xTF32) beside main (.devbinM: main 04acdc0's sgla alone).  The backward
# A/B first (SGLA_ROUNDS rounds; K = 32 and TF32 alone run instances H leaves as they were: controls),
# then H's test_gpu_backward (SGLA_SEED 48003) with memcheck and racecheck of its small set.
# Carry [".devbinM", ".devbinH"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=48003
SGLA_ROUNDS=${SGLA_ROUNDS:-3} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 8,4096,16,128,128:f32:g 8,4096,16,32,32:f32:g 4,8192,32,64,64:f32t:g}" \
  .devbinM .devbinH > "$OUT/ab_summary.txt"
bwd_sanitizers .devbinH
bwd_test .devbinH H > "$OUT/summary_H.txt"
bwd_sanitizers_wait >> "$OUT/summary_H.txt"
rm -f "$OUT/ab_summary.txt" "$OUT/memcheck.log" "$OUT/racecheck.log"
echo "== summary $(( $(date +%s) - t0 )) s"
head -2 "$OUT/summary_H.txt"; tail -4 "$OUT/summary_H.txt"
grep -h "FAIL" "$OUT/test_H.log" | cut -c1-200 | head -5
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
