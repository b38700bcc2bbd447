#!/bin/bash
# Session 39 call 4: main after the empty calls (B = 0 and H = 0 valid: dispatch.c, test_gpu_backward's
# no_pairs; kernels as 92a99f2): its suites; on an H200 also session 38 call 1's fla tables.
# Carry [".devbin", ".whl"] (bench/stage_devbin.sh at this commit).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
case "$GPU" in
  *H200*) exec bash bench/calls/s38_call1.sh ;;
esac
t0=$(date +%s)
timeout 330 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
echo "== tests rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
grep -h "no_pairs\|B = 0\|H = 0" "$OUT"/*.txt 2>/dev/null | head -5
