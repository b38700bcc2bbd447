#!/bin/bash
# Session 33 call 7 (~200 s): call 6's wip/qk-pair ran 10-20 % slower (its pair barrier held the two warps of
# one scheduler, w and w + 4, in step).  B = wip/qk-pair 1358e2b: the trading pair moved onto two schedulers
# (at two stages m = w / 2, half w % 2: warps 2m and 2m + 1); C = wip/qk-map faf6105: main with that warp map
# alone (the control); A = main f2eb4b2.  B's test_gpu_forward with memcheck and racecheck, then the portable
# rows A / B / C in three interleaved rounds.  Prediction: C within 2 % of A (a map the balance patch showed
# the kernel indifferent to), B 0-5 % faster than A.  Carry [".devbinA", ".devbinB", ".devbinC"] (sgla alone in
# A and C; B with test_gpu_forward).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
. bench/calls/staged_fwd_tests.sh .devbinB  # (its summary printed before the timings, which run alone)
SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:--config=portable
16,2048,32,128,128:g:--config=portable 4,8192,32,64,64:g:--config=portable 8,4096,16,128,128:gamma:--config=portable" \
  bash bench/ab.sh > /dev/null 2>&1
python3 bench/ab_summary.py "$OUT/ab.log" | tee "$OUT/ab_summary.txt"
echo "took $(( $(date +%s) - t0 )) s"
