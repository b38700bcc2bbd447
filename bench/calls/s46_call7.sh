#!/bin/bash
# Session 46 call 7: s46_call6.sh trimmed to the session's last device seconds, the timing first: one
# round of the backward A/B of N (main), B (states: one barrier a block) and C (B + grads' float4
# <dS', S>) on three fp32 shapes; then B's test_gpu_backward (SGLA_SEED 46001: its log without the TF32
# lines must hash to 11102176d8ae1d82522eb70e9a86c91f, main's) beside C's with memcheck and racecheck of
# C's small set.  Carry [".devbinN", ".devbinB", ".devbinC"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=46001
SGLA_ROUNDS=1 bwd_ab "8,4096,16,128,128:f32:g 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g" .devbinN .devbinB .devbinC > "$OUT/ab_summary.txt"
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
( timeout 150 .devbinB/tests/test_gpu_backward > "$OUT/test_B.log" 2>&1; echo "test B rc=$?" > "$OUT/test_B_rc.txt" ) &
PB=$!
bwd_sanitizers .devbinC
bwd_test .devbinC C > "$OUT/summary_C.txt"
bwd_sanitizers_wait >> "$OUT/summary_C.txt"
wait $PB
echo "== summary"
cat "$OUT/test_B_rc.txt"; tail -1 "$OUT/test_B.log"; grep -v "TF32 alone" "$OUT/test_B.log" | md5sum
head -2 "$OUT/summary_C.txt"; tail -4 "$OUT/summary_C.txt"
grep -h "FAIL" "$OUT/test_B.log" "$OUT/test_C.log" | cut -c1-200 | head -5
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
