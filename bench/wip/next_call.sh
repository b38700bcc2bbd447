#!/bin/bash
# The next session's first device call (staged by session 26, not yet run): per-role timelines of the fp32
# forward on wgmma (wg_trace in src/cuda/chunk_fwd_tf32.cu) from a diagnostic build of main, then
# bench/wip/kfree.patch (3xTF32: k loads the next chunk once the products with B's hi are done, not after
# the lo pass) against main: its tests and the fp32 rows in interleaved rounds.  Stage first, here:
#   SGLA_DEVBIN=.devbinT SGLA_CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-DSGLA_TRACE=1 sh bench/stage_devbin.sh
#   rm -rf .devbinT/tests .devbinT/sgla.xz; cp bench/trace_run.py .devbinT/
#   sh bench/stage_devbin.sh && mkdir -p .devbinA && cp .devbin/sgla.xz .devbinA/
#   git apply bench/wip/kfree.patch && SGLA_DEVBIN=.devbinB sh bench/stage_devbin.sh && git checkout src
# then run with carry [".devbinT", ".devbinA", ".devbinB"] (~52 MB).  Questions: which role's marks hold the
# chunk step (outputs' 2 -> 3 is the wait for K's lo; state's 1 -> 2 the wait for the outputs' A V, 4 -> 5
# the wait for Q [K ; S^T], 0 -> 1 for k); does loading k earlier shorten 3xTF32's step (prediction: 5-10 %
# at 8x4096x16x128, TF32 alone unchanged).
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
unxz -f .devbinT/libsgla.so.xz
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -4; }
{ tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
  tr 4,8192,32,64,64 --pass f32 --tf32; tr 8,4096,16,128,128 --pass f32 --gate gamma; } > $OUT/trace.txt 2>&1
cat $OUT/trace.txt
BD=.devbinB
for z in $BD/*.xz $BD/tests/*.xz .devbinA/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x $BD/sgla $BD/tests/* .devbinA/sgla
timeout 200 $BD/tests/test_gpu_forward > $OUT/test_gpu_forward.log 2>&1
echo "B test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward.log
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=$BD timeout 200 bash bench/ab.sh > /dev/null 2>&1
tail -8 $OUT/ab.log
