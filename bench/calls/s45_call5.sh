#!/bin/bash
# Session 45 call 5: wip/sds (V: <dS', S> of every block summed by the reverse states kernel, the grads
# kernel reading those sums instead of S and dS' again) against main's kernels (.devbinU = 8e3a1af, the
# same kernels as main b72f127).  test_gpu_backward of V, memcheck and racecheck of its small set, then
# the backward A/B (gate g, and g_gamma with dg_gamma at K = 128), two rounds, and ncu's kernel times of
# V.  Carry [".devbinV", ".devbinU"].
# The driver of calls 7, 9 and 10 too: NEW (the build tested and timed, with test_gpu_backward), BASE
# (its baseline's sgla), SGLA_NCU=0 leaves out the ncu part.
NEW=${NEW:-.devbinV} BASE=${BASE:-.devbinU}
T=${NEW#.devbin}
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin*/*.xz .devbin*/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool memcheck --error-exitcode 9 $NEW/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool racecheck --error-exitcode 9 $NEW/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
timeout 200 $NEW/tests/test_gpu_backward > "$OUT/test_$T.log" 2>&1
echo "test $T rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_$T.log"; grep -h "FAIL" "$OUT/test_$T.log" | cut -c1-240 | head -8
grep -h "f32" "$OUT/test_$T.log" | sed 's/.*f32 //' | cut -c1-160 | head -14
while [ ! -f "$OUT/memcheck_rc.txt" ] || [ ! -f "$OUT/racecheck_rc.txt" ]; do sleep 1; done
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
: > "$OUT/ab.log"
for r in $(seq ${SGLA_ROUNDS:-2}); do
  for s in 8,4096,16,128,128:f32:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g; do
    IFS=: read -r sh dt gt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in $BASE $NEW; do
      echo "== round $r $s $b" >> "$OUT/ab.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate $gt --backward --iters 5 --shape $sh $ex >> "$OUT/ab.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | sed 's/ B=1 T=256 H=2//;s/h0=1 ht=1 nseq=0//' | cut -c1-150
if [ "${SGLA_NCU:-1}" = 1 ]; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  for sh in 8,4096,16,128,128 2,4096,8,256,256; do
    timeout 90 $NCU --metrics gpu__time_duration.sum --csv $NEW/sgla bench --backend cuda --dtype f32 --gate g \
      --backward --iters 1 --shape $sh > "$OUT/ncu_${T}_$sh.csv" 2> "$OUT/ncu_err.log"
    echo "ncu $T $sh rc=$? $(( $(date +%s) - t0 )) s"
    python3 bench/ncu_durations.py "$OUT/ncu_${T}_$sh.csv" | grep -E "states|grads" | tail -3 | cut -c1-80
  done
fi
echo "== summary"; tail -1 "$OUT/test_$T.log"; grep -c "FAIL" "$OUT/test_$T.log"; cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
