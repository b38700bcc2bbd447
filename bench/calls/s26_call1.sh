#!/bin/bash
# Session 26 call 1: fp32 on wgmma (chunk_fwd_tf32.cu's Hopper member, SGLA_CUDA_CONFIG_F32_HOPPER), main's
# working tree staged in .devbin (carry [".devbin"]): test_gpu_forward (every fp32 case on both kernels),
# then the fp32 rows on wgmma and on mma.sync (3xTF32 and --tf32) in interleaved rounds.
# Prediction: 3xTF32 at 8x4096x16x128 0.6-0.8 ms (mma.sync 1.35-1.38), TF32 alone 0.3-0.4 (0.91).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=.devbin
for z in $BD/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x $BD/sgla $BD/tests/*
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
t0=$(date +%s)
timeout ${SGLA_T1:-240} $BD/tests/test_gpu_forward > "$OUT/test_gpu_forward.log" 2>&1
echo "test_gpu_forward rc=$? $(( $(date +%s) - t0 )) s: $(grep -c PASS "$OUT/test_gpu_forward.log") PASS lines"
grep -i "fail\|error" "$OUT/test_gpu_forward.log" | head -20
tail -3 "$OUT/test_gpu_forward.log"
F=--dtype=f32
C=""
for s in 8,4096,16,128,128 4,8192,32,64,64 64,1024,16,128,128; do
  C="$C $s:g:$F:--config=f32-hopper $s:g:$F:--config=f32-chunked $s:g:$F:--config=f32-hopper:--tf32 $s:g:$F:--config=f32-chunked:--tf32"
done
C="$C 8,4096,16,128,128:gamma:$F:--config=f32-hopper 1,150,2,128,128:g:$F:--config=f32-hopper"
SGLA_ROUNDS=${SGLA_ROUNDS:-3} SGLA_CASES="$C" SGLA_DEVBIN_A=$BD SGLA_DEVBIN_B=$BD timeout ${SGLA_T2:-240} bash bench/ab.sh
tail -24 "$OUT/ab.log"
