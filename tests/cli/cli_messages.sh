#!/usr/bin/env bash
# Messages and options: names and strings from the command line and from
# files are escaped for the terminal; every number a double holds is a
# number; libsndfile's own phrases are translated; an option given twice,
# or one that would do nothing, is an error; a loss of precision is said
# once.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '
"$SFTOOL" gen in.wav wav16 2 48000 4800 noise

# --- Control characters and invalid UTF-8 are escaped, valid UTF-8 is not.
esc=$(printf 'a\033[2Jb')
expect 3 "${E}cannot open input 'a\\x1b[2Jb.wav': No such file or directory" "$esc.wav" out.wav --taps 5
expect 3 "${E}cannot open input 'x\\xffy\\x0az.wav': No such file or directory" "$(printf 'x\377y\nz').wav" out.wav --taps 5
# U+202E (right-to-left override) would show "evil.exe.wav" backwards.
expect 3 "${E}cannot open input 'evil\\u202evaw.exe': No such file or directory" "$(printf 'evil\342\200\256vaw.exe')" out.wav --taps 5
# An overlong encoding of '/' and a lone continuation byte are not UTF-8.
expect 3 "${E}cannot open input '\\xc0\\xaf\\x80.wav': No such file or directory" "$(printf '\300\257\200').wav" out.wav --taps 5
expect 3 "${E}cannot open input 'Müller ♪.wav': No such file or directory" 'Müller ♪.wav' out.wav --taps 5
# Strings from a file's content, and the summary line.
printf '0.5\n\033[2J\n' >esc.txt
expect 2 "${E}esc.txt:2: '\\x1b[2J' is not a number" in.wav out.wav --coeffs esc.txt
cp in.wav "$esc.wav"
"$GPUFILT" "$esc.wav" sum.wav --taps 5 --device cpu 2>stderr.txt
case "$(head -n 1 stderr.txt)" in
"gpufilt: a\\x1b[2Jb.wav -> sum.wav: 4800 frames x 2 ch at 48000 Hz, 5 taps (mean)"*) pass ;;
*) fail "summary line: '$(head -n 1 stderr.txt)'" ;;
esac
if grep -q "$(printf '\033')" stderr.txt; then fail "an escape character reached stderr"; else pass; fi

# --- Coefficient files: every finite double is a number.
# A subnormal (1e-320) is a number; in f32 it is 0, so these taps give the
# bytes of "0.5 0" exactly.
printf '0.5\n1e-320\n' >tiny.txt
printf '0.5\n0\n' >zero.txt
expect 0 "" in.wav tiny.wav --coeffs tiny.txt --quiet
expect 0 "" in.wav zero.wav --coeffs zero.txt --quiet
if cmp -s tiny.wav zero.wav; then pass; else fail "taps 0.5 1e-320 differ from 0.5 0 in f32"; fi
printf '1e-400\n' >under.txt
expect 0 "" in.wav under.wav --coeffs under.txt --precision f64 --quiet
# Beyond f32: the message says what would work.
printf '0.5\n1e39\n' >huge.txt
expect 2 "${E}huge.txt:2: '1e39' is beyond the range of f32 arithmetic (3.4e+38 at most): use --precision f64" in.wav out.wav --coeffs huge.txt
expect 0 "" in.wav huge.wav --coeffs huge.txt --precision f64 --out-format wav:double --quiet
assert_eq "frames filtered with a 1e39 tap in f64" "$("$SFTOOL" frames huge.wav)" 4800
"$SFTOOL" gen irhuge.wav wavd 1 48000 4 value:1e39
expect 2 "${E}impulse response 'irhuge.wav': sample 1 of channel 1 is beyond the range of f32 arithmetic: use --precision f64" in.wav out.wav --ir irhuge.wav
# A NUL byte is not "line too long"; a long line (200 columns) is fine; a
# line over 1 MiB is not a coefficient file's; a byte-order mark is skipped.
printf '0.5\n0.2\0\n' >nul.txt
expect 2 "${E}nul.txt:2: a NUL byte: 'nul.txt' is not a text file of numbers" in.wav out.wav --coeffs nul.txt
"$SFTOOL" gen in200.wav wavf 200 48000 100 noise
awk 'BEGIN { for (k = 0; k < 3; k++) { for (c = 0; c < 200; c++) printf "%s%.17g", c ? " " : "", (k + 1) / (c + 7); print "" } }' >wide.txt
[ "$(head -n 1 wide.txt | wc -c)" -gt 4096 ] || fail "wide.txt's lines are not longer than 4096 bytes"
expect 0 "" in200.wav wide.wav --coeffs wide.txt --quiet
assert_eq "channels after 200 coefficient columns" "$("$SFTOOL" frames wide.wav)" 100
head -c 1100000 /dev/zero | tr '\0' '1' >longline.txt
expect 2 "${E}longline.txt:1: a line longer than 1 MiB: 'longline.txt' is not a text file of numbers" in.wav out.wav --coeffs longline.txt
printf '\357\273\2770.5\n0.5\n' >bom.txt
expect 0 "" in.wav bom.wav --coeffs bom.txt --quiet
printf '0.5\n0.5\n' >nobom.txt
expect 0 "" in.wav nobom.wav --coeffs nobom.txt --quiet
if cmp -s bom.wav nobom.wav; then pass; else fail "a byte-order mark changed the taps"; fi
mkdir cdir
expect 2 "${E}coefficient file 'cdir' is a directory" in.wav out.wav --coeffs cdir

