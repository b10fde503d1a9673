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
# Every run must deliver exactly M MiB (pipetool count). Prints MB/s (10^6
# bytes a second of input) and each case's throughput as a fraction of cat's
# (of the medians, and of the fastest runs), and the target, on the medians:
# 5 taps >= 90% of cat. Exit status: 0 when every case ran
# and delivered every byte (a missed target included), 1 when one failed,
# 2 on bad usage.
set -euo pipefail

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
    echo "pipe_bench: $*" >&2
    exit 1
}

[[ $# -ge 2 ]] || {
    usage >&2
    exit 2
}
BUILD=$1
WORK=$2
shift 2
RUNS=5
DEVICE=cpu
MIB=1024
KEEP=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --runs | --mib)
        [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || {
            echo "pipe_bench: $1 needs a positive integer" >&2
            exit 2
        }
        if [[ $1 == --runs ]]; then RUNS=$2; else MIB=$2; fi
        shift 2
        ;;
    --device)
        [[ ${2:-} =~ ^(cpu|cuda|auto)$ ]] || {
            echo "pipe_bench: --device is one of cpu, cuda, auto" >&2
            exit 2
        }
        DEVICE=$2
        shift 2
        ;;
    --keep)
        KEEP=1
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "pipe_bench: unknown argument '$1'" >&2
        usage >&2
        exit 2
        ;;
    esac
done

[[ -d $BUILD ]] || die "build directory '$BUILD' does not exist"
mkdir -p "$WORK" || die "cannot create work directory '$WORK'"
WORK=$(cd "$WORK" && pwd)
find_exe() {
    local p
    for p in "$@"; do
        if [[ -f $p && -x $p ]]; then
            echo "$p"
            return 0
        fi
    done
    echo ""
}
GPUFILT=$(find_exe "$BUILD/gpufilt" "$BUILD/src/cli/gpufilt" "$BUILD/bin/gpufilt")
PIPETOOL=$(find_exe "$BUILD/tests/cli/pipetool" "$BUILD/pipetool")
[[ -n $GPUFILT ]] || die "gpufilt not found in '$BUILD'"
[[ -n $PIPETOOL ]] || die "pipetool not found in '$BUILD' (cmake --build '$BUILD' --target pipetool)"

DATA=$WORK
if [[ -d /dev/shm && -w /dev/shm ]]; then
    DATA=$(mktemp -d /dev/shm/gpufilt-pipe-bench.XXXXXX)
fi
cleanup() {
    if [[ $KEEP -eq 0 ]]; then
        rm -f "$DATA/in.f32"
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

# run_one I: one run of case I; its seconds in T. Fails unless every byte
# came through and every command of the pipeline exited 0.
run_one() {
    local t0 t1 out
    t0=$(date +%s%N)
    out=$(bash -o pipefail -c "${CMDS[$1]}" 2>"$WORK/pipe_bench.err") ||
        die "${NAMES[$1]} failed: $(head -n 3 "$WORK/pipe_bench.err")"
    t1=$(date +%s%N)
    [[ $out == "${EXPECT[$1]}" ]] || die "${NAMES[$1]}: $out bytes out, expected ${EXPECT[$1]}"
    T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
}

echo "pipe_bench: warm-up run of each case" >&2
for i in "${!NAMES[@]}"; do run_one "$i"; done
echo "pipe_bench: timing, $RUNS runs per case, interleaved" >&2
declare -A TIMES
for ((r = 0; r < RUNS; r++)); do
    for i in "${!NAMES[@]}"; do
        run_one "$i"
        TIMES[$i]+="$T "
    done
done
MEDS=()
for i in "${!NAMES[@]}"; do
    echo "pipe_bench: ${NAMES[$i]}: ${TIMES[$i]}s" >&2
    MEDS[i]=$(printf '%s\n' ${TIMES[$i]} | sort -g | awk '{ a[NR] = $1 } END {
        if (NR % 2) printf "%.4f", a[(NR + 1) / 2]; else printf "%.4f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
done

echo
echo "pipe_bench: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs, --device $DEVICE"
echo "input: $MIB MiB of f32le stereo noise on $(df --output=fstype "$DATA" 2>/dev/null | tail -n 1 || echo '?'), through pipes into pipetool count"
echo "median of $RUNS runs per case (wall clock, after a warm-up run, cases interleaved)"
echo
printf '%-12s %10s %10s %10s %10s %12s\n' "case" "median s" "min s" "MB/s" "% of cat" "(of mins)"
printf '%s\n' "-----------------------------------------------------------------------"
cat_lo=$(printf '%s\n' ${TIMES[0]} | sort -g | head -n 1)
for i in 0 1 2 3; do
    lo=$(printf '%s\n' ${TIMES[$i]} | sort -g | head -n 1)
    awk -v n="${NAMES[$i]}" -v m="${MEDS[$i]}" -v lo="$lo" -v c="${MEDS[0]}" -v clo="$cat_lo" -v b="$BYTES" 'BEGIN {
        printf "%-12s %10.3f %10.3f %10.0f %9.1f%% %11.1f%%\n", n, m, lo, b / 1e6 / m, 100 * c / m, 100 * clo / lo }'
done
echo "(MB/s and % of cat from the medians; the last column compares the fastest runs)"
echo "start-up (an empty stream through gpufilt): median ${MEDS[4]} s"
echo
echo "target: gpufilt at 5 taps on a pipe >= 90% of cat's throughput"
awk -v m="${MEDS[1]}" -v c="${MEDS[0]}" 'BEGIN {
    r = c / m
    printf "  %s  5 taps: %.1f%% of cat (%.3f s vs %.3f s)\n", (r >= 0.9 ? "PASS" : "FAIL"), 100 * r, m, c }'
awk -v m="${MEDS[1]}" -v c="${MEDS[0]}" -v s="${MEDS[4]}" 'BEGIN {
    r = c / (m - s)
    printf "  info  5 taps with start-up taken out: %.1f%% of cat (%.3f s - %.3f s start-up vs %.3f s)\n", 100 * r, m, s, c }'
