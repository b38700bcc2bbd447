#!/bin/bash
# Session 33 call 4: issue 11's backward rows beside fla 0.6 at three shapes, both gates (bench/calls/s25_call4.sh's
# second half; fla's gated backward timed with its Triton check bypassed, fla issue 640), peak memory included.
# Carry [".devbin", ".whl", ".triton_cache"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=.devbin
for z in $BD/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export TRITON_CACHE_DIR=/tmp/triton_cache PYTHONUNBUFFERED=1 SGLA_LIBRARY=$PWD/$BD/libsgla.so
mkdir -p $TRITON_CACHE_DIR
[ -f .triton_cache/cache.tgz ] && tar xzf .triton_cache/cache.tgz -C $TRITON_CACHE_DIR 2>/dev/null
t0=$(date +%s)
S=${SGLA_S:-8x4096x16x128,4x8192x32x64,2x16384x8x256}
timeout ${SGLA_T2:-400} python3 bench/fla_compare.py --shapes $S --gates gamma,g --bwd-shapes $S --warm-jobs 6 --rounds 3 \
  --no-ceilings > "$OUT/fla_bwd.log" 2>&1
echo "backward rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device/p;/^warmed/p;/^shape /,$p' "$OUT/fla_bwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