# --- libsndfile's phrases in our words.
echo "just some text" >text.wav
expect 3 "${E}input 'text.wav' is not an audio file libsndfile can read (not a format libsndfile knows)" text.wav out.wav --taps 5
expect 2 "${E}impulse response 'text.wav' is not an audio file libsndfile can read (not a format libsndfile knows)" in.wav out.wav --ir text.wav

# --- An option given twice is an error (flags may repeat); so is an option
# that would be ignored.
expect 2 "${E}--taps given twice ('5' and '7'): give it once" in.wav out.wav --taps 5 --taps 7
expect 2 "${E}--taps given twice ('5' and '7'): give it once" in.wav out.wav -t 5 --taps=7
expect 2 "${E}--mode given twice ('same' and 'causal'): give it once" in.wav out.wav --taps 5 -m same --mode causal
expect 2 "${E}--hist given twice ('a.csv' and 'b.csv'): give it once" in.wav out.wav --taps 5 --hist a.csv --hist b.csv
expect 0 "" in.wav q.wav --taps 5 --quiet -q
expect 2 "${E}--hist-bins needs --hist FILE or --hist-png FILE (it sets their histograms)" in.wav out.wav --taps 5 --hist-bins 64
expect 2 "${E}--hist-block needs --hist FILE or --hist-png FILE (it sets their histograms)" in.wav out.wav --taps 5 --hist-block 100
expect 2 "${E}--hist-range needs --hist FILE or --hist-png FILE (it sets their histograms)" in.wav out.wav --taps 5 --hist-range 0:1
expect 2 "${E}--hist-of needs --hist FILE or --hist-png FILE (it sets their histograms)" in.wav out.wav --taps 5 --hist-of input
expect 2 "${E}--hist-channels needs --hist FILE or --hist-png FILE (it sets their histograms)" in.wav out.wav --taps 5 --hist-channels mix
expect 2 "${E}--chunk is for IN and OUT, not --live" --live --taps 5 --chunk 64
expect 2 "${E}--verify is for IN and OUT, not --live" --live --taps 5 --verify
expect 2 "${E}--out-format is for IN and OUT, not --live" --live --taps 5 --out-format wav
expect_no_output out.wav a.csv b.csv

# --- A loss of precision is said once.
"$SFTOOL" gen in32.wav wav32 2 48000 4800 noise
"$SFTOOL" gen ind.wav wavd 2 48000 4800 noise
expect 0 "${W}input 'in32.wav' holds 32-bit samples: f32 arithmetic keeps 24 bits of each (--precision f64 keeps them all)" in32.wav o32.wav --taps 1 --quiet
expect 0 "" in32.wav o32.wav --taps 1 --precision f64 --quiet
expect 0 "${W}input 'ind.wav' holds 64-bit float samples: f32 arithmetic keeps 24 bits of each (--precision f64 keeps them all)" ind.wav od.wav --taps 1 --quiet
expect 0 "${W}output 'o32.flac' is written as 24-bit PCM: FLAC (Free Lossless Audio Codec) cannot hold the input's 32-bit samples" in32.wav o32.flac --taps 1 --precision f64 --quiet
assert_eq "format of the FLAC from 32-bit PCM" "$("$SFTOOL" format o32.flac)" "FLAC (Free Lossless Audio Codec) / Signed 24 bit PCM"
expect 0 "" in32.wav o32b.flac --taps 1 --precision f64 --out-format flac:pcm_24 --quiet
"$SFTOOL" gen inf.wav wavf 2 48000 4800 value:0.5
expect 0 "${W}output 'of.flac' is written as 24-bit PCM: FLAC (Free Lossless Audio Codec) cannot hold the input's 32-bit float samples (beyond +-1 they clip)" inf.wav of.flac --taps 1 --quiet
head -c 4000 /dev/zero >zeros.raw
rc=0
"$GPUFILT" - - --raw s32le -c 2 --taps 1 --quiet <zeros.raw >/dev/null 2>stderr.txt || rc=$?
assert_eq "raw s32le in f32: exit" "$rc" 0
assert_eq "raw s32le in f32: warning" "$(cat stderr.txt)" "${W}standard input holds 32-bit samples: f32 arithmetic keeps 24 bits of each (--precision f64 keeps them all)"

