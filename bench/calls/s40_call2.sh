#!/bin/bash
# Session 40 call 2: are the X_c copies read from DRAM twice?  Session 39 call 4 measured 995 MB of DRAM
# reads in the merged K = 128 pass where q, k, v, do and the copies once are ~780 MB, and call 1 found one
# round trip of X_c's loads still ~5,000 cycles.  Their L2 prefetch runs two chunks ahead (~30 MB of other
# lines pass through L2 meanwhile).  A = main (.devbin, full), B = wip/xc-pf built with SGLA_XC_PF=1 (one
# chunk ahead), C = the same built with SGLA_XC_KEEP=1 (two ahead, the prefetch's lines evict-last).
# ncu's DRAM bytes and L2 hits of the pass for each, then bench/ab.sh A/B/C.
# Carry [".devbin", ".devbinB", ".devbinC"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
for z in .devbin/*.xz .devbin/tests/*.xz .devbinB/*.xz .devbinC/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbin/sgla .devbinB/sgla .devbinC/sgla
for b in .devbin .devbinB .devbinC; do
  timeout 60 $b/sgla bench --backend cuda --dtype bf16 --gate g --backward --iters 3 --shape 2,1024,4,128,128 \
    > "$OUT/precheck_$b.txt" 2>&1
  echo "precheck $b rc=$? $(grep -c ' ok' "$OUT/precheck_$b.txt") ok"
done
M1=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum
M2=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for b in .devbin .devbinB .devbinC; do
  for m in M1 M2; do
    timeout 100 ncu --metrics ${!m} --kernel-name-base mangled -k regex:EELi4ELb0 --launch-skip 1 --launch-count 1 \
      $b/sgla bench --backend cuda --dtype bf16 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 \
      > "$OUT/ncu_${b}_$m.txt" 2>&1
    echo "== $b $m rc=$?"
    grep -E "gpu__time|hit|miss|dram__bytes|srcunit" "$OUT/ncu_${b}_$m.txt" | head -8
  done
done
echo "ncu $(( $(date +%s) - t0 )) s"
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward \
1,65536,16,128,128:g:--backward:--varlen=64 4,8192,32,64,64:g:--backward" \
SGLA_DEVBIN_A=.devbin SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC SGLA_ROUNDS=3 SGLA_ITERS=20 \
  timeout 300 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
grep -i "fail\|error" "$OUT/ab_raw.log" | head -5
echo "took $(( $(date +%s) - t0 )) s"
