#!/usr/bin/env bash
# mpi_scaling.sh: gpufilt-mpi's strong and weak scaling over ranks, on the
# CPU backend (one thread a rank).
#
#   bench/mpi_scaling.sh BUILD_DIR WORK_DIR [--runs N] [--keep]
#       [--ranks "1 2 4 ..."] [--seconds S] [--rank-seconds W]
#       [--args "GPUFILT ARGS"]
#
# Strong: one stereo 16-bit WAV of S seconds (default 600) through
#
#   mpirun -np N gpufilt-mpi IN OUT ARGS --device cpu --threads 1
#
# for each N of --ranks (default 1, 2, 4, ... up to the CPUs); weak: a file
# of N x W seconds (default W = 60) on N ranks. ARGS default to
# "--taps 1023 --method direct". Times, wall clock with mpirun's start-up,
# are the median of --runs (default 3, the rank counts in turn). Prints
# each case's seconds, speed-up and efficiency against one rank, and
# whether its output equals the one-rank run's byte for byte (it must:
# gpufilt-mpi writes the bytes of one gpufilt run whatever the ranks).
# Beside them, in the same rounds, `mpirun -np N gpufilt-mpi --version`:
# the job's start-up and teardown alone (MPI_Init, the ranks' launch,
# MPI_Finalize), and the strong case's speed-up without it.
# MPIRUN_ARGS in the environment: more mpirun options for every case
# (e.g. "--mca pml ob1", Open MPI's own point-to-point layer instead of
# UCX's, whose start-up probes the network devices).
#
# Exit status: 0 when every case ran and wrote the one-rank bytes, 1
# otherwise, 2 on bad usage; 77 without mpirun or gpufilt-mpi.
set -euo pipefail

PROG=mpi_scaling
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

RANKS=""
SECONDS_STRONG=600
RANK_SECONDS=60
ARGS="--taps 1023 --method direct"
# shellcheck disable=SC2034 # SHIFT is parse_args' to read
script_option() {
    case $1 in
    --ranks)
        RANKS=$2
        SHIFT=2
        ;;
    --seconds)
        need_posint "$1" "$2"
        SECONDS_STRONG=$2
        SHIFT=2
        ;;
    --rank-seconds)
        need_posint "$1" "$2"
        RANK_SECONDS=$2
        SHIFT=2
        ;;
    --args)
        ARGS=$2
        SHIFT=2
        ;;
    *) return 1 ;;
    esac
}
parse_args "$@"
[[ " $* " == *" --runs "* ]] || RUNS=3

M=$(find_exe "$BUILD/gpufilt-mpi")
MW=$(find_exe "$BUILD/bench/bench_makewav")
[[ -n $MW ]] || die "bench_makewav not found in '$BUILD'"
if [[ -z $M ]] || ! command -v mpirun >/dev/null; then
    echo "$PROG: gpufilt-mpi or mpirun not found: skipped"
    exit 77
fi
CPUS=$(nproc)
if [[ -z $RANKS ]]; then
    for ((n = 1; n <= CPUS; n *= 2)); do RANKS+="$n "; done
fi
for n in $RANKS; do need_posint --ranks "$n"; done
read -r -a RANK_LIST <<<"$RANKS"

make_input() { # SECONDS FILE
    [[ -f $2 ]] || "$MW" "$2" --seconds "$1" --seed 7 >/dev/null || die "bench_makewav failed"
}
make_input "$SECONDS_STRONG" "$WORK/strong.wav"
for n in "${RANK_LIST[@]}"; do make_input $((n * RANK_SECONDS)) "$WORK/weak$n.wav"; done

NAMES=()
for n in "${RANK_LIST[@]}"; do NAMES+=("strong $n" "weak $n" "launch $n"); done

