#!/bin/bash
# Session 27 call 7: upper bounds by timing builds (s27_call7_diag.patch on cf89212, built with -DSGLA_DIAG=1 or 2;
# their results are wrong and the
# bench says FAIL): B skips the state's q and k loads after chunk 0, C skips S^T's split stores after
# chunk 0; A = main (cf89212).  carry [".devbinA", ".devbinB", ".devbinC"].  The question: what would a
# load path without per-thread cp.async (TMA) or a cheaper S^T hand-over be worth at most.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 220 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
