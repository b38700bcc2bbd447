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
for z in .devbinB/*.xz .devbinB/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbinB/sgla .devbinB/tests/*
ldd .devbinB/sgla 2>/dev/null | grep -q "not found" && export LD_LIBRARY_PATH=$PWD/.devbinB/lib:${LD_LIBRARY_PATH:-}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_EXPECT_HOPPER=1 timeout 200 .devbinB/tests/test_gpu_forward > /tmp/b_fwd.log 2>&1; echo "B test_gpu_forward rc=$?" > /tmp/b_rc_fwd.txt ) &
for tool in memcheck racecheck; do
  ( SGLA_GPU_SMALL=1 timeout 150 $SAN --tool $tool --error-exitcode 1 .devbinB/tests/test_gpu_forward > /tmp/b_san_$tool.log 2>&1
    echo "B compute-sanitizer $tool test_gpu_forward rc=$?" > /tmp/b_rc_$tool.txt ) &
done
wait
cat /tmp/b_rc_*.txt | tee "$OUT/b_tests.txt"
tail -1 /tmp/b_fwd.log | tee -a "$OUT/b_tests.txt"
grep -h "^FAIL" /tmp/b_fwd.log | head -10 | tee -a "$OUT/b_tests.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" /tmp/b_san_*.log | tee -a "$OUT/b_tests.txt"
echo "tests: $(( $(date +%s) - t0 )) s"
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:--config=portable
8,4096,16,128,128:gamma:--config=portable 16,2048,32,128,128:g:--config=portable 4,8192,32,64,64:g:--config=portable
8,4096,16,128,128:g:--config=portable-one-stage 1,65536,8,128,128:g:--config=portable 4,8192,16,128,256:g:--config=portable
2,16384,8,256,256:g:--config=portable 8,4096,16,128,128:g" bash bench/ab.sh > /dev/null 2>&1
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
echo "took $(( $(date +%s) - t0 )) s"
