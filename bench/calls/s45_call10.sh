#!/bin/bash
# Session 45 call 10: wip/cpa (Y: the grads kernel's fp32 rows by cp.async, every copy in flight, warp 0's
# gate loads beside them) against main's kernels (.devbinX = 8b028c8, the cubin of main's chunk_bwd.cu).
# As s45_call9.sh without the ncu part.  Carry [".devbinY", ".devbinX"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin*/*.xz .devbin*/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool memcheck --error-exitcode 9 .devbinY/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout 200 $SAN --tool racecheck --error-exitcode 9 .devbinY/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
timeout 200 .devbinY/tests/test_gpu_backward > "$OUT/test_Y.log" 2>&1
echo "test Y rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_Y.log"; grep -h "FAIL" "$OUT/test_Y.log" | cut -c1-240 | head -8
grep -h "f32" "$OUT/test_Y.log" | sed 's/.*f32 //' | cut -c1-160 | head -14
while [ ! -f "$OUT/memcheck_rc.txt" ] || [ ! -f "$OUT/racecheck_rc.txt" ]; do sleep 1; done
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
: > "$OUT/ab.log"
for r in $(seq ${SGLA_ROUNDS:-2}); do
  for s in 8,4096,16,128,128:f32:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g; do
    IFS=: read -r sh dt gt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in .devbinX .devbinY; do
      echo "== round $r $s $b" >> "$OUT/ab.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate $gt --backward --iters 5 --shape $sh $ex >> "$OUT/ab.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | sed 's/ B=1 T=256 H=2//;s/h0=1 ht=1 nseq=0//' | cut -c1-150
echo "== summary"; tail -1 "$OUT/test_Y.log"; grep -c "FAIL" "$OUT/test_Y.log"; cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
