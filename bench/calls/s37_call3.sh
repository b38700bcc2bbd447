#!/bin/bash
# Session 37 call 3: main fe0edeb (call 2's kernels: the weights branch-free, K = 64's X_c loads early).
# 1. the per-role timelines again (.devbinT: main built with -DSGLA_TRACE=1), the passes of call 1;
# 2. issue 11's backward rows beside fla 0.6 (bench/calls/s33_call4.sh: three shapes, both gates, peak
#    memory; fla's gated backward timed with its Triton check bypassed).
# Carry [".devbin", ".devbinT", ".whl"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
unxz -f .devbinT/libsgla.so.xz
for a in "4,8192,32,64,64 --gate g --pass merged" "4,8192,32,64,64 --gate g --pass dq" \
         "8,4096,16,128,128 --gate g --pass merged" "8,4096,16,128,128 --gate g --pass dq"; do
  SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 120 python3 bench/trace_run.py $a 2>&1 | tail -7
done
SGLA_T2=330 bash bench/calls/s33_call4.sh
