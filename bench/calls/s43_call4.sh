#!/bin/bash
# Session 43 call 4: (1) call 3's two failures were the test's, not the plan's: under a cap one byte below
# the plain plan, rows of 100-300 tokens have no smaller plan (their blob halves to as many slots); the
# half blob's edge cases now run as one time window (sgla_cuda_backward_windows(b, 1)).  (2) wip/cc-tiles:
# the CUDA-core backward (fp32 inputs, and what no tensor-core path takes) with its state products through
# register tiles, the same sums in the same order (the same values).  .devbin = wip/cc-tiles' sources (staged
# as 0510c1c: main's + the state products' tiles + the score and triangular products'), full; .devbinT1 =
# the first tiles alone (staged as c2cb784, sgla only); .devbinM = main 4d2f21b's sgla (the CUDA-core kernels as on main).
# test_gpu_backward whole, memcheck / racecheck on its small set, the torch tests of the half blob, then
# the fp32 backward of the three builds (each `sgla bench` checks its backward against fp64: a failure of
# the full build's tests is placed by T1's check).  Carry [".devbin", ".devbinM", ".devbinT1"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinM/*.xz .devbinT1/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
for b in .devbin .devbinM .devbinT1; do
  if ldd $b/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}; fi
done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( SGLA_GPU_SMALL=1 timeout ${SGLA_T:-130} $SAN --tool memcheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/memcheck_rc.txt" ) &
( SGLA_GPU_SMALL=1 timeout ${SGLA_T:-130} $SAN --tool racecheck --error-exitcode 9 .devbin/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/racecheck_rc.txt" ) &
timeout ${SGLA_T:-130} .devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1
echo "test_gpu_backward rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_gpu_backward.log"; grep -h "FAIL\|half the blob\|workspace at" "$OUT/test_gpu_backward.log" | cut -c1-220 | head -8
PYTHONPATH=$PWD/python SGLA_LIBRARY=$PWD/.devbin/libsgla.so timeout 90 python3 -m pytest -p no:cacheprovider -q -rs \
  python/tests/test_backward_torch.py -k "half_states or workspace_limit" > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -1 "$OUT/pytest.log"
wait
cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -h "SUMMARY\|passed, " "$OUT/memcheck.log" "$OUT/racecheck.log" | cut -c1-200
: > "$OUT/ab_cc.log"
for r in $(seq ${SGLA_ROUNDS:-1}); do
  for s in ${SGLA_CASES:-8,4096,16,128,128:f32:g 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g}; do
    IFS=: read -r sh dt gt <<< "$s"
    ex=; [ $dt = bf16 ] && ex="--bwd-path 1"
    for b in .devbinM .devbinT1 .devbin; do
      echo "== round $r $s $b" >> "$OUT/ab_cc.log"
      timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate $gt --backward --iters 5 --shape $sh $ex >> "$OUT/ab_cc.log" 2>&1
    done
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab_cc.log" | sed 's/  */ /g' | cut -c1-190
