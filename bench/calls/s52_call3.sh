#!/bin/bash
# Session 52 call 3: `sgla bench --check` of --varlen batches on CUDA (9d1b8dd: the check is a packed case,
# no h0 or ht, as the timed call), forward and backward, every dtype, a run-time head, the portable path
# forced; then bench/l2_probe.py: sgla's forward timed by torch five ways (do_bench's L2 clear by a
# 256 MB zero_, a clean cold L2, none; host time hidden behind a GPU sleep or not) beside `sgla bench`.
# Carry [".devbinX"] (main 9d1b8dd + l2_probe staged: sgla, libsgla.so).  ~100 s.
. bench/calls/bwd_steps.sh
bwd_begin
B=.devbinX
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
while read -r args; do
  timeout 120 $B/sgla bench --backend cuda $args --iters 5 > "$OUT/b.txt" 2>&1
  echo "== rc=$? $args"
  grep -E "check|FAIL|varlen|bwd|error|refused" "$OUT/b.txt" | cut -c1-230
  cat "$OUT/b.txt" >> "$OUT/bench_checks.log"
done <<'CASES'
--shape 1,16384,16,128,128 --varlen 9 --backward
--dtype f32 --shape 1,8192,16,128,128 --varlen 9 --backward
--dtype f16 --shape 1,8192,8,64,64 --varlen 5 --backward --gate gamma
--shape 1,4096,4,96,48 --varlen 3 --backward
--shape 1,65536,16,128,128 --varlen 64
--config portable --shape 1,8192,16,128,128 --varlen 9
--shape 2,4096,16,128,128 --backward
CASES
echo "== l2_probe $(( $(date +%s) - t0 )) s"
PYTHONPATH=$PWD/python SGLA_LIBRARY=$PWD/$B/libsgla.so timeout 150 python3 bench/l2_probe.py --rounds 3 \
  > "$OUT/l2.txt" 2>&1
echo "rc=$?"; tail -20 "$OUT/l2.txt" | cut -c1-200
timeout 60 $B/sgla bench --backend cuda --shape 4,8192,32,64,64 --shape 8,4096,16,128,128 --iters 100 2>&1 | tail -4
echo "== $(( $(date +%s) - t0 )) s"
