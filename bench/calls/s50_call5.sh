#!/bin/bash
# Session 50 call 5: the gradient kernel's 16-bit rows loaded in batches before their conversion (the
# states kernels' fix of call 4, in the other kernel), beside main after call 4's merge, on the CUDA-core
# backward's 16-bit rows (`--bwd-path 1`), with fp32 as the control; then Z's test_gpu_backward
# (SGLA_SEED 50003) with memcheck and racecheck of its small set (16-bit CUDA-core cases of constant heads,
# K = V = 64 and 128, and of run-time ones, K 96 / V 48 and K 200 / V 136: every changed instance).
#   .devbinA  main 1911256 (sgla)
#   .devbinY  wip/grads-raw 09e319b (sgla): constant heads, four rows' raw values of two tensors at once
#   .devbinZ  wip/grads-raw-rt (sgla, test_gpu_backward): Y, and run-time heads two rows at a time (Y's
#             instances the same machine code: bench/cubin_kernels.py)
# Carry [".devbinA", ".devbinY", ".devbinZ"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=50003
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,128,128:f16:g 4,4096,16,96,96:bf16:g 2,8192,8,256,256:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinA .devbinY .devbinZ > "$OUT/ab_raw.txt"
bwd_ab_table
bwd_sanitizers .devbinZ _Z
bwd_test .devbinZ Z > "$OUT/summary_Z.txt"
bwd_sanitizers_wait _Z >> "$OUT/summary_Z.txt"
bwd_report Z
bwd_pack
