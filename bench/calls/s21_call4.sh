#!/bin/bash
# session 21 call 4: main / wip/score-wg / wip/q-regs side by side at K = 256; Nsight Compute sections of each
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for b in .devbinSs .devbinQs .devbinM; do unxz -f $b/sgla.xz 2>/dev/null; chmod +x $b/sgla; done
ok=""
for b in .devbinSs .devbinQs; do
  timeout 30 $b/sgla bench --backend cuda --dtype bf16 --gate g --iters 5 --shape 16,4096,8,256,256 > $OUT/smoke_$b.log 2>&1; rc=$?
  echo "smoke $b rc=$rc"; grep -E "check|^16x" $OUT/smoke_$b.log | tail -2; [ $rc = 0 ] && ok="$ok $b"
done
set -- $ok; B=${1:-.devbinM}; C=${2:-}; echo "A=.devbinM B=$B C=$C"
SGLA_ROUNDS=3 SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=$B SGLA_DEVBIN_C=$C SGLA_CASES="16,4096,8,256,256:g 16,4096,8,256,256:gamma 2,16384,8,256,256:g 16,1024,8,256,256:g 4,4096,8,256,512:g 1,65536,16,256,256:g:--varlen=64 8,4096,16,128,128:g" bash bench/ab.sh > $OUT/ab_out.log 2>&1
grep -v "^sgla bench" $OUT/ab_out.log | tail -24
for b in .devbinM $ok; do
  timeout 90 ncu --cache-control none --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy -k regex:chunk_fwd_kernel --launch-skip 1 --launch-count 1 $b/sgla bench --backend cuda --dtype bf16 --gate g --iters 1 --warmup 1 --shape 16,4096,8,256,256 > $OUT/ncu_$b.log 2>&1
  echo "== ncu $b"; grep -E "Duration|Shared|L1/TEX|Compute \(SM\)|Memory Throughput|Pipe|Tensor|Issue Slots|Executed Ipc|Achieved Occupancy|Bank" $OUT/ncu_$b.log | head -24
done
