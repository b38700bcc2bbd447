#!/bin/bash
# Session 28 call 6: K's lo made by warpgroup 0 beside its own products with B's hi (the state's chain, now
# the longer, loses its share of the conversion), and the A V products after all of A at 3xTF32 K = 128.
# Staged at 0b61485 (main, masked_a):
#   A = main; B = main + K's lo by warpgroup 0 (a share after each batch of the first pass, then an
#   outputs-only barrier; LO_READY now stands for V^T alone); T = B's trace build;
#   C = main + A V's products issued after all of A's fragments, behind one fence (3xTF32 at K = 128 only).
# 1. T's per-role timelines; 2. B's and C's test_gpu_forward; 3. the fp32 rows, A/B/C in interleaved
# rounds; 4. B's memcheck and racecheck (SGLA_GPU_SMALL).  carry [".devbinT", ".devbinA", ".devbinB",
# ".devbinC"] (~47 MB), ~280 s.
# Predictions: B -5 to -10 % at 3xTF32 (the state's chain loses ~1,500 of its ~10,400 cycles; the outputs
# had ~1,100 cycles' slack), TF32 alone unchanged; C -1 % at 3xTF32 K = 128, unchanged elsewhere.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinT .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
timeline() { local d=$1; shift; echo "== $d trace $*"; SGLA_LIBRARY=$PWD/$d/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 $d/trace_run.py "$@" 2>&1 | tail -3; }
timeline .devbinT 8,4096,16,128,128 --pass f32; timeline .devbinT 8,4096,16,128,128 --pass f32 --tf32; timeline .devbinT 4,8192,32,64,64 --pass f32
for b in B C; do
  timeout 150 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F 8,4096,16,128,128:g:--dtype=f32:--config=f32-chunked" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 300 bash bench/ab.sh > /dev/null 2>&1
tail -18 $OUT/ab.log
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  (SGLA_GPU_SMALL=1 timeout 200 $SAN --tool $tool --error-exitcode 1 .devbinB/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
   echo "B $tool rc=$? $(tail -2 $OUT/san_$tool.log | tr '\n' ' ')") &
done
wait
