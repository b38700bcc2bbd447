#!/bin/bash
# The next session's second call (~200 s), written in session 32: bench/wip/mma-balance.patch (the
# mma.sync forward's warps w and w + 4, which share a scheduler, take row tiles m and 3 - m: each scheduler
# one light and one heavy tile of the causal Q K^T and A V, 5 key tiles each, where m = w % 4 gave
# scheduler 0 two and scheduler 3 eight).  B = main 07f8010 (3501730's code) + the patch (.devbinB, staged from branch
# wip/mma-balance), A = main (.devbin): B's test_gpu_forward in full beside compute-sanitizer memcheck and
# racecheck on it (SGLA_GPU_SMALL), then the portable rows A / B in three interleaved rounds (bench/ab.sh).
# Prediction: the portable rows 3-10 % faster at K = 128 and 64 (a scheduler's tensor work a chunk
# 448 -> 376 mma at K = V = 128 on the busiest; the kernel is latency-bound, so less), the Hopper rows
# unchanged (other kernels).  Carry [".devbin", ".devbinB"] (.devbinB: sgla and test_gpu_forward alone, ~17 MB).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
. bench/calls/staged_fwd_tests.sh .devbinB
echo "tests: $(( $(date +%s) - t0 )) s"
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:--config=portable
8,4096,16,128,128:gamma:--config=portable 16,2048,32,128,128:g:--config=portable 4,8192,32,64,64:g:--config=portable
8,4096,16,128,128:g:--config=portable-one-stage 1,65536,8,128,128:g:--config=portable 4,8192,16,128,256:g:--config=portable
2,16384,8,256,256:g:--config=portable 8,4096,16,128,128:g" bash bench/ab.sh > /dev/null 2>&1
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
echo "took $(( $(date +%s) - t0 )) s"
