# Sourced by the backward calls of sessions 45-51 (s45_call1, 3, 5 and the calls that run s45_call5.sh,
# s46-s51's): the steps they share.  Staged builds in .devbin*/ (bench/stage_devbin.sh), logs under $OUT.

# GPU name, t0, the staged binaries unpacked, the sanitizer found
bwd_begin() {
  OUT=${OUT:-/tmp/sgla_out}
  mkdir -p "$OUT"
  nvidia-smi --query-gpu=name --format=csv,noheader
  t0=$(date +%s)
  for z in .devbin*/*.xz .devbin*/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
  export SGLA_GPU_EXPECT_HOPPER=1
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
}

# memcheck and racecheck of build $1's test_gpu_backward small set, in the background; $2 (optional) a
# tag for the logs' names, so that two builds' sanitizers can run at once (SGLA_SAN_TIMEOUT, 200 s)
bwd_sanitizers() {
  local tool
  for tool in memcheck racecheck; do
    ( SGLA_GPU_SMALL=1 timeout ${SGLA_SAN_TIMEOUT:-200} $SAN --tool $tool --error-exitcode 9 $1/tests/test_gpu_backward \
        > "$OUT/$tool${2:-}.log" 2>&1
      echo "$tool${2:-} rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/${tool}${2:-}_rc.txt" ) &
  done
}
bwd_sanitizers_wait() {
  while [ ! -f "$OUT/memcheck${1:-}_rc.txt" ] || [ ! -f "$OUT/racecheck${1:-}_rc.txt" ]; do sleep 1; done
  cat "$OUT/memcheck${1:-}_rc.txt" "$OUT/racecheck${1:-}_rc.txt"
  grep -h "SUMMARY\|passed, " "$OUT/memcheck${1:-}.log" "$OUT/racecheck${1:-}.log" | cut -c1-200
}

# build $1's test_gpu_backward (full) into $OUT/test_$2.log, its summary and f32 rows printed
bwd_test() {
  timeout 200 $1/tests/test_gpu_backward > "$OUT/test_$2.log" 2>&1
  echo "test $2 rc=$? $(( $(date +%s) - t0 )) s"
  tail -1 "$OUT/test_$2.log"; grep -h "FAIL" "$OUT/test_$2.log" | cut -c1-240 | head -8
  grep -h "f32" "$OUT/test_$2.log" | sed 's/.*f32 //' | cut -c1-160 | head -16
}

# build $1's full suite beside memcheck and racecheck of its small set, all three into $OUT/summary_$2.txt
# (the tag $2 names the logs too)
bwd_suite() {
  bwd_sanitizers $1 _$2
  bwd_test $1 $2 > "$OUT/summary_$2.txt"
  bwd_sanitizers_wait _$2 >> "$OUT/summary_$2.txt"
}

# `sgla bench --backward` of the builds $2.. on the cases $1 (shape:dtype[:gate], gate g by default; bf16
# and f16 on the CUDA-core path; dtype f32t: fp32 with --tf32), SGLA_ROUNDS rounds interleaved, into $OUT/ab.log
bwd_ab() {
  local cases=$1 r s sh dt gt ex b
  shift
  : > "$OUT/ab.log"
  for r in $(seq ${SGLA_ROUNDS:-2}); do
    for s in $cases; do
      IFS=: read -r sh dt gt <<< "$s"
      ex=; { [ $dt = bf16 ] || [ $dt = f16 ]; } && ex="--bwd-path 1"
      [ $dt = f32t ] && dt=f32 ex=--tf32 # fp32 with SGLA_FLAG_ALLOW_TF32
      for b in "$@"; do
        echo "== round $r $s $b" >> "$OUT/ab.log"
        timeout 25 $b/sgla bench --backend cuda --dtype $dt --gate ${gt:-g} --backward --iters 5 --shape $sh $ex \
          >> "$OUT/ab.log" 2>&1
      done
    done
  done
  echo "ab $(( $(date +%s) - t0 )) s"
  grep -E "^== | bwd |check.*backward|FAIL|rror" "$OUT/ab.log" | sed 's/  */ /g' | sed 's/ B=1 T=256 H=2//;s/h0=1 ht=1 nseq=0//' \
    | cut -c1-150
}

# every kernel's time under ncu of build $1 (gate g; SGLA_NCU_ARGS the dtype and path, fp32 by default) at
# the shapes $2..
bwd_ncu_times() {
  local b=$1 sh NCU ex=${SGLA_NCU_ARGS:---dtype f32} f
  shift
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  for sh in "$@"; do
    f="$OUT/ncu_${b#.}_$sh${SGLA_NCU_ARGS:+_$(echo $ex | tr -dc 'a-z0-9')}.csv"
    timeout 90 $NCU --metrics gpu__time_duration.sum --csv $b/sgla bench --backend cuda $ex --gate g \
      --backward --iters 1 --shape $sh > "$f" 2> "$OUT/ncu_err.log"
    echo "ncu $b $ex $sh rc=$? $(( $(date +%s) - t0 )) s"
    python3 bench/ncu_durations.py "$f" | grep -E "states|grads" | tail -3 | cut -c1-80
  done
}

# the A/B's medians into $OUT/ab_summary.txt (bench/ab_summary.py: each build against the first by name,
# case by case)
bwd_ab_table() {
  awk '/^== round/{c=$4; b=$5} / bwd /{print b "-" c, $0}' "$OUT/ab.log" > "$OUT/ab_rows.txt"
  python3 bench/ab_summary.py "$OUT/ab_rows.txt" > "$OUT/ab_summary.txt"
}

# the call's summary: the tests of the tags $@ (bwd_test's and bwd_sanitizers_wait's lines in
# $OUT/summary_TAG.txt), any failure, the A/B's fp64 check lines and its medians
bwd_report() {
  local b
  echo "== summary $(( $(date +%s) - t0 )) s"
  for b in "$@"; do head -2 "$OUT/summary_$b.txt"; tail -6 "$OUT/summary_$b.txt"; done
  grep -h "FAIL" "$OUT"/test_*.log | cut -c1-200 | head -5
  grep -E "check.*backward" "$OUT/ab.log" | sed 's/  */ /g' | sort | uniq -c | cut -c1-200
  sed 's/\[.*//' "$OUT/ab_summary.txt"
}

# every log and summary of $OUT in one logs.tgz (only a few of $OUT's files come back)
bwd_pack() {
  tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt) &&
    rm -f "$OUT"/*.log "$OUT"/*_rc.txt "$OUT/ab_raw.txt" "$OUT/ab_rows.txt"
}
