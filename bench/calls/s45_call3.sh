#!/bin/bash
# Session 45 call 3.  .devbinU = 8e3a1af (the grads kernel's scores and triangular products on mma.sync in
# 3xTF32, rows past L zero, the gate's row dots by every warp; on T2), .devbinT = f502fd5 (T2: the states
# kernels on mma.sync with division-free loads in flight for every K, the grads kernel's division-free
# loads), .devbin = ac8a29a (sgla), .devbinG = main 19bccc6 (sgla).  test_gpu_backward of U and T2,
# memcheck and racecheck of U's small set; the backward A/B of the four builds; each kernel's time under
# ncu (U) and the grads kernel's stall reasons (U).  Carry [".devbinU", ".devbinT", ".devbin", ".devbinG"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin*/*.xz .devbin*/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool memcheck --error-exitcode 9 .devbinU/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool racecheck --error-exitcode 9 .devbinU/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
( timeout 200 .devbinT/tests/test_gpu_backward > "$OUT/test_T.log" 2>&1; echo "test T rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/test_T_rc.txt" ) &
timeout 200 .devbinU/tests/test_gpu_backward > "$OUT/test_U.log" 2>&1
echo "test U rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_U.log"; grep -h "FAIL" "$OUT/test_U.log" | cut -c1-240 | head -8
grep -h "f32" "$OUT/test_U.log" | cut -c1-200 | head -16
grep -h "CUDA-core" "$OUT/test_U.log" | cut -c1-200 | head -4
while [ ! -f "$OUT/memcheck_rc.txt" ] || [ ! -f "$OUT/racecheck_rc.txt" ] || [ ! -f "$OUT/test_T_rc.txt" ]; do sleep 1; done
cat "$OUT/test_T_rc.txt"; tail -1 "$OUT/test_T.log"; grep -h "FAIL" "$OUT/test_T.log" | cut -c1-240 | head -4
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
: > "$OUT/ab.log"
for r in $(seq ${SGLA_ROUNDS:-2}); do
  for s in 8,4096,16,128,128:f32 4,8192,32,64,64:f32 2,4096,8,256,256:f32 8,4096,16,128,128:bf16; do
    IFS=: read -r sh dt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in .devbinG .devbin .devbinT .devbinU; do
      echo "== round $r $s $b" >> "$OUT/ab.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate g --backward --iters 5 --shape $sh $ex >> "$OUT/ab.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | sed 's/gate=g.mild B=1 T=256 H=2//' | cut -c1-150
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for sh in 8,4096,16,128,128 2,4096,8,256,256; do
  timeout 90 $NCU --metrics gpu__time_duration.sum --csv .devbinU/sgla bench --backend cuda --dtype f32 --gate g \
    --backward --iters 1 --shape $sh > "$OUT/ncu_U_$sh.csv" 2> "$OUT/ncu_err.log"
  echo "ncu U $sh rc=$? $(( $(date +%s) - t0 )) s"
  python3 bench/ncu_durations.py "$OUT/ncu_U_$sh.csv" | grep -E "states|grads" | tail -3 | cut -c1-80
done
timeout 120 $NCU -k regex:grads --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio .devbinU/sgla bench --backend cuda \
  --dtype f32 --gate g --backward --iters 1 --shape 8,4096,16,128,128 > "$OUT/ncu_grads_U.txt" 2>&1
echo "ncu stalls rc=$? $(( $(date +%s) - t0 )) s"
grep -E "Duration|Throughput|Achieved Occupancy|stalled" "$OUT/ncu_grads_U.txt" | sed 's/  */ /g' | sort -t' ' -k4 -g -r | head -24
