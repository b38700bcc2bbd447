#!/bin/bash
# Session 38 call 1: main 92a99f2's suites (torch.func on CUDA, the review's mends), then
# session 37's prepared ncu --set full of the merged backward pass at K = 64 and K = 128.
# Carry [".devbin"] (bench/stage_devbin.sh at 92a99f2).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
timeout 330 bash bench/device_run.sh tests > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; tail -25 "$OUT/summary.txt"
OUT=$OUT bash bench/calls/s37_call5.sh 2>&1 | tail -80
