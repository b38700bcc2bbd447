# A staged build's forward suite on the device, beside compute-sanitizer memcheck and racecheck on it
# (SGLA_GPU_SMALL), the Hopper kernels expected (an sm_90a build on an H100 / H200): the tests of a kernel
# experiment before its timings.  `. bench/calls/staged_fwd_tests.sh DIR` (sourced, so that the
# LD_LIBRARY_PATH it may set serves the timings after it; DIR default .devbinB: sgla and
# tests/test_gpu_forward, as bench/stage_devbin.sh leaves them); results in $OUT/b_tests.txt.
OUT=${OUT:-/tmp/sgla_out}
D=${1:-.devbinB}
mkdir -p "$OUT"
for z in $D/*.xz $D/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x $D/sgla $D/tests/*
ldd $D/sgla 2>/dev/null | grep -q "not found" && export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
rm -f /tmp/b_rc_*.txt
( SGLA_GPU_EXPECT_HOPPER=1 timeout 200 $D/tests/test_gpu_forward > /tmp/b_fwd.log 2>&1; echo "B test_gpu_forward rc=$?" > /tmp/b_rc_fwd.txt ) &
for tool in memcheck racecheck; do
  ( SGLA_GPU_SMALL=1 timeout 150 $SAN --tool $tool --error-exitcode 1 $D/tests/test_gpu_forward > /tmp/b_san_$tool.log 2>&1
    echo "B compute-sanitizer $tool test_gpu_forward rc=$?" > /tmp/b_rc_$tool.txt ) &
done
wait
cat /tmp/b_rc_*.txt | tee "$OUT/b_tests.txt"
tail -1 /tmp/b_fwd.log | tee -a "$OUT/b_tests.txt"
grep -h "^FAIL" /tmp/b_fwd.log | cut -c1-300 | head -10 | tee -a "$OUT/b_tests.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" /tmp/b_san_*.log | tee -a "$OUT/b_tests.txt"
