#!/bin/bash
# Session 22 calls 5-6: where the K = 128 backward's g_gamma (+ dg_gamma) is slower than gate g's
# (0.708 against 0.682 ms, call 1): every kernel's time in one backward call of main's CLI (.devbinM),
# by Nsight Compute (gpu__time_duration), both gates.  Clocks free (call 5), or as SGLA_NCU_CLOCK says
# (call 6: SGLA_NCU_CLOCK=base, clocks locked).  The summary at the end is bench/ncu_durations.py
# (session 25; the call ran the same lines inline).
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
D=.devbinM
for z in "$D"/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
chmod +x "$D/sgla"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for gate in g gamma; do
  for r in 1 2; do
    timeout 200 "$NCU" --clock-control ${SGLA_NCU_CLOCK:-none} --metrics gpu__time_duration.sum --csv \
      "$D/sgla" bench --backend cuda --dtype bf16 --gate $gate --shape 8,4096,16,128,128 --backward --iters 1 --warmup 1 \
      > "$OUT/ncu_${gate}_$r.csv" 2> "$OUT/ncu_${gate}_$r.err"
    echo "== $gate round $r rc=$?"
  done
done
python3 bench/ncu_durations.py "$OUT"/ncu_*.csv
