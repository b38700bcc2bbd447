#!/bin/bash
# session 21 call 1: wip/mc smoke, A/B, tests, ncu
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbin .devbinM; do for z in $d/*.xz; do [ -f $z ] && unxz -f $z; done; chmod +x $d/sgla; done
if ldd .devbin/sgla | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.devbin/lib; fi
timeout 40 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --iters 5 --shape 16,4096,8,256,256 > $OUT/smoke.log 2>&1; rc=$?
echo "smoke rc=$rc"; tail -4 $OUT/smoke.log
[ $rc = 0 ] || exit $rc
SGLA_ROUNDS=3 SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_CASES="16,4096,8,256,256:g 16,4096,8,256,256:g:--clusters=-1 2,16384,8,256,256:g 2,16384,8,256,256:gamma 16,1024,8,256,256:g 4,4096,8,256,512:g 1,65536,16,256,256:g:--varlen=64 8,4096,16,128,128:g" bash bench/ab.sh > $OUT/ab_out.log 2>&1
grep -v "^sgla bench" $OUT/ab_out.log | tail -24
for b in .devbinM .devbin; do
  timeout 60 ncu --cache-control none --clock-control none --metrics lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum -k regex:chunk_fwd_kernel $b/sgla bench --backend cuda --dtype bf16 --gate g --iters 1 --warmup 1 --shape 16,4096,8,256,256 > $OUT/ncu_$b.log 2>&1
  echo "ncu $b"; grep -E "lts__t_bytes|dram__bytes|gpu__time" $OUT/ncu_$b.log | tail -8
done
bash bench/device_run.sh tests > $OUT/tests_out.log 2>&1
tail -30 $OUT/summary.txt
