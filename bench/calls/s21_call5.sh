#!/bin/bash
# session 21 call 5: per-role timelines with the finer marks (main's dfef381 built with -DSGLA_TRACE=1 as .devbinT)
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
unxz -f .devbinT/libsgla.so.xz
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 bench/trace_run.py "$@" 2>&1 | tail -6; }
{ tr 8,4096,16,128,128 --pass merged; tr 8,4096,16,128,128 --gate gamma --pass merged; tr 8,4096,16,128,128 --pass dq
  tr 4,8192,32,64,64 --pass merged; tr 4,8192,32,64,64 --pass dq; tr 16,4096,8,256,256; tr 4,8192,32,64,64; } > $OUT/trace.txt 2>&1
cat $OUT/trace.txt
# then main's tests (the staged .devbin: 631c19f, with the host changes since session 20's device run)
bash bench/device_run.sh tests > $OUT/tests_out.log 2>&1
tail -20 $OUT/summary.txt
