#!/usr/bin/env bash
# cpu_peers.sh: gpufilt's CPU FFT filter against FFmpeg's afir and SoX's fir.
#
#   bench/cpu_peers.sh BUILD_DIR WORK_DIR [--runs N] [--seconds S] [--no-wisdom] [--keep]
#
# Makes, in WORK_DIR, a deterministic WAV (default 10 minutes, 48 kHz,
# stereo, 16-bit) with bench_makewav and two mono impulse responses of
# 65,536 and 1,048,576 taps (gpufilt's own --lowpass 8k design, written with
# --design-out as a WAV of doubles for gpufilt and FFmpeg and as text for
# SoX), then times, wall clock, the best of N runs (default 3, cases
# interleaved) of:
#
#   gpufilt T      gpufilt IN OUT --ir IR --device cpu --mode causal --quiet
#   afir T         ffmpeg -y -i IN -i IR -lavfi
#                    '[0:a][1:a]afir=gtype=none:irfmt=mono,aformat=channel_layouts=stereo' OUT
#   afir T mono    the same without the aformat: FFmpeg 5.1 then negotiates a
#                  mono output and filters one downmixed channel (half the
#                  work; shown for reference, not compared)
#   sox 65536      sox IN OUT fir IR.txt
#   gpufilt T wisdom  gpufilt ... --fft-wisdom WORK/fftw.wisdom: FFTW's
#                  measured plans (made once with --make-fft-wisdom, kept
#                  in WORK and reused), shown beside the default plans
#                  (--no-wisdom: not, where the minute it takes is dear)
#

# afir's output is as long as its input and not delayed (y[i] = sum_k
# h[k] x[i-k]), which is gpufilt's causal mode; full mode would add T-1
# frames of tail. It prints each case's best and every time, then the
# ratios peer / gpufilt (how many times faster gpufilt is) against the
# targets: >= 1.5x afir at both lengths, >= 3x SoX at 65,536. Outputs go to
# a tmpfs where there is one. Each compared case's output (its last run) is
# checked once against the exact filter of its input (bench_fircheck at
# 2000 frames, 200 at 2^20 taps): gpufilt and afir causal, SoX same mode
# with one step of slack for its dither. FFmpeg 5.1's afir with gtype=none
# outputs twice the filter's sums (every sample, measured), so its check
# uses the taps doubled (exact in binary). A wrong output counts toward no
# target.
#
# Exit status: 0 when every case ran and wrote the right output (a missed
# target included), 1 when one failed or was wrong, 2 on bad usage.
# shellcheck disable=SC2034,SC2317 # PROG, SHIFT and RUNS_DEFAULT are for lib.sh; time_case runs through it
set -euo pipefail

PROG=cpu_peers
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

SECONDS_LEN=600
WISDOM_CASES=1
script_option() {
    if [[ $1 == --no-wisdom ]]; then
        WISDOM_CASES=0
        SHIFT=1
        return 0
    fi
    [[ $1 == --seconds ]] || return 1
    need_posint "$1" "$2"
    SECONDS_LEN=$2
    SHIFT=2
}
RUNS_DEFAULT=3
parse_args "$@"
MAKEWAV=$(find_exe "$BUILD/bench/bench_makewav" "$BUILD/bench_makewav")
GPUFILT=$(find_gpufilt "$BUILD")
FIRCHECK=$(find_exe "$BUILD/bench/bench_fircheck" "$BUILD/bench_fircheck")
[[ -n $FIRCHECK ]] || die "bench_fircheck not found in '$BUILD'"
[[ -n $MAKEWAV ]] || die "bench_makewav not found in '$BUILD'"
[[ -n $GPUFILT ]] || die "gpufilt not found in '$BUILD'"
FFMPEG=$(command -v ffmpeg || true)
SOX=$(command -v sox || true)
[[ -n $FFMPEG ]] || echo "cpu_peers: ffmpeg not on PATH (apt-get install ffmpeg): afir cases skipped" >&2
[[ -n $SOX ]] || echo "cpu_peers: sox not on PATH (apt-get install sox): sox case skipped" >&2

