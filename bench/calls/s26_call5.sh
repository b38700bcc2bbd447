#!/bin/bash
# Session 26 call 5: fla 0.6 beside sgla's fp32 forward on wgmma (E = 60a3226's library, .devbinE; fla's wheels
# in .whl), the issue 14 table's two fp32 rows, gate g, in interleaved rounds (bench/fla_compare.py).
# carry [".devbinE", ".whl"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=.devbinE
for z in $BD/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
rm -rf /tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export TRITON_CACHE_DIR=/tmp/triton_cache PYTHONUNBUFFERED=1 SGLA_LIBRARY=$PWD/$BD/libsgla.so
t0=$(date +%s)
timeout ${SGLA_T1:-230} python3 bench/fla_compare.py --shapes 8x4096x16x128@f32,64x1024x16x128@f32 --gates g \
  --bwd-shapes= --warm-jobs 2 --rounds 3 --no-ceilings > "$OUT/fla_f32.log" 2>&1
echo "fp32 rows rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_f32.log"
