#!/bin/bash
# Session 25 call 3: the portable (mma.sync) forward with the state update beside the outputs' products
# (B = main + that change in chunk_fwd_mma.cu, staged as .devbinB; A = main's CLI, .devbinA): B's GPU
# tests and sanitizers, then the portable rows A / B in interleaved rounds; then bench/calls/s25_call2.sh
# (K = 64's gate g against g_gamma by Nsight Compute, main's CLI).
# Prediction: the portable rows 10-25 % faster (each warp's state update, ~1/3 of its tensor work, issued
# beside the outputs' products instead of after two more barriers), outputs bit-identical.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
SGLA_DEVBIN=.devbinB bash bench/device_run.sh tests > "$OUT/tests_out.log" 2>&1
tail -14 "$OUT/summary.txt"
P=--config=portable
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$P 8,4096,16,128,128:gamma:$P 4,8192,32,64,64:g:$P \
8,4096,16,64,128:g:$P 8,4096,16,128,128:g:--config=portable-one-stage 1,65536,8,128,128:g:$P" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB bash bench/ab.sh
tail -14 "$OUT/ab.log"
mkdir -p "$OUT/k64" && OUT=$OUT/k64 timeout 240 bash bench/calls/s25_call2.sh 2>&1 | tail -60