# --- --verify that fails on a stream says what went out already; a file
# is not written. (Samples near f32's largest: the FFT overflows where the
# exact sums do not, so the error is above any bound.)
python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<f", 3e38) * 10000)' >huge.f32
rc=0
"$GPUFILT" - - --raw f32le -c 2 --taps 64 --method fft --verify --quiet <huge.f32 >v.out \
    2>stderr.txt || rc=$?
assert_eq "stream --verify failure: exit, bytes out" "$rc $(stat -c %s v.out)" "6 40000"
assert_eq "stream --verify failure: message" "$(tail -n 1 stderr.txt)" \
    "${E}verification failed; 5000 frames had already been written to standard output"
rc=0
"$GPUFILT" - v.raw --raw f32le -c 2 --taps 64 --method fft --verify --quiet <huge.f32 \
    2>stderr.txt || rc=$?
assert_eq "file --verify failure: exit, message" "$rc $(tail -n 1 stderr.txt)" \
    "6 ${E}verification failed; no output written"
expect_no_output v.raw
# A NaN in the input: the exact sums are NaN within T frames of it, the
# FFT's outputs over every partition that holds it in its window. No bound
# covers those: --verify fails and says how many (and the finite outputs'
# largest error stays a number).
{ head -c 4000 /dev/zero && printf '\000\000\300\177' && head -c 8000 /dev/zero; } >nan.f32
rc=0
"$GPUFILT" nan.f32 n.raw --raw f32le -c 1 --taps 300 --method fft --partition 64 --verify \
    --quiet --json-summary n.json 2>stderr.txt || rc=$?
assert_eq "NaN input, FFT --verify: exit, error line" "$rc $(sed -n 2p stderr.txt)" \
    "6 verify: largest error 0 = 0 of the bound 0 (channel 1, frame 0): within the bound"
case "$(sed -n 3p stderr.txt)" in
"verify: "*" outputs are not finite where the exact sum is, or the reverse (first: channel 1, frame "*"): the bound does not cover them (a non-finite input, or an output beyond the range of f32)") pass ;;
*) fail "NaN input, FFT --verify: $(cat stderr.txt)" ;;
esac
python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["verify"]
sys.exit(0 if v["nonfinite_differ"] > 0 else 1)' n.json && pass || fail "NaN input: nonfinite_differ in n.json"
expect_no_output n.raw
# Channels are numbered from 1 in --verify's lines, as in every message:
# channel 1 silent, so the largest error is channel 2's.
python3 -c 'import struct, sys
sys.stdout.buffer.write(b"".join(struct.pack("<ff", 0.0, ((i * 7919) % 1000) / 1000 - 0.5)
                                 for i in range(5000)))' >ch2.f32
"$GPUFILT" - /dev/null --raw f32le -c 2 --taps 64 --method fft --verify --quiet <ch2.f32 \
    2>stderr.txt
[[ "$(grep '^verify: largest error' stderr.txt)" == *" of the bound "*" (channel 2, frame "*"): within the bound" ]] &&
    pass || fail "--verify's channel: $(cat stderr.txt)"
# --- The device summary says one thing: --device auto's decision and its
# reason, then how it turned out. 80000 frames x 8192 direct taps on one
# thread: about 0.328 s of CPU work, more than a GPU's start-up, so a build
# with CUDA starts on the CPU and hands the stream to the GPU once started.
"$SFTOOL" gen long.wav wav16 1 48000 80000 noise
expect 0 "*" long.wav auto.wav --taps 8192 --method direct --threads 1 --json-summary auto.json
summary=$(sed -n 's/^gpufilt: long.wav -> auto.wav: 80000 frames x 1 ch at 48000 Hz, 8192 taps (mean), same, f32, direct, \(.*\), [0-9.]* s$/\1/p' stderr.txt)
why=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["why"])' auto.json)
case "$("$GPUFILT" --version)" in
*cuda*)
    assert_eq "hand-off: why" "$why" "auto: about 0.328 s of work on the CPU, enough to start the GPU and hand it the stream"
    case "$summary" in
    "cpu backend for all 80000 frames: the GPU could not take over (no usable CUDA device) ($why)" | \
        "cpu backend for all 80000 frames: done before the GPU had started ($why)" | \
        "cpu backend for "[0-9]*" frames, then cuda for "[0-9]*" ($why)") pass ;;
    *) fail "hand-off summary: '$summary'" ;;
    esac
    ;;
*) assert_eq "no CUDA: summary" "$summary" "cpu backend (auto: about 0.328 s of work, too little to repay starting a GPU)" ;;
esac
finish
