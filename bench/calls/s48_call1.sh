#!/bin/bash
# Session 48 call 1: W beside main, then main's suites; on an H200 also the H200 rows beside fla.
# .devbin = main 04acdc0 staged in full; .devbinWs = W's sgla alone (wip/grads-splitk c846c8c, the
# gradient kernel's state products at nc <= 64 over two halves of j; its test_gpu_backward does not fit
# the carry beside a full build: a second call was to run it, had W been faster).  Carry [".devbin", ".devbinWs",
# ".whl"] (60 MiB with the tree).
#  1. the backward A/B of main and W (SGLA_ROUNDS rounds interleaved; 3, 2 on an H200);
#  2. `bench/device_run.sh tests` of main (SGLA_SEED 48001); on an H200 beside fla's warm-up, then issue 14's
#     forward table and issue 11's backward rows beside fla (bench/calls/s38_call1.sh's steps), the last
#     only where the call's time allows.
. bench/calls/bwd_steps.sh
bwd_begin
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) H200=1 ;; *) H200=0 ;; esac
R=$([ $H200 = 1 ] && echo 2 || echo 3)
SGLA_SEED=47001 SGLA_ROUNDS=${SGLA_ROUNDS:-$R} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 4,8192,32,64,64:f32t:g 8,4096,16,32,32:f32:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:f32:g}" \
  .devbin .devbinWs > "$OUT/ab_summary.txt"
echo "ab done $(( $(date +%s) - t0 )) s" >> "$OUT/ab_summary.txt"
mv "$OUT/ab.log" /tmp/ab.log   # device_run.sh packs every $OUT/*.log into its logs.tgz
S11=8x4096x16x128,4x8192x32x64,2x16384x8x256
if [ $H200 = 1 ]; then
  ( . bench/calls/fla_env.sh
    timeout 300 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 9 \
      --rounds 0 --no-ceilings > /tmp/fla_warm.log 2>&1 &
    timeout 300 python3 bench/fla_compare.py --shapes $S11 --gates gamma,g --bwd-shapes $S11 --warm-jobs 5 \
      --rounds 0 --no-ceilings > /tmp/fla_warm_bwd.log 2>&1; wait ) &
  WARM=$!
fi
SGLA_SEED=48001 timeout 300 bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
echo "== tests rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/tests_run.txt"
if [ $H200 = 1 ]; then
  wait $WARM; echo "warm rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/tests_run.txt"
  tail -3 /tmp/fla_warm.log /tmp/fla_warm_bwd.log >> "$OUT/tests_run.txt"
  ( . bench/calls/fla_env.sh
    timeout 120 python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 0 --rounds 3 \
      > "$OUT/fla_fwd.log" 2>&1
    echo "forward table rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_fwd.log"
    left=$(( ${SGLA_CALL_LIMIT:-580} - $(date +%s) + t0 ))   # the call's seconds (its run timeout less ~20)
    if [ $left -gt 60 ]; then
      timeout $left python3 bench/fla_compare.py --shapes $S11 --gates gamma,g --bwd-shapes $S11 --warm-jobs 0 \
        --rounds 3 --no-ceilings > "$OUT/fla_bwd.log" 2>&1
      echo "backward rows rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/fla_bwd.log"
    fi )
fi
cp /tmp/ab.log "$OUT/ab.log"
echo "== summary $(( $(date +%s) - t0 )) s"
grep -v "^level\|^san_" "$OUT/tests_run.txt" | sed -n '/==== summary/,$p' | cut -c1-200
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
tail -1 "$OUT/ab_summary.txt"
if [ $H200 = 1 ]; then
  sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log" | cut -c1-200
  [ -f "$OUT/fla_bwd.log" ] && sed -n '/^device/p;/^shape /,$p' "$OUT/fla_bwd.log" | cut -c1-200
fi
rm -f "$OUT/ab_summary.txt"
