#!/bin/bash
# Session 45 call 5: wip/sds (V: <dS', S> of every block summed by the reverse states kernel, the grads
# kernel reading those sums instead of S and dS' again) against main's kernels (.devbinU = 8e3a1af, the
# same kernels as main b72f127).  test_gpu_backward of V, memcheck and racecheck of its small set, then
# the backward A/B (gate g, and g_gamma with dg_gamma at K = 128), two rounds, and ncu's kernel times of
# V.  Carry [".devbinV", ".devbinU"].
# The driver of calls 7, 9 and 10 too: NEW (the build tested and timed, with test_gpu_backward), BASE
# (its baseline's sgla), SGLA_NCU=0 leaves out the ncu part.
NEW=${NEW:-.devbinV} BASE=${BASE:-.devbinU}
T=${NEW#.devbin}
. bench/calls/bwd_steps.sh
bwd_begin
bwd_sanitizers $NEW
bwd_test $NEW $T
bwd_sanitizers_wait
bwd_ab "8,4096,16,128,128:f32:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g 8,4096,16,128,128:bf16:g" $BASE $NEW
[ "${SGLA_NCU:-1}" = 1 ] && bwd_ncu_times $NEW 8,4096,16,128,128 2,4096,8,256,256
echo "== summary"; tail -1 "$OUT/test_$T.log"; grep -c "FAIL" "$OUT/test_$T.log"; cat "$OUT/memcheck_rc.txt" "$OUT/racecheck_rc.txt"
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
