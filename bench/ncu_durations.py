#!/usr/bin/env python3
"""Every kernel's time in one or more Nsight Compute CSV exports of
`ncu --metrics gpu__time_duration.sum --csv ...` (one file per profiled run):
the launch's ID, its duration and the kernel's name, a line each.

    python3 bench/ncu_durations.py FILE.csv [FILE.csv ...]
"""
import csv
import sys


def main():
    for f in sys.argv[1:]:
        rows = [r for r in csv.reader(line for line in open(f) if line.startswith('"'))]
        print("==", f.rsplit("/", 1)[-1])
        if not rows:
            print("  no rows")
            continue
        h = rows[0]
        ki, vi, ii = h.index("Kernel Name"), h.index("Metric Value"), h.index("ID")
        for r in rows[1:]:
            print("  %4s %10s  %s" % (r[ii], r[vi], r[ki][:110]))


if __name__ == "__main__":
    main()
