#!/bin/bash
# Session 28 call 8: b of chunk c + 1 scanned by warpgroup 0's warp 0 during chunk c (after its A V, in the
# time it waits for the state; SCAN_READY before the state reads it), not by the state after S^T's stores.
# Staged at d17f962 (main 0b61485's kernels): A = main; B = main + the scan moved.
# B's test_gpu_forward, then the fp32 rows A/B in interleaved rounds, then B's memcheck and racecheck
# (SGLA_GPU_SMALL).  carry [".devbinA", ".devbinB"] (~23 MB), ~150 s.
# Prediction: B -2 to -4 % at 3xTF32 and TF32 alone (the scan, ~300-400 cycles, leaves the state's chain).
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinA .devbinB; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinB/tests/*
timeout 100 .devbinB/tests/test_gpu_forward > $OUT/test_gpu_forward_B.log 2>&1
echo "B test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_B.log
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB timeout 100 bash bench/ab.sh > /dev/null 2>&1
tail -8 $OUT/ab.log
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  (SGLA_GPU_SMALL=1 timeout 100 $SAN --tool $tool --error-exitcode 1 .devbinB/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
   echo "B $tool rc=$? $(tail -2 $OUT/san_$tool.log | tr '\n' ' ')") &
done
wait
