#!/bin/bash
# Session 25 call 2: where K = 64's gate g forward loses to g_gamma (1.16x against 1.05x the floor), and
# what binds the portable (mma.sync) forward on the H200 (2.15-2.46x, issue 14 asks 2x).  Main's CLI
# (.devbinA), Nsight Compute, clocks free: every kernel's time of one forward call, both gates, two K = 64
# shapes; then the sections of one launch of each kernel in question.  (Ran inside call 3 with commas in
# the CSV names, which the device does not return; the names now have x.  Its summary is now
# bench/ncu_durations.py, which s22_call5.sh shares.)
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
D=.devbinA
for z in "$D"/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x "$D/sgla"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for sh in 4,8192,32,64,64 8,4096,16,64,64; do
  for gate in g gamma; do
    for r in 1 2; do
      timeout 100 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
        "$D/sgla" bench --backend cuda --dtype bf16 --gate $gate --shape $sh --iters 1 --warmup 1 \
        > "$OUT/dur_${sh//,/x}_${gate}_$r.csv" 2> "$OUT/dur_${sh//,/x}_${gate}_$r.err"
    done
  done
done
python3 bench/ncu_durations.py "$OUT"/dur_*.csv
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
sec() { # name, kernel regex, bench args...
  local n=$1 k=$2; shift 2
  timeout 120 "$NCU" --clock-control none $SEC -k "regex:$k" --launch-skip 1 --launch-count 1 \
    "$D/sgla" bench --backend cuda --dtype bf16 --iters 1 --warmup 1 "$@" > "$OUT/sec_$n.txt" 2>&1
  echo "== $n rc=$?"; grep -E "Duration|Throughput|Achieved Occupancy|Registers Per|Shared Memory Config|Eligible Warps|Issued Warp|No Eligible|Stall|Block Limit|Waves" "$OUT/sec_$n.txt" | head -40
}
sec k64_g chunk_fwd_kernel --gate g --shape 4,8192,32,64,64
sec k64_gamma chunk_fwd_kernel --gate gamma --shape 4,8192,32,64,64
sec portable_128 chunk_fwd_mma --gate g --shape 8,4096,16,128,128 --config portable
sec portable_64 chunk_fwd_mma --gate g --shape 4,8192,32,64,64 --config portable
