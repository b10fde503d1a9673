#!/usr/bin/env bash
# cli_bench.sh: the gpufilt CLI against a plain libsndfile copy.
#
#   bench/cli_bench.sh BUILD_DIR WORK_DIR [--runs N] [--seconds S] [--keep]
#
# Makes a deterministic WAV (default 10 minutes, 48 kHz, stereo, 16-bit) in
# WORK_DIR with bench_makewav, then times, wall clock, the median of N runs
# (default 5, after one untimed warm-up run each, cases interleaved):
#
#   copy float       bench_sfcopy IN OUT       (sf_readf_float / sf_writef_float)
#   copy int         bench_sfcopy --int IN OUT (sf_readf_int / sf_writef_int)
#   gpufilt          gpufilt IN OUT --taps 5 --quiet   (--device auto)
#   gpufilt cpu|cuda the same with --device cpu or cuda (cuda skipped if it fails)
#   cpu --sync       --taps 5 --device cpu --sync
#   4095 taps DEV    --taps 4095 --device auto, cpu, cuda
#   65536 taps DEV   --coeffs h65536.txt --device cpu, cuda (decaying noise)
#   sox fir          sox IN OUT fir 0.2 0.2 0.2 0.2 0.2     (if sox is on PATH)
#   sox fir 65536    sox IN OUT fir h65536.txt              (the same taps)
#   1 s file DEV     --taps 5 on a one-second file: the start-up
#
# Each case's output (of its last timed run) is then checked once against
# the exact filter of its input (bench_fircheck: every frame at 5 taps,
# 20000 or 2000 seeded frames for the long filters; a copy against the
# input, SoX's with one step of slack for its dither).
#
# and prints a table of seconds, ratios against the plain copies and each
# output's check, then the targets: gpufilt <= 1.3x the plain float copy
# (the like-for-like ceiling: decode to float, encode from float), and 65536
# taps on the cpu >= 3x faster than sox with the same coefficients; a case
# whose output is wrong counts for no target. Output files go to the page
# cache; nothing is synced, the same for every case.
#
# Exit status: 0 when every case that ran worked and wrote the right output
# (a missed target included), 1 when a copy or `gpufilt --device cpu`
# failed or an output was wrong, 2 on bad usage.
set -euo pipefail

PROG=cli_bench
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

SECONDS_LEN=600
# cli_bench's own option, for parse_args.
script_option() {
    [[ $1 == --seconds ]] || return 1
    need_posint "$1" "$2"
    SECONDS_LEN=$2
    SHIFT=2
}
parse_args "$@"
MAKEWAV=$(find_exe "$BUILD/bench/bench_makewav" "$BUILD/bench_makewav")
SFCOPY=$(find_exe "$BUILD/bench/bench_sfcopy" "$BUILD/bench_sfcopy")
FIRCHECK=$(find_exe "$BUILD/bench/bench_fircheck" "$BUILD/bench_fircheck")
GPUFILT=$(find_gpufilt "$BUILD")
[[ -n $MAKEWAV ]] || die "bench_makewav not found in '$BUILD' (cmake --build '$BUILD' --target bench_makewav)"
[[ -n $SFCOPY ]] || die "bench_sfcopy not found in '$BUILD' (cmake --build '$BUILD' --target bench_sfcopy)"
[[ -n $FIRCHECK ]] || die "bench_fircheck not found in '$BUILD' (cmake --build '$BUILD' --target bench_fircheck)"
SOX=$(command -v sox || true)

IN=$WORK/in.wav
RATE=48000
CHANNELS=2
BITS=16
echo "cli_bench: making $IN (${SECONDS_LEN} s, $RATE Hz, $CHANNELS channels, $BITS-bit)" >&2
"$MAKEWAV" "$IN" --seconds "$SECONDS_LEN" --rate "$RATE" --channels "$CHANNELS" --bits "$BITS" ||
    die "bench_makewav failed"
IN_BYTES=$(stat -c %s "$IN")
cat "$IN" >/dev/null # into the page cache before any timing

