#!/usr/bin/env bash
# Bad input: one-line error, documented exit code, nothing left behind.
source "$(dirname "$0")/lib.sh" "$@"

"$SFTOOL" gen in.wav wav16 2 48000 48000 noise
E='gpufilt: error: '

# Input problems: exit 3.
expect 3 "${E}cannot open input 'nothere.wav': No such file or directory" nothere.wav out.wav --taps 5
mkdir adir
expect 3 "${E}input 'adir' is a directory" adir out.wav --taps 5
: >empty.wav
expect 3 "${E}input 'empty.wav' is empty" empty.wav out.wav --taps 5
echo "just some text, not audio" >notaudio.wav
expect 3 "${E}input 'notaudio.wav' is not an audio file libsndfile can read (not a format libsndfile knows)" notaudio.wav out.wav --taps 5
if [ "$(id -u)" != 0 ]; then
    cp in.wav locked.wav && chmod 000 locked.wav
    expect 3 "${E}cannot open input 'locked.wav': Permission denied" locked.wav out.wav --taps 5
fi
head -c 100044 in.wav >trunc.wav
expect 3 "${E}input 'trunc.wav' is truncated: its header promises 48000 frames, the file holds 25000; --allow-truncated filters the 25000 frames that exist" trunc.wav out.wav --taps 5
expect_no_output out.wav
expect 0 "gpufilt: warning: input 'trunc.wav' is truncated (its header promises 48000 frames, the file holds 25000); filtered the 25000 frames that exist" trunc.wav tout.wav --taps 5 --quiet --allow-truncated
assert_eq "frames filtered from a truncated input" "$("$SFTOOL" frames tout.wav)" 25000

# Usage problems: exit 2.
expect 2 "${E}--taps: '0' is out of range 1..4194304" in.wav out.wav --taps 0
expect 2 "${E}--taps: '-3' is out of range 1..4194304" in.wav out.wav --taps -3
expect 2 "${E}--taps: 'five' is not a whole number" in.wav out.wav --taps five
expect 2 "${E}--taps: '5x' is not a whole number" in.wav out.wav --taps 5x
expect 2 "${E}--taps: '4194305' is out of range 1..4194304" in.wav out.wav --taps 4194305
expect 2 "${E}--taps: '99999999999999999999999' is out of range 1..4194304" in.wav out.wav --taps 99999999999999999999999
expect 2 "${E}option '--taps' needs a value" in.wav out.wav --taps
expect 2 "${E}unknown option '--frobnicate' (see gpufilt --help)" in.wav out.wav --taps 5 --frobnicate
expect 2 "${E}a filter is required: --taps N, --coeffs FILE, --ir FILE or a design (--lowpass F, --highpass F, --bandpass F1:F2, --bandreject F1:F2, --eq FILE)" in.wav out.wav
expect 2 "${E}use one of --taps, --coeffs and --ir, not several" in.wav out.wav --taps 5 --coeffs c.txt
expect 2 "${E}use one of --taps, --coeffs and --ir, not several" in.wav out.wav --coeffs c.txt --ir ir.wav
expect 2 "${E}expected IN and OUT (files, or - for standard input/output; see gpufilt --help)" in.wav --taps 5
expect 2 "${E}unexpected argument 'extra.wav' (expected only IN and OUT)" in.wav out.wav extra.wav --taps 5
expect 2 "${E}--mode: 'centred' is not one of same, causal, full" in.wav out.wav --taps 5 --mode centred
expect 2 "${E}--precision: 'f16' is not one of f32, f64" in.wav out.wav --taps 5 --precision f16
expect 2 "${E}--device: 'tpu' is not one of auto, cpu, cuda, ref" in.wav out.wav --taps 5 --device tpu
expect 2 "${E}--chunk: '0' is out of range 1..268435456" in.wav out.wav --taps 5 --chunk 0
expect 2 "${E}--out-format: unknown major format 'mp9'" in.wav out.wav --taps 5 --out-format mp9
expect 2 "${E}--out-format: unknown sample type 'pcm_12'" in.wav out.wav --taps 5 --out-format wav:pcm_12
expect 2 "${E}cannot write FLAC (Free Lossless Audio Codec) / 32 bit float with 2 channels at 48000 Hz to 'out.flac'" in.wav out.flac --taps 5 --out-format flac:float
# A format libsndfile cannot write is refused (never the input's container
# under its name); more channels than a container holds are said as such.
SF=$("$SFTOOL" version)
expect 4 "${E}cannot write M4A to 'out.m4a': $SF cannot write M4A; write FLAC or WAV (e.g. 'out.flac') and convert that, e.g. with ffmpeg" in.wav out.m4a --taps 5
expect 2 "${E}--out-format: $SF cannot write WMA; write FLAC or WAV (e.g. --out-format flac) and convert that, e.g. with ffmpeg" in.wav out.wav --taps 5 --out-format wma
"$SFTOOL" gen in9.wav wav16 9 48000 100 noise
expect 4 "${E}cannot write 9 channels to 'out.flac': FLAC (Free Lossless Audio Codec) holds at most 8; write WAV, W64, CAF or RF64 (e.g. 'out.w64')" in9.wav out.flac --taps 5
expect 2 "${E}cannot write 9 channels to 'out.wav': FLAC (Free Lossless Audio Codec) holds at most 8; write WAV, W64, CAF or RF64 (e.g. --out-format w64)" in9.wav out.wav --taps 5 --out-format flac:pcm_24
expect_no_output out.m4a out.flac out.wav
# MP3: written as MP3 where libsndfile has its encoder, else refused.
if "$SFTOOL" gen probe.mp3 mp3 1 48000 1152 noise 2>/dev/null; then
    expect 0 "" in.wav out.mp3 --taps 5 --quiet
    assert_eq "out.mp3: MP3" "$("$SFTOOL" format out.mp3) $("$SFTOOL" frames out.mp3)" \
        "MPEG-1/2 Audio / MPEG Layer III 48000"
    expect 4 "${E}cannot write 9 channels to 'out.mp3': MPEG-1/2 Audio holds at most 2; write WAV, W64, CAF or RF64 (e.g. 'out.w64')" in9.wav out.mp3 --taps 5
