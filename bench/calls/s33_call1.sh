#!/bin/bash
# The next session's first call (~150 s), written in session 32: main's GPU suites as they now are (they ask
# whether the Hopper kernels run, `gpu_hopper_kernels`, and device_run.sh makes the sm_90a build's suites
# check that they do) -- bench/device_run.sh tests on .devbin (sm_90a) -- beside the same suites of the
# sm_80 PTX build (.devbinJ, JIT-compiled here: bench/calls/s32_call4.sh, whose 29 failures in session 32
# were checks that expect the Hopper kernels; all should pass now).  Both staged at 3501730.
# Carry [".devbin", ".devbinJ"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
( OUT=$OUT/jit SGLA_JIT_T=240 bash bench/calls/s32_call4.sh > /tmp/jit_tail.txt 2>&1 ) &
bash bench/device_run.sh tests > /tmp/tests_tail.txt 2>&1
wait
sed -n '/^==== summary/,$p' /tmp/tests_tail.txt
cat /tmp/jit_tail.txt
echo "took $(( $(date +%s) - t0 )) s"
