#!/bin/bash
# Session 43 call 4: call 3's two failures were the test's, not the plan's: under a cap one byte below the
# plain plan, rows of 100-300 tokens have no smaller plan (their blob halves to as many slots: (c + N + 1)/2
# + N + 1).  The half blob's edge cases now run as one time window (sgla_cuda_backward_windows(b, 1)).
# test_gpu_backward whole, and memcheck / racecheck on its small set.  Carry [".devbin"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool memcheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool racecheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
timeout 200 .devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1
echo "test_gpu_backward rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_gpu_backward.log"; grep -h "FAIL\|half the blob\|workspace at" "$OUT/test_gpu_backward.log" | cut -c1-220 | head -8
wait
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
tail -2 "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