# Outputs go to a tmpfs where there is one: the disk's writeback of the
# previous run's file otherwise adds more noise than the programs differ by,
# and it is the programs being compared, not the disk.
OUTDIR=$(tmpfs_dir gpufilt-bench)
if [[ -n $OUTDIR ]]; then
    trap 'rm -rf "$OUTDIR"' EXIT
else
    OUTDIR=$WORK
fi
echo "cli_bench: outputs in $OUTDIR" >&2

# The cases that ran: name, output file and command line.
NAMES=()
CASE_OUTS=()
CASE_CMDS=()
STATUS=0

# run_case NAME OUT CMD...: one warm-up run now (its failure returns 1 with
# the error in $WORK/NAME.err); the timed runs come later, in time_case.
run_case() {
    local name=$1 out=$2
    shift 2
    local tag=${name// /_}
    local err=$WORK/$tag.err
    rm -f "$out"
    if ! "$@" >/dev/null 2>"$err"; then
        return 1
    fi
    [[ -s $out ]] || {
        echo "cli_bench: $name: no output written to $out" >"$err"
        return 1
    }
    NAMES+=("$name")
    CASE_OUTS+=("$out")
    CASE_CMDS+=("$(printf '%q ' "$@")")
    return 0
}

# gpufilt_case NAME INPUT FILE ARGS...: run_case for
# gpufilt INPUT OUTDIR/FILE ARGS... --quiet.
gpufilt_case() {
    local name=$1 in=$2 out=$OUTDIR/$3
    shift 3
    run_case "$name" "$out" "$GPUFILT" "$in" "$out" "$@" --quiet
}

# time_case I R: timed run R of case I; its seconds in T.
# shellcheck disable=SC2317 # called through time_round_robin
time_case() {
    local t0 t1
    rm -f "${CASE_OUTS[$1]}"
    t0=$(clock_ns)
    eval "${CASE_CMDS[$1]}" >/dev/null 2>>"$WORK/${NAMES[$1]// /_}.err" ||
        die "${NAMES[$1]} failed on timed run $2"
    t1=$(clock_ns)
    T=$(seconds_between "$t0" "$t1")
}

echo "cli_bench: warm-up run of each case" >&2
run_case "copy float" "$OUTDIR/out_copy_float.wav" "$SFCOPY" "$IN" "$OUTDIR/out_copy_float.wav" ||
    die "bench_sfcopy failed: $(cat "$WORK/copy_float.err")"
run_case "copy int" "$OUTDIR/out_copy_int.wav" "$SFCOPY" --int "$IN" "$OUTDIR/out_copy_int.wav" ||
    die "bench_sfcopy --int failed: $(cat "$WORK/copy_int.err")"

# The 5-tap cases the target is about.
GPUFILT_CASES=()
if [[ -z $GPUFILT ]]; then
    echo "cli_bench: gpufilt not found in '$BUILD': skipping the gpufilt cases" >&2
    STATUS=1
else
    echo "cli_bench: $("$GPUFILT" --version 2>&1 | head -n 1 || true)" >&2
    if gpufilt_case "gpufilt" "$IN" out_gpufilt.wav --taps 5; then
        GPUFILT_CASES+=("gpufilt")
    else
        echo "cli_bench: gpufilt failed: $(head -n 3 "$WORK/gpufilt.err")" >&2
        STATUS=1
    fi
    if gpufilt_case "gpufilt cpu" "$IN" out_gpufilt_cpu.wav --taps 5 --device cpu; then
        GPUFILT_CASES+=("gpufilt cpu")
    else
        echo "cli_bench: gpufilt --device cpu failed: $(head -n 3 "$WORK/gpufilt_cpu.err")" >&2
        STATUS=1
    fi
    if gpufilt_case "gpufilt cuda" "$IN" out_gpufilt_cuda.wav --taps 5 --device cuda; then
        GPUFILT_CASES+=("gpufilt cuda")
    else
        echo "cli_bench: skipping gpufilt --device cuda (unavailable or failed): $(head -n 1 "$WORK/gpufilt_cuda.err")" >&2
    fi
    # What --sync (fsync before the rename) costs.
    gpufilt_case "cpu --sync" "$IN" out_gpufilt_sync.wav --taps 5 --device cpu --sync ||
        echo "cli_bench: gpufilt --sync failed: $(head -n 1 "$WORK/cpu_--sync.err")" >&2
    # A long filter, where the GPU's arithmetic pays for its start-up.
    for dev in auto cpu cuda; do
        gpufilt_case "4095 taps $dev" "$IN" "out_long_$dev.wav" --taps 4095 --device $dev ||
            echo "cli_bench: 4095 taps on $dev skipped: $(head -n 1 "$WORK/4095_taps_$dev.err")" >&2
    done
fi
# A room-sized filter: 65536 taps of decaying noise, the same file for
# gpufilt and SoX (whose fir effect convolves by FFT too).
awk 'BEGIN { s = 1; for (k = 0; k < 65536; k++) {
    s = (s * 1103515245 + 12345) % 2147483648
    printf "%.9g\n", (s / 1073741824 - 1) * exp(-k / 8000) / 40 } }' >"$WORK/h65536.txt"
