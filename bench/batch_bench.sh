#!/usr/bin/env bash
# batch_bench.sh: an --out-dir batch on one worker against several.
#
#   bench/batch_bench.sh BUILD_DIR WORK_DIR [--runs N] [--files N] [--keep]
#       [--args "GPUFILT ARGS"] [--workers "W1|W2|..."]
#
# Makes N (default 64) deterministic stereo 16-bit WAV files of 5 to 40
# seconds in WORK_DIR with bench_makewav, then times, wall clock, the median
# of --runs runs (default 3, cases interleaved) of
#
#   gpufilt --out-dir OUT IN... ARGS WORKERS
#
# for each WORKERS of --workers (default: "--gpus 0 --jobs 1|--gpus 0,1
# --jobs 1|--gpus 0|--gpus 0,1|--gpus 0,1 --jobs NCPU" where a second GPU
# exists, "--gpus 0 --jobs 1|--gpus 0|--gpus 0 --jobs NCPU" with one, and
# "--device cpu --jobs 1|--device cpu --jobs 2" without a GPU: one worker
# a GPU, then the default's two a GPU for direct filters), with ARGS (default
# "--taps 4095 --method direct"). Prints seconds, each case's speed-up over
# the first, the bytes read per second, and whether every output of each
# case equals the first case's byte for byte (they must: a batch's outputs
# do not depend on its workers); the first case's first output is checked
# once against the exact filter of its input (bench_fircheck, 20000
# seeded frames) where ARGS is "--taps T ..." (the mean filter, same
# mode). The target (issue "Scale out"): two GPUs >= 1.8x one on a 64-file
# batch, where decoding allows; the decode-only ceiling (--taps 1 on the
# CPU with as many --jobs as cores) is printed beside it, and the cases
# with as many workers as CPUs show what the one thread per worker that
# decodes and encodes its files costs. Last, one line: a file's fixed cost
# apart from its samples (64 files of 1000 frames through --taps 1 on one
# CPU worker, in ms a file; 10 ms a file was a polling wait, now gone).
#
# Exit status: 0 when every case ran and wrote the first case's bytes, 1
# otherwise, 2 on bad usage.
set -euo pipefail

PROG=batch_bench
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FILES=64
ARGS="--taps 4095 --method direct"
WORKERS=""
# shellcheck disable=SC2034 # SHIFT and RUNS_DEFAULT are parse_args' to read
script_option() {
    case $1 in
    --files)
        need_posint "$1" "$2"
        FILES=$2
        SHIFT=2
        ;;
    --args)
        ARGS=$2
        SHIFT=2
        ;;
    --workers)
        WORKERS=$2
        SHIFT=2
        ;;
    *) return 1 ;;
    esac
}
RUNS_DEFAULT=3 # fewer than parse_args' 5: a batch is long
parse_args "$@"

G=$(find_gpufilt "$BUILD")
MW=$(find_exe "$BUILD/bench/bench_makewav")
[[ -n $G && -n $MW ]] || die "gpufilt or bench_makewav not found in '$BUILD'"

mkdir -p "$WORK/in"
INPUTS=()
for ((i = 0; i < FILES; i++)); do
    f=$WORK/in/f$i.wav
    INPUTS+=("$f")
    [[ -f $f ]] || "$MW" "$f" --seconds $((5 + (i * 7) % 36)) --seed $((i + 1)) >/dev/null ||
        die "bench_makewav failed"
done
BYTES=$(cat "${INPUTS[@]}" | wc -c)
# Each file's fixed cost (its opening, reader and writer threads, the
# output's rename), apart from its samples: 64 files of 1000 frames.
TINY=()
mkdir -p "$WORK/tiny"
for ((i = 0; i < 64; i++)); do
    f=$WORK/tiny/t$i.wav
    TINY+=("$f")
    [[ -f $f ]] || "$MW" "$f" --seconds 1 --rate 1000 --seed $((i + 1)) >/dev/null ||
        die "bench_makewav failed"
