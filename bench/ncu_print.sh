#!/bin/bash
# Print the main sections and the warp-stall ratios of Nsight Compute reports kept
# from an earlier device call (no device needed to make them; ncu is on the device):
#   copy the .ncu-rep files into .ncu/ (ignored), then on the device: bash bench/ncu_print.sh
#   carry: [".ncu"]
for r in .ncu/*.ncu-rep; do echo "=================== $r"; ncu --import $r --print-summary none 2>&1 | grep -vE "^    -{5}|^\s*$|OPT |INF |WRN " | grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Th|Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible|Active Warps Per|Eligible Warps|L2 Hit|Mem Busy|Max Bandwidth|Theoretical Occ|Grid Size|Shared Memory Config|fwd_|Waves" ; ncu --import $r --page raw 2>/dev/null | grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active|dram__throughput.avg.pct_of_peak_sustained_elapsed|dram__bytes_read.sum |dram__bytes_write.sum |  Kernel|fwd_|sm__warps_active.avg.pct|smsp__issue_active.avg.pct" | awk '{print $1, $(NF)}'; done
