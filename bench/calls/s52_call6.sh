#!/bin/bash
# Session 52 call 6: the pool check's choice of sequences on CUDA (bench_check_pool: a packed batch's first
# 7 and its longest, each cut to 256 tokens), the two mixed batches of call 5 and one that starts with
# decodes; then test_gpu_pool.  Carry [".devbinX"] (sgla, test_gpu_pool of HEAD).
. bench/calls/bwd_steps.sh
bwd_begin
B=.devbinX
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
while read -r args; do
  timeout 120 $B/sgla bench --backend cuda $args --iters 5 > "$OUT/b.txt" 2>&1
  echo "== rc=$? $args"
  grep -E "check|FAIL|pool|error|refused" "$OUT/b.txt" | grep -v "^  row" | cut -c1-250
done <<'CASES'
--shape 1,10240,16,128,128 --varlen 2048x4,1x2048 --pool
--shape 1,10240,16,128,128 --varlen 1x2048,2048x4 --pool
--dtype f16 --shape 1,4096,8,64,64 --varlen 7 --pool --gate gamma
CASES
timeout 120 $B/tests/test_gpu_pool > "$OUT/test_pool.log" 2>&1; echo "test_gpu_pool rc=$?"
grep -E "passed|FAIL|seed" "$OUT/test_pool.log" | tail -4
echo "== $(( $(date +%s) - t0 )) s"
