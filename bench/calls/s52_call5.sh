#!/bin/bash
# Session 52 call 5: `sgla bench --check` of pool steps on CUDA (c33f727: conform_check_pool, the step on
# fresh inputs through a pool of 2N slots against fp64, the other slots bit for bit): dense and packed,
# mixed prefills and decodes, the chunked kernel on slots and the recurrence, every dtype; then
# test_gpu_pool (its harness links the changed conform.c); bench/l2_probe.py (gamma; g too on an H200).
# Carry [".devbinX"] (sgla, libsgla.so, test_gpu_pool).
. bench/calls/bwd_steps.sh
bwd_begin
B=.devbinX
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
while read -r args; do
  timeout 120 $B/sgla bench --backend cuda $args --iters 5 > "$OUT/b.txt" 2>&1
  echo "== rc=$? $args"
  grep -E "check|FAIL|pool|error|refused" "$OUT/b.txt" | grep -v "^  row" | cut -c1-250
  cat "$OUT/b.txt" >> "$OUT/bench_pool.log"
done <<'CASES'
--shape 8,4096,16,128,128 --pool
--shape 1,10240,16,128,128 --varlen 2048x4,1x2048 --pool
--dtype f32 --shape 4,1024,8,64,64 --pool
--dtype f16 --shape 1,4096,8,64,64 --varlen 7 --pool --gate gamma
--shape 2,2048,8,256,256 --pool
--shape 64,1,16,128,128 --pool
CASES
echo "== test_gpu_pool $(( $(date +%s) - t0 )) s"
timeout 120 $B/tests/test_gpu_pool > "$OUT/test_pool.log" 2>&1; echo "rc=$?"
grep -E "passed|FAIL|seed" "$OUT/test_pool.log" | tail -5
echo "== l2_probe $(( $(date +%s) - t0 )) s"
G=gamma; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && G="g gamma"
for g in $G; do
  PYTHONPATH=$PWD/python SGLA_LIBRARY=$PWD/$B/libsgla.so timeout 120 python3 bench/l2_probe.py --rounds 3 --gate $g \
    > "$OUT/l2_$g.txt" 2>&1; echo "rc=$?"; grep -v "^NVIDIA" "$OUT/l2_$g.txt" | tail -16 | cut -c1-120
done
echo "== $(( $(date +%s) - t0 )) s"
