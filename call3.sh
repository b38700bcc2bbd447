#!/bin/bash
# session 10 call 3 (ad hoc; deleted before the session ends): tests on E (both prefetches), backward A/B
OUT=${OUT:-/tmp/o}
SGLA_DEVBIN=.devbinE bash bench/device_run.sh tests > /dev/null 2>&1; cat $OUT/summary.txt | grep -v "^level\|^==\|NVIDIA"
mkdir -p $OUT/e $OUT/f
C="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 4,8192,32,64,64:g:--backward 64,1024,16,128,128:g:--backward 1,32768,16,128,128:g:--backward 2,16384,8,256,256:g:--backward"
SGLA_DEVBIN_B=.devbinE SGLA_ITERS=20 SGLA_CASES="$C" OUT=$OUT/e bash bench/ab.sh > $OUT/e/sum.txt 2>&1
SGLA_DEVBIN_B=.devbinF SGLA_ITERS=20 SGLA_CASES="$C" OUT=$OUT/f bash bench/ab.sh > $OUT/f/sum.txt 2>&1
echo "== E: both prefetches"; grep -v "^sgla bench" $OUT/e/sum.txt | grep bwd
echo "== F: X_c copies only"; grep -v "^sgla bench" $OUT/f/sum.txt | grep bwd
