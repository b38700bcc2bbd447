#!/bin/bash
# Session 36 call 4: main's suites again (the Python fixes since call 3: pytest with torch; the kernels
# are call 3's), then where gate g's GS instance beats g by TMA at K = 64 (call 2: 8x4096x16x64 GS -3 %,
# 4x8192x32x64 TMA -2 %): T or H?  .devbinX = call 2's scratch build (sgla alone; SGLA_X_GS=1 runs the
# GS instance).  A = B = it, C = it with the switch.  Carry [".devbin", ".devbinX"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
grep -h "^FAILED\|^ERROR" "$OUT/pytest_gpu.log" 2>/dev/null | head -5
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="8,4096,16,64,64:g 4,4096,32,64,64:g 8,8192,16,64,64:g 4,8192,32,64,64:g 16,4096,16,64,64:g" \
SGLA_DEVBIN_A=.devbinX SGLA_DEVBIN_B=.devbinX SGLA_DEVBIN_C=.devbinX SGLA_ENV_C="SGLA_X_GS=1" \
SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
