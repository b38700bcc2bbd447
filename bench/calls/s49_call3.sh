#!/bin/bash
# Session 49 call 3: main after the merge (fea8aac: wip/hd-both, F4Walk, and the states kernels' constant
# 128 for 16-bit rows alone) beside main before it (2952eb8).  Every kernel of the merged chunk_bwd.cu
# but fp32's run-time-head states kernels ran in calls 1-2 with the same machine code
# (bench/cubin_kernels.py); those run at fp32 K = V = 128 now, so the A/B repeats call 1's cases.
#   .devbinMain  main 2952eb8 (sgla)
#   .devbinhf    main fea8aac (sgla, test_gpu_backward)
# Then hf's test_gpu_backward (SGLA_SEED 49003) with memcheck and racecheck of its small set.
# Carry [".devbinMain", ".devbinhf"].
# (As it ran, its summary steps written out: `git show b45215f:bench/calls/s49_call3.sh`.)
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=49003
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 8,4096,16,128,128:f32:g \
4,8192,32,64,64:f32t:g 8,4096,16,128,128:f32t:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,32,32:f32:g}" .devbinMain .devbinhf > "$OUT/ab_raw.txt"
bwd_ab_table
bwd_sanitizers .devbinhf _hf
bwd_test .devbinhf hf > "$OUT/summary_hf.txt"
bwd_sanitizers_wait _hf >> "$OUT/summary_hf.txt"
bwd_report hf
bwd_pack
