#!/bin/bash
# Session 36 call 3: main after calls 1-2 (blob-slot and pool-gate-tma merged): its suites; issue 14's
# K = 64 row beside main before gate g by TMA (e121813, .devbinM); then issue 14's forward table beside
# fla 0.6 in one process (s33 call 3's second half).  fla's kernels compile in 14 processes beside the
# suites.  Carry [".devbin", ".devbinM", ".whl"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
( . bench/calls/fla_env.sh
  timeout 300 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 14 --rounds 0 \
    --no-ceilings > "$OUT/fla_warm.log" 2>&1 ) &
WARM=$!
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt" | grep -v "^level\|^san_"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
wait $WARM
echo "warm rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma 8,4096,16,64,64:g 8,4096,16,128,128:g" \
SGLA_DEVBIN_A=.devbinM SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
t2=$(date +%s)
( . bench/calls/fla_env.sh
  timeout 220 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 0 --rounds 3 \
    > "$OUT/fla_fwd.log" 2>&1 )
echo "forward table rc=$? $(( $(date +%s) - t2 )) s"
sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log"
echo "took $(( $(date +%s) - t0 )) s"
