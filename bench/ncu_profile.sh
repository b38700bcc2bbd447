#!/bin/bash
# Nsight Compute profile of the forward kernels on the device (one launch per
# case): speed of light, warp stalls, scheduler and memory sections, printed and
# kept as .ncu-rep under $OUT.  carry: [".devbin"]
#   run: bash bench/ncu_profile.sh ["V:B,T,H,K,V:gate" ...]
set -u
OUT=${OUT:-/tmp/sgla_out}; mkdir -p "$OUT"
BD=${SGLA_BUILD:-.devbin}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
CASES=${*:-"5:8,4096,16,128,128:gamma 1:4,8192,32,64,64:gamma 5:2,16384,8,256,256:gamma"}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats"
for cs in $CASES; do
  v=${cs%%:*}; rest=${cs#*:}; shape=${rest%%:*}; gate=${rest##*:}
  tag=v${v}_$(echo $shape | tr , x)_$gate
  SGLA_CUDA_VERSION=$v timeout 150 $NCU --clock-control none $SECTIONS -k regex:fwd_ -s 1 -c 3 -o $OUT/$tag -f \
    $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --shape $shape --iters 1 --warmup 1 > $OUT/$tag.run.log 2>&1
  echo "== $tag rc=$?"
  $NCU --import $OUT/$tag.ncu-rep --print-summary none 2>&1 | grep -E "^  [a-z_0-9]+|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible|Active Warps Per|Eligible Warps|Stall|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Block Limit|Theoretical Occ|Grid Size|Dynamic Shared" | head -60
  $NCU --import $OUT/$tag.ncu-rep --page raw --csv 2>/dev/null | head -0
done
# the stall breakdown per kernel (cycles per issued instruction, by reason)
for r in $OUT/*.ncu-rep; do
  echo "== stalls $(basename $r)"
  $NCU --import $r --page raw 2>/dev/null | grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio|smsp__pcsamp_warps_issue_stalled_[a-z_]+ |sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak|sm__inst_executed_pipe_tensor|dram__throughput.avg.pct_of_peak|gpu__time_duration.sum" | awk '$NF+0 > 0.05 || /duration|pct/' | head -40
done