IN=$WORK/in.wav
"$MAKEWAV" "$IN" --seconds "$SECONDS_LEN" --rate 48000 --channels 2 --bits 16 ||
    die "bench_makewav failed"
"$MAKEWAV" "$WORK/short.wav" --seconds 1 --rate 48000 --channels 1 --bits 16 ||
    die "bench_makewav failed"
for T in 65536 1048576; do
    for ext in wav txt; do
        "$GPUFILT" "$WORK/short.wav" "$WORK/short_out.wav" --lowpass 8k --atten 90 \
            --design-taps "$T" --design-out "$WORK/ir$T.$ext" --device cpu --quiet \
            2>"$WORK/design.err" || die "cannot design the $T-tap impulse response: $(head -n 1 "$WORK/design.err")"
    done
    awk '/^#/ { next } { printf "%.17g\n", 2 * $1 }' "$WORK/ir$T.txt" >"$WORK/ir${T}x2.txt"
done
cat "$IN" >/dev/null
WISDOM=$WORK/fftw.wisdom
if [[ $WISDOM_CASES == 1 && ! -s $WISDOM ]]; then
    echo "cpu_peers: measuring FFTW's plans once (--make-fft-wisdom, about a minute)" >&2
    "$GPUFILT" --make-fft-wisdom "$WISDOM" --quiet || die "--make-fft-wisdom failed"
fi

OUTDIR=$(tmpfs_dir cpu-peers)
if [[ -n $OUTDIR ]]; then
    trap 'rm -rf "$OUTDIR"' EXIT
else
    OUTDIR=$WORK
fi

NAMES=()
CMDS=()
CHECKS=() # bench_fircheck's arguments after IN OUT, or "" for none
add_case() {
    NAMES+=("$1")
    CMDS+=("$2")
    CHECKS+=("$3")
}
AFIR='afir=gtype=none:irfmt=mono'
for T in 65536 1048576; do
    n=2000
    [[ $T -lt 1048576 ]] || n=200
    # (--slack 1: gpufilt dithers 16-bit output by default, +-1 step.)
    check="$OUTDIR/%s --coeffs $WORK/ir$T.txt --mode causal --frames $n --slack 1"
    # shellcheck disable=SC2059 # check is the format
    add_case "gpufilt $T" "\"$GPUFILT\" \"$IN\" \"$OUTDIR/g$T.wav\" --ir \"$WORK/ir$T.wav\" --device cpu --mode causal --quiet" \
        "$(printf "$check" "g$T.wav")"
    # shellcheck disable=SC2059
    [[ $WISDOM_CASES == 0 ]] ||
        add_case "gpufilt $T wisdom" "\"$GPUFILT\" \"$IN\" \"$OUTDIR/w$T.wav\" --ir \"$WORK/ir$T.wav\" --device cpu --mode causal --quiet --fft-wisdom \"$WISDOM\"" \
            "$(printf "$check" "w$T.wav")"
    if [[ -n $FFMPEG ]]; then
        # shellcheck disable=SC2059
        add_case "afir $T" "\"$FFMPEG\" -nostdin -hide_banner -loglevel error -y -i \"$IN\" -i \"$WORK/ir$T.wav\" -lavfi '[0:a][1:a]$AFIR,aformat=channel_layouts=stereo' \"$OUTDIR/f$T.wav\"" \
            "$OUTDIR/f$T.wav --coeffs $WORK/ir${T}x2.txt --mode causal --frames $n"
        add_case "afir $T mono" "\"$FFMPEG\" -nostdin -hide_banner -loglevel error -y -i \"$IN\" -i \"$WORK/ir$T.wav\" -lavfi '$AFIR' \"$OUTDIR/m$T.wav\"" ""
    fi
