#!/usr/bin/env bash
# pipe_bench.sh: gpufilt on a pipe against cat on the same pipe.
#
#   bench/pipe_bench.sh BUILD_DIR WORK_DIR [--runs N] [--device cpu|cuda|auto]
#                       [--mib M] [--keep]
#
# Makes M MiB (default 1024) of f32le stereo noise once, on tmpfs
# (/dev/shm, else WORK_DIR), then times, wall clock, the median of N runs
# (default 5, after one untimed warm-up run each, cases interleaved):
#
#   cat          cat IN | cat | pipetool count             (the ceiling)
#   5 taps       cat IN | gpufilt - - --raw f32le -c 2 --taps 5 --quiet --device D | pipetool count
#   255 taps     the same with --taps 255
#   5 taps <IN   gpufilt ... <IN | pipetool count           (stdin a file: not a stream)
#
# Every run must deliver exactly M MiB (pipetool count), and each gpufilt
# case's output, from one more untimed run into a file, is checked against
# the exact filter of the input (bench_fircheck, 20000 seeded frames and
# both ends). Prints MB/s (10^6
# bytes a second of input) and each case's throughput as a fraction of cat's
# (of the medians, and of the fastest runs), and the target, on the medians:
# 5 taps >= 90% of cat. Exit status: 0 when every case ran, delivered every
# byte and the right samples (a missed target included), 1 when one failed,
# 2 on bad usage.
set -euo pipefail

PROG=pipe_bench
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

DEVICE=cpu
MIB=1024
# pipe_bench's own options, for parse_args.
script_option() {
    case $1 in
    --mib)
        need_posint "$1" "$2"
        MIB=$2
        ;;
    --device)
        [[ $2 =~ ^(cpu|cuda|auto)$ ]] || usage_error "--device is one of cpu, cuda, auto"
        DEVICE=$2
        ;;
    *)
        return 1
        ;;
    esac
    SHIFT=2
}
parse_args "$@"
GPUFILT=$(find_gpufilt "$BUILD")
PIPETOOL=$(find_exe "$BUILD/tests/cli/pipetool" "$BUILD/pipetool")
FIRCHECK=$(find_exe "$BUILD/bench/bench_fircheck" "$BUILD/bench_fircheck")
[[ -n $GPUFILT ]] || die "gpufilt not found in '$BUILD'"
[[ -n $PIPETOOL ]] || die "pipetool not found in '$BUILD' (cmake --build '$BUILD' --target pipetool)"
[[ -n $FIRCHECK ]] || die "bench_fircheck not found in '$BUILD' (cmake --build '$BUILD' --target bench_fircheck)"

DATA=$(tmpfs_dir gpufilt-pipe-bench)
[[ -n $DATA ]] || DATA=$WORK
cleanup() {
    if [[ $KEEP -eq 0 ]]; then
        rm -f "$DATA/in.f32" "$DATA/out.f32"
        [[ $DATA == "$WORK" ]] || rmdir "$DATA" 2>/dev/null || true
    fi
}
trap cleanup EXIT
IN=$DATA/in.f32
BYTES=$((MIB << 20))
echo "pipe_bench: making $IN ($MIB MiB of f32le noise)" >&2
"$PIPETOOL" noise "${MIB}M" 1 >"$IN" || die "pipetool noise failed"
echo "pipe_bench: $("$GPUFILT" --version 2>&1 | head -n 1 || true), --device $DEVICE" >&2

G="$(printf '%q' "$GPUFILT") - - --raw f32le -c 2 --quiet --device $DEVICE"
C=$(printf '%q' "$PIPETOOL")
Q=$(printf '%q' "$IN")
NAMES=("cat" "5 taps" "255 taps" "5 taps <IN" "start-up")
CMDS=("cat $Q | cat | $C count"
    "cat $Q | $G --taps 5 | $C count"
    "cat $Q | $G --taps 255 | $C count"
    "$G --taps 5 <$Q | $C count"
    ": | $G --taps 5 | $C count")
