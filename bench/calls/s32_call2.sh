#!/bin/bash
# Session 32 call 2 (~400 s): the three GPU suites on a build whose only kernels are sm_80 PTX
# (.devbin80: SGLA_DEVBIN=.devbin80 SGLA_CUDA_ARCHS=80-virtual bench/stage_devbin.sh), JIT-compiled on the
# device, so that every call takes the path of GPUs before Hopper as compiled for sm_80 (one stage at
# K = 256, the TF32 kernels, the tensor-core backward by its shared memory) -- last run in session 5 --
# with fla's forward kernels for issue 14's table compiling beside them; then issue 14's table beside fla
# (bench/fla_compare.py --shapes issue14, main's sm_90a library in .devbinL).
# Carry [".devbin80", ".devbinL", ".whl", ".triton_cache"].
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
for z in .devbin80/*.xz .devbin80/tests/*.xz .devbinL/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x .devbin80/sgla .devbin80/tests/*
for d in .devbin80 .devbinL; do ldd $d/libsgla.so 2>/dev/null | grep -q "not found" && export LD_LIBRARY_PATH=$PWD/$d/lib:${LD_LIBRARY_PATH:-}; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export TRITON_CACHE_DIR=/tmp/triton_cache PYTHONUNBUFFERED=1 SGLA_LIBRARY=$PWD/.devbinL/libsgla.so CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $TRITON_CACHE_DIR
[ -f .triton_cache/cache.tgz ] && tar xzf .triton_cache/cache.tgz -C $TRITON_CACHE_DIR 2>/dev/null
timeout ${SGLA_WARM_T:-240} python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --rounds 0 \
  --no-ceilings --warm-jobs 10 > "$OUT/fla_warm.log" 2>&1 &
WARM=$!
for t in test_gpu_forward test_gpu_backward test_gpu_pool; do
  ( timeout ${SGLA_JIT_T:-240} .devbin80/tests/$t > "$OUT/jit_$t.log" 2>&1; echo "sm_80 PTX $t rc=$?" > "$OUT/rc_jit_$t.txt" ) &
done
for j in $(jobs -p); do [ "$j" != "$WARM" ] && wait "$j"; done
cat "$OUT"/rc_jit_*.txt
tail -qn1 "$OUT"/jit_test_gpu_*.log
grep -h "FAIL\|FATAL" "$OUT"/jit_test_gpu_*.log | cut -c1-300 | head -12
grep -ch "UNSUPPORTED\|skip" "$OUT"/jit_test_gpu_*.log
echo "sm_80 PTX tests: $(( $(date +%s) - t0 )) s"
wait $WARM; echo "fla warm rc=$? $(grep -h warmed $OUT/fla_warm.log) $(( $(date +%s) - t0 )) s"
left=$(( ${SGLA_BUDGET:-570} - ($(date +%s) - t0) ))
[ $left -gt 60 ] || { echo "no time left for the table ($left s)"; exit 0; }
timeout $left python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --rounds 3 > "$OUT/fla_fwd.log" 2>&1
echo "forward table rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log"
tar czf /tmp/tc.tgz -C $TRITON_CACHE_DIR . && [ $(stat -c %s /tmp/tc.tgz) -lt 16000000 ] && cp /tmp/tc.tgz "$OUT/triton_cache.tgz"
