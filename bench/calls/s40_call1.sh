#!/bin/bash
# Session 40 call 1: wip/state-regs (the merged backward pass at K = V = 128 with the producer at 24 registers and
# the state warpgroup at 248, so that X_c's 16 loads a thread are all in flight before the first use; main's ptxas
# issues 11 and then 5 as registers free: two L2 round trips a chunk on the state's chain, session 39 call 1)
# against main, then its suites.  .devbinA = main's kernels (515557d, sgla alone), .devbin = the
# branch (full).  Carry [".devbin", ".devbinA"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinA/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
# a hang or a wrong X_c shows here first (sgla bench checks every CUDA row against fp64)
timeout 60 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --backward --iters 3 --shape 2,1024,4,128,128 \
  > "$OUT/precheck.txt" 2>&1
rc=$?; echo "precheck rc=$rc"; tail -3 "$OUT/precheck.txt"
if [ $rc != 0 ]; then timeout 120 .devbin/tests/test_gpu_backward 2>&1 | tail -15; exit 1; fi
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward \
1,65536,16,128,128:g:--backward:--varlen=64 4,8192,32,64,64:g:--backward 8,4096,16,128,128:g" \
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=3 SGLA_ITERS=20 timeout 300 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
grep -i "fail\|error" "$OUT/ab_raw.log" | head -5
t1=$(date +%s)
timeout 230 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
# where the branch's merged pass stalls now (as session 39 call 1 read main's)
if [ $(( $(date +%s) - t0 )) -lt 330 ]; then
  SGLA_NCU_K=EELi4ELb0 SGLA_BENCH_EXTRA=--backward SGLA_NCU_LINES=70 \
    timeout 150 bash bench/ncu_source.sh 8,4096,16,128,128 g
  gzip -f "$OUT"/*.source.csv; rm -f "$OUT"/*.ncu-rep
fi
echo "took $(( $(date +%s) - t0 )) s"
