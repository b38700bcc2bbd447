#!/bin/bash
# Session 50 call 4: the states kernels with the next block's rows kept raw (wip/states-raw: 16-bit rows
# converted when stored, not when loaded; fp32's instances are main's machine code, bench/cubin_kernels.py)
# beside main, on the CUDA-core backward's 16-bit rows (`--bwd-path 1`) and an fp32 control; then the
# branch's test_gpu_backward (SGLA_SEED 50002) with memcheck and racecheck of its small set (which runs
# the 16-bit CUDA-core path at K = V = 64 and 128).
#   .devbinM  main 06da11e (sgla)
#   .devbinX  wip/states-raw (sgla, test_gpu_backward)
# Carry [".devbinM", ".devbinX"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=50002
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,128,128:f16:g 4,4096,16,96,96:bf16:g 2,8192,8,256,256:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbinM .devbinX > "$OUT/ab_raw.txt"
bwd_ab_table
bwd_sanitizers .devbinX _X
bwd_test .devbinX X > "$OUT/summary_X.txt"
bwd_sanitizers_wait _X >> "$OUT/summary_X.txt"
bwd_report X
bwd_pack
