#!/bin/bash
# Session 45 call 1.  .devbinT = 3f64c0a+ (the states kernels' block products on mma.sync in 3xTF32, the
# odd-size test rows), .devbin = ac8a29a (the grads kernel's state products summing each block of 32 j in
# a fresh accumulator; the states kernels' loads in flight for fp32 K <= 128 only, warp 0's gates with
# them: session 44's lost branch written again), .devbinG = main 19bccc6's sgla.  test_gpu_backward of
# both branch builds, memcheck and racecheck of .devbinT's small set; the fp32 (and bf16 forced to the
# CUDA-core path) backward A/B of the three builds; each kernel's time under ncu (G and T).
# Carry [".devbinT", ".devbin", ".devbinG"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin*/*.xz .devbin*/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool memcheck --error-exitcode 9 .devbinT/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool racecheck --error-exitcode 9 .devbinT/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
( timeout 200 .devbin/tests/test_gpu_backward > "$OUT/test_N.log" 2>&1; echo "test N rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/test_N_rc.txt" ) &
timeout 200 .devbinT/tests/test_gpu_backward > "$OUT/test_T.log" 2>&1
echo "test T rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_T.log"; grep -h "FAIL" "$OUT/test_T.log" | cut -c1-240 | head -8
grep -h "f32" "$OUT/test_T.log" | cut -c1-200 | head -16
while [ ! -f "$OUT/memcheck_rc.txt" ] || [ ! -f "$OUT/racecheck_rc.txt" ] || [ ! -f "$OUT/test_N_rc.txt" ]; do sleep 1; done
cat "$OUT/test_N_rc.txt"; tail -1 "$OUT/test_N.log"; grep -h "FAIL" "$OUT/test_N.log" | cut -c1-240 | head -4
grep -h "f32" "$OUT/test_N.log" | grep -E " 256 | 256," | cut -c1-200 | head -4
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
: > "$OUT/ab.log"
for r in $(seq ${SGLA_ROUNDS:-2}); do
  for s in 8,4096,16,128,128:f32 4,8192,32,64,64:f32 2,4096,8,256,256:f32 8,4096,16,128,128:bf16; do
    IFS=: read -r sh dt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in .devbinG .devbin .devbinT; do
      echo "== round $r $s $b" >> "$OUT/ab.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate g --backward --iters 5 --shape $sh $ex >> "$OUT/ab.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | cut -c1-190
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for b in .devbinG .devbinT; do
  for sh in 8,4096,16,128,128 2,4096,8,256,256; do
    timeout 90 $NCU --metrics gpu__time_duration.sum --csv $b/sgla bench --backend cuda --dtype f32 --gate g \
      --backward --iters 1 --shape $sh > "$OUT/ncu_${b#.}_$sh.csv" 2> "$OUT/ncu_err.log"
    echo "ncu $b $sh rc=$? $(( $(date +%s) - t0 )) s"
    python3 bench/ncu_durations.py "$OUT/ncu_${b#.}_$sh.csv" | grep -E "states|grads" | tail -3 | cut -c1-80
  done
done
