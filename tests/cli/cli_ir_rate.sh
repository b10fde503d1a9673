#!/usr/bin/env bash
# An impulse response at another rate than the input's (--ir-rate): resampled
# by libsoxr, checked against SoX's own very high quality resampler.
# Usage: cli_ir_rate.sh GPUFILT SFTOOL WORKDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
if ! command -v sox >/dev/null; then
    echo "sox is missing: skipped"
    exit 77
fi

# f64 samples of a file as one per line (headerless output of gpufilt).
# A 2000-tap response at 44.1 kHz: noise decaying over 300 taps, full band
# (the resamplers differ most near the band edge); a 48 kHz input of noise.
python3 -c 'import math, random, struct, sys
random.seed(7)
h = [random.gauss(0, 0.3) * math.exp(-k / 300) for k in range(2000)]
sys.stdout.buffer.write(struct.pack("<%dd" % len(h), *h))' >ir44.f64
sox -t f64 -r 44100 -c 1 ir44.f64 -e floating-point -b 32 ir44.wav
"$SFTOOL" gen in48.wav wav16 1 48000 6000 noise

# SoX's resampler at its very high quality, and the gain gpufilt applies
# (taps_resample.c: 44100/48000, so that the response's gain is kept).
sox ir44.wav -e floating-point -b 64 -r 48000 ir48.wav rate -v vol 0.91875
assert_eq "SoX's resampled response length" "$("$SFTOOL" frames ir48.wav)" 2177

"$GPUFILT" in48.wav ours.f64 --ir ir44.wav --out-raw f64le --precision f64 --mode full 2>err.txt
assert_eq "the notice" "$(head -1 err.txt)" \
    "gpufilt: impulse response 'ir44.wav' resampled from 44100 Hz to 48000 Hz (2000 taps -> 2177 taps)"
"$GPUFILT" in48.wav sox.f64 --ir ir48.wav --out-raw f64le --precision f64 --mode full -q
# The same length (6000 + 2177 - 1 frames), and the same output within
# -60 dB of its peak: both resamplers are 28-bit ones, differing in their
# band edge (measured: 4e-4 of the peak for this full-band response).
python3 -c 'import struct, sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
x = struct.unpack("<%dd" % (len(a) // 8), a); y = struct.unpack("<%dd" % (len(b) // 8), b)
peak = max(abs(v) for v in y)
err = max(abs(p - q) for p, q in zip(x, y))
print(len(x), len(y), "ok" if err <= 1e-3 * peak else "err %g of peak %g" % (err, peak))' \
    ours.f64 sox.f64 >cmp.txt
assert_eq "gpufilt's resampling against sox rate -v" "$(cat cmp.txt)" "8176 8176 ok"

# The response's gain is kept: a DC input through a smooth lowpass at
# 44.1 kHz whose taps sum to 1 (a 101-tap Hann window, 50 zeros each side,
# so that cutting the resampled response at its length loses nothing)
# gives 1 at 48 kHz too; without the in/out scaling it would be
# 48000/44100 = 1.0884.
python3 -c 'import math, struct, sys
w = [0.5 - 0.5 * math.cos(2 * math.pi * (k + 1) / 102) for k in range(101)]
h = [0.0] * 50 + [v / sum(w) for v in w] + [0.0] * 50
sys.stdout.buffer.write(struct.pack("<%dd" % len(h), *h))' >lp.f64
sox -t f64 -r 44100 -c 1 lp.f64 -e floating-point -b 64 lp44.wav
"$SFTOOL" gen dc48.wav wavd 1 48000 1000 value:0.25
"$GPUFILT" dc48.wav dc.f64 --ir lp44.wav --out-raw f64le --precision f64 -q
python3 -c 'import struct, sys
a = open(sys.argv[1], "rb").read(); x = struct.unpack("<%dd" % (len(a) // 8), a)
print("%.6f" % (x[500] / 0.25))' dc.f64 >gain.txt
assert_eq "gain at DC of a resampled lowpass" "$(cat gain.txt)" "1.000000"

# --ir-rate strict keeps the refusal; the same rate is never resampled.
expect 2 "gpufilt: error: impulse response 'ir44.wav' is at 44100 Hz, the input at 48000 Hz (--ir-rate strict: leave it out to resample the response)" \
    in48.wav out.wav --ir ir44.wav --ir-rate strict
"$GPUFILT" in48.wav same.wav --ir ir48.wav --ir-rate strict 2>err.txt
assert_eq "no notice at the input's rate" "$(grep -c resampled err.txt || true)" 0

# --json-summary says what was resampled, from and to.
"$GPUFILT" in48.wav out.wav --ir ir44.wav -q --json-summary s.json
python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))
print(v["ir_resampled"], v["taps"])' s.json >json.txt
assert_eq "JSON summary" "$(cat json.txt)" "{'from': 44100, 'to': 48000, 'taps_from': 2000} 2177"
"$GPUFILT" in48.wav out.wav --ir ir48.wav -q --json-summary s.json
assert_eq "JSON summary, not resampled" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ir_resampled"])' s.json)" None
finish
