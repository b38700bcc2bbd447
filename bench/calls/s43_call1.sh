#!/bin/bash
# Session 43 call 1: first the two tests whose premise session 42's halved blob changed (test_gpu_backward
# whole, the torch workspace-limit tests; as s42_call2.sh), then issue 11's backward rows beside fla 0.6 in
# one process with the halved blob, uncapped and capped (100 MiB at 8x4096x16x128, 70 at 4x8192x32x64),
# peak memory of each.  .devbin = 42565fd + the mended tests (kernels as main).
# Carry [".devbin", ".whl"] (and ".triton_cache" when one came back).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
bash bench/calls/s42_call2.sh
. bench/calls/fla_env.sh
t0=$(date +%s)
S=8x4096x16x128,4x8192x32x64
timeout ${SGLA_T3:-330} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --ws-limit 100,70 \
  --warm-jobs 4 --rounds 3 --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/failed/p;/^shape /,$p' "$OUT/fla_bwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
