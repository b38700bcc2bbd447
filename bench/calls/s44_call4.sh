#!/bin/bash
# Session 44 call 4: wip/grads-tc, the grads kernel's state products on mma.sync in 3xTF32, and the states
# kernels' loads in flight during their products.  .devbin = the branch's full build (both); .devbinG = the
# state products alone (sgla); .devbinC = main's sgla (the register tiles, session 44 call 1).
# fla's fp32 kernels compile in the background first (no timing there), while test_gpu_backward (the new
# fp32 cases among them), memcheck and racecheck on its small set run; then the fp32 backward of both
# builds by `sgla bench` (each checks its backward against fp64 first); then sgla (branch) beside fla on
# fp32 as s44_call2.sh.  Carry [".devbin", ".devbinG", ".devbinC", ".whl"].  (For wip/grads-tc's mend after session 44:
# .devbin its tip's build, .devbinN the mend alone (5295067), .devbinG main's sgla, .devbinC main c37a59f's:
# SGLA_BUILDS=".devbinC .devbinG .devbinN .devbin", carry all four.)
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinC/*.xz .devbinG/*.xz .devbinN/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
. bench/calls/fla_env.sh
S=${SGLA_F32_SHAPES:-8x4096x16x128@f32,4x8192x32x64@f32}
[ "${SGLA_FLA:-1}" = 1 ] && ( python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 4 --rounds 0 \
    --no-ceilings > "$OUT/fla_warm.log" 2>&1; echo "fla warm rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_warm.log" ) &
WARM=$!
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 150 $SAN --tool memcheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 150 $SAN --tool racecheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
timeout 150 .devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1
echo "test_gpu_backward rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_gpu_backward.log"; grep -h "FAIL" "$OUT/test_gpu_backward.log" | cut -c1-240 | head -8
grep -h "f32" "$OUT/test_gpu_backward.log" | cut -c1-200 | head -12
while [ ! -f "$OUT/memcheck_rc.txt" ] || [ ! -f "$OUT/racecheck_rc.txt" ]; do sleep 1; done
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
if ldd .devbinC/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.devbinC/lib:${LD_LIBRARY_PATH:-}; fi
: > "$OUT/ab.log"
for r in $(seq ${SGLA_ROUNDS:-2}); do
  for s in 8,4096,16,128,128:f32 4,8192,32,64,64:f32 2,4096,8,256,256:f32 8,4096,16,128,128:bf16; do
    IFS=: read -r sh dt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in ${SGLA_BUILDS:-.devbinC .devbinG .devbin}; do
      echo "== round $r $s $b" >> "$OUT/ab.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate g --backward --iters 5 --shape $sh $ex >> "$OUT/ab.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | cut -c1-190
[ "${SGLA_FLA:-1}" = 1 ] || exit 0  # SGLA_FLA=0: no fla (a short call)
wait $WARM; tail -2 "$OUT/fla_warm.log"
timeout 300 python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --rounds 3 --no-ceilings \
  > "$OUT/fla_f32_bwd.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/failed/p;/^shape /,$p' "$OUT/fla_f32_bwd.log"
