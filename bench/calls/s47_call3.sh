#!/bin/bash
# Session 47 call 3: main's suites on a GPU after its last CUDA change, and W beside it.
# .devbin = main's code (built at cf585ea; main 37ffe3c's later commits are comments and documents),
# without test_gpu_backward (call 2 ran V's, the same kernels; the carry's 64 MiB); W = wip/grads-splitk
# c846c8c (.devbinW): the gradient kernel's state products at nc <= 64 over two halves of j.
# The backward A/B of main and W first (SGLA_ROUNDS rounds), then W's test_gpu_backward (SGLA_SEED
# 47001: its K = V = 64 digits must be call 2's) with memcheck and racecheck of its small set, beside
# `bench/device_run.sh tests` of main (SGLA_SEED 47002).  Carry [".devbin", ".devbinW"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=47001
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 8,4096,16,32,32:f32:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbin .devbinW > "$OUT/ab_summary.txt"
bwd_sanitizers .devbinW
( bwd_test .devbinW W > "$OUT/summary_W.txt" ) &
PW=$!
SGLA_SEED=47002 timeout ${SGLA_DR_TIMEOUT:-230} bash bench/device_run.sh tests > "$OUT/dr.txt" 2>&1
echo "device_run rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/dr.txt"
wait $PW
bwd_sanitizers_wait >> "$OUT/summary_W.txt"
rm -f "$OUT/ab_summary.txt" "$OUT/memcheck.log" "$OUT/racecheck.log"
echo "== summary $(( $(date +%s) - t0 )) s"
grep -v "^level\|^san_" "$OUT/dr.txt" | sed -n '/==== summary/,$p' | cut -c1-200
head -2 "$OUT/summary_W.txt"; tail -4 "$OUT/summary_W.txt"
grep -h "FAIL" "$OUT/test_W.log" | cut -c1-200 | head -5
grep -h "K=64 V=64" "$OUT/test_W.log" | grep "f32" | head -4 | cut -c1-200
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
