#!/bin/bash
# Session 27 call 2: where the fp32 wgmma forward's warps stall.  Nsight Compute on main's build (.devbin,
# carry [".devbin"]): warp-state and scheduler sections with per-SASS stall samples (SourceCounters) for
# 8x4096x16x128 gate g, 3xTF32 and TF32 alone.  Question: are the CUDA-core sections (V^T, put_state, A)
# slow for want of instructions (i-cache: 65-82 KB of SASS a kernel), for shared-memory (MIO) throttling,
# or at barriers?  Read the CSVs with bench/ncu_stalls.py.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
BD=${BD:-.devbin}
for z in $BD/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x $BD/sgla
ncu --version | tail -1
for x in x3 tf32; do
  a=; [ $x = tf32 ] && a=--tf32
  timeout 200 ncu --section WarpStateStats --section SourceCounters --section SchedulerStats --section LaunchStats \
    -k regex:wgtf32 -s 1 -c 1 -f -o $OUT/prof_$x $BD/sgla bench --backend cuda --dtype f32 --config f32-hopper --gate g \
    --iters 1 --warmup 1 --shape 8,4096,16,128,128 $a > $OUT/ncu_$x.log 2>&1
  echo "$x rc=$?"; tail -2 $OUT/ncu_$x.log
  ncu -i $OUT/prof_$x.ncu-rep --page raw --csv > $OUT/raw_$x.csv 2>&1
  ncu -i $OUT/prof_$x.ncu-rep --page source --print-source sass --csv > $OUT/sass_$x.csv 2>&1
  echo "sass rows $(wc -l < $OUT/sass_$x.csv)"; head -c 600 $OUT/sass_$x.csv; echo
  python3 - $OUT/raw_$x.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h, v = rows[0], rows[-1]
st = [(float(v[i].replace(',', '')), h[i]) for i in range(len(h)) if 'issue_stalled' in h[i] and 'ratio' in h[i] and v[i].replace(',', '').replace('.', '').isdigit()]
for val, name in sorted(st, reverse=True)[:14]: print(f"{val:9.3f} {name}")
for i in range(len(h)):
    if any(s in h[i] for s in ('gpu__time_duration.sum', 'smsp__issue_active.avg.pct', 'smsp__inst_executed.sum', 'sm__warps_active.avg.pct')): print(h[i], v[i])
PY
done
