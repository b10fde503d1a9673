# Which CTest tests were skipped, for build.sh and tests/gpu/device-run.sh
# (sourced, not run). A skipped test is not a passed one: callers decide
# which skips fail their run.
# shellcheck shell=bash

# ctest_skipped LOG: the names of the tests that ctest's output LOG lists
# under "The following tests did not run:", one per line.
ctest_skipped() {
    sed -n '/^The following tests did not run:/,/^$/p' "$1" |
        sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (\(Skipped\|Not Run\|Disabled\))$/\1/p'
}

# ctest_labelled DIR LABEL: the names of the tests of build directory DIR
# that carry LABEL, one per line.
ctest_labelled() {
    (cd "$1" && ctest -N -L "^$2\$") | sed -n 's/^[[:space:]]*Test[[:space:]]*#[0-9]*: //p'
}

# skipped_except DIR LOG LABEL...: the skipped tests of LOG that carry none
# of the LABELs.
skipped_except() {
    local dir=$1 log=$2 allowed="" l
    shift 2
    for l in "$@"; do allowed+=$(ctest_labelled "$dir" "$l")$'\n'; done
    comm -23 <(ctest_skipped "$log" | sort -u) <(printf '%s' "$allowed" | sed '/^$/d' | sort -u)
}

# skipped_with DIR LOG LABEL...: the skipped tests of LOG that carry one of
# the LABELs.
skipped_with() {
    local dir=$1 log=$2 wanted="" l
    shift 2
    for l in "$@"; do wanted+=$(ctest_labelled "$dir" "$l")$'\n'; done
    comm -12 <(ctest_skipped "$log" | sort -u) <(printf '%s' "$wanted" | sed '/^$/d' | sort -u)
}
