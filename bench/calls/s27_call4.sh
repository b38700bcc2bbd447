#!/bin/bash
# Session 27 call 4: main at f5145cc (q by the state's warpgroups): per-role timelines from its trace build
# (.devbinT) and its per-SASS stall samples (.devbinB, s27_call2.sh), carry [".devbinT", ".devbinB"].
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for z in .devbinT/*.xz; do unxz -f "$z"; done
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -3; }
tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
BD=.devbinB timeout 150 bash bench/calls/s27_call2.sh > $OUT/ncu.txt 2>&1
grep "rc=\|duration" $OUT/ncu.txt
rm -f $OUT/*.ncu-rep $OUT/raw_*.csv
ls -la $OUT
