#!/usr/bin/env bash
# Filter design on the command line: the options reach the filter that
# runs (the taps --design-out writes are the taps used, bit for bit), the
# rate comes from IN or --rate, --phase minimum filters causally, designs
# cascade with --taps, and the messages are exact. The designs' values
# against scipy are test_design's (tests/golden/design).
source "$(dirname "$0")/lib.sh" "$@"

"$SFTOOL" gen in.wav wav16 2 48000 48000 noise
E='gpufilt: error: '

# Design only: no IN or OUT, the rate from --rate.
expect 0 "" --lowpass 1k --rate 48000 --design-out lp.txt --quiet
assert_eq "design file: header" "$(head -2 lp.txt)" "# gpufilt filter at 48000 Hz: --lowpass 1k
# 3805 taps, one filter for every channel"
assert_eq "design file: taps" "$(grep -vc '^#' lp.txt)" 3805

# The same design on a file: exactly the taps written.
expect 0 "" in.wav designed.wav --lowpass 1000 --quiet
expect 0 "" in.wav coeffs.wav --coeffs lp.txt --quiet
assert_eq "--lowpass = --coeffs of its --design-out" "$(cmp designed.wav coeffs.wav && echo same)" same

# A WAV of doubles reads back as --ir, exactly.
expect 0 "" --lowpass 1k --rate 48000 --design-out lp.wav --quiet
assert_eq "design WAV: format" "$("$SFTOOL" format lp.wav)" "WAV (Microsoft) / 64 bit float"
expect 0 "" in.wav ir.wav --ir lp.wav --quiet
assert_eq "--lowpass = --ir of its --design-out" "$(cmp designed.wav ir.wav && echo same)" same

# Minimum phase: causal unless --mode says otherwise.
expect 0 "" in.wav min.wav --highpass 20 --phase minimum --design-out min.txt --quiet
expect 0 "" in.wav min2.wav --coeffs min.txt --mode causal --quiet
assert_eq "--phase minimum filters causally" "$(cmp min.wav min2.wav && echo same)" same

# A cascade: the mean filter of 5 taps, then the design (3805 + 5 - 1 taps).
expect 0 "" in.wav cas.wav --taps 5 --lowpass 1k --design-out cas.txt --quiet
assert_eq "cascade: taps" "$(grep -vc '^#' cas.txt)" 3809
expect 0 "" in.wav cas2.wav --coeffs cas.txt --quiet
assert_eq "cascade = --coeffs of its --design-out" "$(cmp cas.wav cas2.wav && echo same)" same

# The response picture is a PNG.
expect 0 "" --bandpass 300:3400 --rate 8000 --response-png bp.png --quiet
assert_eq "response picture: PNG signature" "$(head -c 8 bp.png | od -An -tx1 | tr -d ' \n')" \
    89504e470d0a1a0a

# The mean filter alone (no design): --design-out writes its T taps of 1/T,
# which --coeffs reads back into the same filter, bit for bit, in f32 and
# f64; --response-png draws it.
expect 0 "" --taps 5 --rate 48000 --design-out t5.txt --quiet
assert_eq "mean filter: design file" "$(cat t5.txt)" "# gpufilt filter at 48000 Hz: the mean filter of 5 taps
# 5 taps, one filter for every channel
0.20000000000000001
0.20000000000000001
0.20000000000000001
0.20000000000000001
0.20000000000000001"
for p in f32:float f64:double; do
    expect 0 "" in.wav m63.wav --taps 63 --precision "${p%%:*}" --out-format "wav:${p#*:}" \
        --design-out t63.txt --quiet
    expect 0 "" in.wav c63.wav --coeffs t63.txt --precision "${p%%:*}" --out-format "wav:${p#*:}" \
        --quiet
    # Samples compared, not bytes: a float WAV's PEAK chunk holds the time
    # it was written, which differs when the two runs straddle a second.
    assert_eq "mean filter ${p%%:*}: --taps 63 = --coeffs of its --design-out" \
        "$(grep -vc '^#' t63.txt) $("$SFTOOL" cmp m63.wav c63.wav && echo same)" "63 same"
