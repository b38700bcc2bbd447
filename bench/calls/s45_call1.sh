#!/bin/bash
# Session 45 call 1.  .devbinT = 3f64c0a+ (the states kernels' block products on mma.sync in 3xTF32, the
# odd-size test rows), .devbin = ac8a29a (the grads kernel's state products summing each block of 32 j in
# a fresh accumulator; the states kernels' loads in flight for fp32 K <= 128 only, warp 0's gates with
# them: session 44's lost branch written again), .devbinG = main 19bccc6's sgla.  test_gpu_backward of
# both branch builds, memcheck and racecheck of .devbinT's small set; the fp32 (and bf16 forced to the
# CUDA-core path) backward A/B of the three builds; each kernel's time under ncu (G and T).
# Carry [".devbinT", ".devbin", ".devbinG"].
. bench/calls/bwd_steps.sh
bwd_begin
bwd_sanitizers .devbinT
( timeout 200 .devbin/tests/test_gpu_backward > "$OUT/test_N.log" 2>&1; echo "test N rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/test_N_rc.txt" ) &
bwd_test .devbinT T
while [ ! -f "$OUT/test_N_rc.txt" ]; do sleep 1; done
cat "$OUT/test_N_rc.txt"; tail -1 "$OUT/test_N.log"; grep -h "FAIL" "$OUT/test_N.log" | cut -c1-240 | head -4
grep -h "f32" "$OUT/test_N.log" | grep -E " 256 | 256," | cut -c1-200 | head -4
bwd_sanitizers_wait
bwd_ab "8,4096,16,128,128:f32 4,8192,32,64,64:f32 2,4096,8,256,256:f32 8,4096,16,128,128:bf16" .devbinG .devbin .devbinT
for b in .devbinG .devbinT; do bwd_ncu_times $b 8,4096,16,128,128 2,4096,8,256,256; done
