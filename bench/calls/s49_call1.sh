#!/bin/bash
# Session 49 call 1: the constant head everywhere in the backward's CUDA-core kernels, beside main.
#   .devbinMain  main 2952eb8 (kernels of 7755c4c): sgla and test_gpu_backward
#   .devbinha    wip/grads-hd-all 47d91e4: the gradient kernel's K = V = 64 / 128 instances for TF32
#                alone and the 16-bit CUDA-core path too (sgla)
#   .devbinsh    wip/states-hd 1060b20: the states kernels' K = V = 64 / 128 instances (sgla)
#   .devbinhb    wip/hd-both 69ae43d: both, and a small set that runs the new 16-bit instances (sgla,
#                test_gpu_backward)
# The A/B first (SGLA_ROUNDS rounds interleaved, nothing else on the GPU), then main's and hb's
# test_gpu_backward (SGLA_SEED 49001) with memcheck and racecheck of both small sets.
# Carry [".devbinMain", ".devbinha", ".devbinsh", ".devbinhb"].
# (As it ran, its summary steps written out: `git show 6d6efb5:bench/calls/s49_call1.sh`.)
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=49001
B=".devbinMain .devbinha .devbinsh .devbinhb"
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 8,4096,16,128,128:f32:g \
4,8192,32,64,64:f32t:g 8,4096,16,128,128:f32t:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,32,32:f32:g}" $B > "$OUT/ab_raw.txt"
bwd_ab_table
SGLA_SAN_TIMEOUT=300 bwd_sanitizers .devbinhb _hb
SGLA_SAN_TIMEOUT=300 bwd_sanitizers .devbinMain _main
bwd_test .devbinhb hb > "$OUT/summary_hb.txt"
bwd_test .devbinMain main > "$OUT/summary_main.txt"
bwd_sanitizers_wait _hb >> "$OUT/summary_hb.txt"
bwd_sanitizers_wait _main >> "$OUT/summary_main.txt"
bwd_report hb main
bwd_pack