EXPECT=("$BYTES" "$BYTES" "$BYTES" "$BYTES" 0)
TAPS=("" 5 255 5 "") # the gpufilt cases' filters, for the output check

# run_one I: one run of case I; its seconds in T. Fails unless every byte
# came through and every command of the pipeline exited 0.
run_one() {
    local t0 t1 out
    t0=$(clock_ns)
    out=$(bash -o pipefail -c "${CMDS[$1]}" 2>"$WORK/pipe_bench.err") ||
        die "${NAMES[$1]} failed: $(head -n 3 "$WORK/pipe_bench.err")"
    t1=$(clock_ns)
    [[ $out == "${EXPECT[$1]}" ]] || die "${NAMES[$1]}: $out bytes out, expected ${EXPECT[$1]}"
    T=$(seconds_between "$t0" "$t1")
}

echo "pipe_bench: warm-up run of each case" >&2
for i in "${!NAMES[@]}"; do run_one "$i"; done
echo "pipe_bench: timing, $RUNS runs per case, interleaved" >&2
time_round_robin "$RUNS" run_one
summarise_times

# Each gpufilt case once more, into a file instead of pipetool count, its
# output against the exact filter of the input.
echo "pipe_bench: checking each gpufilt case's output against the exact filter of its input" >&2
for i in "${!NAMES[@]}"; do
    [[ -n ${TAPS[$i]} ]] || continue
    bash -o pipefail -c "${CMDS[$i]% | *} >$(printf '%q' "$DATA/out.f32")" 2>"$WORK/pipe_bench.err" ||
        die "${NAMES[$i]} failed: $(head -n 3 "$WORK/pipe_bench.err")"
    "$FIRCHECK" "$IN" "$DATA/out.f32" --raw-f32 2 --taps "${TAPS[$i]}" >&2 ||
        die "${NAMES[$i]}: the output is not the ${TAPS[$i]}-tap filter of the input"
    rm -f "$DATA/out.f32"
done

echo
echo "pipe_bench: $(run_stamp), --device $DEVICE"
echo "input: $MIB MiB of f32le stereo noise on $(df --output=fstype "$DATA" 2>/dev/null | tail -n 1 || echo '?'), through pipes into pipetool count"
echo "median of $RUNS runs per case (wall clock, after a warm-up run, cases interleaved)"
echo
printf '%-12s %10s %10s %10s %10s %12s\n' "case" "median s" "min s" "MB/s" "% of cat" "(of mins)"
printf '%s\n' "-----------------------------------------------------------------------"
for i in 0 1 2 3; do
    awk -v n="${NAMES[$i]}" -v m="${MEDS[$i]}" -v lo="${MINS[$i]}" -v c="${MEDS[0]}" -v clo="${MINS[0]}" -v b="$BYTES" 'BEGIN {
        printf "%-12s %10.3f %10.3f %10.0f %9.1f%% %11.1f%%\n", n, m, lo, b / 1e6 / m, 100 * c / m, 100 * clo / lo }'
done
echo "(MB/s and % of cat from the medians; the last column compares the fastest runs)"
echo "start-up (an empty stream through gpufilt): median ${MEDS[4]} s"
echo
echo "target: gpufilt at 5 taps on a pipe >= 90% of cat's throughput"
awk -v m="${MEDS[1]}" -v c="${MEDS[0]}" 'BEGIN {
    r = c / m
    printf "  %s  5 taps: %.1f%% of cat (%.3f s vs %.3f s)\n", (r >= 0.9 ? "PASS" : "MISS"), 100 * r, m, c }'
awk -v m="${MEDS[1]}" -v c="${MEDS[0]}" -v s="${MEDS[4]}" 'BEGIN {
    r = c / (m - s)
    printf "  info  5 taps with start-up taken out: %.1f%% of cat (%.3f s - %.3f s start-up vs %.3f s)\n", 100 * r, m, s, c }'
