#!/bin/bash
# Session 39 call 4: did call 3's L1 prefetch (wip/xc-l1) land?  The merged K = 128 pass's global-load hit
# rates in L1 and L2 and its duration under ncu, main (.devbin) against wip/xc-l1 (.devbinC, sgla alone).
# Carry [".devbin", ".devbinC"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
for z in .devbin/sgla.xz .devbinC/sgla.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbin/sgla .devbinC/sgla
M=gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum
for b in .devbin .devbinC; do
  timeout 100 ncu --metrics $M --kernel-name-base mangled -k regex:EELi4ELb0 --launch-skip 1 --launch-count 1 \
    $b/sgla bench --backend cuda --dtype bf16 --gate g --backward --shape 8,4096,16,128,128 --iters 1 --warmup 1 \
    > "$OUT/ncu_$b.txt" 2>&1
  echo "== $b rc=$?"
  grep -E "gpu__time|hit|miss|dram__bytes" "$OUT/ncu_$b.txt" | head -8
done
