#!/bin/bash
# Session 50 call 1 (prepared in session 49, not run): the fp32 rows beside fla on the card that starts
# (an H200 for the issues' tables), then the states kernels' times under ncu.
#   .devbin    main (bench/stage_devbin.sh; session 49 staged fea8aac, whose kernels' machine code is main's)
#   .devbinsh  wip/states-hd 1060b20, sgla alone (the one build that launches fp32's constant-128 states
#              instance; SGLA_DEVBIN=.devbinsh SGLA_STAGE_REV=wip/states-hd sh bench/stage_devbin.sh, then
#              keep sgla.xz, COMMIT and lib/)
#  1. `bench/device_run.sh testsfla` of main with fla_compare on the fp32 shapes (sgla in 3xTF32 and TF32
#     alone beside fla's TF32; forward and fwd + bwd), SGLA_SEED 50001;
#  2. ncu kernel times of `sgla bench --backward` at 8x4096x16x128: fp32 (main: the run-time head's states
#     kernels; sh: the constant 128's), bf16 on the CUDA-core path (both: the constant 128's): which
#     kernel session 49's +3 % (fp32) and -25 % (bf16) came from.
# Carry [".devbin", ".devbinsh", ".whl"] (~62 MiB with the tree: trim .devbin's test_gpu_pool if over).
export SGLA_SEED=50001
S=8x4096x16x128@f32,4x8192x32x64@f32
SGLA_FLA_WARM_JOBS=4 SGLA_FLA_ARGS="--shapes $S --gates gamma,g --bwd-shapes $S --rounds 3" \
  timeout 420 bash bench/device_run.sh testsfla > /tmp/device_run.log 2>&1
echo "== device_run rc=$?"
OUT=${OUT:-/tmp/sgla_out}
L=/tmp/logs && mkdir -p $L && tar xzf "$OUT/logs.tgz" -C $L
. bench/calls/bwd_steps.sh
bwd_begin   # (unpacks .devbinsh; device_run.sh unpacked .devbin)
for b in .devbin .devbinsh; do
  bwd_ncu_times $b 8,4096,16,128,128
  SGLA_NCU_ARGS="--dtype bf16 --bwd-path 1" bwd_ncu_times $b 8,4096,16,128,128
done
# session 49's noticed items: the clocks under load, and the forward by `sgla bench` beside fla_compare's torch row
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv > "$OUT/clocks.txt"
for r in 1 2; do  # sampled while the timed loops run (~2 s of D = 256's compute-bound forward, then row 2's)
  (for i in 1 2 3 4 5 6; do sleep 0.4; nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv,noheader; done >> "$OUT/clocks.txt") &
  .devbin/sgla bench --backend cuda --gate g --iters 6000 --shape 2,16384,8,256,256 2>&1 | tail -3 | cut -c1-200
  wait
  .devbin/sgla bench --backend cuda --gate g --iters 20 --shape 8,4096,16,128,128 2>&1 | tail -3 | cut -c1-200
done
echo "== summary"
cut -c1-250 "$OUT/summary.txt"
sed -n '/^shape /,$p' $L/fla.log | head -30
