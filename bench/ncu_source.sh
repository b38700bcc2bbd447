#!/bin/bash
# Per-instruction profile (SASS executed counts and warp-stall samples) of one
# chunked forward launch: bash bench/ncu_source.sh B,T,H,K,V GATE  (SGLA_BENCH_PLAN forces a plan)
#   SGLA_NCU_K: another kernel (an ncu regex over mangled names, e.g. the merged backward pass
#   'EELi4ELb0'), SGLA_BENCH_EXTRA: more `sgla bench` arguments (e.g. --backward)
# Writes $OUT/<tag>.source.csv (ncu --page source), prints the top stall sites and the
# summary of bench/ncu_source_summary.py.
set -u
OUT=${OUT:-/tmp/sgla_out}; mkdir -p "$OUT"
BD=${SGLA_BUILD:-.devbin}
shape=${1:-8,4096,16,128,128}; gate=${2:-gamma}
tag=$(echo $shape | tr , x)_$gate${SGLA_NCU_K:+_k}
[ -f $BD/sgla.xz ] && unxz -f $BD/sgla.xz; chmod +x $BD/sgla
timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats \
  --section InstructionStats --kernel-name-base mangled -k regex:${SGLA_NCU_K:-chunk_fwd} -s 1 -c 1 -o $OUT/$tag.src -f \
  $BD/sgla bench --backend cuda --dtype bf16 --gate $gate --shape $shape --iters 1 --warmup 1 ${SGLA_BENCH_PLAN:-} \
  ${SGLA_BENCH_EXTRA:-} > $OUT/$tag.src.log 2>&1
echo "ncu rc=$?"
ncu --import $OUT/$tag.src.ncu-rep --page source --csv --print-source sass > $OUT/$tag.source.csv 2>&1
echo "source rows: $(wc -l < $OUT/$tag.source.csv)"
head -3 $OUT/$tag.source.csv | cut -c1-600
ncu --import $OUT/$tag.src.ncu-rep --print-summary none 2>&1 | grep -E "Executed Instructions|Issued Instructions|Branch|Divergent|Avg\. .*Threads" | head -20
python3 bench/ncu_source_summary.py $OUT/$tag.source.csv 2>&1 | head -${SGLA_NCU_LINES:-60}
