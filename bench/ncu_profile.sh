#!/bin/bash
# Nsight Compute profile of the forward kernels on the device (one launch per
# case): speed of light, warp stalls, scheduler and memory sections, printed and
# kept as .ncu-rep under $OUT.  carry: [".devbin"]
#   run: bash bench/ncu_profile.sh ["B,T,H,K,V:gate" ...]   (the plan a plain call picks;
#        SGLA_BENCH_PLAN="--config ROW --split N" forces one)
set -u
OUT=${OUT:-/tmp/sgla_out}; mkdir -p "$OUT"
BD=${SGLA_BUILD:-.devbin}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
CASES=${*:-"8,4096,16,128,128:gamma 4,8192,32,64,64:gamma 2,16384,8,256,256:gamma"}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats"
for cs in $CASES; do
  shape=${cs%%:*}; gate=${cs##*:}
  tag=$(echo $shape | tr , x)_$gate
  timeout 150 $NCU --clock-control none $SECTIONS -k regex:chunk_fwd -s 1 -c 3 -o $OUT/$tag -f \
    $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --shape $shape --iters 1 --warmup 1 ${SGLA_BENCH_PLAN:-} > $OUT/$tag.run.log 2>&1
  echo "== $tag rc=$?"
done
bash "$(dirname "$0")/ncu_print.sh" $OUT/*.ncu-rep
