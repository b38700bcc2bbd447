#!/bin/bash
# session 21 call 6: wip/xc-flight (the X_c dot's loads in flight, four sums) beside main; its tests
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
SGLA_ROUNDS=2 SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_CASES="8,4096,16,128,128:g:--backward 4,8192,32,64,64:g:--backward 2,16384,8,256,256:g:--backward" bash bench/ab.sh > $OUT/ab_out.log 2>&1
grep -v "^sgla bench" $OUT/ab_out.log | grep bwd | tail -12
bash bench/device_run.sh tests > $OUT/tests_out.log 2>&1
tail -20 $OUT/summary.txt
