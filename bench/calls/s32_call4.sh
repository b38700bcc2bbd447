#!/bin/bash
# Session 32 call 4 (~200 s): the GPU suites of the sm_80 PTX build again (.devbinJ, JIT-compiled here),
# after call 3 (test_gpu_backward 242 / 10: the three passes and a K = 256 split forced where only the
# mma.sync path exists; test_gpu_forward 526 / 19, its log not returned: the call returns 8 files).
# Both suites now skip the Hopper-only checks (gpu_hopper_kernels: the three passes and K = 256 splits forced,
# fp32 expected on wgmma, gate g's workspace).  The failures are printed, and kept in one file.
# Carry [".devbinJ"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
for z in .devbinJ/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbinJ/tests/*
export SGLA_GPU_EXPECT_HOPPER=0 CUDA_CACHE_MAXSIZE=4294967296 LD_LIBRARY_PATH=$PWD/.devbinJ/lib:${LD_LIBRARY_PATH:-}
for t in test_gpu_forward test_gpu_backward; do
  ( timeout ${SGLA_JIT_T:-300} .devbinJ/tests/$t > /tmp/jit_$t.log 2>&1; echo "sm_80 PTX (JIT) $t rc=$?" > /tmp/jit_rc_$t.txt ) &
done
wait
cat /tmp/jit_rc_*.txt | tee "$OUT/jit_summary.txt"
tail -qn1 /tmp/jit_test_gpu_*.log | tee -a "$OUT/jit_summary.txt"
grep -h "^FAIL\|FATAL\|skipped" /tmp/jit_test_gpu_*.log | cut -c1-400 | tee "$OUT/jit_fails.txt" | head -45
cat /tmp/jit_test_gpu_forward.log /tmp/jit_test_gpu_backward.log | xz -9 > "$OUT/jit_logs.txt.xz"
echo "took $(( $(date +%s) - t0 )) s"
