#!/bin/bash
# Session 33 call 6 (~200 s): branch wip/qk-pair (b454c67 on main 532c2a6): in the mma.sync forward at two
# stages, warps w and w + 4 (the same 16 rows, the two column halves of o) each computed all of the rows'
# causal Q K^T; now each computes every other key tile and they trade the 16-bit A fragments through 8 KB of
# shared memory and a pair barrier (bar.sync 1 + m, 64).  B = the branch (.devbinB: sgla and test_gpu_forward),
# A = main (.devbin, f2eb4b2's build: the same code but this): B's test_gpu_forward in full beside
# compute-sanitizer memcheck and racecheck on it (SGLA_GPU_SMALL), then the portable rows A / B in three
# interleaved rounds (bench/ab.sh).  Prediction: the busiest warp's tensor work a chunk 224 -> 192 mma at
# K = V = 128 (the average 188 -> 168), registers 211 -> 204 (sm_90a); the portable rows 4-8 % faster at
# K = 64 / 128, the one-stage row and the Hopper plan unchanged (other code).  Carry [".devbin", ".devbinB"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
. bench/calls/staged_fwd_tests.sh .devbinB
grep -h -B2 -A8 "Invalid\|Race\|hazard" /tmp/b_san_*.log | head -30 >> "$OUT/b_tests.txt"
echo "tests: $(( $(date +%s) - t0 )) s"
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:--config=portable
8,4096,16,128,128:gamma:--config=portable 16,2048,32,128,128:g:--config=portable 4,8192,32,64,64:g:--config=portable
8,4096,16,128,128:g:--config=portable-one-stage 1,65536,8,128,128:g:--config=portable 4,8192,16,128,256:g:--config=portable
2,16384,8,256,256:g:--config=portable 8,4096,16,128,128:g" bash bench/ab.sh > /dev/null 2>&1
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
echo "took $(( $(date +%s) - t0 )) s"
