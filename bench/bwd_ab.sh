#!/bin/bash
# The CUDA backward of two staged builds (bench/stage_devbin.sh) side by side on the device:
# `sgla bench --backward` in interleaved rounds, medians per (shape, gate, build) last.
#   SGLA_DEVBIN_A (default .devbin), SGLA_DEVBIN_B (default .devbinB; a folder with sgla alone is enough)
#   SGLA_SHAPES   "B,T,H,K,V:gate ..." (default: issue 11's shapes with g, 8x4096x16x128 with g_gamma too)
#   SGLA_ROUNDS   rounds (default 3);  SGLA_BWD_PATH  --bwd-path for both (default 0, the usual path)
# Logs under $OUT (default /tmp/sgla_out).
set -u
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
A=${SGLA_DEVBIN_A:-.devbin} B=${SGLA_DEVBIN_B:-.devbinB}
for d in "$A" "$B"; do for z in "$d"/*.gz; do [ -f "$z" ] && gunzip -f "$z"; done; done
SHAPES=${SGLA_SHAPES:-"8,4096,16,128,128:g 8,4096,16,128,128:gamma 4,8192,32,64,64:g 64,1024,16,128,128:g 1,32768,16,128,128:g 2,16384,8,256,256:g"}
LOG=$OUT/bwd_ab.log
: > "$LOG"
for r in $(seq 1 "${SGLA_ROUNDS:-3}"); do
  for sg in $SHAPES; do
    for tag in A B; do
      bin=$A; [ $tag = B ] && bin=$B
      line=$(timeout 90 "$bin/sgla" bench --backend cuda --dtype bf16 --gate "${sg#*:}" --backward \
             --bwd-path "${SGLA_BWD_PATH:-0}" --iters 20 --shape "${sg%%:*}" 2>&1 | grep -E ' bwd |FAIL|backward:' | head -2 | tr '\n' ' ')
      echo "$tag ${sg} $line" >> "$LOG"
    done
  done
done
grep -h "FAIL\|backward:" "$LOG" | head -5
python3 - "$LOG" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 8 and f[5] == "bwd":
        t[(f[1], f[0])].append(float(f[6]))
print(f"{'shape:gate':<28} {'A ms':>8} {'B ms':>8} {'B/A':>6}  (medians of rounds)")
for sg in dict.fromkeys(k[0] for k in t):
    a, b = t.get((sg, "A"), []), t.get((sg, "B"), [])
    ma = statistics.median(a) if a else float("nan")
    mb = statistics.median(b) if b else float("nan")
    print(f"{sg:<28} {ma:8.4f} {mb:8.4f} {mb / ma:6.3f}")
PY
