#!/bin/bash
# Session 46 call 7 (and call 6, its fuller form): wip/states-db against main (.devbinN, the cubin of
# main's chunk_bwd.cu), the timing first.  B (a57c8d6): the states kernels' gates scanned by every warp and
# two operand buffers at K <= 128 (one barrier a block where three were); its digits must be main's:
# test_gpu_backward with SGLA_SEED 46001, md5 of its log without the TF32 lines as calls 2-3's
# (11102176d8ae1d82522eb70e9a86c91f).  C (627fbaf) = B + grads' <dS', S> by float4 loads.  The backward
# A/B of N, B, C; then B's test beside C's with memcheck and racecheck of C's small set; ncu's kernel times
# of C with SGLA_NCU=1.  As it ran (the session's last device seconds): one round of three cases, no ncu;
# SGLA_ROUNDS, SGLA_CASES and SGLA_NCU widen it (bench/calls/s46_call6.sh).
# Carry [".devbinN", ".devbinB", ".devbinC"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=46001
SGLA_ROUNDS=${SGLA_ROUNDS:-1} bwd_ab "${SGLA_CASES:-8,4096,16,128,128:f32:g 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g}" \
  .devbinN .devbinB .devbinC > "$OUT/ab_summary.txt"
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
( timeout 150 .devbinB/tests/test_gpu_backward > "$OUT/test_B.log" 2>&1; echo "test B rc=$?" > "$OUT/test_B_rc.txt" ) &
PB=$!
bwd_sanitizers .devbinC
bwd_test .devbinC C > "$OUT/summary_C.txt"
bwd_sanitizers_wait >> "$OUT/summary_C.txt"
wait $PB
[ "${SGLA_NCU:-0}" = 1 ] && bwd_ncu_times .devbinC 8,4096,16,128,128 4,8192,32,64,64 > "$OUT/ncu_summary.txt"
echo "== summary"
cat "$OUT/test_B_rc.txt"; tail -1 "$OUT/test_B.log"; grep -v "TF32 alone" "$OUT/test_B.log" | md5sum
head -2 "$OUT/summary_C.txt"; tail -4 "$OUT/summary_C.txt"
grep -h "FAIL" "$OUT/test_B.log" "$OUT/test_C.log" | cut -c1-200 | head -5
cat "$OUT/ncu_summary.txt" 2>/dev/null
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
