#!/bin/bash
# Session 46 call 3: the candidate main (.devbinN = wip/bwd-tf32: states-warps merged, SGLA_FLAG_ALLOW_TF32
# in the fp32 backward, Python's allow_tf32 through autograd): every suite (forward, backward, pool),
# memcheck and racecheck of their small sets, the Python suite on the GPU, `sgla verify --level 4`, with
# fla's fp32 kernels compiling beside them (SGLA_SEED 46001: the backward's 3xTF32 lines should equal
# call 1's, md5 7be3c7743bef9be8133bd6fa7866cccd); then the fp32 rows beside fla (3 rounds; sgla 3xTF32
# and TF32 alone), then the backward A/B of W (.devbinW = main's 3xTF32 kernels) and N, two rounds.
# Carry [".devbinN", ".devbinW", ".whl"].
export SGLA_SEED=46001
S=8x4096x16x128@f32,4x8192x32x64@f32
SGLA_DEVBIN=.devbinN SGLA_FLA_WARM_JOBS=4 SGLA_FLA_ARGS="--shapes $S --gates gamma,g --bwd-shapes $S --rounds 3" \
  bash bench/device_run.sh testsfla > /tmp/device_run.log 2>&1
OUT=${OUT:-/tmp/sgla_out}
cp /tmp/device_run.log "$OUT/"
L=/tmp/logs && mkdir -p $L && tar xzf "$OUT/logs.tgz" -C $L   # (device_run.sh packs its logs)
. bench/calls/bwd_steps.sh
t0=$(date +%s)
for z in .devbinW/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
export SGLA_GPU_EXPECT_HOPPER=1
bwd_ab "8,4096,16,128,128:f32:g 8,4096,16,128,128:f32t:g 8,4096,16,128,128:f32t:gamma 4,8192,32,64,64:f32t:g 2,4096,8,256,256:f32t:g" .devbinW .devbinN > "$OUT/ab_summary.txt"
echo "== fla rows"
sed -n '/^shape /,$p' $L/fla.log | head -30
echo "== summary"
cat "$OUT/summary.txt" | cut -c1-250
grep -v "TF32 alone" $L/test_gpu_backward.log | md5sum
grep -h "TF32 alone" $L/test_gpu_backward.log | sed 's/.*: dq/dq/' | sort | tail -3
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
grep -E "^== | bwd " "$OUT/ab.log" | sed 's/  */ /g' | awk '/^==/{k=$3" "$4" "$5} / bwd /{print k, $6, $7}'
