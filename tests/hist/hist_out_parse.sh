#!/usr/bin/env bash
# The CSV and JSON-lines files test_hist_out wrote (WORKDIR/exact.csv,
# exact.json, sizes/h.json) read back by independent parsers: every JSON line
# is strict JSON (no NaN/Infinity), the first line is the metadata object and
# every other line a record of the same shape; numbers read back exactly.
set -euo pipefail
work=$1
py=$(command -v python3 || true)
if [ -z "$py" ]; then
    echo "python3 not found: skipped"
    exit 77
fi
exec "$py" - "$work" <<'PY'
import csv, json, math, sys

work = sys.argv[1]

def strict(name):
    raise ValueError("non-standard JSON constant " + name)

RECORD = ["block", "first_frame", "frames", "channel", "below", "above", "nan",
          "min", "max", "rms", "bins"]
META = ["gpufilt_hist", "bins", "lo", "hi", "block_frames", "rate", "channels", "of", "mix"]

def read_jsonl(path):
    with open(path) as f:
        lines = [json.loads(l, parse_constant=strict) for l in f]
    meta, recs = lines[0], lines[1:]
    assert list(meta) == META, (path, list(meta))
    assert meta["gpufilt_hist"] == 1
    for r in recs:
        assert list(r) == RECORD, (path, list(r))
        assert len(r["bins"]) == meta["bins"], path
        assert r["channel"] == "mix" if meta["mix"] else 0 <= r["channel"] < meta["channels"]
        for k in ("min", "max", "rms"):
            assert r[k] is None or isinstance(r[k], (int, float)), (path, k)
    return meta, recs

meta, recs = read_jsonl(f"{work}/exact.json")
assert len(recs) == 6
assert recs[1]["rms"] == 0.1 + 0.2
assert recs[5]["max"] == 1 / 3 and recs[5]["min"] == 1e-300
assert recs[4]["min"] == 0 and math.copysign(1, recs[4]["min"]) == -1
assert recs[2]["min"] is None and recs[3]["max"] is None
assert recs[5]["bins"][3] == 2**64 - 1
meta, recs = read_jsonl(f"{work}/sizes/h.json")
assert meta["bins"] == 65536 and len(recs) == 5, (meta, len(recs))

with open(f"{work}/exact.csv", newline="") as f:
    first = f.readline()
    assert first.startswith("# gpufilt_hist=1 "), first
    rows = list(csv.reader(f))
header, rows = rows[0], rows[1:]
assert header[:10] == RECORD[:10] and header[10:] == ["bin%d" % i for i in range(4)]
vals = [[float(x) for x in row[7:10]] for row in rows]
assert vals[1][2] == 0.1 + 0.2 and vals[5][1] == 1 / 3
assert all(math.isnan(v) for v in vals[2])
assert vals[3] == [-math.inf, math.inf, math.inf]
assert int(rows[5][13]) == 2**64 - 1
print("hist_out_parse: ok")
PY
