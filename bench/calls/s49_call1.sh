#!/bin/bash
# Session 49 call 1: the constant head everywhere in the backward's CUDA-core kernels, beside main.
#   .devbinMain  main 2952eb8 (kernels of 7755c4c): sgla and test_gpu_backward
#   .devbinha    wip/grads-hd-all 47d91e4: the gradient kernel's K = V = 64 / 128 instances for TF32
#                alone and the 16-bit CUDA-core path too (sgla)
#   .devbinsh    wip/states-hd 1060b20: the states kernels' K = V = 64 / 128 instances (sgla)
#   .devbinhb    wip/hd-both 69ae43d: both, and a small set that runs the new 16-bit instances (sgla,
#                test_gpu_backward)
# The A/B first (SGLA_ROUNDS rounds interleaved, nothing else on the GPU), then main's and hb's
# test_gpu_backward (SGLA_SEED 49001) with memcheck and racecheck of both small sets.
# Carry [".devbinMain", ".devbinha", ".devbinsh", ".devbinhb"].
. bench/calls/bwd_steps.sh
bwd_begin
export SGLA_SEED=49001
B=".devbinMain .devbinha .devbinsh .devbinhb"
SGLA_ROUNDS=${SGLA_ROUNDS:-2} bwd_ab "${SGLA_CASES:-4,8192,32,64,64:f32:g 8,4096,16,128,128:f32:g \
4,8192,32,64,64:f32t:g 8,4096,16,128,128:f32t:g 4,8192,32,64,64:bf16:g 8,4096,16,128,128:bf16:g \
8,4096,16,32,32:f32:g}" $B > "$OUT/ab_raw.txt"
awk '/^== round/{c=$4; b=$5} / bwd /{print b "-" c, $0}' "$OUT/ab.log" > "$OUT/ab_rows.txt"
python3 bench/ab_summary.py "$OUT/ab_rows.txt" > "$OUT/ab_summary.txt"
SGLA_SAN_TIMEOUT=300 bwd_sanitizers .devbinhb _hb
SGLA_SAN_TIMEOUT=300 bwd_sanitizers .devbinMain _main
bwd_test .devbinhb hb > "$OUT/summary_hb.txt"
bwd_test .devbinMain main > "$OUT/summary_main.txt"
bwd_sanitizers_wait _hb >> "$OUT/summary_hb.txt"
bwd_sanitizers_wait _main >> "$OUT/summary_main.txt"
echo "== summary $(( $(date +%s) - t0 )) s"
for b in hb main; do head -2 "$OUT/summary_$b.txt"; tail -6 "$OUT/summary_$b.txt"; done
grep -h "FAIL" "$OUT"/test_*.log | cut -c1-200 | head -5
grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
sed 's/\[.*//' "$OUT/ab_summary.txt"
# the logs in one file (only a few of $OUT's files come back)
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt) && rm -f "$OUT"/*.log "$OUT"/*_rc.txt "$OUT/ab_raw.txt" "$OUT/ab_rows.txt"
