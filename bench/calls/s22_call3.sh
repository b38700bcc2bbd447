#!/bin/bash
# Session 22 call 3: main's full build (.devbin) after the forced-split fix of the backward: the
# backward's sequence split swept at the long-sequence shapes (--split 0 = the plan's own), two
# interleaved rounds, then the GPU tests and sanitizers (bench/device_run.sh tests).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
D=.devbin
for z in "$D"/*.xz "$D"/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x "$D/sgla"
LOG=$OUT/sweep.log
: > "$LOG"
for r in 1 2; do
  for sh in 2,16384,8,256,256 1,65536,8,128,128 1,32768,16,128,128 2,16384,16,128,256; do
    for n in 0 1 2 4 8 16 32; do
      sp=; [ "$n" != 0 ] && sp="--split $n"
      timeout 60 "$D/sgla" bench --backend cuda --dtype bf16 --gate g --iters 20 --warmup 3 --shape "$sh" --backward $sp \
        2>&1 | grep -E "bwd|rror|refus" | sed "s/^/r$r split=$n /" >> "$LOG"
    done
  done
done
cat "$LOG"
bash bench/device_run.sh tests > "$OUT/tests_out.log" 2>&1
tail -14 "$OUT/summary.txt"
