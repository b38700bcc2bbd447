#!/bin/bash
# Session 30 call 1: main's tests (bench/device_run.sh tests: the GPU suites, compute-sanitizer, pytest,
# verify level 4, run_cuda_check with its new `sgla grad` rows), then issue 14's table and issue 11's rows
# beside fla (bench/calls/s25_call4.sh, with the Triton cache carried and the peak-memory column), in one
# device call.  Carry [".devbin", ".whl", ".triton_cache"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_tail.log" 2>&1
echo "tests: $(( $(date +%s) - t0 )) s"
cat "$OUT/summary.txt"
tail -16 "$OUT/run_cuda_check.log"
left=$(( ${SGLA_BUDGET:-560} - ($(date +%s) - t0) ))   # SGLA_BUDGET: the seconds this call may run
[ $left -gt 200 ] || { echo "no time left for the table ($left s)"; exit 0; }
SGLA_T1=$(( left * 2 / 5 )) SGLA_T2=$(( left * 3 / 5 - 10 )) bash bench/calls/s25_call4.sh
