#!/bin/bash
# Session 41 call 2 (call 1 never started: eleven failed starts): call 1 cut to what ~300 s of device
# time holds.  wip/xc-half's suites and sanitizers first, then a short A/B against main (4d2f21b).
# .devbin = wip/xc-half (full), .devbinM = main (sgla alone).  Carry [".devbin", ".devbinM"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinM/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
timeout 60 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --backward --iters 3 --shape 2,1024,4,128,128 \
  > "$OUT/precheck.txt" 2>&1
rc=$?; echo "precheck rc=$rc"; tail -3 "$OUT/precheck.txt"
if [ $rc != 0 ]; then timeout 120 .devbin/tests/test_gpu_backward 2>&1 | tail -15; exit 1; fi
t1=$(date +%s)
timeout 200 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
SGLA_CASES="8,4096,16,128,128:g:--backward 4,8192,32,64,64:g:--backward 2,16384,8,256,256:g:--backward" \
SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=2 SGLA_ITERS=20 \
  timeout 80 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
grep -i "fail\|error" "$OUT/ab_raw.log" | head -5
grep " bwd " "$OUT/ab_raw.log" | head -2 | sed 's/  */ /g' | cut -c1-150   # A, B: their workspaces
echo "took $(( $(date +%s) - t0 )) s"
