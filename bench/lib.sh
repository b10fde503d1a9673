# Shared by bench/cli_bench.sh and bench/pipe_bench.sh (sourced, not run):
# usage from the script's header comment, messages and exit statuses,
# argument checks, finding the build's programs, and timing the cases
# round-robin with their medians. The script sets PROG, its name in
# messages, before sourcing this file.
# shellcheck shell=bash

# The script's header comment (the lines after #!), without the "# ".
usage() {
    awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

# A failure: a message, exit 1.
die() {
    echo "$PROG: $*" >&2
    exit 1
}

# Bad usage: a message, exit 2.
usage_error() {
    echo "$PROG: $*" >&2
    exit 2
}

# need_posint OPTION VALUE: VALUE is a positive integer, else exit 2.
need_posint() {
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "$1 needs a positive integer"
}

# unknown_arg ARG: a message and the usage, exit 2.
unknown_arg() {
    echo "$PROG: unknown argument '$1'" >&2
    usage >&2
    exit 2
}

# parse_args "$@": BUILD_DIR WORK_DIR, then --runs N (RUNS, default the
# script's RUNS_DEFAULT or 5), --keep (KEEP=1), -h/--help and the script's
# own options, which `script_option OPTION VALUE` takes (setting SHIFT to
# the words it used) or refuses with status 1. Then BUILD must exist, and
# WORK is created and made absolute.
# shellcheck disable=SC2034 # RUNS and KEEP are the scripts' to read
parse_args() {
    [[ $# -ge 2 ]] || {
        usage >&2
        exit 2
    }
    BUILD=$1
    WORK=$2
    shift 2
    RUNS=${RUNS_DEFAULT:-5}
    KEEP=0
    while [[ $# -gt 0 ]]; do
        case $1 in
        --runs)
            need_posint "$1" "${2:-}"
            RUNS=$2
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
            script_option "$1" "${2:-}" || unknown_arg "$1"
            shift "$SHIFT"
            ;;
        esac
    done
    [[ -d $BUILD ]] || die "build directory '$BUILD' does not exist"
    mkdir -p "$WORK" || die "cannot create work directory '$WORK'"
    WORK=$(cd "$WORK" && pwd)
}

# The first of the candidate paths that is an executable file, or "".
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

# gpufilt in build directory $1, or "".
find_gpufilt() {
    find_exe "$1/gpufilt" "$1/src/cli/gpufilt" "$1/bin/gpufilt"
}

# tmpfs_dir NAME: makes and prints a new directory /dev/shm/NAME.XXXXXX;
# prints nothing where /dev/shm is missing or not writable.
tmpfs_dir() {
    if [[ -d /dev/shm && -w /dev/shm ]]; then
        mktemp -d "/dev/shm/$1.XXXXXX"
    fi
}

# "DATE on HOST, N CPUs", for the report's first line.
run_stamp() {
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs"
}

# clock_ns: the clock in nanoseconds. seconds_between T0 T1: T1 - T0 in
# seconds, 4 decimals.
clock_ns() { date +%s%N; }
seconds_between() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (b - a) / 1e9 }'
}

# time_round_robin RUNS FN: RUNS rounds, each calling `FN I R` for every
# case I of NAMES in turn (R: the round, from 1). FN sets T to its seconds;
# they are appended to TIMES[I]. Going round the cases puts a slow spell of
# a shared machine on all of them alike rather than on whichever case ran
# during it.
TIMES=()
time_round_robin() {
    local runs=$1 fn=$2 r i
    for ((r = 1; r <= runs; r++)); do
        for i in "${!NAMES[@]}"; do
            "$fn" "$i" "$r"
            TIMES[i]+="$T "
        done
    done
}

# summarise_times: each case's times to stderr; MEDS, MINS and MAXS, per
# case of NAMES, from TIMES (the median with 4 decimals).
# shellcheck disable=SC2034 # MEDS, MINS and MAXS are the scripts' to read
MEDS=()
MINS=()
MAXS=()
# shellcheck disable=SC2034,SC2086 # as above; a case's times split into words
summarise_times() {
    local i sorted
    for i in "${!NAMES[@]}"; do
        echo "$PROG: ${NAMES[$i]}: ${TIMES[$i]}s" >&2
        sorted=$(printf '%s\n' ${TIMES[$i]} | sort -g)
        MEDS[i]=$(echo "$sorted" | awk '{ a[NR] = $1 } END {
            if (NR % 2) printf "%.4f", a[(NR + 1) / 2]; else printf "%.4f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
        MINS[i]=$(echo "$sorted" | head -n 1)
        MAXS[i]=$(echo "$sorted" | tail -n 1)
    done
}

# checked_stat STAT NAME: the STAT (MEDS, MINS or MAXS) of the case NAME of
# NAMES; "" where it did not run or its output was wrong (OUTPUT_OK[i] is
# not "ok"): no result.
checked_stat() {
    local -n stat=$1
    local i
    for i in "${!NAMES[@]}"; do
        if [[ ${NAMES[$i]} == "$2" ]]; then
            [[ ${OUTPUT_OK[$i]} == ok ]] && echo "${stat[$i]}"
            return 0
        fi
    done
    echo ""
}
