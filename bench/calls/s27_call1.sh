#!/bin/bash
# The next session's first device call (staged by session 26, not yet run): per-role timelines of the fp32
# forward on wgmma (wg_trace in src/cuda/chunk_fwd_tf32.cu) from a diagnostic build of main, then two patches
# against main, each with its test_gpu_forward and the fp32 rows in interleaved rounds:
#   B = main + bench/wip/kfree.patch (3xTF32: the state loads the next chunk's k once the outputs' products
#       with B's hi are done, not after the lo pass too);
#   C = main + bench/wip/unroll.patch (the state's K-lo and V^T loops and the cp.async loops of q and k
#       unrolled at their fixed trip counts).
# Stage first, here (~5 minutes each on two cores):
#   SGLA_DEVBIN=.devbinT SGLA_CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-DSGLA_TRACE=1 sh bench/stage_devbin.sh
#   rm -rf .devbinT/tests .devbinT/sgla.xz && cp bench/trace_run.py .devbinT/
#   sh bench/stage_devbin.sh && mkdir -p .devbinA && cp .devbin/sgla.xz .devbinA/
#   git apply bench/wip/kfree.patch && SGLA_DEVBIN=.devbinB sh bench/stage_devbin.sh; git checkout src
#   git apply bench/wip/unroll.patch && SGLA_DEVBIN=.devbinC sh bench/stage_devbin.sh; git checkout src
#   for b in B C; do rm -f .devbin$b/libsgla.so.xz .devbin$b/tests/test_gpu_backward.xz .devbin$b/tests/test_gpu_pool.xz; done
# then run with carry [".devbinT", ".devbinA", ".devbinB", ".devbinC"] (~45 MB), ~300 s.
# Questions: which role's marks hold the chunk step (outputs' 2 -> 3 is the wait for K's lo; state's
# 1 -> 2 the wait for the outputs' A V, 4 -> 5 the wait for Q [K ; S^T], 0 -> 1 for k); does either patch
# shorten it (prediction: B 5-10 % off 3xTF32 at 8x4096x16x128, TF32 alone unchanged; C 0-5 % off both).
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinT .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -4; }
{ tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
  tr 4,8192,32,64,64 --pass f32 --tf32; tr 8,4096,16,128,128 --pass f32 --gate gamma; } > $OUT/trace.txt 2>&1
cat $OUT/trace.txt
for b in B C; do
  timeout 200 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 240 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
