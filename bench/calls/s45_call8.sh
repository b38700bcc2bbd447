#!/bin/bash
# Session 45 call 8: where main's fp32 backward kernels stall, per instruction (for the next session):
# ncu SourceCounters of one grads launch and one reverse states launch at 8x4096x16x128 fp32, gate g
# (main's kernels: .devbinU = 8e3a1af, the cubin of main's chunk_bwd.cu), summarised by
# bench/ncu_source_summary.py.  Carry [".devbinU"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for z in .devbinU/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for k in grads:1 states:3; do
  IFS=: read -r name skip <<< "$k"
  timeout 150 $NCU --clock-control none --section SourceCounters --section WarpStateStats --section InstructionStats \
    --kernel-name-base mangled -k regex:$name -s $skip -c 1 -o "$OUT/$name.src" -f .devbinU/sgla bench --backend cuda \
    --dtype f32 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 > "$OUT/$name.src.log" 2>&1
  echo "== $name ncu rc=$?"
  $NCU --import "$OUT/$name.src.ncu-rep" --page source --csv --print-source sass > "$OUT/$name.source.csv" 2>&1
  python3 bench/ncu_source_summary.py "$OUT/$name.source.csv" 2>&1 | head -45 | cut -c1-200
done
