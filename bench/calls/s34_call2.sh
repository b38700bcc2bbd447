#!/bin/bash
# Session 34 call 2: the time windows with their first pass on the forward's first-pass instance (dbb2c3b).
# Carry [".devbin", ".devbinA"] (.devbinA: 8abba2c, sgla alone).
#   1. test_gpu_backward (full), its memcheck and racecheck (SGLA_GPU_SMALL), the GPU pytest suite;
#   2. bench/ab.sh: the backward before / after, and 2, 3, 4 windows;
#   3. fla_compare without fla: uncapped and capped fwd + bwd, peak memory, two shapes.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinA/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbin/sgla .devbinA/sgla .devbin/tests/*
export SGLA_GPU_EXPECT_HOPPER=1
.devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1; echo "test_gpu_backward rc=$?"
grep -E "passed|FAIL|workspace" "$OUT/test_gpu_backward.log" | head -20
SGLA_GPU_SMALL=1 compute-sanitizer --tool memcheck .devbin/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?"
SGLA_GPU_SMALL=1 compute-sanitizer --tool racecheck .devbin/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" "$OUT/memcheck.log" "$OUT/racecheck.log"
SGLA_LIBRARY=$PWD/.devbin/libsgla.so PYTHONPATH=$PWD/python timeout 200 python3 -m pytest -q -x python/tests/test_backward_torch.py \
  > "$OUT/pytest.log" 2>&1; echo "pytest backward_torch rc=$?"; tail -2 "$OUT/pytest.log"
echo "correctness $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_ROUNDS=3 SGLA_ITERS=20 SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:g:--backward:--bwd-windows=2 \
8,4096,16,128,128:g:--backward:--bwd-windows=3 8,4096,16,128,128:g:--backward:--bwd-windows=4 \
4,8192,32,64,64:g:--backward 4,8192,32,64,64:g:--backward:--bwd-windows=2" \
  bash bench/ab.sh > "$OUT/ab_run.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log" 2>/dev/null | grep bwd
t2=$(date +%s)
export SGLA_LIBRARY=$PWD/.devbin/libsgla.so
for spec in 8x4096x16x128:200 4x8192x32x64:100; do
  sh=${spec%%:*} lim=${spec##*:}
  timeout 150 python3 bench/fla_compare.py --shapes $sh --gates gamma,g --bwd-shapes $sh --rounds 3 --no-ceilings \
    --ws-limit $lim > "$OUT/cap_$sh.log" 2>&1
  echo "cap $sh $lim MiB rc=$?"
  sed -n '/^BxTxHxD/,/^bwd, fixed/p' "$OUT/cap_$sh.log"
done
echo "memory rows $(( $(date +%s) - t2 )) s"
