#!/usr/bin/env bash
# Values through the whole CLI: impulse responses in both modes, clipping
# counts, format conversion, --verify's report.
source "$(dirname "$0")/lib.sh" "$@"

# Impulse of 0.5 at frame 10 through taps 0.25 0.5 0.125 -0.25 (exact in
# binary), written as float so nothing is quantised.
"$SFTOOL" gen imp.wav wav16 2 48000 16 impulse:10
printf '# test taps\n0.25\n0.5\n0.125\n-0.25\n' >taps.txt
zeros() { for _ in $(seq "$1"); do echo "0 0"; done; }
for mode in same causal; do
    "$GPUFILT" imp.wav "imp_$mode.wav" --coeffs taps.txt --mode $mode --out-format wav:float --quiet
    # same: y[i] = sum h[k] x[i+1-k] -> frames 9..12; causal: frames 10..13.
    if [ $mode = same ]; then pre=9 post=3; else pre=10 post=2; fi
    want=$( (zeros $pre; echo "0.125 0.125"; echo "0.25 0.25"; echo "0.0625 0.0625"
        echo "-0.125 -0.125"; zeros $post) )
    assert_eq "impulse response, $mode" "$("$SFTOOL" dump "imp_$mode.wav")" "$want"
done

# Clipping: every 16-bit value once per channel, times 2: values >= 16384 and
# < -16384 clip, 16384 + 16384 per channel; the rest come out exactly doubled.
"$SFTOOL" gen ramp.wav wav16 2 48000 65536 ramp
echo 2 >gain2.txt
expect 0 "gpufilt: warning: 65536 samples clipped in 'ramp2.wav'" ramp.wav ramp2.wav --coeffs gain2.txt --quiet --dither none
"$SFTOOL" dump ramp.wav >ramp.txt
"$SFTOOL" dump ramp2.wav >ramp2.txt
bad=$(paste -d' ' ramp.txt ramp2.txt | awk '{
    for (c = 1; c <= 2; c++) { x = $c * 2; if (x > 32767/32768) x = 32767/32768; if (x < -1) x = -1;
        if (x != $(c + 2)) n++ } } END { print n + 0 }')
assert_eq "samples that differ from 2x with clipping" "$bad" 0

# mu-law and A-law: libsndfile indexes its tables with the scaled sample
# unchecked, so a sample beyond +-1 must be clipped before it gets there
# (else libsndfile crashes). The ramp times 500 clips where |k| >= 66 (k/32768 the
# input): 32702 + 32703 per channel. Every clipped sample decodes to the
# encoding's largest magnitude with the input's sign.
echo 500 >gain500.txt
for enc in ulaw:0.9803466796875 alaw:0.984375; do
    e=${enc%%:*} max=${enc#*:}
    expect 0 "gpufilt: warning: 130810 samples clipped in 'ramp_$e.wav'" ramp.wav "ramp_$e.wav" --coeffs gain500.txt --out-format "wav:$e" --quiet
    "$SFTOOL" dump "ramp_$e.wav" >"ramp_$e.txt"
    bad=$(paste -d' ' ramp.txt "ramp_$e.txt" | awk -v m="$max" '{
        for (c = 1; c <= 2; c++) { k = $c * 32768; y = $(c + 2)
            if (k >= 66 && y != m) n++; if (k <= -66 && y != -m) n++ } } END { print n + 0 }')
    assert_eq "clipped $e samples that are not +-$max" "$bad" 0
done
# NaN is written as 0, infinities as +-1; all three count as clipped. Raw
# f32le: NaN, +inf, -inf, 0.5 (whose nearest codes decode to 0.5116 in
# mu-law and 0.5156 in A-law, byte a5); to a file and (AU) to a pipe.
printf '\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\x00\x3f' >special.f32
expect 0 "gpufilt: warning: 3 samples clipped in 'special.wav'" special.f32 special.wav --raw f32le -c 1 -r 8000 --taps 1 --out-format wav:ulaw --quiet
assert_eq "NaN, +inf, -inf, 0.5 as mu-law" "$("$SFTOOL" dump special.wav | tr '\n' ' ')" "0 0.9803466796875 -0.9803466796875 0.5115966796875 "
expect 0 "gpufilt: warning: 3 samples clipped in standard output" special.f32 - --raw f32le -c 1 -r 8000 --taps 1 --out-format au:alaw --quiet
assert_eq "NaN, +inf, -inf, 0.5 as A-law on a pipe: bytes" "$(od -A n -t x1 -j 24 stdout.txt | tr -d ' \n')" "d5aa2aa5"

# Format from the output's extension, or --out-format.
"$SFTOOL" gen in.wav wav24 2 48000 9000 noise
"$GPUFILT" in.wav out.flac --taps 1 --quiet
assert_eq "wav24 -> .flac" "$("$SFTOOL" format out.flac)" "FLAC (Free Lossless Audio Codec) / Signed 24 bit PCM"
if "$SFTOOL" cmp in.wav out.flac; then pass; else fail "wav24 -> flac24 samples"; fi
"$GPUFILT" in.wav out.au --taps 1 --out-format wav:float --quiet
assert_eq "--out-format wins over the extension" "$("$SFTOOL" format out.au)" "WAV (Microsoft) / 32 bit float"

# --verify: a report, and exit 0 when bit-exact.
"$GPUFILT" in.wav v.wav --taps 25 --verify --device cpu 2>stderr.txt
assert_eq "verify report" "$(sed -n 2p stderr.txt)" "verify: 18000 samples, max |error| 0, max ulp 0: bit-exact with the reference"
case "$(sed -n 1p stderr.txt)" in
"verify: reference (serial) "*" s, cpu "*" s, speedup "*x) pass ;;
*) fail "verify timing line: $(sed -n 1p stderr.txt)" ;;
esac

# Output length equals input length in both modes, for long filters too.
for mode in same causal; do
    "$GPUFILT" in.wav "len_$mode.wav" --taps 255 --mode $mode --quiet
    assert_eq "frames out, $mode" "$("$SFTOOL" frames "len_$mode.wav")" 9000
done
# Input histograms do not depend on the mode, though full mode's output is
# longer (T-1 frames): 40 frames in blocks of 16 are 3 records per channel
# (16, 16, 8 frames) in every mode, byte for byte.
"$SFTOOL" gen short.wav wav16 2 48000 40 noise
for mode in causal full; do
    "$GPUFILT" short.wav "short_$mode.wav" --taps 101 --mode $mode --hist-of input \
        --hist-block 16 --hist "in_$mode.json" --quiet 2>err.txt
    assert_eq "input histograms in $mode mode: exit" "$?" 0
done
assert_eq "input histograms: full = causal" "$(cmp in_causal.json in_full.json && echo same)" same
assert_eq "input histograms: records" \
    "$(python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][1:]
print(*[(x["block"], x["channel"], x["frames"]) for x in r])' in_full.json)" \
    "(0, 0, 16) (0, 1, 16) (1, 0, 16) (1, 1, 16) (2, 0, 8) (2, 1, 8)"
finish
