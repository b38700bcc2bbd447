#!/bin/bash
# The first device call of the next session with a device (written in session 23, not yet run):
# both patches of this folder in one build, its GPU tests and sanitizers, then A/B against main.
# Stage here first (about 10 minutes on two cores):
#   mkdir -p .devbinA && sh bench/stage_devbin.sh && cp .devbin/sgla.xz .devbinA/   # main's CLI
#   git apply bench/wip/gamma-stage.patch bench/wip/pool-pdl.patch && sh bench/stage_devbin.sh
#   git checkout -- src                                                          # main again
# then: run(command="bash bench/wip/next_call.sh", carry=[".devbin", ".devbinA"])  (~45 MB)
# A = main, B = both patches.  The backward's rows test gamma-stage (prediction: g_gamma at K = 128
# -3 to -4 %, gate g unchanged); the pool rows test pool-pdl (prediction: a one-sequence decode step
# 3.5 -> 3.0 us, 256 sequences unchanged).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
bash bench/device_run.sh tests > "$OUT/tests_out.log" 2>&1
tail -14 "$OUT/summary.txt"
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:gamma:--backward 8,4096,16,128,128:g:--backward \
4,8192,32,64,64:gamma:--backward 2,16384,8,256,256:gamma:--backward 8,4096,16,128,128:gamma \
4,8192,32,64,64:gamma 1,1,16,128,128:g:--pool 256,1,32,128,128:g:--pool" bash bench/ab.sh
tail -20 "$OUT/ab.log"
