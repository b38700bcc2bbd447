#!/bin/bash
# Session 40 call 3: main after this session's two kernel changes (X_c's 16 loads in flight, 900ec0e; its copies
# prefetched into L2 one chunk ahead, not two: call 2 found two ahead evicted before their loads) against main
# before the session (.devbinA: 515557d's CLI, 759a4df's kernels), every backward row and the forward; then main's
# suites and sanitizers, and where the merged pass stalls now.  .devbin = main (full).
# Carry [".devbin", ".devbinA"].
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
# the suites first: with little device time left, what must run runs first
t1=$(date +%s)
timeout 230 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward \
1,65536,16,128,128:g:--backward:--varlen=64 4,8192,32,64,64:g:--backward 4,8192,16,128,256:g:--backward \
2,16384,8,256,256:g:--backward 8,4096,16,128,128:g" \
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=2 SGLA_ITERS=20 timeout 150 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
grep -i "fail\|error" "$OUT/ab_raw.log" | head -5
# the merged pass's bytes from DRAM and its duration (as call 2)
timeout 100 ncu --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum \
  --kernel-name-base mangled -k regex:EELi4ELb0 --launch-skip 1 --launch-count 1 .devbin/sgla bench --backend cuda \
  --dtype bf16 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 > "$OUT/ncu_m1.txt" 2>&1
grep -E "gpu__time|hit|dram__bytes" "$OUT/ncu_m1.txt" | head -4
# and the time-order (dq) pass's, which writes the copies (ChunkShape<128,128,2,1,1,0>, BW = 1)
timeout 100 ncu --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum \
  --kernel-name-base mangled -k regex:ILi128ELi128ELi2ELi1ELi1ELi0EELi1ELb0 --launch-skip 1 --launch-count 1 .devbin/sgla \
  bench --backend cuda --dtype bf16 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 > "$OUT/ncu_m1_dq.txt" 2>&1
grep -E "gpu__time|hit|dram__bytes" "$OUT/ncu_m1_dq.txt" | head -4
# where main's merged pass stalls now (as call 1 read the branch's)
if [ $(( $(date +%s) - t0 )) -lt 250 ]; then
  SGLA_NCU_K=EELi4ELb0 SGLA_BENCH_EXTRA=--backward SGLA_NCU_LINES=70 \
    timeout 150 bash bench/ncu_source.sh 8,4096,16,128,128 g
  gzip -f "$OUT"/*.source.csv; rm -f "$OUT"/*.ncu-rep
fi
echo "took $(( $(date +%s) - t0 )) s"