else
    expect 4 "${E}cannot write MP3 to 'out.mp3': $SF cannot write MP3; write FLAC or WAV (e.g. 'out.flac') and convert that, e.g. with ffmpeg" in.wav out.mp3 --taps 5
    expect_no_output out.mp3
fi

# Options of streams, histograms and live audio: exit 2.
expect 2 "${E}--hist-bins: '0' is out of range 1..65536" in.wav out.wav --taps 5 --hist h.csv --hist-bins 0
expect 2 "${E}--hist-range: LO must be below HI" in.wav out.wav --taps 5 --hist h.csv --hist-range 1:-1
expect 2 "${E}--hist-range: 'x:1' is not LO:HI with two finite numbers" in.wav out.wav --taps 5 --hist h.csv --hist-range x:1
expect 2 "${E}--hist-of: 'both' is not one of output, input" in.wav out.wav --taps 5 --hist-of both
expect 2 "${E}--hist-channels: 'all' is not one of each, mix" in.wav out.wav --taps 5 --hist-channels all
expect 2 "${E}--hist 'out.wav' is also the output" in.wav out.wav --taps 5 --hist out.wav
expect 2 "${E}--live filters causally: --mode same needs input from the future" --live --taps 5 --mode same
expect 2 "${E}unexpected argument 'in.wav' (--live takes no IN or OUT)" --live in.wav --taps 5
expect 2 "${E}--in, --out, --host-api, --frames, --duration and --stats need --live" in.wav out.wav --taps 5 --in 0
expect 2 "${E}--frames: '0' is out of range 1..65536" --live --taps 5 --frames 0
# --live's FFT partition is its block: a --partition would be silently replaced.
expect 2 "${E}--partition is for IN and OUT: --live's FFT partition is its block (--frames)" --live --taps 5 --partition 256
expect 2 "${E}--partition is for IN and OUT: --live's FFT partition is its block (--frames)" --live --ir in.wav --method fft --frames 256 --partition 256
expect 2 "${E}--duration: '-1' is not a number of seconds in (0, 1e7]" --live --taps 5 --duration -1
expect 2 "${E}use either --live or --list-devices, not both" --live --list-devices --taps 5
# Changing the filter while playing: --live only, not beside the histograms.
expect 2 "${E}--control is for --live (it needs a stream that plays)" in.wav out.wav --taps 5 --control ctl
expect 2 "${E}--crossfade is for --live (it needs a stream that plays)" in.wav out.wav --taps 5 --crossfade 5
expect 2 "${E}--crossfade: '10001' is out of range 0..10000" --live --taps 5 --crossfade 10001
expect 2 "${E}--control: the filter cannot change while --hist or --hist-png records it" --live --taps 5 --control - --hist h.csv
expect 2 "${E}--latency: 'none' is not one of block, zero, auto" --live --taps 5 --latency none
# --latency zero filters the head in the audio callback: nothing there
# writes histogram records yet.
expect 2 "${E}--latency zero: --hist and --hist-png record the worker's engine, which filters only the tail (use --latency block)" --live --taps 5 --latency zero --hist h.csv
expect 2 "${E}--latency is for --live (it needs a stream that plays)" in.wav out.wav --taps 5 --latency block
expect 2 "${E}--no-mlock is for --live (it needs a stream that plays)" in.wav out.wav --taps 5 --no-mlock
# FFTW's wisdom: made alone, read before anything is filtered.
expect 2 "${E}--make-fft-wisdom takes only --partition and --quiet (not --taps)" --make-fft-wisdom w.txt --taps 5
expect 2 "${E}unexpected argument 'in.wav' (--make-fft-wisdom takes no IN or OUT)" --make-fft-wisdom w.txt in.wav
expect 2 "${E}--partition: '20' is not a power of two (16, 32, ... 1048576)" --make-fft-wisdom w.txt --partition 20
expect 4 "${E}--make-fft-wisdom: cannot write 'nodir/w.txt.tmp': No such file or directory" --make-fft-wisdom nodir/w.txt --partition 16 --quiet
expect 2 "${E}--fft-wisdom: cannot read 'nowisdom.txt': No such file or directory" in.wav out.wav --taps 5 --fft-wisdom nowisdom.txt
expect 2 "${E}use either --out-raw or --out-format, not both" in.wav out.raw --taps 5 --out-raw s16le --out-format wav
expect_no_output out.wav h.csv

