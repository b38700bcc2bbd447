# A staged build's suites, then its forward timed beside main's: the body of session 35's calls 2-5.
# `SGLA_CASES="..." . bench/calls/tests_then_ab.sh` (sourced) with .devbin (the change, as
# bench/stage_devbin.sh leaves it) and .devbinM (main, sgla alone; SGLA_DEVBIN_A names another) carried:
#   1. bash bench/device_run.sh tests (its summary printed; its logs in $OUT/tests_logs.tgz);
#   2. bench/ab.sh, A = .devbinM, B = .devbin, 3 rounds of 30 iterations, SGLA_CASES' rows (forward, or
#      with --backward the backward too).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
t0=$(date +%s)
bash bench/device_run.sh tests > "$OUT/tests_run.txt" 2>&1
sed -n '/==== summary/,$p' "$OUT/tests_run.txt"
mv "$OUT/logs.tgz" "$OUT/tests_logs.tgz" 2>/dev/null
echo "tests $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
SGLA_DEVBIN_A=${SGLA_DEVBIN_A:-.devbinM} SGLA_ROUNDS=3 SGLA_ITERS=30 bash bench/ab.sh > "$OUT/ab_run.txt" 2>&1
echo "ab rc=$? $(( $(date +%s) - t1 )) s"
python3 bench/ab_summary.py "$OUT/ab.log"
