#!/bin/bash
# Session 50 call 1 (prepared in session 49, widened in 50): the fp32 rows beside fla on the card that
# starts, then the states kernels under ncu, the clocks, and `sgla bench`'s forward row.
#   .devbin    main (bench/stage_devbin.sh; session 49 staged 06da11e, whose kernels' machine code is main's)
#   .devbinsh  wip/states-hd 1060b20, sgla alone (the one build that launches fp32's constant-128 states
#              instance; SGLA_DEVBIN=.devbinsh SGLA_STAGE_REV=wip/states-hd sh bench/stage_devbin.sh, then
#              keep sgla.xz, COMMIT and lib/)
#  1. `bench/device_run.sh fla` of main (its kernels' suites ran in session 49's calls 3-4) with fla_compare
#     on the fp32 shapes (sgla in 3xTF32 and TF32 alone beside fla's TF32; forward and fwd + bwd);
#  2. ncu kernel times of `sgla bench --backward` at 8x4096x16x128: fp32 (main: the run-time head's states
#     kernels; sh: the constant 128's), bf16 on the CUDA-core path (both: the constant 128's): which
#     kernel session 49's +3 % (fp32) and -25 % (bf16) came from;
#  3. main's fp32 states launches with ncu's sections (stalls, memory): what a step of the chain waits on;
#  4. the SM clock sampled under a compute-bound loop (D = 256) and `sgla bench`'s forward at 8x4096x16x128
#     (session 49's two noticed items).
# Carry [".devbin", ".devbinsh", ".whl"] (~62 MiB with the tree).
export SGLA_SEED=50001
S=8x4096x16x128@f32,4x8192x32x64@f32
SGLA_FLA_WARM_JOBS=4 SGLA_FLA_ARGS="--shapes $S --gates gamma,g --bwd-shapes $S --rounds 3" \
  timeout 380 bash bench/device_run.sh fla > /tmp/device_run.log 2>&1
echo "== device_run rc=$?"
OUT=${OUT:-/tmp/sgla_out}
L=/tmp/logs && mkdir -p $L && tar xzf "$OUT/logs.tgz" -C $L && rm -f "$OUT/logs.tgz"
cp $L/*.log "$OUT/" 2>/dev/null
. bench/calls/bwd_steps.sh
bwd_begin   # (unpacks .devbinsh; device_run.sh unpacked .devbin)
for b in .devbin .devbinsh; do
  bwd_ncu_times $b 8,4096,16,128,128
  SGLA_NCU_ARGS="--dtype bf16 --bwd-path 1" bwd_ncu_times $b 8,4096,16,128,128
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
# (as call 3 ran it: the call ran `--warmup 0`, which `sgla bench` refuses, and without -s 2 the first two
# launches are the fp64 check's small ones)
timeout 120 $NCU --clock-control none $SECTIONS -k regex:states_kernel -s 2 -c 2 -o "$OUT/states_f32" -f \
  .devbin/sgla bench --backend cuda --dtype f32 --gate g --backward --iters 1 --shape 8,4096,16,128,128 \
  > "$OUT/states_ncu_run.log" 2>&1
echo "== ncu states rc=$? $(( $(date +%s) - t0 )) s"
bash bench/ncu_print.sh "$OUT/states_f32.ncu-rep" > "$OUT/states_ncu.txt" 2>&1
grep -E "Duration|DRAM Throughput|Issue Slots|Warp Cycles Per Issued|Eligible Warps|Achieved Occ|stalled_(long_scoreboard|barrier|short_scoreboard|math|wait|mio|lg_throttle)" \
  "$OUT/states_ncu.txt" | head -40
# the clocks under load, and the forward by `sgla bench` beside fla_compare's torch row
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv > "$OUT/clocks.txt"
for r in 1 2; do  # sampled while the timed loop of D = 256's compute-bound forward runs (~2 s)
  (for i in 1 2 3 4 5 6; do sleep 0.4; nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv,noheader; done >> "$OUT/clocks.txt") &
  .devbin/sgla bench --backend cuda --gate g --iters 6000 --shape 2,16384,8,256,256 2>&1 | tail -3 | cut -c1-200
  wait
  .devbin/sgla bench --backend cuda --gate g --iters 20 --shape 8,4096,16,128,128 2>&1 | tail -3 | cut -c1-200
done
cat "$OUT/clocks.txt"
echo "== summary"
cut -c1-250 "$OUT/summary.txt"
sed -n '/^shape /,$p' $L/fla.log | head -30
rm -f "$OUT"/states_f32.ncu-rep.tmp
( cd "$OUT" && tar czf logs.tgz *.log *.txt *.csv 2>/dev/null && rm -f *.log *.csv )
ls "$OUT"
