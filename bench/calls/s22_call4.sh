#!/bin/bash
# Session 22 call 4: wip/dq-no2 (.devbin) beside main (.devbinM): the backward's dq pass on
# row 4 (K = 128, 64-column blocks, two output warpgroups; SGLA_DQ_ROW=4, build C) against row 2;
# the forward forced on row 4 (--config 4) against the plan; the forward tests (they force every row)
# and the backward tests with SGLA_DQ_ROW=4.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
for d in .devbin .devbinM; do for z in "$d"/*.xz "$d"/tests/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x "$d/sgla"; done
SGLA_DEVBIN_A=.devbinM SGLA_DEVBIN_B=.devbin SGLA_DEVBIN_C=.devbin SGLA_ENV_C="SGLA_DQ_ROW=4" SGLA_ROUNDS=2 \
SGLA_CASES="8,4096,16,128,128:g:--backward 8,4096,16,128,128:gamma:--backward 64,1024,16,128,128:g:--backward 1,32768,16,128,128:g:--backward 4,8192,32,64,64:g:--backward 2,16384,8,256,256:g:--backward" \
  bash bench/ab.sh > "$OUT/ab_out.log" 2>&1
F=$OUT/fwd_rows.log
: > "$F"
for r in 1 2; do
  for sh in 8,4096,16,128,128 4,8192,16,128,256 64,1024,16,128,128 1,65536,8,128,128; do
    for cf in plan 4; do
      fc=; [ $cf = plan ] || fc="--config $cf"
      timeout 60 .devbin/sgla bench --backend cuda --dtype bf16 --gate g --iters 30 --warmup 3 --shape "$sh" $fc \
        2>&1 | grep -E "^[0-9]+x|rror|refus" | sed "s/^/r$r config=$cf /" >> "$F"
    done
  done
done
cat "$F"
(cd .devbin/tests && timeout 200 ./test_gpu_forward > "$OUT/test_gpu_forward.log" 2>&1; echo "test_gpu_forward rc=$?"; tail -1 "$OUT/test_gpu_forward.log")
(cd .devbin/tests && timeout 200 ./test_gpu_backward > "$OUT/test_gpu_backward.log" 2>&1; echo "test_gpu_backward rc=$?"; tail -1 "$OUT/test_gpu_backward.log")
(cd .devbin/tests && SGLA_DQ_ROW=4 timeout 200 ./test_gpu_backward > "$OUT/test_gpu_backward_row4.log" 2>&1; echo "test_gpu_backward (dq row 4) rc=$?"; tail -1 "$OUT/test_gpu_backward_row4.log"; grep -c FAIL "$OUT/test_gpu_backward_row4.log")
python3 /dev/stdin "$OUT/ab.log" <<'PY'
import sys,statistics
rows={};order=[]
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)<8: continue
    kind='bwd' if 'bwd' in f else 'fwd'
    i=f.index('bwd')+1 if kind=='bwd' else 6
    try: ms=float(f[i])
    except ValueError: continue
    k=(f[0][2:],f[1],kind)
    if k not in rows: order.append(k)
    rows.setdefault(k,{}).setdefault(f[0][0],[]).append(ms)
for k in order:
    d=rows[k]; m={b:statistics.median(v) for b,v in d.items()}
    print(k, " ".join("%s %.4f"%(b,m[b]) for b in sorted(m)), " C/A %.3f"%(m.get('C',0)/m['A']) if 'A' in m else "")
PY
