#!/usr/bin/env python3
"""Warp-stall samples per role and per segment from an Nsight Compute source export
(`ncu -i R.ncu-rep --page source --print-source sass --csv`, as bench/calls/s27_call2.sh writes it).

Roles are told apart by how often an instruction ran (the fp32 wgmma forward: the state's warps run
their code twice as often as warpgroup 0's): --state N counts instructions executed at least N times
as the state's, --out M those at least M as the outputs'.  Segments end at barriers, mbarrier
operations, wgmma waits and commits, and branches; those above --min (share of all samples) are listed with their top three stall reasons.

    python3 bench/ncu_stalls.py sass_x3.csv [--state 120000 --out 60000 --min 0.004]
"""
import argparse
import collections
import csv
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--state", type=float, default=120000)
    ap.add_argument("--out", type=float, default=60000)
    ap.add_argument("--min", type=float, default=0.004)
    a = ap.parse_args()
    rows = list(csv.reader(open(a.csv)))
    h, rows = rows[1], rows[2:]  # (row 0 names the kernel)
    ix = {c: i for i, c in enumerate(h)}
    reasons = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
    num = lambda x, c: float(x[ix[c]] or 0)
    total = sum(num(x, "Warp Stall Sampling (All Samples)") for x in rows)
    roles = collections.defaultdict(collections.Counter)
    seg, start, n = collections.Counter(), 0, 0
    print(f"segments above {a.min:.1%} of {total:.0f} samples (instruction range, count, top reasons, end):")
    for i, x in enumerate(rows):
        e = num(x, "Instructions Executed")
        role = "state" if e >= a.state else "outputs" if e >= a.out else "other"
        for c in reasons:
            if num(x, c):
                roles[role][c[6:]] += num(x, c)
                seg[c[6:]] += num(x, c)
        n += 1
        if re.search(r"BAR\.|WARPGROUP\.DEPBAR|\bBRA\b|SYNCS|EXIT|HGMMA.*gsb0", x[1]) or i == len(rows) - 1:
            s = sum(seg.values())
            if s / total > a.min:
                top = ", ".join(f"{k} {v / s:.0%}" for k, v in seg.most_common(3))
                print(f"  {start:5d}-{i:5d} {s / total:6.1%} n={n:4d}  [{top}]  {x[1].strip()[:48]}")
            seg, start, n = collections.Counter(), i + 1, 0
    print("roles (share of samples; top stall reasons within the role):")
    for r, cn in roles.items():
        s = sum(cn.values())
        print(f"  {r:8s} {s / total:6.1%}  " + ", ".join(f"{k} {v / s:.0%}" for k, v in cn.most_common(6)))


if __name__ == "__main__":
    main()
