# A staged build's backward suite on the device (.devbin, as bench/stage_devbin.sh leaves it): test_gpu_backward
# in full, compute-sanitizer memcheck and racecheck on its small set (SGLA_GPU_SMALL), and the torch backward
# tests, the Hopper kernels expected.  `. bench/calls/staged_bwd_tests.sh [PATTERN]` (sourced: t0 and OUT serve
# the call after it); PATTERN: test_gpu_backward's lines to show besides its counts.  Logs under $OUT.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbin/sgla .devbin/tests/*
export SGLA_GPU_EXPECT_HOPPER=1
.devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1; echo "test_gpu_backward rc=$?"
grep -E "passed|FAIL|workspace" "$OUT/test_gpu_backward.log" | head -20
[ -n "${1:-}" ] && grep -E "$1" "$OUT/test_gpu_backward.log" | cut -c1-200
SGLA_GPU_SMALL=1 compute-sanitizer --tool memcheck .devbin/tests/test_gpu_backward > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?"
SGLA_GPU_SMALL=1 compute-sanitizer --tool racecheck .devbin/tests/test_gpu_backward > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" "$OUT/memcheck.log" "$OUT/racecheck.log"
SGLA_LIBRARY=${SGLA_LIBRARY:-$PWD/.devbin/libsgla.so} PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} timeout 200 \
  python3 -m pytest -q -x python/tests/test_backward_torch.py > "$OUT/pytest.log" 2>&1
echo "pytest backward_torch rc=$?"; tail -1 "$OUT/pytest.log"
echo "correctness $(( $(date +%s) - t0 )) s"
