#!/bin/bash
# Session 51 call 1 (prepared in session 50): session 50's call 6 (main's backward suite with the four
# 16-bit run-time-head cases, which ran only on wip/grads-raw-rt's instances) and the next states-kernel
# change beside main.
#   .devbinF  main 8733d3b (sgla, test_gpu_backward; its kernels are main's)
#   .devbinS  wip/states-scan-all 3021705 (sgla, test_gpu_backward; the branch, rebased onto main since,
#             is 6e63909 with every kernel 3021705's machine code, bench/cubin_kernels.py): every warp
#             scans the block's gates in registers before the barrier (two barriers a 32-token block,
#             not three: the fp32 states launches' barrier stalls, 1.65 of 7.6 cycles an issue in session 50's profile)
#  1. the A/B (`sgla bench --backward`, 2 rounds): fp32 3xTF32 and TF32 alone, bf16 on the CUDA-core path,
#     fp32 K = 32 (every states instance changed; the digits must not);
#  2. both builds' test_gpu_backward in full (SGLA_SEED 51001) with memcheck and racecheck of the small sets.
# Carry [".devbinF", ".devbinS"] (~41 MiB with the tree).
# SGLA_SHORT=1 (~250 s, for a budget near its end): three A/B cases, S's suite alone (S is main plus the
# states change: main's new test cases run there, on main's gradient kernel), sanitizers cut at 110 s.
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=51001
CASES="4,8192,32,64,64:f32:g 8,4096,16,128,128:f32:g 8,4096,16,128,128:f32t:g 4,8192,32,64,64:bf16:g \
8,4096,16,128,128:bf16:g 2,8192,8,256,256:bf16:g 8,4096,16,32,32:f32:g"
[ -n "$SGLA_SHORT" ] && CASES="8,4096,16,128,128:f32:g 8,4096,16,128,128:bf16:g 8,4096,16,32,32:f32:g" &&
  export SGLA_SAN_TIMEOUT=110
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-$CASES}" .devbinF .devbinS > "$OUT/ab_raw.txt"
bwd_ab_table
[ -z "$SGLA_SHORT" ] && bwd_suite .devbinF F
bwd_suite .devbinS S
if [ -n "$SGLA_SHORT" ]; then bwd_report S; else bwd_report F S; fi
bwd_pack
