#!/bin/bash
# Session 45 call 3.  .devbinU = 8e3a1af (the grads kernel's scores and triangular products on mma.sync in
# 3xTF32, rows past L zero, the gate's row dots by every warp; on T2), .devbinT = f502fd5 (T2: the states
# kernels on mma.sync with division-free loads in flight for every K, the grads kernel's division-free
# loads), .devbin = ac8a29a (sgla), .devbinG = main 19bccc6 (sgla).  test_gpu_backward of U and T2,
# memcheck and racecheck of U's small set; the backward A/B of the four builds; each kernel's time under
# ncu (U) and the grads kernel's stall reasons (U).  Carry [".devbinU", ".devbinT", ".devbin", ".devbinG"].
. bench/calls/bwd_steps.sh
bwd_begin
bwd_sanitizers .devbinU
( timeout 200 .devbinT/tests/test_gpu_backward > "$OUT/test_T.log" 2>&1; echo "test T rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/test_T_rc.txt" ) &
bwd_test .devbinU U
grep -h "CUDA-core" "$OUT/test_U.log" | cut -c1-200 | head -4
while [ ! -f "$OUT/test_T_rc.txt" ]; do sleep 1; done
cat "$OUT/test_T_rc.txt"; tail -1 "$OUT/test_T.log"; grep -h "FAIL" "$OUT/test_T.log" | cut -c1-240 | head -4
bwd_sanitizers_wait
bwd_ab "8,4096,16,128,128:f32 4,8192,32,64,64:f32 2,4096,8,256,256:f32 8,4096,16,128,128:bf16" .devbinG .devbin .devbinT .devbinU
bwd_ncu_times .devbinU 8,4096,16,128,128 2,4096,8,256,256
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU -k regex:grads --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio .devbinU/sgla bench --backend cuda \
  --dtype f32 --gate g --backward --iters 1 --shape 8,4096,16,128,128 > "$OUT/ncu_grads_U.txt" 2>&1
echo "ncu stalls rc=$? $(( $(date +%s) - t0 )) s"
grep -E "Duration|Throughput|Achieved Occupancy|stalled" "$OUT/ncu_grads_U.txt" | sed 's/  */ /g' | sort -t' ' -k4 -g -r | head -24
