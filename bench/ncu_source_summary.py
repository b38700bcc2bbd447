#!/usr/bin/env python3
"""Summarise a per-instruction Nsight Compute export (bench/ncu_source.sh writes
$OUT/<tag>.source.csv): the stall reasons over the whole kernel, then the code
regions (runs of instructions with the same execution count) that hold at least
0.4% of the stall samples, with their instruction mix and main stall reasons.

    python3 bench/ncu_source_summary.py FILE.source.csv [UNITS [TOP]]

UNITS divides the execution counts (e.g. blocks x warps x chunks) so that a
region's "x" column reads as executions per warp and chunk.
"""
import collections
import csv
import re
import sys


def opcode(src):
    """The SASS opcode of a source line (its predicate and modifiers dropped)."""
    m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)", src)
    return m.group(2) if m else "?"


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    units = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    hdr, data = rows[1], rows[2:]
    i_src = hdr.index("Source")
    i_samp = hdr.index("Warp Stall Sampling (All Samples)")
    i_exec = hdr.index("Instructions Executed")
    stalls = {h: hdr.index(h) for h in hdr if h.startswith("stall_") and "Not Issued" not in h}

    def num(r, i):
        try:
            return int(r[i])
        except ValueError:
            return 0

    tot_e = sum(num(r, i_exec) for r in data)
    tot_s = sum(num(r, i_samp) for r in data) or 1
    tot = collections.Counter()
    for r in data:
        for h, i in stalls.items():
            tot[h] += num(r, i)
    print(f"instructions executed {tot_e}, stall samples {tot_s}")
    print(" ".join(f"{h[6:]}:{v / tot_s * 100:.1f}%" for h, v in tot.most_common(12)))

    region = None

    def flush(end):
        if region is None or region["samp"] / tot_s < 0.004:
            return
        ops = " ".join(f"{o}:{c}" for o, c in region["ops"].most_common(5))
        st = " ".join(f"{h[6:]}:{v * 100 // max(region['samp'], 1)}" for h, v in region["st"].most_common(4))
        print(f"{region['start']:5d}-{end - 1:5d} n={end - region['start']:4d} x{region['count'] / units:5.2f} "
              f"exec%={region['exec'] / max(tot_e, 1) * 100:5.1f} samp%={region['samp'] / tot_s * 100:5.1f}  {ops} | {st}")

    for k, r in enumerate(data):
        e = num(r, i_exec)
        if region is None or e != region["count"]:
            flush(k)
            region = {"start": k, "count": e, "exec": 0, "samp": 0, "ops": collections.Counter(),
                      "st": collections.Counter()}
        region["exec"] += e
        region["samp"] += num(r, i_samp)
        for h, i in stalls.items():
            region["st"][h] += num(r, i)
        region["ops"][opcode(r[i_src])] += 1
    flush(len(data))

    # by opcode, and the single instructions that hold the most samples (with the two before
    # each: a long-scoreboard stall sits on the instruction that waits, after the load it waits on)
    ops = collections.Counter()
    lds = collections.Counter()
    for r in data:
        op = opcode(r[i_src])
        ops[op] += num(r, i_samp)
        if op in ("LDL", "STL", "LDG", "LDS", "LDSM", "STS", "STG"):
            lds[op] += num(r, i_exec)
    print("samples by opcode: " + " ".join(f"{o}:{v / tot_s * 100:.1f}%" for o, v in ops.most_common(14)))
    print("executed memory instructions: " + " ".join(f"{o}:{v}" for o, v in lds.most_common()))
    def line(j):  # a source line before the first is none
        return data[j][i_src].strip()[:40] if j >= 0 else ""

    top = sorted(range(len(data)), key=lambda k: -num(data[k], i_samp))[:int(sys.argv[3]) if len(sys.argv) > 3 else 16]
    for k in sorted(top):
        st = sorted(((num(data[k], i), h[6:]) for h, i in stalls.items()), reverse=True)[:2]
        print(f"{k:5d} samp%={num(data[k], i_samp) / tot_s * 100:4.1f} {' '.join(f'{h}:{v}' for v, h in st)}  "
              f"{data[k][i_src].strip()[:60]}  <- {line(k - 1)} ; {line(k - 2)}")


if __name__ == "__main__":
    main()
