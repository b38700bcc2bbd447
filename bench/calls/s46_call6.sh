#!/bin/bash
# Session 46 call 6: wip/states-db against main (.devbinN, the cubin of main's chunk_bwd.cu).
# B (a57c8d6): the states kernels' gates scanned by every warp and two operand buffers at K <= 128 (one
# barrier a block where three were: call 5 put 35 % of their stall samples on barriers); its digits must
# be main's: test_gpu_backward with SGLA_SEED 46001, md5 of its log without the TF32 lines as calls 2-3's
# (11102176d8ae1d82522eb70e9a86c91f).  C (627fbaf) = B + grads' <dS', S> by float4 loads (call 5: 10 % of
# grads' stall samples); dg's last bits move.  C's test beside B's, memcheck and racecheck of C's small
# set; the backward A/B of N, B, C, two rounds; ncu's kernel times of C.
# Carry [".devbinN", ".devbinB", ".devbinC"].  SGLA_ROUNDS, SGLA_CASES, SGLA_NCU=0 trim it (the session's
# last device seconds: `SGLA_ROUNDS=1 SGLA_NCU=0 SGLA_CASES="<three cases>" bash bench/calls/s46_call6.sh`).
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=46001
( timeout 200 .devbinB/tests/test_gpu_backward > "$OUT/test_B.log" 2>&1; echo "test B rc=$?" > "$OUT/test_B_rc.txt" ) &
PB=$!
bwd_sanitizers .devbinC
bwd_test .devbinC C > "$OUT/summary_C.txt"
bwd_sanitizers_wait >> "$OUT/summary_C.txt"
wait $PB
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-8,4096,16,128,128:f32:g 8,4096,16,128,128:f32t:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g}" .devbinN .devbinB .devbinC > "$OUT/ab_summary.txt"
[ "${SGLA_NCU:-1}" = 1 ] && bwd_ncu_times .devbinC 8,4096,16,128,128 4,8192,32,64,64 > "$OUT/ncu_summary.txt"
echo "== summary"
cat "$OUT/test_B_rc.txt"; tail -1 "$OUT/test_B.log"; grep -c FAIL "$OUT/test_B.log"
grep -v "TF32 alone" "$OUT/test_B.log" | md5sum
head -2 "$OUT/summary_C.txt"; grep -c FAIL "$OUT/test_C.log"; tail -4 "$OUT/summary_C.txt"
grep -h "FAIL" "$OUT/test_B.log" "$OUT/test_C.log" | cut -c1-200 | head -5
cat "$OUT/ncu_summary.txt" 2>/dev/null
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
