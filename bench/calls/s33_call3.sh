#!/bin/bash
# Session 33 call 3: fla's own acceptance cases on sgla (python/tests/test_fla_acceptance.py: the shapes,
# gates, dtypes and tolerances of fla's tests/ops/test_simple_gla.py, fla's naive recurrence as the
# reference), then issue 14's forward table beside fla 0.6 (bench/calls/s25_call4.sh's first half).
# Carry [".devbin", ".whl", ".triton_cache"].
. bench/calls/fla_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
# fla's kernels for the table compile (CPU) while the acceptance cases run
timeout ${SGLA_T1:-240} python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 14 --rounds 0 \
  --no-ceilings > "$OUT/fla_warm.log" 2>&1 &
WARM=$!
PYTHONPATH=$PWD/python:$PYTHONPATH timeout 200 python3 -m pytest -p no:cacheprovider python/tests/test_fla_acceptance.py \
  -q -rs -o log_cli=true -o log_cli_level=INFO > "$OUT/fla_acceptance.log" 2>&1
echo "fla acceptance cases rc=$? $(( $(date +%s) - t0 )) s"
tail -3 "$OUT/fla_acceptance.log"
grep -E "^FAILED|Error" "$OUT/fla_acceptance.log" | head -10
python3 - "$OUT/fla_acceptance.log" <<'PY'
import re, sys, collections
worst = collections.defaultdict(float)
for l in open(sys.argv[1]):
    m = re.search(r"(\w+) diff: ([\d.]+) ratio: ([\d.]+)", l)
    if m: worst[m.group(1)] = max(worst[m.group(1)], float(m.group(3)))
print("worst ratio by output:", " ".join(f"{k} {v:.5f}" for k, v in worst.items()))
PY
wait $WARM
echo "warm rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout ${SGLA_T2:-200} python3 bench/fla_compare.py --shapes issue14 --gates g --bwd-shapes= --warm-jobs 0 --rounds 3 \
  > "$OUT/fla_fwd.log" 2>&1
echo "forward table rc=$? $(( $(date +%s) - t1 )) s"
sed -n '/^device\|^ceilings\|^fla \|^warmed/p;/^shape /,$p' "$OUT/fla_fwd.log"
xz -9 "$OUT/fla_acceptance.log"
echo "took $(( $(date +%s) - t0 )) s"
