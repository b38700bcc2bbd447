#!/bin/bash
# Session 27 call 8: q and k of whole chunks by TMA (128-byte swizzle; branch s27-tma, 79d766b, .devbinB) against
# main (cf89212, .devbinA): B's test_gpu_forward, then the fp32 rows in interleaved rounds.
# carry [".devbinA", ".devbinB"].  Prediction (call 7's bound: -26 % 3xTF32 / -41 % TF32 alone without
# the loads at all): -10 to -20 %.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinA .devbinB; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinB/tests/*
timeout 150 .devbinB/tests/test_gpu_forward > $OUT/test_gpu_forward_B.log 2>&1
echo "B test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_B.log; grep -m8 "FAIL" $OUT/test_gpu_forward_B.log | cut -c1-250
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB timeout 200 bash bench/ab.sh > /dev/null 2>&1
tail -10 $OUT/ab.log
