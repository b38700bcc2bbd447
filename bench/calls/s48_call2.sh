#!/bin/bash
# Session 48 call 2 (after call 1 = `SGLA_NCU_BEFORE=0 SGLA_SEED=48001 bash bench/calls/s38_call1.sh`, main's
# suites): session 47's W (wip/grads-splitk c846c8c, .devbinW: the gradient kernel's state products at
# nc <= 64 over two halves of j) beside main (.devbinM: main 04acdc0's sgla alone).  The backward A/B first
# (SGLA_ROUNDS rounds), then W's test_gpu_backward (SGLA_SEED 47001: its K = V = 64 digits must be session
# 47 call 2's) with memcheck and racecheck of its small set.  Carry [".devbinM", ".devbinW"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=47001
SGLA_ROUNDS=${SGLA_ROUNDS:-3} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 8,4096,16,32,32:f32:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinM .devbinW > "$OUT/ab_summary.txt"
bwd_sanitizers .devbinW
bwd_test .devbinW W > "$OUT/summary_W.txt"
bwd_sanitizers_wait >> "$OUT/summary_W.txt"
rm -f "$OUT/ab_summary.txt" "$OUT/memcheck.log" "$OUT/racecheck.log"
echo "== summary $(( $(date +%s) - t0 )) s"
head -2 "$OUT/summary_W.txt"; tail -4 "$OUT/summary_W.txt"
grep -h "FAIL" "$OUT/test_W.log" | cut -c1-200 | head -5
grep -h "K=64 V=64" "$OUT/test_W.log" | grep "f32" | head -4 | cut -c1-200
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
