#!/bin/bash
# Session 45 call 1: the grads kernel's state products summing each block of 32 j in a fresh accumulator,
# the states kernels' loads in flight for fp32 K <= 128 only (else issued together at the block's top)
# and warp 0's gates with them (the work of session 44's lost branch wip/grads-tc, written again).
# .devbin = the working tree's full build, .devbinG = main 19bccc6's sgla.  test_gpu_backward with
# memcheck and racecheck, the fp32 backward A/B of the two builds (s44_call4.sh without fla), then each
# kernel's time under ncu at 8x4096x16x128 and 2x4096x8x256 fp32 (gate g) for both builds.
# Carry [".devbin", ".devbinG"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
SGLA_FLA=0 SGLA_ROUNDS=${SGLA_ROUNDS:-2} SGLA_BUILDS=".devbinG .devbin" bash bench/calls/s44_call4.sh
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for b in .devbinG .devbin; do
  [ -d $b/lib ] && export LD_LIBRARY_PATH=$PWD/$b/lib
  for sh in 8,4096,16,128,128 2,4096,8,256,256; do
    timeout 90 $NCU --metrics gpu__time_duration.sum --csv $b/sgla bench --backend cuda --dtype f32 --gate g \
      --backward --iters 1 --shape $sh > "$OUT/ncu_${b#.}_$sh.csv" 2> "$OUT/ncu_err.log"
    echo "ncu $b $sh rc=$?"
    python3 bench/ncu_durations.py "$OUT/ncu_${b#.}_$sh.csv" | grep -E "states|grads" | tail -3 | cut -c1-80
  done
done
