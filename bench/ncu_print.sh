#!/bin/bash
# Print the main sections and the warp-stall ratios (cycles per issued instruction,
# by reason) of Nsight Compute reports.  Used by bench/ncu_profile.sh on the reports
# it makes; for reports kept from an earlier device call, copy them into .ncu/
# (ignored) and run this on the device with carry [".ncu"] (ncu is not on this machine):
#   bash bench/ncu_print.sh [REPORT.ncu-rep ...]     (default: .ncu/*.ncu-rep)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ $# -gt 0 ] || set -- .ncu/*.ncu-rep
for r in "$@"; do
  echo "=================== $r"
  $NCU --import "$r" --print-summary none 2>&1 | grep -vE "^    -{5}|^\s*$|OPT |INF |WRN " |
    grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Th|Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible|Active Warps Per|Eligible Warps|L2 Hit|Mem Busy|Max Bandwidth|Theoretical Occ|Grid Size|Shared Memory Config|fwd_|Waves"
  $NCU --import "$r" --page raw 2>/dev/null |
    grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio|sm__pipe_tensor_op_(hmma|gmma)_cycles_active.avg.pct_of_peak_sustained_active|dram__throughput.avg.pct_of_peak_sustained_elapsed|dram__bytes_read.sum |dram__bytes_write.sum |fwd_|sm__warps_active.avg.pct|smsp__issue_active.avg.pct" |
    awk '{print $1, $(NF)}'
done