# Coefficient files: exit 2, naming file and line.
printf '0.5\n# a comment\n\n0.25 # trailing comment\nzero\n' >bad1.txt
expect 2 "${E}bad1.txt:5: 'zero' is not a number" in.wav out.wav --coeffs bad1.txt
printf '0.5 0.25\n0.125\n' >bad2.txt
expect 2 "${E}bad2.txt:2: 1 column, but line 1 has 2" in.wav out.wav --coeffs bad2.txt
printf '0.5\nnan\n' >bad3.txt
expect 2 "${E}bad3.txt:2: 'nan' is not a finite number" in.wav out.wav --coeffs bad3.txt
printf '# only comments\n\n' >bad4.txt
expect 2 "${E}coefficient file 'bad4.txt' holds no coefficients" in.wav out.wav --coeffs bad4.txt
expect 2 "${E}cannot open coefficient file 'nocoeffs.txt': No such file or directory" in.wav out.wav --coeffs nocoeffs.txt
seq 1 4194305 >bad5.txt
expect 2 "${E}bad5.txt: more than 4194304 coefficients" in.wav out.wav --coeffs bad5.txt
printf '1e999\n' >bad6.txt
expect 2 "${E}bad6.txt:1: '1e999' is not a finite number" in.wav out.wav --coeffs bad6.txt
expect_no_output out.wav

# Long filters: impulse responses, coefficient columns, method and partition: exit 2.
"$SFTOOL" gen ir0.wav wavf 1 48000 0 noise
"$SFTOOL" gen ir3.wav wavf 3 48000 100 impulse:0
"$SFTOOL" gen ir441.wav wavf 1 44100 100 impulse:0
"$SFTOOL" gen irnan.wav wavf 2 48000 10 nan:2
"$SFTOOL" gen irinf.wav wavd 1 48000 4 value:-inf
"$SFTOOL" gen irbig.wav wavd 1 48000 4 value:1e39
"$SFTOOL" gen irlong.wav wav16 1 48000 4194305 impulse:0
printf '1 2 3\n' >c3.txt
expect 2 "${E}cannot open impulse response 'noir.wav': No such file or directory" in.wav out.wav --ir noir.wav
expect 2 "${E}impulse response 'notaudio.wav' is not an audio file libsndfile can read (*" in.wav out.wav --ir notaudio.wav
expect 2 "${E}impulse response 'ir0.wav' holds no frames" in.wav out.wav --ir ir0.wav
expect 2 "${E}impulse response 'adir' is a directory" in.wav out.wav --ir adir
expect 2 "${E}impulse response 'ir3.wav' has 3 channels; the input has 2 channels (give one for every channel, one per channel, or a matrix of 2 x OUTPUTS: channel i*OUTPUTS+o filters input i into output o)" in.wav out.wav --ir ir3.wav
expect 2 "${E}impulse response 'ir441.wav' is at 44100 Hz, the input at 48000 Hz (--ir-rate strict: leave it out to resample the response)" in.wav out.wav --ir ir441.wav --ir-rate strict
expect 2 "${E}--ir-rate: 'fast' is not one of resample, strict" in.wav out.wav --ir ir441.wav --ir-rate fast
expect 2 "${E}--ir-rate is for --ir (the rate of an impulse response file)" in.wav out.wav --taps 3 --ir-rate strict
expect 2 "${E}impulse response 'irnan.wav': sample 3 of channel 1 is not finite" in.wav out.wav --ir irnan.wav
# An infinite sample is not finite, in f32 as in f64 (not 'beyond the range of f32').
expect 2 "${E}impulse response 'irinf.wav': sample 1 of channel 1 is not finite" in.wav out.wav --ir irinf.wav
expect 2 "${E}impulse response 'irinf.wav': sample 1 of channel 1 is not finite" in.wav out.wav --ir irinf.wav --precision f64
expect 2 "${E}impulse response 'irbig.wav': sample 1 of channel 1 is beyond the range of f32 arithmetic: use --precision f64" in.wav out.wav --ir irbig.wav
expect 2 "${E}impulse response 'irlong.wav' has 4194305 frames: at most 4194304 taps are supported" in.wav out.wav --ir irlong.wav
expect 2 "${E}coefficient file 'c3.txt' has 3 columns; the input has 2 channels (give one for every channel, one per channel, or a matrix of 2 x OUTPUTS: column i*OUTPUTS+o filters input i into output o)" in.wav out.wav --coeffs c3.txt
expect 2 "${E}--method: 'fast' is not one of auto, direct, fft, nupc" in.wav out.wav --taps 5 --method fast
expect 2 "${E}--method direct takes at most 8192 taps (the FFT method up to 4194304)" in.wav out.wav --taps 8193 --method direct
expect 2 "${E}the ref backend of this build has no FFT method in f32" in.wav out.wav --taps 5 --method fft --device ref
expect 2 "${E}the ref backend of this build has no NUPC method in f64" in.wav out.wav --taps 5 --method nupc --device ref --precision f64
expect 2 "${E}--partition: '1000' is not a power of two (16, 32, ... 1048576)" in.wav out.wav --taps 5 --partition 1000
expect 2 "${E}--partition: '8' is out of range 16..1048576" in.wav out.wav --taps 5 --partition 8
expect 2 "${E}--partition: '2097152' is out of range 16..1048576" in.wav out.wav --taps 5 --partition 2097152
expect 2 "${E}--partition sets the FFT method's block size: it does nothing with --method direct" in.wav out.wav --taps 5 --partition 64 --method direct
expect_no_output out.wav
rm -f irlong.wav

