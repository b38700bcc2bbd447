#!/bin/bash
# Session 26 call 2: the fp32 wgmma forward, three builds (carry [".devbinA", ".devbinB", ".devbinC"]; A and B
# the CLI alone): A = b840d8e (first version: every thread loads, converts, then each role; one stage),
# B = 4eca982 (A + chunk c + 2 prefetched into L2), C = f0bfd57 (B with the roles decoupled by named
# barriers).  C's test_gpu_forward first, then the fp32 rows on wgmma in interleaved rounds.
# Prediction: B 10-20 % under A (call 1: 1.248 ms 3xTF32, 0.975 TF32 at 8x4096x16x128); C 0.7-0.9 ms 3xTF32.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for d in .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x $d/sgla $d/tests/* 2>/dev/null; done
BD=.devbinC
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
t0=$(date +%s)
timeout ${SGLA_T1:-200} $BD/tests/test_gpu_forward > "$OUT/test_gpu_forward.log" 2>&1
echo "C test_gpu_forward rc=$? $(( $(date +%s) - t0 )) s"
grep -i "fail\|error" "$OUT/test_gpu_forward.log" | head -20
tail -3 "$OUT/test_gpu_forward.log"
F=--dtype=f32:--config=f32-hopper
C="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F"
SGLA_ROUNDS=${SGLA_ROUNDS:-3} SGLA_CASES="$C" SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC \
  timeout ${SGLA_T2:-300} bash bench/ab.sh > /dev/null 2>&1
tail -16 "$OUT/ab.log"
