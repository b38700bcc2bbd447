#!/bin/bash
# Session 31 call 2 (~150 s; not run in session 31: the budget was spent): the mma.sync forward with
# its column offset read at each use (main after call 1's reading): test_gpu_forward in full beside compute-sanitizer
# memcheck and racecheck on it (SGLA_GPU_SMALL), then the portable forward beside main before the
# column blocks (.devbinA, cbbb3b4) in two interleaved rounds.  Carry [".devbin", ".devbinA"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=.devbin
t0=$(date +%s)
for z in $BD/*.xz $BD/tests/*.xz .devbinA/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x $BD/sgla $BD/tests/* .devbinA/sgla
if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
( timeout 150 $BD/tests/test_gpu_forward > $OUT/test_gpu_forward.log 2>&1; echo "test_gpu_forward rc=$?" > $OUT/rc_fwd.txt ) &
for tool in memcheck racecheck; do
  ( SGLA_GPU_SMALL=1 timeout 150 $SAN --tool $tool --error-exitcode 1 $BD/tests/test_gpu_forward > $OUT/san_$tool.log 2>&1
    echo "compute-sanitizer $tool test_gpu_forward rc=$?" > $OUT/rc_$tool.txt ) &
done
wait
cat $OUT/rc_*.txt
tail -1 $OUT/test_gpu_forward.log
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/san_*.log
echo "tests: $(( $(date +%s) - t0 )) s"
LOG=$OUT/portable.log
: > "$LOG"
for r in 1 2; do
  for cs in 8,4096,16,128,128:g 8,4096,16,128,128:gamma 16,2048,32,128,128:g 4,8192,32,64,64:g 2,16384,8,256,256:g; do
    IFS=: read -r shape gate <<< "$cs"
    for tag in new old; do
      bin=$BD; [ $tag = old ] && bin=.devbinA
      timeout 30 $bin/sgla bench --backend cuda --gate "$gate" --iters 30 --warmup 3 --shape "$shape" --config portable 2>&1 \
        | grep -E "^[0-9]+x[0-9]" | sed "s/^/$tag-$gate /" >> "$LOG"
    done
  done
done
echo "rounds: $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$LOG"
