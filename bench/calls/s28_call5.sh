#!/bin/bash
# Session 28 call 5: the fp32 forward's A fragments by selects.  `key <= i ? acc scale exp2(b_i - b_key) : 0`
# compiled to a branch around each element's shared loads and exp2 (27 BSSY regions in the wgmma kernel's
# A, divergent within a warp); `masked_a` computes both sides and selects.  Staged at f3dac73 (main):
#   A = main; B = main + masked_a (the wgmma kernel and the mma.sync kernel's A tile); T = B's trace build;
#   C = B + the A V products issued after all of A's fragments are made, behind one fence (not one a k-step).
# 1. T's per-role timelines; 2. B's and C's test_gpu_forward; 3. the fp32 rows (and the mma.sync kernel
# forced, f32-chunked), A/B/C in interleaved rounds; 4. B's memcheck and racecheck (SGLA_GPU_SMALL).
# carry [".devbinT", ".devbinA", ".devbinB", ".devbinC"] (~47 MB), ~200 s.
# Predictions: B -10 to -20 % at 3xTF32 K = 128 (the outputs' A took ~4,500 of a 10,700-cycle step), less at
# TF32 alone; C within 2 % of B.
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