done
expect 0 "" --taps 5 --rate 48000 --response-png t5.png --quiet
assert_eq "mean filter: response picture" "$(head -c 8 t5.png | od -An -tx1 | tr -d ' \n')" \
    89504e470d0a1a0a

# A response picture never stops the filtering: with it, OUT is written
# as without it; one that cannot be made is a warning (exit 0). Without IN
# and OUT the picture is all there is to make: an error.
expect 0 "" in.wav plain.wav --taps 63 --quiet
expect 0 "" in.wav ot.wav --taps 63 --response-png rt.png --quiet
assert_eq "--response-png while filtering: OUT, and a PNG" \
    "$(cmp plain.wav ot.wav && echo same) $(head -c 4 rt.png | od -An -tx1 | tr -d ' \n')" \
    "same 89504e47"
expect 0 "gpufilt: warning: cannot create response picture 'no/rt.png': directory 'no' does not exist; filtering without it" \
    in.wav ot2.wav --taps 63 --response-png no/rt.png --quiet
assert_eq "unwritable --response-png while filtering: OUT" "$(cmp plain.wav ot2.wav && echo same)" same
expect 4 "${E}cannot create response picture 'no/rt.png': directory 'no' does not exist" \
    --taps 63 --rate 48000 --response-png no/rt.png

# The README and the manual give --highpass 20's length at 48 kHz as the
# design makes it, in linear and in minimum phase.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for phase in linear minimum; do
    "$GPUFILT" --highpass 20 --phase $phase --rate 48000 --design-out /dev/null 2>stderr.txt
    n=$(sed -n "s/^gpufilt: design: --highpass 20: \([0-9]*\) taps, $phase phase.*/\1/p" stderr.txt)
    [ -n "$n" ] || fail "--highpass 20 --phase $phase: no design line in: $(cat stderr.txt)"
    grouped=$(echo "$n" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') # 189985 -> 189,985
    [ "$phase" = linear ] && readme="$grouped taps in linear phase" || readme="$grouped in minimum phase"
    [ "$phase" = linear ] && man="$n taps in linear phase" || man="$n in minimum phase"
    grep -q "$readme" "$SRC/README.md" && pass || fail "README lacks '$readme'"
    grep -q "$man" "$SRC/docs/gpufilt.1" && pass || fail "docs/gpufilt.1 lacks '$man'"
done

# Raw input: the rate from --rate, else an error.
head -c 400000 /dev/urandom >noise.raw
expect 2 "${E}--lowpass 1k needs the sample rate: give --rate (headerless input carries none)" \
    noise.raw out.raw --raw s16le -c 1 --lowpass 1k
expect_no_output out.raw
expect 0 "" noise.raw out.raw --raw s16le -c 1 -r 48000 --lowpass 1k --quiet
assert_eq "raw: frames out" "$(stat -c %s out.raw)" 400000

# Errors.
expect 2 "${E}--lowpass 1k needs the sample rate: give --rate (there is no IN to take it from)" \
    --lowpass 1k --design-out x.txt
expect 2 "${E}--atten, --transition, --design-taps and --phase shape a design: give --lowpass, --highpass, --bandpass, --bandreject or --eq too" \
    in.wav out.wav --taps 5 --atten 80
expect 2 "${E}a filter is required: --taps N, --coeffs FILE, --ir FILE or a design (--lowpass F, --highpass F, --bandpass F1:F2, --bandreject F1:F2, --eq FILE)" \
    in.wav out.wav --phase minimum
expect 2 "${E}without IN and OUT only the design's files are written: give IN and OUT to filter" \
    --lowpass 1k --rate 48000 --design-out x.txt --hist h.csv
expect 2 "${E}without IN and OUT only the design's files are written: give IN and OUT to filter" \
    --lowpass 1k --rate 48000 --design-out x.txt --json-summary s.json
expect 2 "${E}expected IN and OUT (files, or - for standard input/output; see gpufilt --help)" \
    --lowpass 1k --rate 48000
expect_no_output out.wav
expect_no_output x.txt
finish
