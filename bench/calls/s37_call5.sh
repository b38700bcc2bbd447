#!/bin/bash
# NOT RUN in session 37 (no device time left to start a machine): the first thing to run when one starts.
# Session 37 call 5: where the merged backward pass stalls (ncu --set full, one launch each) at K = 64 and K = 128
# on main fde692d's kernels (.devbin: be08915, the same sources).
# Carry [".devbin"].  Full reports in $OUT/ncu_*.txt; the rule messages and key metrics printed.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .devbin/sgla.xz ] && unxz -f .devbin/sgla.xz; chmod +x .devbin/sgla
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
run() { # name, kernel regex, bench arguments
  local n=$1 k=$2; shift 2
  timeout 150 $NCU --set full --kernel-name-base mangled -k "regex:$k" --launch-skip 1 --launch-count 1 .devbin/sgla bench --backend cuda --dtype bf16 \
    --iters 1 --warmup 1 "$@" > "$OUT/ncu_$n.txt" 2>&1
  echo "== $n rc=$?"
  grep -E "^  [A-Za-z].*(Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Active Warps Per Scheduler|Eligible Warps|Shared Memory|Registers Per)" "$OUT/ncu_$n.txt" | head -24
  grep -E "^ +(OPT|INF|WRN)" -A3 "$OUT/ncu_$n.txt" | grep -iE "stall|cycles being|pipe|bank|scoreboard|barrier|waiting" | head -12
}
[ -n "${SGLA_NCU64:-}" ] && run merged64 'EELi4ELb0' --gate g --backward --shape 4,8192,32,64,64
run merged128 'EELi4ELb0' --gate g --backward --shape 8,4096,16,128,128