done
TINY_CASE="per file: 64 files of 1000 frames, --taps 1 --device cpu, one worker"

ngpu=$("$G" --list-devices 2>/dev/null | sed '/^host APIs/,$d' | grep -cE '^  [0-9]+: ' || true)
if [[ -z $WORKERS ]]; then
    # one worker per GPU, then as many workers as CPUs dealt over the GPUs
    # (a file's decoding and encoding run on its worker's thread)
    if ((ngpu >= 2)); then
        WORKERS="--gpus 0 --jobs 1|--gpus 0,1 --jobs 1|--gpus 0|--gpus 0,1|--gpus 0,1 --jobs $(nproc)"
    elif ((ngpu == 1)); then
        WORKERS="--gpus 0 --jobs 1|--gpus 0|--gpus 0 --jobs $(nproc)"
    else
        WORKERS="--device cpu --jobs 1|--device cpu --jobs 2"
    fi
fi
IFS='|' read -r -a NAMES <<<"$WORKERS"
NAMES+=("ceiling: --taps 1 --device cpu --jobs $(nproc)" "$TINY_CASE")

# shellcheck disable=SC2034 # T is time_round_robin's to read
run_case() {
    local i=$1 out=$WORK/out$1 t0 t1 args extra in=("${INPUTS[@]}")
    rm -rf "$out"
    if [[ ${NAMES[i]} == ceiling:* ]]; then
        args="--taps 1 --device cpu --jobs $(nproc)"
        extra=""
    elif [[ ${NAMES[i]} == "$TINY_CASE" ]]; then
        args="--taps 1 --device cpu"
        extra=""
        in=("${TINY[@]}")
    else
        args=$ARGS
        extra=${NAMES[i]}
    fi
    t0=$(clock_ns)
    # shellcheck disable=SC2086 # the options split into words
    "$G" $args $extra --quiet --out-dir "$out" "${in[@]}" || die "case '${NAMES[i]}' failed"
    t1=$(clock_ns)
    T=$(seconds_between "$t0" "$t1")
}

echo "$PROG: $(run_stamp); $FILES files, $BYTES bytes; gpufilt ARGS: $ARGS"
time_round_robin "$RUNS" run_case
summarise_times

status=0
FC=$(find_exe "$BUILD/bench/bench_fircheck")
if [[ -n $FC && $ARGS =~ ^--taps\ ([0-9]+) ]]; then
    b=$(basename "${INPUTS[0]}")
    # --slack 1: gpufilt dithers 16-bit output by default (TPDF, +-1 step).
    "$FC" "${INPUTS[0]}" "$WORK/out0/$b" --taps "${BASH_REMATCH[1]}" --frames 20000 --slack 1 ||
        { echo "$PROG: the first case's $b is not the exact filter's" >&2 && status=1; }
fi
printf '%-40s %9s %9s %9s  %s\n' case seconds speed-up "MB/s in" bytes
for i in "${!NAMES[@]}"; do
    [[ ${NAMES[i]} == "$TINY_CASE" ]] && continue
    same="-"
    if [[ ${NAMES[i]} != ceiling:* ]]; then
        same="= first"
        for f in "${INPUTS[@]}"; do
            b=$(basename "$f")
            cmp -s "$WORK/out0/$b" "$WORK/out$i/$b" || same="DIFFER ($b)"
        done
        [[ $same == "= first" ]] || status=1
    fi
    awk -v n="${NAMES[i]}" -v t="${MEDS[i]}" -v t0="${MEDS[0]}" -v b="$BYTES" -v s="$same" \
        'BEGIN { printf "%-40s %9.3f %8.2fx %9.1f  %s\n", n, t, t0 / t, b / t / 1e6, s }'
done
i=$((${#NAMES[@]} - 1))
awk -v n="$TINY_CASE" -v t="${MEDS[i]}" 'BEGIN { printf "%s: %.4f s, %.2f ms a file\n", n, t, t / 64 * 1e3 }'
[[ $KEEP == 1 ]] || rm -rf "$WORK"/out*
exit $status