# shellcheck disable=SC2034 # T is time_round_robin's to read
run_case() {
    local kind n t0 t1 over=""
    read -r kind n <<<"${NAMES[$1]}"
    ((n > CPUS)) && over=--oversubscribe
    local in=$WORK/strong.wav
    [[ $kind == weak ]] && in=$WORK/weak$n.wav
    t0=$(clock_ns)
    if [[ $kind == launch ]]; then
        # shellcheck disable=SC2086 # the options split into words
        mpirun --allow-run-as-root $over ${MPIRUN_ARGS:-} -np "$n" "$M" --version >/dev/null ||
            die "case '${NAMES[$1]}' failed"
    else
        # shellcheck disable=SC2086 # the options split into words
        mpirun --allow-run-as-root $over ${MPIRUN_ARGS:-} -np "$n" "$M" "$in" \
            "$WORK/out-$kind$n.wav" $ARGS --device cpu --threads 1 --quiet ||
            die "case '${NAMES[$1]}' failed"
    fi
    t1=$(clock_ns)
    T=$(seconds_between "$t0" "$t1")
}

echo "$PROG: $(run_stamp); gpufilt-mpi ARGS: $ARGS --device cpu --threads 1; mpirun" \
    "${MPIRUN_ARGS:-(no MPIRUN_ARGS)}; medians of $RUNS"
time_round_robin "$RUNS" run_case
summarise_times

# One rank's bytes of each input: the one-rank case's output, else a run
# of the same program (the weak inputs of several ranks); every case must
# equal them.
status=0
ref_of() { # KIND N: the one-rank output of that case's input
    local in=$WORK/strong.wav ref=$WORK/ref-strong.wav
    [[ $1 == weak ]] && in=$WORK/weak$2.wav ref=$WORK/ref-weak$2.wav
    if [[ $1 == strong || $2 == 1 ]] && [[ -f $WORK/out-${1}1.wav ]]; then
        ref=$WORK/out-${1}1.wav # the one-rank case of the same input
    fi
    if [[ ! -f $ref ]]; then
        # shellcheck disable=SC2086
        mpirun --allow-run-as-root -np 1 "$M" "$in" "$ref" $ARGS --device cpu --threads 1 \
            --quiet || die "the one-rank reference of '$1 $2' failed"
    fi
    echo "$ref"
}
launch_of() { # N: the median of `launch N`
    local i
    for i in "${!NAMES[@]}"; do
        if [[ ${NAMES[$i]} == "launch $1" ]]; then echo "${MEDS[$i]}"; fi
    done
}
for kind in strong weak; do
    if [[ $kind == strong ]]; then
        echo "strong: one file of $SECONDS_STRONG s (stereo, 16-bit, 48 kHz); launch: mpirun -np N" \
            "gpufilt-mpi --version alone"
        printf '%6s %9s %9s %11s %9s %15s  %s\n' ranks seconds speed-up efficiency launch \
            "without launch" bytes
    else
        echo "weak: $RANK_SECONDS s of the same a rank"
        printf '%6s %9s %9s %11s  %s\n' ranks seconds speed-up efficiency bytes
    fi
    t1="" l1=""
    for i in "${!NAMES[@]}"; do
        read -r k n <<<"${NAMES[$i]}"
        [[ $k == "$kind" ]] || continue
        [[ -n $t1 ]] || t1=${MEDS[$i]} l1=$(launch_of "$n")
        same="= one rank"
        cmp -s "$(ref_of "$k" "$n")" "$WORK/out-$k$n.wav" || {
            same="DIFFER"
            status=1
        }
        # strong: t1 / tN and that over N, and (t1 - l1) / (tN - lN); weak:
        # t1 / tN is the efficiency
        awk -v k="$kind" -v n="$n" -v t="${MEDS[$i]}" -v t1="$t1" -v s="$same" \
            -v l="$(launch_of "$n")" -v l1="$l1" 'BEGIN {
            sp = k == "strong" ? t1 / t : n * t1 / t
            if (k == "strong")
                printf "%6d %9.3f %8.2fx %10.0f%% %9.3f %14.2fx  %s\n", n, t, sp, 100 * sp / n, l,
                    (t1 - l1) / (t - l), s
            else
                printf "%6d %9.3f %8.2fx %10.0f%%  %s\n", n, t, sp, 100 * sp / n, s }'
    done
done
[[ $KEEP == 1 ]] || rm -f "$WORK"/out-*.wav "$WORK"/ref-*.wav
exit $status
