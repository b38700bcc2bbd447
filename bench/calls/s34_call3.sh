#!/bin/bash
# Session 34 call 3: issue 11's backward rows beside fla 0.6 in one process with sgla's capped backward too
# (--ws-limit: 200 MiB at 8x4096x16x128, 100 at 4x8192x32x64; peak memory of each).  fla's gated backward
# timed with its Triton check bypassed (fla issue 640).  Carry [".devbin", ".whl", ".triton_cache"].
. bench/calls/fla_env.sh
t0=$(date +%s)
S=8x4096x16x128,4x8192x32x64
timeout ${SGLA_T3:-420} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --ws-limit 200,100 \
  --warm-jobs 4 --rounds 3 --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/^shape /,$p' "$OUT/fla_bwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
