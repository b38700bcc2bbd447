#!/bin/bash
# Session 33 call 4: issue 11's backward rows beside fla 0.6 at three shapes, both gates (bench/calls/s25_call4.sh's
# second half; fla's gated backward timed with its Triton check bypassed, fla issue 640), peak memory included.
# Carry [".devbin", ".whl", ".triton_cache"].
. bench/calls/fla_env.sh
t0=$(date +%s)
S=${SGLA_S:-8x4096x16x128,4x8192x32x64,2x16384x8x256}
timeout ${SGLA_T2:-400} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 6 --rounds 3 \
  --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/^shape /,$p' "$OUT/fla_bwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
