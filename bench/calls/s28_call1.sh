#!/bin/bash
# The next session's first device call (staged by session 27 at f78c732, B and C with their patches; not yet
# run): main's fp32 wgmma forward
# after TMA (q, k, v) seen again, then two patches against it.
#   1. per-role timelines from main's trace build (.devbinT) and its per-SASS stall samples (.devbinA's sgla,
#      bench/calls/s27_call2.sh), to see what holds the chunk step now that the loads are TMA's;
#   2. B = main + bench/wip/qb2.patch (Q's fragments in batches of two k-steps at K = 128: ptxas then neither
#      spills nor serializes the outputs' wgmma at setmaxnreg 152 / 176; main reports C7512 there):
#      B's test_gpu_forward, then the fp32 rows in interleaved rounds;
#   3. C = main + bench/wip/kfree2.patch (3xTF32: the next chunk's k by TMA as soon as the outputs' products
#      with B's hi and the state's U are done, K_FREE, its q after B_FREE as now; qk_full takes two arrivals):
#      its test_gpu_forward and the same rows beside A and B.
# B's and C's test_gpu_forward are also the first GPU run of f78c732's host change (the fp32 plan's row and
# the TF32 launcher's choice by its maps; the kernels' machine code is unchanged).
# Restage if src/ changed since f78c732 (each ~1-3 minutes here):
#   sh bench/stage_devbin.sh && rm -rf .devbinA && mkdir .devbinA && cp .devbin/sgla.xz .devbin/COMMIT .devbinA/
#   SGLA_DEVBIN=.devbinT SGLA_CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-DSGLA_TRACE=1 sh bench/stage_devbin.sh
#   rm -rf .devbinT/tests .devbinT/sgla.xz && cp bench/trace_run.py .devbinT/
#   git apply bench/wip/qb2.patch && SGLA_DEVBIN=.devbinB sh bench/stage_devbin.sh; git checkout src
#   git apply bench/wip/kfree2.patch && SGLA_DEVBIN=.devbinC sh bench/stage_devbin.sh; git checkout src
#   for b in B C; do rm -f .devbin$b/libsgla.so.xz .devbin$b/tests/test_gpu_backward.xz .devbin$b/tests/test_gpu_pool.xz; done
# Run with carry [".devbinT", ".devbinA", ".devbinB", ".devbinC"] (~46 MB), ~260 s.  Predictions: B 0-5 % off
# 3xTF32 at K = 128, TF32 alone and K = 64 unchanged; C 3-8 % off 3xTF32 (the TMA's latency now sits between
# B_FREE and B_READY), TF32 alone unchanged.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinT .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -3; }
tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
BD=.devbinA timeout 150 bash bench/calls/s27_call2.sh > $OUT/ncu.txt 2>&1
grep "rc=\|duration" $OUT/ncu.txt
rm -f $OUT/*.ncu-rep $OUT/raw_*.csv
for b in B C; do
  timeout 150 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 240 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
