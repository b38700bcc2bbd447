#!/bin/bash
# Session 34 call 1: the backward's time windows (7c5907d, 4b4571b).  Carry [".devbin", ".devbinA"]:
# .devbin the change, .devbinA main before it (8abba2c, sgla alone).
#   1. bench/device_run.sh tests on the change (every suite, memcheck, racecheck, pytest, verify);
#   2. bench/ab.sh: the backward A (before) / B (the change) on the usual plan, and B in 2 and 4 windows
#      (--bwd-windows; A has no such option and prints nothing for those cases);
#   3. bench/fla_compare.py without fla: sgla's fwd + bwd and its peak memory, uncapped and under a
#      workspace cap (--ws-limit, MiB) in interleaved rounds, at two shapes.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^==== summary/,$p' "$OUT/tests.log"
t1=$(date +%s)
SGLA_ROUNDS=3 SGLA_ITERS=20 SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:g:--backward:--bwd-windows=2 \
8,4096,16,128,128:g:--backward:--bwd-windows=4 8,4096,16,128,128:gamma:--backward \
8,4096,16,128,128:gamma:--backward:--bwd-windows=2 4,8192,32,64,64:g:--backward 4,8192,32,64,64:g:--backward:--bwd-windows=2" \
  bash bench/ab.sh > "$OUT/ab_run.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
grep -E "bwd" "$OUT/ab.log" | awk '{print $1, $2, $3, $4, $5, $6, $NF}' | sort | head -80
python3 bench/ab_summary.py "$OUT/ab.log" 2>/dev/null | tail -30
t2=$(date +%s)
export SGLA_LIBRARY=$PWD/.devbin/libsgla.so
[ -f .devbin/libsgla.so ] || unxz -k .devbin/libsgla.so.xz
for spec in 8x4096x16x128:200 4x8192x32x64:100; do
  sh=${spec%%:*} lim=${spec##*:}
  timeout 150 python3 bench/fla_compare.py --shapes $sh --gates gamma,g --bwd-shapes $sh --rounds 3 --no-ceilings \
    --ws-limit $lim > "$OUT/cap_$sh.log" 2>&1
  echo "cap $sh $lim MiB rc=$?"
  sed -n '/^BxTxHxD/,$p' "$OUT/cap_$sh.log"
done
echo "memory rows $(( $(date +%s) - t2 )) s"
