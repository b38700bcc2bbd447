#!/bin/bash
# Session 27 call 10: v by TMA too (branch s27-vtma, b2bcad9, .devbinB) against main (ed357af, .devbinA): the fp32
# rows in interleaved rounds first, then B's test_gpu_forward with compute-sanitizer memcheck and racecheck
# (SGLA_GPU_SMALL) beside it.  carry [".devbinA", ".devbinB"].  Prediction: 2-5 % off (v is 16 of 80 KB).
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinA .devbinB; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinB/tests/*
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_ITERS=20 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB timeout 60 bash bench/ab.sh > /dev/null 2>&1
tail -6 $OUT/ab.log
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( timeout 100 .devbinB/tests/test_gpu_forward > $OUT/test_gpu_forward_B.log 2>&1; echo "test rc=$?" > $OUT/rc_test.txt ) &
for tool in memcheck racecheck; do
  ( SGLA_GPU_SMALL=1 timeout 100 $SAN --tool $tool --error-exitcode 1 .devbinB/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
    echo "$tool rc=$?" > $OUT/rc_$tool.txt ) &
done
wait
cat $OUT/rc_*.txt; tail -1 $OUT/test_gpu_forward_B.log; tail -qn1 $OUT/san_memcheck.log $OUT/san_racecheck.log
grep -m5 FAIL $OUT/test_gpu_forward_B.log | cut -c1-200
