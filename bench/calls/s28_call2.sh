#!/bin/bash
# Session 28 call 2: the fp32 wgmma forward's next chunk's q and k issued by warpgroup 0 at a new K_FREE
# barrier (as soon as its products with B and the state's splits of K are done) instead of by the state
# after U.  Staged at d450013 (main = qb2):
#   A = main (a473318's kernels; sgla only);
#   B = main + the K_FREE issue (U's two batches as before, each waited);
#   C = B + U's two batches in flight together (the second's splits beside the first's products);
#   T = C's trace build.
# 1. T's per-role timelines; 2. B's and C's test_gpu_forward; 3. C's stall samples (s27_call2.sh); 4. the
# fp32 rows, A/B/C in interleaved rounds; 5. C's memcheck and racecheck (SGLA_GPU_SMALL).
# carry [".devbinT", ".devbinA", ".devbinB", ".devbinC"], ~250 s.
# Predictions: B 3xTF32 8x4096 0.776 -> ~0.68 ms, TF32 0.583 -> ~0.53; C a further 0-3 %.
OUT=${OUT:-/tmp/sgla_out}; mkdir -p $OUT
for d in .devbinT .devbinA .devbinB .devbinC; do for z in $d/*.xz $d/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; done
chmod +x .devbinA/sgla .devbinB/sgla .devbinC/sgla .devbinB/tests/* .devbinC/tests/*
tr() { echo "== trace $*"; SGLA_LIBRARY=$PWD/.devbinT/libsgla.so PYTHONPATH=$PWD/python timeout 60 python3 .devbinT/trace_run.py "$@" 2>&1 | tail -3; }
tr 8,4096,16,128,128 --pass f32; tr 8,4096,16,128,128 --pass f32 --tf32; tr 4,8192,32,64,64 --pass f32
for b in B C; do
  timeout 150 .devbin$b/tests/test_gpu_forward > $OUT/test_gpu_forward_$b.log 2>&1
  echo "$b test_gpu_forward rc=$?"; tail -1 $OUT/test_gpu_forward_$b.log
done
BD=.devbinC timeout 150 bash bench/calls/s27_call2.sh > $OUT/ncu.txt 2>&1
grep "rc=\|duration" $OUT/ncu.txt
rm -f $OUT/*.ncu-rep $OUT/raw_*.csv $OUT/ncu_*.log
F=--dtype=f32:--config=f32-hopper
SGLA_ROUNDS=3 SGLA_CASES="8,4096,16,128,128:g:$F 8,4096,16,128,128:g:$F:--tf32 4,8192,32,64,64:g:$F 64,1024,16,128,128:g:$F" \
  SGLA_DEVBIN_A=.devbinA SGLA_DEVBIN_B=.devbinB SGLA_DEVBIN_C=.devbinC timeout 240 bash bench/ab.sh > /dev/null 2>&1
tail -12 $OUT/ab.log
# the sanitizers last (beside each other: nothing is timed now)
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  (SGLA_GPU_SMALL=1 timeout 200 $SAN --tool $tool --error-exitcode 1 .devbinC/tests/test_gpu_forward > /tmp/san_$tool.log 2>&1
   echo "C $tool rc=$? $(tail -2 /tmp/san_$tool.log | tr '\n' ' ')") &
done
wait
