#!/bin/bash
# Two CLI builds' CPU backward side by side: `sgla bench --backend cpu --backward` alternated A, B,
# A, B, ... (a shared VM's timings move by +-10 % from run to run), medians per build last.
#   bench/ab_cpu.sh ROUNDS SGLA_A SGLA_B [B,T,H,K,V] [gate] [more sgla bench arguments]
# e.g. bench/ab_cpu.sh 12 /tmp/sgla_main build/sgla 1,4096,16,128,128 g --dtype bf16
set -u
N=$1 A=$2 B=$3 SH=${4:-1,4096,16,128,128} G=${5:-g}
shift $(( $# < 5 ? $# : 5 ))
for i in $(seq 1 "$N"); do
  for t in A B; do
    bin=$A; [ $t = B ] && bin=$B
    "$bin" bench --backend cpu --shape "$SH" --gate "$G" --backward --iters 5 --no-peak "$@" 2>&1 | grep "backward;" | sed "s/^/$t /"
  done
done | python3 -c '
import re, statistics, sys
d = {}
for l in sys.stdin:
    f = l.split()
    bw, fw = float(f[4]), float(re.search(r"fwd ([0-9.]+) ms", l).group(1))
    d.setdefault(f[0], []).append((bw, fw, (bw + fw) / fw))
for t, v in sorted(d.items()):
    r = [x[2] for x in v]
    print("%s backward %.2f ms, forward %.2f ms, fwd+bwd %.2f x fwd (medians of %d; ratio %.2f-%.2f)"
          % (t, statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), statistics.median(r),
             len(v), min(r), max(r)))
'
