#!/bin/bash
# Session 46 call 1: the two unrun patches of bench/wip/ against main's kernels (.devbinX = 8b028c8, the
# cubin of main's chunk_bwd.cu): Y = grads-cp-async.patch (3b09bc0), Z = states-presplit.patch (dcf5383).
# Each: test_gpu_backward (full) beside memcheck and racecheck of its small set; Y's and Z's test digits
# compared (both should equal main's: neither changes arithmetic); the backward A/B of X, Y, Z, two rounds;
# then `sgla bench --bwd-half` of Y (the check through SGLA_FLAG_BWD_HALF_STATES, never run on a GPU).
# Carry [".devbinX", ".devbinY", ".devbinZ"].
. bench/calls/bwd_steps.sh
export SGLA_SEED=46001   # one seed for both builds: their digits compared
bwd_begin
O=$OUT
for B in .devbinY .devbinZ; do
  T=${B#.devbin}; OUT=$O/$T; mkdir -p "$OUT"
  bwd_sanitizers $B
  bwd_test $B $T
  bwd_sanitizers_wait
done
OUT=$O
# the digits of every case (the lines without timings) should match
echo "Y/Z test logs differ on $(diff $O/Y/test_Y.log $O/Z/test_Z.log | grep -c '^<') lines"; diff $O/Y/test_Y.log $O/Z/test_Z.log | head -6 | cut -c1-200
bwd_ab "8,4096,16,128,128:f32:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g" .devbinX .devbinY .devbinZ > $O/ab_summary.txt
tail -45 $O/ab_summary.txt
echo "== bwd-half"
timeout 60 .devbinY/sgla bench --backend cuda --dtype bf16 --gate g --backward --bwd-half --iters 3 --shape 8,4096,16,128,128 2>&1 | tail -6 | cut -c1-200
echo "== summary"
for T in Y Z; do tail -1 $O/$T/test_$T.log; grep -c FAIL $O/$T/test_$T.log; cat $O/$T/memcheck_rc.txt $O/$T/racecheck_rc.txt; done
grep -E "^== | bwd " "$O/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
