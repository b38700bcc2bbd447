#!/bin/bash
# Session 37 call 1: main b824b58 with bench/wip/review-mends.patch (branch review-mends, dc29ecf) staged
# in .devbinB: its suites (main's own shared validation and Python pool changes since s36 call 6 are in
# it), then bench/ab.sh A = main's kernels (.devbinS: 6539360's sgla, the kernels main still has),
# B = review-mends, on the rows its two mends touch (the forward's and the pool's g by TMA rule, the
# backward's blob slot).  On an H200, B's K = 64 rows are issue 14's H200 figure.
# Carry [".devbinB", ".devbinS", ".devbinT"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
SGLA_DEVBIN=.devbinB bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="8,4096,16,128,128:g:--backward 4,8192,32,64,64:g:--backward 4,8192,32,64,64:g 4,8192,32,64,64:gamma \
8,4096,16,128,128:g 8,4096,16,64,64:g:--pool" \
SGLA_DEVBIN_A=.devbinS SGLA_DEVBIN_B=.devbinB SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
# 3. the backward's per-role timelines at K = 64 and 128 (.devbinT: this tree's library built with
# -DSGLA_TRACE=1; finer marks 8-13 in the outputs' chain of each pass)
if [ -f .devbinT/libsgla.so.xz ]; then
  unxz -f .devbinT/libsgla.so.xz
  for a in "4,8192,32,64,64 --gate g --pass merged" "4,8192,32,64,64 --gate g --pass dq" \
           "8,4096,16,128,128 --gate g --pass merged" "4,8192,32,64,64 --gate g --pass fwd"; do
    SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 120 python3 bench/trace_run.py $a 2>&1 | tail -8
  done
fi