# Output problems: exit 4.
expect 4 "${E}cannot create output 'nodir/out.wav': directory 'nodir' does not exist" in.wav nodir/out.wav --taps 5
expect 4 "${E}output 'in.wav' is the input file" in.wav in.wav --taps 5
expect 4 "${E}output './in.wav' is the input file" in.wav ./in.wav --taps 5
ln in.wav hardlink.wav
expect 4 "${E}output 'hardlink.wav' is the input file" in.wav hardlink.wav --taps 5
expect 4 "${E}output 'adir' is a directory" in.wav adir --taps 5
assert_eq "input untouched after refusing to overwrite it" "$("$SFTOOL" frames in.wav)" 48000

# A full disk: a file-size limit makes a write fail part-way.
"$SFTOOL" gen big.wav wav16 2 48000 480000 noise
rc=0
(ulimit -f 200 && exec "$GPUFILT" big.wav bigout.wav --taps 5 --quiet) 2>stderr.txt || rc=$?
assert_eq "exit code on a failed write" "$rc" 4
assert_eq "message on a failed write" "$(cat stderr.txt)" "${E}writing output 'bigout.wav': File too large"
expect_no_output bigout.wav

# No usable GPU: exit 5 (on a GPU machine the same run succeeds).
rc=0
"$GPUFILT" in.wav cuda.wav --taps 5 --device cuda --quiet 2>stderr.txt || rc=$?
if [ "$rc" = 0 ]; then
    assert_eq "frames through cuda" "$("$SFTOOL" frames cuda.wav)" 48000
else
    assert_eq "exit code without a GPU" "$rc" 5
    case "$(cat stderr.txt)" in
    "${E}--device cuda: no usable CUDA device" | "${E}--device cuda: this gpufilt was built without CUDA") pass ;;
    *) fail "message without a GPU: $(cat stderr.txt)" ;;
    esac
    expect_no_output cuda.wav
fi

# SIGINT part-way: exit 130, no output. The serial reference with 255 taps
# over 60 s of audio takes well over a second.
"$SFTOOL" gen long.wav wav16 2 48000 2880000 noise
"$GPUFILT" long.wav longout.wav --taps 255 --device ref --quiet 2>stderr.txt &
pid=$!
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "exit code after SIGINT" "$rc" 130
assert_eq "message after SIGINT" "$(cat stderr.txt)" "${E}interrupted by signal 2; no output written"
expect_no_output longout.wav

# --gpus: a list of GPU numbers, or all.
for bad in "" x 0, ,0 0,,1 -1 1024 0,1,2,3,4,5,6,7,8 all,0; do
    expect 2 "${E}--gpus: '$bad' is not 'all' or 1 to 8 GPU numbers separated by commas" \
        in.wav out.wav --taps 5 --gpus "$bad"
done
expect 2 "${E}--gpus names GPUs: it goes with --device cuda or auto, not ref" \
    in.wav out.wav --taps 5 --device ref --gpus all
expect 2 "${E}--gpus is for IN and OUT, not --live" --live --taps 5 --gpus 0
finish
