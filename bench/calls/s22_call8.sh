#!/bin/bash
# Session 22 call 8: wip/gamma-as-g (.devbin, full build) beside main (.devbinM): the backward's
# g_gamma rows timed (g the control), after test_gpu_backward on the branch.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for d in .devbin .devbinM; do for z in "$d"/*.xz "$d"/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x "$d/sgla"; done
(cd .devbin/tests && timeout 150 ./test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1; echo "test_gpu_backward rc=$?"; tail -1 "$OUT/test_gpu_backward.log"; grep -m5 FAIL "$OUT/test_gpu_backward.log")
SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=2 SGLA_ITERS=20 \
SGLA_CASES="8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:gamma:--backward 4,8192,32,64,64:gamma:--backward 2,16384,8,256,256:gamma:--backward 8,4096,16,128,128:g:--backward" \
  timeout 200 bash bench/ab.sh > "$OUT/ab_out.log" 2>&1
grep bwd "$OUT/ab.log"
