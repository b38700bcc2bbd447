#!/bin/bash
# Session 50 call 6: main after call 5's merge (wip/grads-raw: constant heads' 16-bit rows in batches) and
# the new test cases (16-bit CUDA-core rows of run-time heads, which call 5 ran on wip/grads-raw-rt's
# instances, not main's): test_gpu_backward in full (SGLA_SEED 50004), memcheck and racecheck of its
# small set.
#   .devbinF  main (test_gpu_backward: `SGLA_DEVBIN=.devbinY sh bench/stage_devbin.sh`, renamed, keeping
#             tests/test_gpu_backward.xz and COMMIT; session 50 staged 8733d3b, whose kernels are main's)
# Carry [".devbinF"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=50004
bwd_suite .devbinF F
cat "$OUT/summary_F.txt"
grep -h "FAIL" "$OUT"/test_F.log | cut -c1-200 | head -5
bwd_pack
