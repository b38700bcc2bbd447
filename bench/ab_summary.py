"""Medians of interleaved `sgla bench` rounds, one line per (shape, row kind, build).

Input: lines "<build> <sgla bench CUDA row>" (the row as printed: shape dtype gate
row|pool|bwd|bwd0 ... ms ...; bwd0: the backward without a gate gradient).  Used by ad-hoc device calls that time two builds
of the library side by side."""
import collections
import statistics
import sys

rows = collections.defaultdict(list)
skipped = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 8 or "x" not in f[1]:
        continue
    build, shape, kind = f[0], f[1], f[4]
    # a tag "A-case" (bench/ab.sh): build A of that case; ratios are taken within a case
    case = build.split("-", 1)[1] if "-" in build else ""
    # forward rows: shape dtype gate row nseg ms ...; pool and bwd rows: shape dtype gate kind ms ...
    named = kind in ("pool", "bwd", "bwd0")
    try:
        ms, xf = (float(f[5]), float(f[9])) if named else (float(f[6]), float(f[10]))
    except (ValueError, IndexError):  # a refusal or an error printed in a row's place: not a timing
        skipped.append(line.rstrip())
        continue
    rows[(shape, kind if named else "fwd", case, build)].append((ms, xf))
base = {}
for key in sorted(rows):
    shape, kind, case, build = key
    ms = statistics.median(x[0] for x in rows[key])
    xf = statistics.median(x[1] for x in rows[key])
    ref = base.setdefault((shape, kind, case), ms)
    print(f"{shape:<22} {kind:<4} {build:<10} {ms:8.4f} ms {xf:6.2f}x floor {ms / ref:6.3f} of the first  "
          f"{[x[0] for x in rows[key]]}")
for line in skipped[:5]:
    print("not a timing:", line[:160])
