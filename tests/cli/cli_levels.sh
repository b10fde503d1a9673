#!/usr/bin/env bash
# Levels folded into the taps: --gain, --normalize-filter, --mix and
# --dry/--wet. Exact values where the arithmetic is exact (taps and mixes
# that are binary fractions, f64), golden values computed with numpy and
# scipy otherwise (the peak of a response), byte equality with the same
# taps scaled outside gpufilt, the refusals and the JSON fields.
source "$(dirname "$0")/lib.sh" "$@"

# within NAME GOT WANT REL: |GOT - WANT| <= REL |WANT|
within() {
    if awk -v g="$2" -v w="$3" -v r="$4" 'BEGIN { d = g - w; if (d < 0) d = -d
        a = w < 0 ? -w : w; exit !(d <= r * a) }'; then pass; else fail "$1: got $2, expected $3 (rel $4)"; fi
}
# The frames FROM..FROM+N-1 of a one-channel file, as one line.
frames() { "$SFTOOL" dump "$1" | sed -n "$(($2 + 1)),$(($2 + $3))p" | tr '\n' ' '; }

# An impulse of 1/2 at frame 10 through 0.25 0.5 0.125 -0.25, f64 and
# written as doubles: each output is 1/2 of a folded tap, exactly.
"$SFTOOL" gen imp.wav wav16 1 48000 24 impulse:10
printf '0.25\n0.5\n0.125\n-0.25\n' >taps.txt
run() { "$GPUFILT" imp.wav o.wav --coeffs taps.txt --precision f64 --out-format wav:double --quiet "$@"; }

# --mix 0.25: h' = 0.25 h + 0.75 at the dry tap: tap (4-1)/2 = 1 in same
# mode (the tap same mode centres: the output frame of the impulse's own
# frame), tap 0 in causal and full mode.
run --mix 0.25
assert_eq "--mix 0.25, same: frames 9..12" "$(frames o.wav 9 4)" "0.03125 0.4375 0.015625 -0.03125 "
assert_eq "--mix 0.25, same: frame 10 is 1/2 (0.75 x 0.5 + 0.25 x 0.5 x h[1])" "$(frames o.wav 10 1)" "0.4375 "
run --mix 0.25 --mode causal
assert_eq "--mix 0.25, causal: frames 10..13" "$(frames o.wav 10 4)" "0.40625 0.0625 0.015625 -0.03125 "
run --mix 0.25 --mode full
assert_eq "--mix 0.25, full: frames 10..13" "$(frames o.wav 10 4)" "0.40625 0.0625 0.015625 -0.03125 "
assert_eq "--mix 0.25, full: length" "$("$SFTOOL" frames o.wav)" 27
# An odd length: 3 taps centre on tap 1 too; the mean filter of 4 taps
# becomes taps of 1/4 (same mode: tap 1).
printf '0.5\n0.25\n0.125\n' >taps3.txt
"$GPUFILT" imp.wav o.wav --coeffs taps3.txt --mix 0.5 --precision f64 --out-format wav:double --quiet
assert_eq "--mix 0.5, 3 taps, same: frames 9..11" "$(frames o.wav 9 3)" "0.125 0.3125 0.03125 "
"$GPUFILT" imp.wav o.wav --taps 4 --mix 0.5 --precision f64 --out-format wav:double --quiet
assert_eq "--mix 0.5, --taps 4, same: frames 9..12" "$(frames o.wav 9 4)" "0.0625 0.3125 0.0625 0.0625 "
# --dry/--wet in dB: dry -inf is none, wet -6.0206 dB is 1/2 within 1e-5.
run --dry -inf --wet 0dB
assert_eq "--dry -inf --wet 0: the filter alone" "$(frames o.wav 9 4)" "0.125 0.25 0.0625 -0.125 "
run --dry 0 --wet -inf
assert_eq "--dry 0 --wet -inf: the input alone" "$(frames o.wav 9 4)" "0 0.5 0 0 "
run --dry 0
assert_eq "--dry 0 alone: wet stays 0 dB" "$(frames o.wav 9 4)" "0.125 0.75 0.0625 -0.125 "

