#!/bin/bash
# Session 42 call 2: wip/xc-half with the two tests whose premise the halved blob changed (call 1: the
# C test's two windows at 2x960x3 now take more than the plain plan; the Python cap of 120 MiB at
# 8x2048x16x128 no longer binds): test_gpu_backward whole and the torch workspace-limit tests, side by
# side (little device time left).  .devbin = the branch (42565fd + the two tests).  Carry [".devbin"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
( PYTHONPATH=$PWD/python SGLA_LIBRARY=$PWD/.devbin/libsgla.so timeout 100 python3 -m pytest -p no:cacheprovider \
    python/tests/test_backward_torch.py python/tests/test_errors.py -k workspace_limit -q -rs > "$OUT/pytest.log" 2>&1
  echo "pytest rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/pytest_rc.txt" ) &
timeout 100 .devbin/tests/test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1
echo "test_gpu_backward rc=$? $(( $(date +%s) - t0 )) s"
tail -1 "$OUT/test_gpu_backward.log"; grep -h "FAIL\|workspace at" "$OUT/test_gpu_backward.log" | cut -c1-250 | head -8
wait
cat "$OUT/pytest_rc.txt"; grep -E "passed|failed|FAILED|Error" "$OUT/pytest.log" | cut -c1-250 | head -8
