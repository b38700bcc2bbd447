#!/bin/bash
# session 21 call 3: per-role traces (.devbinT), A/B main vs wip/s-ready-late, the plan sweep on main's build
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
unxz -f .devbinT/libsgla.so.xz
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -8; }
{ tr 16,4096,8,256,256; tr 16,4096,8,256,256 --gate gamma; tr 8,4096,16,128,128; tr 4,8192,32,64,64; tr 4,8192,16,128,256
  tr 8,4096,16,128,128 --pass merged; tr 8,4096,16,128,128 --pass dq; tr 2,16384,8,256,256 --pass merged; } > $OUT/trace.txt 2>&1
cat $OUT/trace.txt
SGLA_ROUNDS=3 SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_CASES="16,4096,8,256,256:g 2,16384,8,256,256:g 4,8192,16,128,256:g 8,4096,16,128,128:g 4,8192,32,64,64:g 1,65536,8,128,128:g 8,4096,16,128,128:g:--backward 4,8192,32,64,64:g:--backward" bash bench/ab.sh > $OUT/ab_out.log 2>&1
grep -v "^sgla bench" $OUT/ab_out.log | tail -22
timeout 150 bash bench/calls/s21_call2.sh > /dev/null 2>&1; cat $OUT/sweep.txt