# The mix against the formula y = dry x + wet (h*x) on noise: the dry and
# wet outputs made separately and mixed in awk (every product exact in
# double: 16-bit samples, taps and factors of few bits).
"$SFTOOL" gen noise.wav wav16 2 48000 3000 noise
"$GPUFILT" noise.wav wet.wav --coeffs taps.txt --precision f64 --out-format wav:double --mode causal --quiet
"$GPUFILT" noise.wav mix.wav --coeffs taps.txt --precision f64 --out-format wav:double --mode causal --mix 0.375 --quiet
bad=$(paste -d' ' <("$SFTOOL" dump noise.wav) <("$SFTOOL" dump wet.wav) <("$SFTOOL" dump mix.wav) |
    awk '{ for (c = 1; c <= 2; c++) if (0.625 * $c + 0.375 * $(c + 2) != $(c + 4)) n++ } END { print n + 0 }')
assert_eq "--mix 0.375: samples unlike 0.625 x + 0.375 (h*x)" "$bad" 0

# --gain folded in double: the bytes of the same taps scaled by 10^(G/20)
# outside gpufilt (as %.17g, which reads back as the same double), f32.
for g in -6 3.5 -0.1; do
    awk -v g="$g" '{ printf "%.17g\n", $1 * exp(log(10) * g / 20) }' taps.txt >scaled.txt
    "$GPUFILT" noise.wav gain.wav --coeffs taps.txt --gain "${g}dB" --out-format wav:float --quiet
    "$GPUFILT" noise.wav scaled.wav --coeffs scaled.txt --out-format wav:float --quiet
    if "$SFTOOL" cmp gain.wav scaled.wav; then pass; else fail "--gain $g: not the bytes of taps scaled by 10^($g/20)"; fi
done
# ... and --verify is bit-exact with the folded taps (levels and mix together).
"$GPUFILT" noise.wav v.wav --coeffs taps.txt --gain -3 --mix 0.3 --normalize-filter l1 --verify --device cpu 2>stderr.txt
assert_eq "--verify with levels" "$(sed -n 2p stderr.txt)" "verify: 6000 samples, max |error| 0, max ulp 0: bit-exact with the reference"
assert_eq "levels line" "$(grep levels stderr.txt)" "gpufilt: levels: filter normalised by l1 (x0.888889, -1.023 dB), wet x0.3 + dry x0.7 at tap 1, gain -3 dB (folded into the taps)"

