#!/bin/bash
# Session 50 call 5: the gradient kernel's 16-bit rows at a constant head loaded four rows at a time
# (wip/grads-raw: the raw values of two tensors' four rows in flight before the first conversion) beside
# main after call 4's merge (wip/states-raw), on the CUDA-core backward's 16-bit rows (`--bwd-path 1`),
# K = 96 (run-time head: main's grads code) and fp32 as controls; then the branch's test_gpu_backward
# (SGLA_SEED 50003) with memcheck and racecheck of its small set (16-bit CUDA-core cases at K = V = 64
# and 128: both changed instances).
#   .devbinX  main 1911256 (sgla)
#   .devbinY  wip/grads-raw (sgla, test_gpu_backward)
# Carry [".devbinX", ".devbinY"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=50003
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,128,128:f16:g 4,8192,32,64,64:f16:g 4,4096,16,96,96:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinX .devbinY > "$OUT/ab_raw.txt"
bwd_ab_table
bwd_sanitizers .devbinY _Y
bwd_test .devbinY Y > "$OUT/summary_Y.txt"
bwd_sanitizers_wait _Y >> "$OUT/summary_Y.txt"
bwd_report Y
bwd_pack
