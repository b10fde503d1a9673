#!/usr/bin/env python3
"""Sum Nsight Compute's per-launch durations (--metrics gpu__time_duration.sum
--csv) by kernel name: each kernel's total, launches and share, largest first.

    kernel_summary.py NCU.csv [TITLE]
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total, count = defaultdict(float), defaultdict(int)
    with open(sys.argv[1], newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # skip ncu's own log lines
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0,
                 "msecond": 1.0}.get(row["Metric Unit"], None)
        if scale is None:
            continue
        name = row["Kernel Name"].split("(")[0][:60]
        total[name] += float(row["Metric Value"].replace(",", "")) * scale
        count[name] += 1
    whole = sum(total.values()) or 1.0
    print("%s: %.3f ms in %d launches" % (sys.argv[2] if len(sys.argv) > 2 else sys.argv[1],
                                         whole, sum(count.values())))
    for name in sorted(total, key=total.get, reverse=True):
        print("  %6.1f%% %9.3f ms %6d x  %s" % (100 * total[name] / whole, total[name], count[name],
                                               name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
