#!/bin/bash
# Session 27 call 5: chunk c + 1's q and k rows prefetched into L2 at LO_READY, before the state's loads after
# B_FREE (the stall samples of call 4: those loads wait on the memory pipe, 41 % of that segment's samples).
# A = main (cf89212), B = bulk prefetch a row a thread (s27-pf, 010f57a), C = prefetch.global.L2 a 128-byte
# line (s27-pf2, 02430d3).  carry [".devbinA", ".devbinB", ".devbinC"].  Prediction: 5-10 % off 3xTF32.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
for b in B C; do
  timeout 150 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 220 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
