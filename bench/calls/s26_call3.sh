#!/bin/bash
# Session 26 call 3: the fp32 wgmma forward, C = f0bfd57 (roles decoupled, one stage of k, L2 prefetch; the CLI
# alone) against D = fecd25d (k a chunk ahead, v a chunk ahead in registers, setmaxnreg, no prefetch; full
# build): D's test_gpu_forward, then the fp32 rows in interleaved rounds, with the mma.sync kernel (D,
# --config=f32-chunked) beside them.  carry [".devbinC", ".devbinD"].
# Prediction: D 0.7-0.85 ms 3xTF32 at 8x4096x16x128 (C 1.088, mma.sync 1.353), TF32 alone 0.4-0.6.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for d in .devbinC .devbinD; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x $d/sgla $d/tests/* 2>/dev/null; done
BD=.devbinD
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
t0=$(date +%s)
timeout ${SGLA_T1:-200} $BD/tests/test_gpu_forward > "$OUT/test_gpu_forward.log" 2>&1
echo "D test_gpu_forward rc=$? $(( $(date +%s) - t0 )) s"
grep -i "fail\|error" "$OUT/test_gpu_forward.log" | head -20
tail -2 "$OUT/test_gpu_forward.log"
F=--dtype=f32:--config=f32-hopper
C="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 4,8192,32,64,64:g:$F:--tf32 64,1024,16,128,128:g:$F"
SGLA_ROUNDS=${SGLA_ROUNDS:-3} SGLA_CASES="$C" SGLA_DEVBIN_A=.devbinC SGLA_DEVBIN_B=.devbinD \
  timeout ${SGLA_T2:-240} bash bench/ab.sh > /dev/null 2>&1
tail -10 "$OUT/ab.log"
M=--dtype=f32:--config=f32-chunked
SGLA_ROUNDS=2 SGLA_CASES="8,4096,16,128,128:g:$M 8,4096,16,128,128:g:$M:--tf32" SGLA_DEVBIN_A=.devbinD SGLA_DEVBIN_B=.devbinD \
  OUT=$OUT/mma timeout 120 bash bench/ab.sh > /dev/null 2>&1
tail -4 "$OUT/mma/ab.log"
