#!/bin/bash
# The next session's first device call (staged by session 26, not yet run): per-role timelines of the fp32
# forward on wgmma (wg_trace in src/cuda/chunk_fwd_tf32.cu) from a diagnostic build, then its tests are not
# needed (the kernels' machine code is main's).  Stage first, here:
#   SGLA_DEVBIN=.devbinT SGLA_CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-DSGLA_TRACE=1 sh bench/stage_devbin.sh
#   rm -rf .devbinT/tests .devbinT/sgla.xz; cp bench/trace_run.py .devbinT/
# then run with carry [".devbinT"].  Question: which role's marks hold the chunk step (outputs' 2 -> 3 is
# the wait for K's lo; state's 1 -> 2 the wait for the outputs' A V; 4 -> 5 the wait for Q [K ; S^T]).
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
unxz -f .devbinT/libsgla.so.xz
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -4; }
{ tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
  tr 4,8192,32,64,64 --pass f32 --tf32; tr 8,4096,16,128,128 --pass f32 --gate gamma; } > $OUT/trace.txt 2>&1
cat $OUT/trace.txt
