#!/bin/bash
# Per-instruction profile (SASS executed counts and warp-stall samples) of one
# chunked forward launch: bash bench/ncu_source.sh B,T,H,K,V GATE  (SGLA_BENCH_PLAN forces a plan)
# Writes $OUT/<tag>.source.csv (ncu --page source) and prints the top stall sites.
set -u
OUT=${OUT:-/tmp/sgla_out}; mkdir -p "$OUT"
BD=${SGLA_BUILD:-.devbin}
shape=${1:-8,4096,16,128,128}; gate=${2:-gamma}
tag=$(echo $shape | tr , x)_$gate
timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats \
  --section InstructionStats -k regex:chunk_fwd -s 1 -c 1 -o $OUT/$tag.src -f \
  $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --shape $shape --iters 1 --warmup 1 ${SGLA_BENCH_PLAN:-} > $OUT/$tag.src.log 2>&1
echo "ncu rc=$?"
ncu --import $OUT/$tag.src.ncu-rep --page source --csv --print-source sass > $OUT/$tag.source.csv 2>&1
echo "source rows: $(wc -l < $OUT/$tag.source.csv)"
head -3 $OUT/$tag.source.csv | cut -c1-600
ncu --import $OUT/$tag.src.ncu-rep --print-summary none 2>&1 | grep -E "Executed Instructions|Issued Instructions|Branch|Divergent|Avg\. .*Threads" | head -20