done
[[ -z $SOX ]] || add_case "sox 65536" "\"$SOX\" \"$IN\" \"$OUTDIR/s.wav\" fir \"$WORK/ir65536.txt\"" \
    "$OUTDIR/s.wav --coeffs $WORK/ir65536.txt --mode same --frames 2000 --slack 1"

STATUS=0
time_case() {
    local t0 t1
    t0=$(clock_ns)
    if ! eval "${CMDS[$1]}" 2>"$WORK/case$1.err"; then
        echo "cpu_peers: ${NAMES[$1]} failed: $(head -n 1 "$WORK/case$1.err")" >&2
        STATUS=1
    fi
    t1=$(clock_ns)
    T=$(seconds_between "$t0" "$t1")
}
echo "cpu_peers: timing, $RUNS runs per case, interleaved" >&2
time_round_robin "$RUNS" time_case
summarise_times

# Each case's output, once: OUTPUT_OK[i] is "ok", "WRONG" or "-" (not checked).
echo "cpu_peers: checking outputs against the exact causal filter of the input" >&2
OUTPUT_OK=()
for i in "${!NAMES[@]}"; do
    OUTPUT_OK[i]=-
    [[ -n ${CHECKS[$i]} ]] || continue
    read -r -a args <<<"${CHECKS[$i]}"
    if "$FIRCHECK" "$IN" "${args[@]}" >&2; then
        OUTPUT_OK[i]=ok
    else
        OUTPUT_OK[i]=WRONG
        STATUS=1
    fi
done

# Best time of a case by name, "" without a result.
best_of() { checked_stat MINS "$1"; }

echo
echo "cpu_peers: $(run_stamp)"
echo "input: ${SECONDS_LEN} s, 48000 Hz, stereo 16-bit WAV; mono IR (--lowpass 8k design); best of $RUNS, wall clock"
echo "$("$GPUFILT" --version 2>&1 | head -n 1)${FFMPEG:+; $("$FFMPEG" -version | head -n 1 | cut -d' ' -f1-3)}${SOX:+; $("$SOX" --version 2>&1 | head -n 1)}"
printf '%-24s %9s %7s   %s\n' case "best s" output "all runs (s)"
for i in "${!NAMES[@]}"; do
    printf '%-24s %9.3f %7s   %s\n' "${NAMES[$i]}" "${MINS[$i]}" "${OUTPUT_OK[$i]}" "${TIMES[$i]}"
done
echo
ratio() { # ratio LABEL TARGET GPUFILT_CASE PEER_CASE
    local g p
    g=$(best_of "$3")
    p=$(best_of "$4")
    if [[ -z $g || -z $p ]]; then
        echo "  SKIP  $1: a case did not run or its output was wrong"
        return 0
    fi
    awk -v l="$1" -v t="$2" -v g="$g" -v p="$p" 'BEGIN {
        printf "  %-4s  %s: gpufilt %.2fx faster (gpufilt %.3f s, peer %.3f s; target >= %gx)\n",
               (p / g >= t ? "PASS" : "MISS"), l, p / g, g, p, t }'
}
echo "ratios, peer time / gpufilt time ($(nproc) CPUs):"
ratio "afir 65536" 1.5 "gpufilt 65536" "afir 65536"
ratio "afir 1048576" 1.5 "gpufilt 1048576" "afir 1048576"
ratio "sox 65536" 3 "gpufilt 65536" "sox 65536"
if [[ $WISDOM_CASES == 1 ]]; then
    echo "with FFTW's measured plans (--fft-wisdom):"
    ratio "afir 65536" 1.5 "gpufilt 65536 wisdom" "afir 65536"
    ratio "afir 1048576" 1.5 "gpufilt 1048576 wisdom" "afir 1048576"
fi
[[ $KEEP == 1 ]] || rm -f "$IN"
exit "$STATUS"
