#!/bin/bash
# Session 25 call 1 (bench/wip/next_call.sh until it ran; written in session 23, sessions 23-24 got no machine):
# both patches of this folder in one build, its GPU tests and sanitizers, then A/B against main.
# The two patches are in git at 6e27bea (bench/wip/, deleted after they ran).
# Stage here first (about 10 minutes on two cores):
#   sh bench/stage_devbin.sh && mkdir -p .devbinA/tests && cp .devbin/sgla.xz .devbinA/ \
#     && cp .devbin/tests/test_gpu_pool.xz .devbinA/tests/                       # main's CLI and pool test
#   git apply bench/wip/gamma-stage.patch bench/wip/pool-pdl.patch && SGLA_DEVBIN=.devbinB sh bench/stage_devbin.sh
#   git checkout -- src                                                          # main again
#   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc/cuda -Iinclude -Isrc \
#     -o .devbinB/wgtf32 bench/wgmma_tf32_probe.cu                           # the TF32 probe (session 24)
# then: run(command="SGLA_DEVBIN=.devbinB bash bench/wip/next_call.sh", carry=[".devbinA", ".devbinB"])  (~53 MB)
# Main's test_gpu_pool runs first, alone: its chain case asks whether main's mixed step (the decode grid a
# programmatic dependent of the chunked kernel that never waits for it) ends before the chunked kernel
# does, so that the next step could read slots the chunked kernel has not written yet (a reading of the
# code in session 23; pool-pdl.patch makes block 0 of the decode grid wait for it).
# A = main, B = both patches.  The backward's rows test gamma-stage (prediction: g_gamma at K = 128
# -3 to -4 %, gate g unchanged); the pool rows test pool-pdl (prediction: a one-sequence decode step
# 3.5 -> 3.0 us, 256 sequences unchanged).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
B=${SGLA_DEVBIN:-.devbin} # the patched build (another folder: SGLA_DEVBIN=.devbinB, carried instead of .devbin)
export SGLA_DEVBIN=$B
unxz -f .devbinA/tests/test_gpu_pool.xz 2>/dev/null; chmod +x .devbinA/tests/test_gpu_pool
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-} # libgomp, staged with the full build
echo "== main's test_gpu_pool =="; .devbinA/tests/test_gpu_pool 2>&1 | tail -4 | tee "$OUT/main_pool.log"
bash bench/device_run.sh tests > "$OUT/tests_out.log" 2>&1
tail -14 "$OUT/summary.txt"
[ -x .devbinB/wgtf32 ] && timeout 60 .devbinB/wgtf32 2>&1 | tee "$OUT/wgtf32.log"   # bench/wgmma_tf32_probe.cu, built here
timeout 90 python3 bench/tensor_rates.py 2>&1 | tee "$OUT/tensor_rates.log"   # the 3xTF32 floor (session 24's question)
timeout 120 $B/sgla bench --backend cuda --dtype f32 --gate g --shape 8,4096,16,128,128 --iters 20 2>&1 | tail -3 | tee "$OUT/f32.log"
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:gamma:--backward 8,4096,16,128,128:g:--backward \
4,8192,32,64,64:gamma:--backward 2,16384,8,256,256:gamma:--backward 8,4096,16,128,128:gamma \
4,8192,32,64,64:gamma 1,1,16,128,128:g:--pool 256,1,32,128,128:g:--pool" SGLA_DEVBIN_B=$B bash bench/ab.sh
tail -20 "$OUT/ab.log"
