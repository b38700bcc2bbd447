#!/bin/bash
# Session 49 call 2: F4Walk (bench/wip/f4walk.patch: the staged copy's and dg's float4 stepping as one
# helper) on top of wip/hd-both, beside wip/hd-both.
#   .devbinHB  wip/hd-both 69ae43d (sgla)
#   .devbinf4  wip/hd-both-f4 8420b11 (sgla, test_gpu_backward)
# The A/B first (SGLA_ROUNDS rounds; the helper runs only where the states are staged: K = V = 64 here,
# K = 128 a control), then f4's test_gpu_backward (SGLA_SEED 49002) with memcheck and racecheck of its
# small set.  Carry [".devbinHB", ".devbinf4"].
# (As it ran, its summary steps written out: `git show 8ca0e91:bench/calls/s49_call2.sh`.)
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=49002
SGLA_ROUNDS=${SGLA_ROUNDS:-3} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g \
4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" .devbinHB .devbinf4 > "$OUT/ab_raw.txt"
bwd_ab_table
bwd_sanitizers .devbinf4 _f4
bwd_test .devbinf4 f4 > "$OUT/summary_f4.txt"
bwd_sanitizers_wait _f4 >> "$OUT/summary_f4.txt"
bwd_report f4
bwd_pack
