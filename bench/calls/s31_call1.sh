#!/bin/bash
# Session 31 call 1: main with the mma.sync forward's column blocks (K = 256 and V up to 512 on the
# portable path; blocks of 64 columns as well as 128).  The full tests first (bench/device_run.sh
# tests: the GPU suites with the new portable cases, compute-sanitizer, pytest, verify level 4,
# run_cuda_check), then the portable forward forced on 128 and 64 columns a block beside the Hopper
# plan and main before the change (.devbinA, cbbb3b4: its one width), in interleaved rounds (medians:
# bench/ab_summary.py), then issue 14's table and issue 11's rows beside fla with what time is left
# (bench/calls/s25_call4.sh).  Carry [".devbin", ".devbinA", ".whl", ".triton_cache"] (.devbinA: sgla.xz alone).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_tail.log" 2>&1
echo "tests: $(( $(date +%s) - t0 )) s"
cat "$OUT/summary.txt"
tail -16 "$OUT/run_cuda_check.log"
BD=.devbin
if ldd $BD/sgla 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
CASES=${SGLA_CASES:-"8,4096,16,128,128:g 8,4096,16,128,128:gamma 16,2048,32,128,128:g 4,8192,32,64,64:g
8,4096,16,64,128:g 1,65536,8,128,128:g 4,8192,16,128,256:g 2,16384,8,256,256:g 16,4096,8,256,256:g"}
[ -f .devbinA/sgla.xz ] && unxz -f .devbinA/sgla.xz && chmod +x .devbinA/sgla   # main before (cbbb3b4), if carried
LOG=$OUT/portable.log
: > "$LOG"
for r in 1 2 3; do
  for cs in $CASES; do
    IFS=: read -r shape gate <<< "$cs"
    K=$(echo "$shape" | cut -d, -f4)
    for tag in c128 c64 hop old; do
      bin=$BD
      case $tag in c128) [ "$K" = 256 ] && continue; args="--config portable --cols 128" ;;
                   c64) args="--config portable --cols 64" ;; hop) args= ;;
                   old) [ -x .devbinA/sgla ] && [ "$K" != 256 ] || continue; bin=.devbinA; args="--config portable" ;; esac
      timeout 60 $bin/sgla bench --backend cuda --gate "$gate" --iters 30 --warmup 3 --shape "$shape" $args 2>&1 \
        | tee -a "$OUT/portable_raw.log" | grep -E "^[0-9]+x[0-9]" | sed "s/^/$tag-$gate /" >> "$LOG"
    done
  done
done
echo "portable rounds: $(( $(date +%s) - t0 )) s"
python3 bench/ab_summary.py "$LOG" | tee "$OUT/portable_summary.txt"
left=$(( ${SGLA_BUDGET:-560} - ($(date +%s) - t0) ))   # SGLA_BUDGET: the seconds this call may run
[ $left -gt 200 ] || { echo "no time left for the table ($left s)"; exit 0; }
SGLA_T1=$(( left * 2 / 5 )) SGLA_T2=$(( left * 3 / 5 - 10 )) bash bench/calls/s25_call4.sh
