#!/usr/bin/env python3
"""What each GPU did, and when: per device, the busy time of kernels,
host-to-device, device-to-host and peer copies, and a coarse timeline, one
character per bin: K kernel, U upload, D download, P peer or device copy,
'+' two or more of them, '.' idle.

    timeline.py CAPTURE [--from MS] [--to MS] [--width N] [--gap MS] [--kernels]
    timeline.py TRACE.csv --bytes

CAPTURE: an Nsight Systems capture exported to SQLite (nsys export --type
sqlite), or the CSV that libgpufilt_trace.so writes (bench/cupti_trace.c).
--from/--to: the window, in ms from the first GPU activity (default: all of
it); --width: characters per timeline row (default 100); --gap: split the
window into episodes wherever every GPU is idle for this long (e.g. the
runs of a benchmark) and report each; --kernels: also the time of each
kernel name, per device. --bytes (a trace CSV): only the bytes of every
upload (U) and download (D) in all, one line: "U <bytes> D <bytes>".
"""
import argparse
import csv
import sqlite3
import sys
from collections import defaultdict

COPY_KIND = {1: "U", 2: "D", 8: "P", 10: "P"}  # CUPTI copyKind: HtoD, DtoH, DtoD, PtoP


def activities_csv(path):
    """(device, kind letter, start ns, end ns, kernel name) from a trace CSV."""
    with open(path, newline="") as f:
        return [(int(r["device"]), "P" if r["kind"] == "C" else r["kind"], int(r["start"]),
                 int(r["end"]), r["name"]) for r in csv.DictReader(f)]


def activities(db):
    """(device, kind letter, start ns, end ns, kernel name) of every kernel
    and copy."""
    out = []
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        for dev, s, e in db.execute("SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            out.append((dev, "K", s, e, ""))
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for dev, kind, s, e in db.execute(
                "SELECT deviceId, copyKind, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
            out.append((dev, COPY_KIND.get(kind, "P"), s, e, ""))
    return out


def union_ms(spans):
    """Total length of the union of (start, end) spans, in ms."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total / 1e6


def episodes(acts, gap_ns):
    """[lo, hi) spans of activity separated by idle gaps of at least gap_ns."""
    out = []
    for _, _, s, e, _ in sorted(acts, key=lambda a: a[2]):
        if out and s - out[-1][1] < gap_ns:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def report(acts, lo, hi, t0, cols, kernels):
    """The busy times and timeline of [lo, hi) (ns)."""
    acts = [(d, k, max(s, lo), min(e, hi), n) for d, k, s, e, n in acts if e > lo and s < hi]
    span = (hi - lo) / 1e6
    print("window: %.2f .. %.2f ms after the first GPU activity (%.2f ms)" %
          ((lo - t0) / 1e6, (hi - t0) / 1e6, span))
    by_dev = defaultdict(list)
    for d, k, s, e, n in acts:
        by_dev[d].append((k, s, e, n))
    rows = max(1, min(8, int(span // 1.0 // cols) + 1))
    nbins = cols * rows
    width_ns = (hi - lo) / nbins
    for d in sorted(by_dev):
        spans = by_dev[d]
        parts = []
        for k in "KUDP":
            ms = union_ms([(s, e) for kk, s, e, _ in spans if kk == k])
            if ms > 0:
                parts.append("%s %.2f ms" % (k, ms))
        busy = union_ms([(s, e) for _, s, e, _ in spans])
        print("GPU %d: busy %.2f ms (%.0f%%); %s" % (d, busy, 100 * busy / span, ", ".join(parts)))
        bins = [set() for _ in range(nbins)]
        for k, s, e, _ in spans:
            b0 = int((s - lo) / width_ns)
            b1 = min(nbins - 1, int((e - lo) / width_ns))
            for b in range(b0, b1 + 1):
                bins[b].add(k)
        line = "".join("." if not b else (next(iter(b)) if len(b) == 1 else "+") for b in bins)
        for r in range(rows):
            print("  %8.2f |%s|" % ((lo - t0 + r * cols * width_ns) / 1e6,
                                    line[r * cols:(r + 1) * cols]))
        if kernels:
            per = defaultdict(lambda: [0, 0])
            for k, s, e, n in spans:
                if k == "K":
                    per[n][0] += 1
                    per[n][1] += e - s
            for n, (count, ns) in sorted(per.items(), key=lambda kv: -kv[1][1]):
                print("    %9.3f ms %5d x  %s" % (ns / 1e6, count, n[:90]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("--from", dest="t_from", type=float, default=None)
    ap.add_argument("--to", dest="t_to", type=float, default=None)
    ap.add_argument("--width", type=int, default=100)
    ap.add_argument("--gap", type=float, default=None)
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--bytes", action="store_true")
    a = ap.parse_args()
    if a.bytes:
        total = {"U": 0, "D": 0}
        with open(a.capture, newline="") as f:
            for r in csv.DictReader(f):
                if r["kind"] in total:
                    total[r["kind"]] += int(r["bytes"])
        print("U %d D %d" % (total["U"], total["D"]))
        return 0
    if a.capture.endswith(".csv"):
        acts = activities_csv(a.capture)
        names = ["(a trace CSV)"]
    else:
        db = sqlite3.connect(a.capture)
        acts = activities(db)
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    if not acts:
        print("timeline: no GPU activity in %s (tables: %s)" % (a.capture, " ".join(names)),
              file=sys.stderr)
        return 1
    t0 = min(a_[2] for a_ in acts)
    lo = t0 + int((a.t_from or 0.0) * 1e6)
    hi = t0 + int(a.t_to * 1e6) if a.t_to is not None else max(a_[3] for a_ in acts)
    if a.gap is None:
        report(acts, lo, hi, t0, a.width, a.kernels)
        return 0
    inside = [x for x in acts if x[3] > lo and x[2] < hi]
    for i, (s, e) in enumerate(episodes(inside, int(a.gap * 1e6))):
        print("\n--- episode %d" % i)
        report(inside, max(s, lo), min(e, hi), t0, a.width, a.kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