if [[ -n $GPUFILT ]]; then
    for dev in cpu cuda; do
        gpufilt_case "65536 taps $dev" "$IN" "out_room_$dev.wav" --coeffs "$WORK/h65536.txt" \
            --device $dev ||
            echo "cli_bench: 65536 taps on $dev skipped: $(head -n 1 "$WORK/65536_taps_$dev.err")" >&2
    done
fi
if [[ -n $SOX ]]; then
    run_case "sox fir" "$OUTDIR/out_sox.wav" \
        "$SOX" "$IN" "$OUTDIR/out_sox.wav" fir 0.2 0.2 0.2 0.2 0.2 ||
        echo "cli_bench: sox failed, skipped: $(head -n 1 "$WORK/sox_fir.err")" >&2
    run_case "sox fir 65536" "$OUTDIR/out_sox_room.wav" \
        "$SOX" "$IN" "$OUTDIR/out_sox_room.wav" fir "$WORK/h65536.txt" ||
        echo "cli_bench: sox with 65536 taps failed, skipped: $(head -n 1 "$WORK/sox_fir_65536.err")" >&2
else
    echo "cli_bench: sox not on PATH: skipping the sox case" >&2
fi

if [[ -n $GPUFILT ]] &&
    "$MAKEWAV" "$WORK/short.wav" --seconds 1 --rate "$RATE" --channels "$CHANNELS" --bits "$BITS" >/dev/null 2>&1; then
    for dev in cpu cuda; do
        gpufilt_case "1 s file $dev" "$WORK/short.wav" "out_short_$dev.wav" --taps 5 --device $dev ||
            true
    done
fi

echo "cli_bench: timing, $RUNS runs per case, interleaved" >&2
time_round_robin "$RUNS" time_case
summarise_times

# check_args NAME: the input and bench_fircheck's filter for a case's output.
check_args() {
    case $1 in
    "copy float") echo "$IN --taps 1 --frames 0 --slack 1" ;; # libsndfile's float path: one step
    "copy int") echo "$IN --taps 1 --frames 0" ;;
    # gpufilt dithers 16-bit output by default (TPDF, +-1 step): one step
    "gpufilt"* | "cpu --sync") echo "$IN --taps 5 --frames 0 --slack 1" ;;
    "4095 taps"*) echo "$IN --taps 4095 --slack 1" ;;
    "65536 taps"*) echo "$IN --coeffs $WORK/h65536.txt --frames 2000 --slack 1" ;;
    "sox fir") echo "$IN --taps 5 --frames 0 --slack 1" ;; # SoX dithers: one step
    "sox fir 65536") echo "$IN --coeffs $WORK/h65536.txt --frames 2000 --slack 1" ;;
    "1 s file"*) echo "$WORK/short.wav --taps 5 --frames 0 --slack 1" ;;
    *) die "no output check for case '$1'" ;;
    esac
}

# Each case's output, once: OUTPUT_OK[i] is "ok" or "WRONG".
echo "cli_bench: checking each case's output against the exact filter of its input" >&2
OUTPUT_OK=()
for i in "${!NAMES[@]}"; do
    read -r -a args <<<"$(check_args "${NAMES[$i]}")"
    in=${args[0]}
    if "$FIRCHECK" "$in" "${CASE_OUTS[$i]}" "${args[@]:1}" >&2; then
        OUTPUT_OK[i]=ok
    else
        OUTPUT_OK[i]=WRONG
        STATUS=1
    fi