# --normalize-filter on a 31-tap band-pass (4-digit taps): golden measures
# from numpy/scipy (/usr/bin/python3): |sum h| 0.0032, sum |h| 2.0178,
# sqrt(sum h^2) 0.48988012819464316, and the peak 1.5998562409869348 at
# 0.39295766 of Nyquist (an rfft of 2^22 points, refined by
# scipy.optimize.minimize_scalar; a grid of 16 x 64 points alone gives
# 1.5998182, 2e-4 dB low).
h="0.0019 0.0025 -0.0132 -0.0248 0.0099 0.0614 0.0348 -0.0709 -0.1075 0.0159 0.1518 0.0903
-0.1147 -0.1813 0.0008 0.1891 0.1227 -0.1032 -0.1783 -0.0181 0.1406 0.0971 -0.0526 -0.0993
-0.0173 0.0525 0.0345 -0.0099 -0.0169 -0.0025 0.0015"
echo "$h" | tr ' ' '\n' >bp.txt
"$SFTOOL" gen imp64.wav wav16 1 48000 64 impulse:10
for m in dc:0.0032 l1:2.0178 l2:0.48988012819464316 peak:1.5998562409869348; do
    by=${m%%:*} measure=${m#*:}
    "$GPUFILT" imp64.wav n.wav --coeffs bp.txt --normalize-filter "$by" --mode causal --precision f64 --out-format wav:double --quiet
    got=$(frames n.wav 10 31)
    worst=$(paste -d' ' <(tr ' ' '\n' <<<"$got" | sed '/^$/d') bp.txt | awk -v m="$measure" '{
        w = $2 / m / 2; d = $1 - w; if (d < 0) d = -d; a = w < 0 ? -w : w
        if (a > 0 && d / a > r) r = d / a } END { printf "%.3g", r + 0 }')
    # dc, l1, l2: sums in double (1e-15); peak: within 1e-9 (4e-9 of a bin
    # searched, second order).
    if [ "$(awk -v w="$worst" 'BEGIN { print (w <= 1e-9) }')" = 1 ]; then pass; else
        fail "--normalize-filter $by: taps off by $worst (relative), expected <= 1e-9"
    fi
done
# Per-channel filters share one factor: the second column is half the
# first, and stays half; the first is scaled to 0 dB at DC (taps 0.5 0.5,
# |sum| 1: unchanged; then gain 0).
printf '0.25 0.125\n0.75 0.375\n' >two.txt
"$SFTOOL" gen imp2.wav wav16 2 48000 16 impulse:4
"$GPUFILT" imp2.wav n2.wav --coeffs two.txt --normalize-filter dc --mode causal --precision f64 --out-format wav:double --quiet
assert_eq "per-channel: one factor for both" "$("$SFTOOL" dump n2.wav | sed -n 5,6p | tr '\n' ' ')" "0.125 0.0625 0.375 0.1875 "
"$GPUFILT" imp2.wav n2.wav --coeffs two.txt --normalize-filter peak --gain 6.020599913279624 --mode causal --precision f64 --out-format wav:double --quiet
got=$("$SFTOOL" dump n2.wav | sed -n 5p)
within "--normalize-filter peak then --gain +6.02 dB: channel 1, tap 0" "${got% *}" 0.25 1e-12
within "--normalize-filter peak then --gain +6.02 dB: channel 2, tap 0" "${got#* }" 0.125 1e-12
# The mean filter: taps of 1/4, sqrt(sum h^2) = 1/2, so l2 doubles them.
"$GPUFILT" imp.wav o.wav --taps 4 --normalize-filter l2 --precision f64 --out-format wav:double --quiet
assert_eq "--taps 4 --normalize-filter l2" "$(frames o.wav 9 4)" "0.25 0.25 0.25 0.25 "

# Refusals: exact messages, exit 2, no output.
expect 2 "gpufilt: error: --gain: 'loud' is not a gain (dB: e.g. -6 or -6dB)" imp.wav x.wav --taps 3 --gain loud
expect 2 "gpufilt: error: --gain: '-6dBFS' is not a gain (dB: e.g. -6 or -6dB)" imp.wav x.wav --taps 3 --gain -6dBFS
expect 2 "gpufilt: error: --gain: 'inf' is not a gain (dB: e.g. -6 or -6dB)" imp.wav x.wav --taps 3 --gain inf
expect 2 "gpufilt: error: --gain: '300' is out of range -200..200 dB" imp.wav x.wav --taps 3 --gain 300
expect 2 "gpufilt: error: --mix: '2' is not a number from 0 to 1 (the wet part; the dry part is 1 - WET)" imp.wav x.wav --taps 3 --mix 2
expect 2 "gpufilt: error: --mix: 'half' is not a number from 0 to 1 (the wet part; the dry part is 1 - WET)" imp.wav x.wav --taps 3 --mix half
expect 2 "gpufilt: error: --wet: 'x' is not a gain (dB: e.g. -6 or -6dB, or -inf for none)" imp.wav x.wav --taps 3 --wet x
expect 2 "gpufilt: error: --mix sets both the dry and the wet part: use --mix or --dry/--wet, not both" imp.wav x.wav --taps 3 --mix 0.5 --dry -3
expect 2 "gpufilt: error: --normalize-filter: 'rms' is not one of peak, dc, l1, l2" imp.wav x.wav --taps 3 --normalize-filter rms
printf '1\n-1\n' >zero_dc.txt
expect 2 "gpufilt: error: --normalize-filter dc: the filter's gain at DC is 0: it cannot be scaled to 0 dB" imp.wav x.wav --coeffs zero_dc.txt --normalize-filter dc
echo 1e38 >big.txt
expect 2 "gpufilt: error: tap 0 is 1e+48 after --gain, --normalize-filter and the mix: beyond the range of f32 arithmetic" imp.wav x.wav --coeffs big.txt --gain 200
expect 2 "gpufilt: error: without IN and OUT only the design's files are written: give IN and OUT to filter" --lowpass 1000 --rate 48000 --design-out d.txt --gain -3
expect_no_output x.wav d.txt

# --json-summary: the gain, the filter's measure and factor, the mix.
"$GPUFILT" imp.wav o.wav --coeffs taps.txt --gain -3 --normalize-filter dc --mix 0.25 --quiet --json-summary s.json
assert_eq "JSON levels" "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s["gain_db"], s["filter_normalization"], s["mix"], s["normalize"])' s.json)" \
    "-3 {'by': 'dc', 'measure': 0.625, 'factor': 1.6} {'dry': 0.75, 'wet': 0.25, 'dry_tap': 1} None"
"$GPUFILT" imp.wav o.wav --taps 3 --quiet --json-summary s.json
assert_eq "JSON without levels" "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s["gain_db"], s["filter_normalization"], s["mix"], s["normalize"], s["filter"])' s.json)" "0 None None None mean"
"$GPUFILT" imp.wav o.wav --taps 3 --gain -1 --quiet --json-summary s.json
assert_eq "JSON: the mean filter with a gain is still the mean filter" "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["filter"])' s.json)" "mean"

# --normalize LEVEL: the output's peak (or RMS) within 0.01 dB of LEVEL,
# never clipped, through a scratch file that is gone afterwards.
# peak_db FILE / rms_db FILE: over every sample of every channel.
peak_db() { "$SFTOOL" dump "$1" | awk '{ for (c = 1; c <= NF; c++) { v = $c < 0 ? -$c : $c; if (v > m) m = v } }
    END { printf "%.6f", 20 * log(m) / log(10) }'; }
rms_db() { "$SFTOOL" dump "$1" | awk '{ for (c = 1; c <= NF; c++) { s += $c * $c; n++ } }
    END { printf "%.6f", 10 * log(s / n) / log(10) }'; }
# dB_within NAME GOT WANT: |GOT - WANT| <= 0.01 dB
db_within() {
    if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; exit !(d <= 0.01 && d >= -0.01) }'; then pass; else
        fail "$1: $2 dB, expected $3 within 0.01 dB"
    fi
}
"$SFTOOL" gen quiet.wav wav16 2 48000 20000 noise
for level in -1 -1dB -1dBFS -6.5 0; do
    expect 0 "" quiet.wav loud.wav --taps 9 --normalize "$level" --quiet
    db_within "--normalize $level, 16-bit" "$(peak_db loud.wav)" "${level%dB*}"
    expect_no_output .loud.wav.gpufilt-x
done
# 0 dBFS into 16 bits: the positive peak at 32767/32768 at most, nothing
# clipped (no warning above); as float, exactly 1 or just below.
# Full mode: the tail is measured and written too.
expect 0 "" quiet.wav full.wav --taps 9 --mode full --normalize -4 --out-format wav:float --quiet
db_within "--normalize -4, full mode" "$(peak_db full.wav)" -4
assert_eq "--normalize, full mode: length" "$("$SFTOOL" frames full.wav)" 20008
# Both signs, so that the largest magnitude is once a positive sample.
for sign in 1 -1; do
    echo "$sign" >sign.txt
    expect 0 "" quiet.wav loud.wav --coeffs sign.txt --normalize 0 --quiet
    top=$("$SFTOOL" dump loud.wav | awk '{ for (c = 1; c <= NF; c++) if ($c > m) m = $c } END { print (m <= 32767/32768) }')
    assert_eq "--normalize 0 into 16 bits, taps $sign: largest sample <= 32767/32768" "$top" 1
    db_within "--normalize 0 into 16 bits, taps $sign" "$(peak_db loud.wav)" 0
done
expect 0 "" quiet.wav loudf.wav --taps 9 --normalize 0 --out-format wav:float --quiet
db_within "--normalize 0, float" "$(peak_db loudf.wav)" 0
assert_eq "--normalize 0, float: no sample above 1" "$("$SFTOOL" dump loudf.wav | awk '{ for (c = 1; c <= NF; c++) { v = $c < 0 ? -$c : $c; if (v > 1) n++ } } END { print n + 0 }')" 0
# The mean filter's output is quieter than its input: the gain goes up
# (a level below the output's is a gain down, tested by -6.5 above).
expect_no_output
# --normalize-by rms, and an RMS level that would clip: lowered, warned.
expect 0 "" quiet.wav rms.wav --taps 9 --normalize -20 --normalize-by rms --out-format wav:float --quiet
db_within "--normalize -20 --normalize-by rms" "$(rms_db rms.wav)" -20
expect 0 "gpufilt: warning: --normalize-by rms: -1.00 dBFS RMS would clip; *" quiet.wav rms.wav --taps 9 --normalize -1 --normalize-by rms --out-format wav:float --quiet
db_within "--normalize-by rms that would clip: the peak at full scale" "$(peak_db rms.wav)" 0
# Histograms describe the output as written: the same records as those of
# the normalised file (as float) through one tap of 1.
"$GPUFILT" quiet.wav h.wav --taps 9 --normalize -3 --out-format wav:float --hist h1.csv --hist-bins 16 --hist-block 5000 --quiet
"$GPUFILT" h.wav h2.wav --taps 1 --hist h2.csv --hist-bins 16 --hist-block 5000 --quiet
if cmp -s h1.csv h2.csv; then pass; else fail "--normalize --hist: not the histograms of the normalised output"; fi
"$GPUFILT" quiet.wav h.wav --taps 9 --normalize -3 --hist h3.csv --hist-of input --hist-bins 16 --hist-block 5000 --quiet
"$GPUFILT" quiet.wav h4.wav --taps 1 --hist h4.csv --hist-bins 16 --hist-block 5000 --quiet
if cmp -s <(sed 1d h3.csv) <(sed 1d h4.csv); then pass; else fail "--normalize --hist-of input: not the input's histograms"; fi
# --verify checks the filtering; standard input may be a pipe.
"$GPUFILT" quiet.wav v.wav --taps 9 --normalize -2 --verify --device cpu 2>stderr.txt
assert_eq "--normalize --verify" "$(sed -n 2p stderr.txt)" "verify: 40000 samples, max |error| 0, max ulp 0: bit-exact with the reference"
"$GPUFILT" - p.wav --taps 9 --normalize -2 --quiet <quiet.wav
db_within "--normalize from a pipe" "$(peak_db p.wav)" -2
# --out-dir: every file on its own.
mkdir -p in outd
"$SFTOOL" gen in/a.wav wav16 1 48000 5000 noise
"$GPUFILT" quiet.wav in/b.wav --taps 3 --gain -12 --quiet
"$GPUFILT" --taps 5 --normalize -3 --out-dir outd in/a.wav in/b.wav 2>/dev/null
db_within "--out-dir: a.wav" "$(peak_db outd/a.wav)" -3
db_within "--out-dir: b.wav" "$(peak_db outd/b.wav)" -3
# JSON: the level, the measure before and the gain.
"$GPUFILT" quiet.wav j.wav --taps 9 --normalize -1 --quiet --json-summary s.json
assert_eq "JSON normalize" "$(python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["normalize"]
print(n["by"], n["level_db"], abs(n["measured_db"] + n["gain_db"] + 1) < 1e-6, n["gain_db"] > 0)' s.json)" "peak -1 True True"
# Refusals.
expect 2 "gpufilt: error: --normalize: '1' is above 0 dBFS, which would clip: give 0 or less (e.g. -1dBFS)" quiet.wav x.wav --taps 3 --normalize 1
expect 2 "gpufilt: error: --normalize: 'loud' is not a level (dBFS: e.g. -1, -1dB or -1dBFS)" quiet.wav x.wav --taps 3 --normalize loud
expect 2 "gpufilt: error: --normalize writes OUT once the whole output is measured: OUT must be a file, not standard output" quiet.wav - --taps 3 --normalize -1
expect 2 "gpufilt: error: --normalize-by needs --normalize LEVEL (it says what LEVEL measures)" quiet.wav x.wav --taps 3 --normalize-by rms
expect 2 "gpufilt: error: --normalize-by: 'energy' is not one of peak, rms" quiet.wav x.wav --taps 3 --normalize -1 --normalize-by energy
expect 2 "gpufilt: error: --normalize is for IN and OUT, not --live" --live --taps 3 --normalize -1
mkfifo fifo
expect 2 "gpufilt: error: --normalize writes OUT once the whole output is measured: 'fifo' is not a regular file" quiet.wav fifo --taps 3 --normalize -1 --out-raw s16le
expect_no_output x.wav

finish
