#!/bin/bash
# Session 26 call 4: the fp32 wgmma forward, C = f0bfd57 (the CLI alone) against E = 60a3226 (C + Q's batches two
# deep, A V a k-step at a time, TF32 alone without lo halves, no L2 prefetch, setmaxnreg; full build), then E's
# GPU tests, sanitizers, pytest and verify (bench/device_run.sh tests).  carry [".devbinC", ".devbinE"].
# Prediction: E 0.85-0.95 ms 3xTF32 at 8x4096x16x128 (C 1.085), TF32 alone 0.6-0.8 (C 1.008, mma.sync 0.899).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for d in .devbinC .devbinE; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x $d/sgla $d/tests/* 2>/dev/null; done
F=--dtype=f32:--config=f32-hopper
C="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F"
SGLA_ROUNDS=${SGLA_ROUNDS:-3} SGLA_CASES="$C" SGLA_DEVBIN_A=.devbinC SGLA_DEVBIN_B=.devbinE \
  timeout ${SGLA_T1:-150} bash bench/ab.sh > /dev/null 2>&1
tail -10 "$OUT/ab.log"
M=--dtype=f32:--config=f32-chunked
SGLA_ROUNDS=1 SGLA_CASES="4,8192,32,64,64:g:$M 4,8192,32,64,64:g:$M:--tf32 64,1024,16,128,128:g:$M" SGLA_DEVBIN_A=.devbinE SGLA_DEVBIN_B=.devbinE \
  OUT=$OUT/mma timeout 60 bash bench/ab.sh > /dev/null 2>&1
tail -6 "$OUT/mma/ab.log"
SGLA_DEVBIN=.devbinE SGLA_BWD_SHAPES= bash bench/device_run.sh tests > "$OUT/tests_out.log" 2>&1
tail -14 "$OUT/summary.txt"
