#!/usr/bin/env bash
# --dither and --seed: the noise's statistics and spectrum, the same bytes
# however the stream is cut, the cases never dithered, the default, the
# refusals and the JSON summary.
# Usage: cli_dither.sh GPUFILT SFTOOL WORKDIR PIPETOOL
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
PIPETOOL=$4
E="gpufilt: error: "

# py SCRIPT ARGS...: python3 with struct and math at hand.
py() { python3 -c "import math, struct, sys
def f64(p):
    b = open(p, 'rb').read(); return struct.unpack('<%dd' % (len(b) // 8), b)
def s16(p):
    b = open(p, 'rb').read(); return struct.unpack('<%dh' % (len(b) // 2), b)
$1" "${@:2}"; }

# --- TPDF: the error's distribution. Mono f64 input, 16-bit output through
# one tap of 1 (float input: the samples change, so they are dithered).
# Four stretches of 100000 frames at v = 1000 + o LSB, o = 0, 0.25, 0.5,
# -0.75 (v = 0 would be the same as o = 0: silence is dithered too). With
# d triangular on (-1, 1), q = round(v + d) and e = q - v:
#   o = 0:     P(e = +1) = P(e = -1) = P(d >= 1/2) = 1/8
#   o = 0.25:  P(e = 0.75) = P(d >= 1/4) = 9/32, P(e = -1.25) = P(d < -3/4) = 1/32
#   o = 0.5:   P(e = 0.5) = P(d >= 0) = 1/2
#   o = -0.75: P(e = 0.75) = P(d >= 1/4) = 9/32 (as o = 0.25, mirrored: P(e = 1.75) = 0)
# Each count must lie within 5 standard deviations of n p, and the mean
# error of each stretch within 5 standard deviations of 0: plain rounding
# (e = 0, 0.25... one value) or rectangular dither (1/2 LSB: P(d >= 1/2) = 0)
# would fail. The seed fixes the bytes: the test cannot flake.
py 'n = 100000
xs = []
for o in (0.0, 0.25, 0.5, -0.75):
    xs += [(1000 + o) / 32768] * n
sys.stdout.buffer.write(struct.pack("<%dd" % len(xs), *xs))' >dc.f64
"$GPUFILT" dc.f64 dc.s16 --raw f64le -c 1 -r 48000 --out-raw s16le --taps 1 --dither tpdf \
    -p f64 -q
py 'n = 100000
q = s16(sys.argv[1])
out = []
for i, (o, ev) in enumerate(((0.0, {1.0: 1/8, -1.0: 1/8}), (0.25, {0.75: 9/32, -1.25: 1/32}),
                             (0.5, {0.5: 1/2}), (-0.75, {0.75: 9/32, 1.75: 0.0}))):
    e = [x - (1000 + o) for x in q[i * n:(i + 1) * n]]
    for v, p in ev.items():
        k = sum(1 for x in e if x == v)
        sd = math.sqrt(n * p * (1 - p)) or 1
        out.append("ok" if abs(k - n * p) <= 5 * sd else "o=%g P(e=%g)=%d/%d want %g" % (o, v, k, n, p))
    m = sum(e) / n
    var = sum(x * x for x in e) / n
    out.append("ok" if abs(m) <= 5 * math.sqrt(var / n) else "o=%g mean %g" % (o, m))
print(" ".join(sorted(set(out))))' dc.s16 >tpdf.txt
assert_eq "TPDF error distribution" "$(cat tpdf.txt)" "ok"

# --- The same bytes whatever the blocks, chunks, threads and backend: a
# 3-channel stream through a 33-tap filter, 16-bit out.
"$SFTOOL" gen n.wav wav24 3 48000 70000 noise
"$GPUFILT" n.wav a.wav --taps 33 --device cpu --out-format wav:pcm_16 -q
for args in "--chunk 1000 --threads 1" "--chunk 777 --threads 2" "--device ref"; do
    # shellcheck disable=SC2086
    "$GPUFILT" n.wav b.wav --taps 33 $args --out-format wav:pcm_16 -q
    if "$SFTOOL" cmp a.wav b.wav >/dev/null; then pass; else fail "dithered bytes differ with $args"; fi
done
"$PIPETOOL" sf2raw n.wav f32le >n.f32
"$PIPETOOL" feed 3 5000 0 <n.f32 |
    "$GPUFILT" - b.s16 --raw f32le -c 3 -r 48000 --out-raw s16le --taps 33 --device cpu -q
"$GPUFILT" n.wav a.s16 --taps 33 --out-raw s16le --device cpu -q
if cmp -s a.s16 b.s16; then pass; else fail "dithered bytes differ on a pipe fed in pieces"; fi
# The WAV sink quantises a block at a time (vectorised), the raw sink a
# sample at a time: the same samples, dithered or not, clipped or not.
"$GPUFILT" a.wav a_wav.s16 --taps 1 --out-raw s16le -q # (a copy: never dithered)
if cmp -s a.s16 a_wav.s16; then pass; else fail "WAV and raw sinks dither differently"; fi
for args in "--dither none" "--gain 14" "--gain 14 --dither none" "--precision f64"; do
    # shellcheck disable=SC2086
    "$GPUFILT" n.wav w.wav --taps 33 --device cpu --out-format wav:pcm_16 $args -q 2>/dev/null
    # shellcheck disable=SC2086
    "$GPUFILT" n.wav r.s16 --taps 33 --device cpu --out-raw s16le $args -q 2>/dev/null
    "$GPUFILT" w.wav w.s16 --taps 1 --out-raw s16le -q
    if cmp -s r.s16 w.s16; then pass; else fail "WAV and raw sinks differ with $args"; fi
done
# (24-bit input, 16-bit output: the default dithers; --seed 0 is the default.)
"$GPUFILT" n.wav c.wav --taps 33 --device cpu --out-format wav:pcm_16 --seed 0 -q
if "$SFTOOL" cmp a.wav c.wav >/dev/null; then pass; else fail "--seed 0 is not the default"; fi
"$GPUFILT" n.wav c.wav --taps 33 --device cpu --out-format wav:pcm_16 --seed 1 -q
if "$SFTOOL" cmp a.wav c.wav >/dev/null; then fail "--seed 1 gave the bytes of seed 0"; else pass; fi
"$GPUFILT" n.wav c.wav --taps 33 --device cpu --out-format wav:pcm_16 --dither none -q
if "$SFTOOL" cmp a.wav c.wav >/dev/null; then fail "the default did not dither a 16-bit output"; else pass; fi

# --- Never dithered: a bit-exact copy (one tap of 1, output bits >= the
# input's; even with --dither tpdf), float output, and by default 24 bits.
"$SFTOOL" gen i16.wav wav16 2 48000 5000 noise
"$GPUFILT" i16.wav o16.wav --taps 1 --dither tpdf -q
if "$SFTOOL" cmp i16.wav o16.wav >/dev/null; then pass; else fail "a 1-tap copy was dithered"; fi
"$GPUFILT" i16.wav o24.wav --coeffs <(echo 1) --out-format wav:pcm_24 --dither shaped -q
if "$SFTOOL" cmp i16.wav o24.wav >/dev/null; then pass; else fail "a 1-tap copy to 24 bits was dithered"; fi
"$GPUFILT" i16.wav f1.wav --taps 3 --out-format wav:float --dither tpdf -q
"$GPUFILT" i16.wav f2.wav --taps 3 --out-format wav:float --dither none -q
if "$SFTOOL" cmp f1.wav f2.wav >/dev/null; then pass; else fail "a float output was dithered"; fi
"$GPUFILT" i16.wav d1.wav --taps 3 --out-format wav:pcm_24 -q
"$GPUFILT" i16.wav d2.wav --taps 3 --out-format wav:pcm_24 --dither none -q
if cmp -s d1.wav d2.wav; then pass; else fail "a 24-bit output was dithered by default"; fi
"$GPUFILT" i16.wav d1.wav --taps 3 --out-format wav:pcm_24 --dither tpdf -q
if cmp -s d1.wav d2.wav; then fail "--dither tpdf did not dither a 24-bit output"; else pass; fi

# --- Shaped: the error's spectrum at 44.1 kHz, Hann-windowed periodograms
# of 64 stretches of 1024 frames: the mean power above 15 kHz over that
# below 5 kHz is 2692 (34.3 dB) for Lipshitz's curve (1 - sum c_j z^-j);
# at least 300 (24.8 dB) is asked. TPDF is white: 0.7 to 1.4.
py 'xs = [(1000 + 0.3) / 32768] * 65536
sys.stdout.buffer.write(struct.pack("<%dd" % len(xs), *xs))' >flat.f64
for d in shaped tpdf; do
    "$GPUFILT" flat.f64 "$d.s16" --raw f64le -c 1 -r 44100 --out-raw s16le --taps 1 --dither $d \
        -p f64 -q
done
py 'import cmath
def fft(a):
    n = len(a)
    if n == 1: return a
    ev, od = fft(a[0::2]), fft(a[1::2])
    t = [cmath.exp(-2j * math.pi * k / n) * od[k] for k in range(n // 2)]
    return [ev[k] + t[k] for k in range(n // 2)] + [ev[k] - t[k] for k in range(n // 2)]
N = 1024
w = [0.5 - 0.5 * math.cos(2 * math.pi * k / N) for k in range(N)]
for p in sys.argv[1:]:
    e = [x - 1000.3 for x in s16(p)]
    P = [0.0] * (N // 2 + 1)
    for s in range(64):
        X = fft([w[k] * e[s * N + k] for k in range(N)])
        for k in range(N // 2 + 1): P[k] += abs(X[k]) ** 2
    f = [k * 44100 / N for k in range(N // 2 + 1)]
    hi = [P[k] for k in range(1, N // 2 + 1) if f[k] >= 15000]
    lo = [P[k] for k in range(1, N // 2 + 1) if f[k] < 5000]
    r = (sum(hi) / len(hi)) / (sum(lo) / len(lo))
    print(p, "ok" if (r >= 300 if p.startswith("shaped") else 0.7 <= r <= 1.4) else "ratio %g" % r)' \
    shaped.s16 tpdf.s16 >spectrum.txt
assert_eq "noise spectra" "$(cat spectrum.txt)" "shaped.s16 ok
tpdf.s16 ok"
# At a rate without a curve: TPDF, with a warning (as SoX does).
"$GPUFILT" flat.f64 s96.s16 --raw f64le -c 1 -r 96000 --out-raw s16le --taps 1 --dither shaped \
    -p f64 -q 2>err.txt
assert_eq "shaped at 96 kHz" "$(cat err.txt)" \
    "gpufilt: warning: --dither shaped has no curve for 96000 Hz (44100 and 48000 Hz only): TPDF dither instead"
"$GPUFILT" flat.f64 t96.s16 --raw f64le -c 1 -r 96000 --out-raw s16le --taps 1 --dither tpdf \
    -p f64 -q
if cmp -s s96.s16 t96.s16; then pass; else fail "shaped at 96 kHz is not TPDF"; fi

# --- --verify compares before quantisation: still exact with dither.
if "$GPUFILT" i16.wav v.wav --taps 33 --verify -q 2>err.txt; then pass; else fail "--verify with dither"; fi
assert_eq "--verify with dither" "$(tail -1 err.txt)" \
    "verify: 10000 samples, max |error| 0, max ulp 0: bit-exact with the reference"
# --- The histograms count the samples before quantisation: the same with
# and without dither.
"$GPUFILT" i16.wav h1.wav --taps 33 --hist h1.csv --hist-bins 64 -q
"$GPUFILT" i16.wav h2.wav --taps 33 --hist h2.csv --hist-bins 64 --dither none -q
if cmp -s h1.csv h2.csv; then pass; else fail "dither changed the histograms"; fi
if cmp -s h1.wav h2.wav; then fail "the histogram run was not dithered"; else pass; fi
# --- The JSON summary says what was written.
"$GPUFILT" i16.wav j.wav --taps 3 --seed 7 -q --json-summary j.json
"$GPUFILT" i16.wav j.wav --taps 1 -q --json-summary k.json
assert_eq "JSON dither" "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["dither"], json.load(open(sys.argv[2]))["dither"])' j.json k.json)" \
    "{'kind': 'tpdf', 'seed': 7} None"

# --- Refusals (exit 2).
expect 2 "${E}--dither: 'rpdf' is not one of none, tpdf, shaped" i16.wav x.wav --taps 3 --dither rpdf
expect 2 "${E}--seed: 'abc' is not a whole number" i16.wav x.wav --taps 3 --seed abc
expect 2 "${E}--seed: '-1' is out of range 0..18446744073709551615" i16.wav x.wav --taps 3 --seed -1
expect 2 "${E}--seed sets the dither's noise: it does nothing with --dither none" i16.wav x.wav \
    --taps 3 --dither none --seed 3
expect 2 "${E}--dither is for IN and OUT, not --live" --live --taps 3 --dither tpdf
expect_no_output x.wav
finish
