#!/bin/bash
# Session 39 call 1: main (kernels as 92a99f2; host-only mends since, last 604e03f never run on a GPU):
#   its suites (device_run.sh tests), then
#   on an H200: session 38 call 1's fla tables (issue 14's forward, issue 11's backward rows) and the
#     portable path's forced rows (issue 14's 2x on the H200, last measured there in session 14);
#   on an H100: where the merged backward pass at K = 128 stalls, instruction by instruction
#     (bench/ncu_source.sh: spill loads against the X_c / stage loads, session 38's open question).
# Carry [".devbin", ".whl"] (bench/stage_devbin.sh at this commit).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in
  *H200*)
    bash bench/calls/s38_call1.sh
    if [ $(( $(date +%s) - t0 )) -lt 480 ]; then
      timeout 60 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --config portable --iters 30 \
        --shape 8,4096,16,128,128 2>&1 | tail -2
      timeout 40 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --config portable --iters 30 \
        --shape 2,16384,8,256,256 2>&1 | tail -2
    fi ;;
  *)
    echo "$GPU"
    timeout 330 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
    echo "== tests rc=$? $(( $(date +%s) - t0 )) s"
    sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
    mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
    if [ $(( $(date +%s) - t0 )) -lt 420 ]; then
      SGLA_NCU_K=EELi4ELb0 SGLA_BENCH_EXTRA=--backward SGLA_NCU_LINES=70 \
        timeout 150 bash bench/ncu_source.sh 8,4096,16,128,128 g
      gzip -f "$OUT"/*.source.csv; rm -f "$OUT"/*.ncu-rep
    fi ;;
esac
echo "took $(( $(date +%s) - t0 )) s"
