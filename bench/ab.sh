#!/bin/bash
# Two staged builds (bench/stage_devbin.sh) side by side on the device: `sgla bench --backend cuda`
# in interleaved rounds (A, B, A, B, ...), medians per (case, build) last (bench/ab_summary.py).
#   SGLA_DEVBIN_A (default .devbinA), SGLA_DEVBIN_B (default .devbin); a folder with sgla alone is enough;
#   SGLA_DEVBIN_C  a third build in the same rounds (A, B, C, ...), none by default
#   SGLA_ENV_C    environment for C's runs, e.g. "SGLA_PERSIST=1" with SGLA_DEVBIN_C=.devbin (a switch
#                 of one build timed beside itself)
#   SGLA_CASES    "B,T,H,K,V:gate[:arg...]" separated by spaces; an arg's '=' becomes a space, e.g.
#                 "8,4096,16,128,128:g 1,65536,16,128,128:g:--varlen=64 256,1,32,128,128:g:--pool
#                  8,4096,16,128,128:gamma:--split=8 1,32768,16,128,128:g:--dtype=f16
#                  8,4096,16,128,128:g:--backward:--bwd-path=2"  (a backward case gives its bwd row too)
#                 (default: issue 14's rows with gate g)
#   SGLA_ROUNDS   rounds (default 3);  SGLA_ITERS  iterations of a timing (default 30)
# Logs under $OUT (default /tmp/sgla_out).
set -u
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
A=${SGLA_DEVBIN_A:-.devbinA} B=${SGLA_DEVBIN_B:-.devbin} C=${SGLA_DEVBIN_C:-}
TAGS="A B${C:+ C}"
for d in "$A" "$B" $C; do for z in "$d"/*.xz; do [ -f "$z" ] && unxz -f "$z"; done; chmod +x "$d/sgla"; done
CASES=${SGLA_CASES:-"8,4096,16,128,128:g 4,8192,32,64,64:g 64,1024,16,128,128:g 4,8192,16,128,256:g 2,16384,8,256,256:g 1,32768,16,128,128:g 1,65536,16,128,128:g:--varlen=64"}
LOG=$OUT/ab.log RAW=$OUT/ab_raw.log
: > "$LOG"; : > "$RAW"
for r in $(seq 1 "${SGLA_ROUNDS:-3}"); do
  for cs in $CASES; do
    IFS=: read -r shape gate rest <<< "$cs"
    extra=${rest//:/ }
    extra=${extra//=/ }
    dt=bf16
    case " $extra " in *" --dtype "*) dt= ;; esac
    for tag in $TAGS; do
      bin=$A; [ $tag = B ] && bin=$B; [ $tag = C ] && bin=$C
      ev=; [ $tag = C ] && ev=${SGLA_ENV_C:-}
      # the build tag carries the case's gate and extras, so that ab_summary keeps them apart
      env $ev timeout 120 "$bin/sgla" bench --backend cuda ${dt:+--dtype $dt} --gate "$gate" --iters "${SGLA_ITERS:-30}" \
        --warmup 3 --shape "$shape" $extra 2>&1 | tee -a "$RAW" | grep -E "^[0-9]+x[0-9]" \
        | sed "s/^/$tag-$gate${rest:+-${rest//[: =]/}} /" >> "$LOG"
    done
  done
done
grep -h "FAIL\|sgla bench:" "$RAW" | head -5
python3 "$(dirname "$0")/ab_summary.py" "$LOG"
