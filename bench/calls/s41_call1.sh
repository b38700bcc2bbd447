#!/bin/bash
# Session 41 call 1: wip/xc-half (the time-order pass keeps every other chunk's 16-bit state copy, in half
# the slots; an odd chunk's X_c is s <R_c, S_{c+1}> less its u) against main (4d2f21b: session 40's two kernel changes, whose
# suites had not run).  The branch's suites and sanitizers first.
# .devbin = wip/xc-half (full), .devbinM = main (sgla alone); main before session 40 left out (device time).
# Carry [".devbin", ".devbinM"].  SGLA_SHORT=1: what ~300 s of device time holds (suites, three rows, no ncu).
SHORT=${SGLA_SHORT:-0}
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinM/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
# a hang or a wrong X_c shows here first (sgla bench checks every CUDA row against fp64)
timeout 60 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --backward --iters 3 --shape 2,1024,4,128,128 \
  > "$OUT/precheck.txt" 2>&1
rc=$?; echo "precheck rc=$rc"; tail -3 "$OUT/precheck.txt"
if [ $rc != 0 ]; then timeout 120 .devbin/tests/test_gpu_backward 2>&1 | tail -15; exit 1; fi
t1=$(date +%s)
timeout $([ $SHORT = 1 ] && echo 200 || echo 230) bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
grep -h "FAIL" "$OUT"/*.log 2>/dev/null | head -8
echo "tests $(( $(date +%s) - t1 )) s; took $(( $(date +%s) - t0 )) s"
CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 4,8192,32,64,64:g:--backward 4,8192,16,128,256:g:--backward 2,16384,8,256,256:g:--backward 8,4096,16,128,128:g"
[ $SHORT = 1 ] && CASES="8,4096,16,128,128:g:--backward 4,8192,32,64,64:g:--backward 2,16384,8,256,256:g:--backward"
SGLA_CASES=$CASES SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_ROUNDS=2 SGLA_ITERS=20 \
  timeout $([ $SHORT = 1 ] && echo 80 || echo 130) bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
grep -i "fail\|error" "$OUT/ab_raw.log" | head -5
grep " bwd " "$OUT/ab_raw.log" | head -2 | sed 's/  */ /g' | cut -c1-150   # A, B: their workspaces
# the merged and dq passes' DRAM bytes, main and the branch
for b in .devbinM .devbin; do
  [ $SHORT = 1 ] || [ $(( $(date +%s) - t0 )) -gt 340 ] && break
  for k in EELi4ELb0 ILi128ELi128ELi2ELi1ELi1ELi0EELi1ELb0; do
    timeout 45 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --kernel-name-base mangled -k regex:$k --launch-skip 1 --launch-count 1 $b/sgla bench --backend cuda \
      --dtype bf16 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 > "$OUT/ncu_${b#.}_${k:0:9}.txt" 2>&1
    echo "$b $k: $(grep -E "gpu__time|dram__bytes" "$OUT/ncu_${b#.}_${k:0:9}.txt" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
  done
done
echo "took $(( $(date +%s) - t0 )) s"
