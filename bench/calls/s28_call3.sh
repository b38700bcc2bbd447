#!/bin/bash
# Session 28 call 3: the fp32 wgmma forward's next q and k issued earlier by the state itself, and K's lo
# released to warpgroup 0 before V^T.  Staged at d450013 (main = qb2):
#   A = main (a473318's kernels; sgla only), TA = its trace build;
#   B = main + the state's B_FREE wait and the next chunk's q, k load moved between U's second batch's splits
#       and its products (no wgmma in flight there), instead of after U;
#   C = B + a VT_READY barrier: the state arrives at LO_READY once K's lo is written (3xTF32), warpgroup 0
#       waits for V^T at VT_READY before A V;  T = C's trace build.
# 1. TA's and T's per-role timelines; 2. B's and C's test_gpu_forward; 3. the fp32 rows, A/B/C in interleaved
# rounds; 4. C's memcheck and racecheck (SGLA_GPU_SMALL).
# carry [".devbinTA", ".devbinT", ".devbinA", ".devbinB", ".devbinC"] (~53 MB), ~200 s.
# Predictions: B 3xTF32 8x4096 0.775 -> 0.72 ms, TF32 0.572 -> 0.54; C a further 2-5 % at 3xTF32 alone.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinTA .devbinT .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
timeline() { local d=$1; shift; echo "== $d trace $*"; SGLA_LIBRARY=$PWD/$d/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 $d/trace_run.py "$@" 2>&1 | tail -3; }
for d in .devbinTA .devbinT; do
  timeline $d 8,4096,16,128,128 --pass f32; timeline $d 8,4096,16,128,128 --pass f32 --tf32; timeline $d 4,8192,32,64,64 --pass f32
done
for b in B C; do
  timeout 150 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 240 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
# the sanitizers last (beside each other: nothing is timed now)
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  (SGLA_GPU_SMALL=1 timeout 200 $SAN --tool $tool --error-exitcode 1 .devbinC/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
   echo "C $tool rc=$? $(tail -2 $OUT/san_$tool.log | tr '\n' ' ')") &
done
wait