done

# Median seconds of a case by name, "" without a result.
median_of() { checked_stat MEDS "$1"; }
BASE_F=$(median_of "copy float")
BASE_I=$(median_of "copy int")
[[ -n $BASE_F && -n $BASE_I ]] || die "a plain copy's output differs from its input: no baseline"

echo
echo "cli_bench: $(run_stamp)"
echo "input: $IN: ${SECONDS_LEN} s, $RATE Hz, $CHANNELS ch, $BITS-bit WAV, $(awk -v b="$IN_BYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
echo "median of $RUNS runs per case (wall clock, after a warm-up run, cases interleaved); ratios = median / median of the copy"
echo
printf '%-14s %10s %10s %10s %12s %12s %10s %7s\n' "case" "median s" "min s" "max s" "x copy float" "x copy int" "MB/s in" "output"
printf '%s\n' "--------------------------------------------------------------------------------------------"
for i in "${!NAMES[@]}"; do
    awk -v n="${NAMES[$i]}" -v m="${MEDS[$i]}" -v lo="${MINS[$i]}" -v hi="${MAXS[$i]}" \
        -v bf="$BASE_F" -v bi="$BASE_I" -v bytes="$IN_BYTES" -v ok="${OUTPUT_OK[$i]}" 'BEGIN {
            printf "%-14s %10.3f %10.3f %10.3f %11.2fx %11.2fx %10.0f %7s\n",
                   n, m, lo, hi, m / bf, m / bi, bytes / 1e6 / m, ok
        }'
done

CSV=$WORK/cli_bench.csv
{
    echo "case,median_s,min_s,max_s,ratio_copy_float,ratio_copy_int,output"
    for i in "${!NAMES[@]}"; do
        awk -v n="${NAMES[$i]}" -v m="${MEDS[$i]}" -v lo="${MINS[$i]}" -v hi="${MAXS[$i]}" \
            -v bf="$BASE_F" -v bi="$BASE_I" -v ok="${OUTPUT_OK[$i]}" 'BEGIN { printf "%s,%s,%s,%s,%.4f,%.4f,%s\n", n, m, lo, hi, m / bf, m / bi, ok }'
    done
} >"$CSV"

# CUDA's fixed start-up: the same run on a one-second file.
for dev in cpu cuda; do
    m=$(median_of "1 s file $dev")
    [[ -z $m ]] || echo "start-up: gpufilt --device $dev on a 1-second file: $m s (median)"
done

echo
echo "target: gpufilt <= 1.3x the plain float copy (5 taps; 'gpufilt' is the default, --device auto)"
if [[ ${#GPUFILT_CASES[@]} -eq 0 ]]; then
    echo "  SKIP  no gpufilt case ran"
fi
for c in "${GPUFILT_CASES[@]}"; do
    if [[ -z $(median_of "$c") ]]; then
        echo "  MISS  $c: its output was wrong: no result"
        continue
    fi
    awk -v n="$c" -v m="$(median_of "$c")" -v b="$BASE_F" 'BEGIN {
        r = m / b
        printf "  %-4s  %-12s %.2fx the copy (%.3f s vs %.3f s)\n", (r <= 1.3 ? "PASS" : "MISS"), n, r, m, b
    }'
done
ROOM=$(median_of "65536 taps cpu")
SOXROOM=$(median_of "sox fir 65536")
echo "target: 65536 taps with --device cpu >= 3x faster than sox fir with the same coefficients ($(nproc) CPUs)"
if [[ -n $ROOM && -n $SOXROOM ]]; then
    awk -v g="$ROOM" -v s="$SOXROOM" 'BEGIN {
        printf "  %-4s  %.2fx faster (gpufilt %.3f s, sox %.3f s)\n", (s / g >= 3 ? "PASS" : "MISS"), s / g, g, s }'
else
    echo "  SKIP  a case did not run or its output was wrong"
fi
echo "(CSV: $CSV)"

if [[ $KEEP -eq 0 ]]; then
    rm -f "$OUTDIR"/out_*.wav
fi
exit "$STATUS"
