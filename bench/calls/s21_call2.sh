#!/bin/bash
# session 21 call 2: a sweep of the plan's forced knobs on issue 14's unmet rows (main's build)
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
B=.devbinM; for z in $B/*.xz; do [ -f $z ] && unxz -f $z; done; chmod +x $B/sgla
run() { # shape, extra args...
  local sh=$1; shift
  timeout 60 $B/sgla bench --backend cuda --dtype bf16 --gate g --iters 30 --warmup 3 --shape $sh "$@" > $OUT/sw.tmp 2>&1
  local plan=$(grep -o "\[row[^]]*\]" $OUT/sw.tmp | head -1)
  grep -E "^[0-9]+x[0-9]" $OUT/sw.tmp | tr -s " " | while read row; do
    printf "%-22s %-34s %s %s\n" "$sh" "$*" "$row" "$plan" | tee -a $OUT/sweep.txt; done
  grep -q -E "^[0-9]+x[0-9]" $OUT/sw.tmp || printf "%-22s %-34s FAILED %s\n" "$sh" "$*" "$(grep -i -m1 "error\|refus\|sgla bench:" $OUT/sw.tmp)" | tee -a $OUT/sweep.txt
  cat $OUT/sw.tmp >> $OUT/sweep_raw.log
}
for r in 1; do
run 8,4096,16,128,128 --config portable
run 8,4096,16,128,128 --config portable --split 2
run 4,8192,32,64,64 --config portable
run 4,8192,32,64,64 --config portable --split 2
run 4,8192,16,128,256
run 4,8192,16,128,256 --split 2
run 4,8192,16,128,256 --split 2 --sub 2
run 4,8192,16,128,256 --split 4
run 4,8192,16,128,256 --config 1
run 2,16384,8,256,256
run 2,16384,8,256,256 --split 4
run 2,16384,8,256,256 --split 8
run 2,16384,8,256,256 --split 2 --sub 1
run 2,16384,8,256,256 --split 2 --sub 4
run 1,65536,8,128,128
run 1,65536,8,128,128 --split 16
run 1,65536,8,128,128 --split 32
run 1,65536,8,128,128 --split 64
run 4,8192,32,64,64
run 4,8192,32,64,64 --blocks -1
run 4,8192,32,64,64 --blocks 264
run 4,8192,32,64,64 --split 2
done
for r in 1; do
run 4,8192,32,64,64 --backward --iters 20
run 4,8192,32,64,64 --backward --iters 20 --split 2
run 8,4096,16,128,128 --backward --iters 20
run 8,4096,16,128,128 --backward --iters 20 --split 2
run 2,16384,8,256,256 --backward --iters 20
run 2,16384,8,256,256 --backward --iters 20 --split 4
done
