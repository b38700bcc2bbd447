#!/bin/bash
# Session 28 call 7: main 0b61485 (qb2, the early q, k load at K = 128, masked_a) through the whole correctness step of
# bench/device_run.sh (test_gpu_forward / backward / pool, compute-sanitizer memcheck and racecheck, pytest,
# verify level 4, run_cuda_check), fla 0.6 beside sgla on issue 14's two fp32 rows, then `sgla bench`'s fp32
# rows (3xTF32 and TF32 alone).  carry [".devbin", ".whl", ".triton_cache"], ~200 s.
OUT=${OUT:-/tmp/sgla_out}
SGLA_FLA_ARGS="--shapes 8x4096x16x128@f32,64x1024x16x128@f32 --gates g --bwd-shapes= --rounds 3 --no-ceilings" \
  SGLA_FLA_WARM_JOBS=2 SGLA_FLA_TIMEOUT=200 bash bench/device_run.sh testsfla
sed -n '/^shape /,$p' $OUT/fla.log | head -12
for a in "8,4096,16,128,128" "8,4096,16,128,128 --tf32" "4,8192,32,64,64" "4,8192,32,64,64 --tf32" "64,1024,16,128,128"; do
  set -- $a
  .devbin/sgla bench --backend cuda --dtype f32 --config f32-hopper --gate g --shape $1 $2 --iters 50 --warmup 5 2>&1 | tail -1
done
