#!/bin/bash
# Session 25 call 4: issue 14's table and issue 11's backward rows beside fla 0.6, main's build (.devbin),
# fla's wheels (flash-linear-attention and fla-core 0.6.0) in .whl (carry [".devbin", ".whl"]).  Two runs of bench/fla_compare.py, each compiling fla's
# kernels first in parallel processes: the forward table (gate g), then the backward at three shapes with
# both gates (fla's gated backward timed with its Triton check bypassed: fla issue 640).
. bench/calls/fla_env.sh
t0=$(date +%s)
timeout ${SGLA_T1:-180} python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 14 --rounds 3 \
  > "$OUT/fla_fwd.log" 2>&1
echo "forward table rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log"
t0=$(date +%s)
S=${SGLA_S:-8x4096x16x128,4x8192x32x64,2x16384x8x256}
timeout ${SGLA_T2:-290} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 6 --rounds 3 \
  --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^warmed/p;/^shape /,$p' "$OUT/fla_bwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
ls -la "$OUT"
