#!/bin/bash
# Session 27 call 9: main's last CUDA change (q and k by TMA, ed357af) through
# the whole correctness step of bench/device_run.sh (test_gpu_forward / backward / pool, compute-sanitizer
# memcheck and racecheck, pytest, verify level 4, run_cuda_check), then fla 0.6 beside sgla on issue 14's two
# fp32 rows (fla's kernels compiled beside the tests).  carry [".devbin", ".whl", ".triton_cache"] (call 6's cache).
SGLA_FLA_ARGS="--shapes 8x4096x16x128@f32,64x1024x16x128@f32 --gates g --bwd-shapes= --rounds 3 --no-ceilings" \
  SGLA_FLA_WARM_JOBS=2 SGLA_FLA_TIMEOUT=200 bash bench/device_run.sh testsfla
sed -n '/^shape /,$p' ${OUT:-/tmp/sgla_out}/fla.log | head -12
