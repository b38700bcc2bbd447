#!/bin/bash
# Session 27 call 3: q loaded by the state's warpgroups (branch s27-qstate, .devbinB) against main (.devbinA):
# B's test_gpu_forward, the fp32 rows in interleaved rounds, then B's stall samples (s27_call2.sh).
# carry [".devbinA", ".devbinB"].  Prediction: 10-20 % off both 3xTF32 and TF32 alone, the outputs' role
# no longer the only one without barrier stalls.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinA .devbinB; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinB/tests/*
timeout 200 .devbinB/tests/test_gpu_forward > $OUT/test_gpu_forward_B.log 2>&1
echo "B test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_B.log
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB timeout 200 bash bench/ab.sh > /dev/null 2>&1
tail -10 $OUT/ab.log
BD=.devbinB timeout 120 bash bench/calls/s27_call2.sh 2>&1 | grep -v "^\"" | head -44
