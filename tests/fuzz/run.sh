#!/usr/bin/env bash
# Build the fuzz harnesses with clang (libFuzzer, ASan, UBSan) and run each
# on its corpus; exit 1 on any finding: a crash, a sanitizer report, a
# leak, a timeout (10 s for one input) or running out of memory (2 GiB).
#
#   tests/fuzz/run.sh [--seconds N | --runs N] [--procs K] [--build DIR] [NAME...]
#
#   --seconds N  each harness runs N seconds (default 30: the CI setting,
#                3.5 minutes for the seven)
#   --runs N     each harness runs N inputs (e.g. --runs 10000000)
#   --procs K    K processes per harness, each with its share of the runs
#                or all the seconds, different seeds, one corpus (default 1)
#   --build DIR  build and work directory (default: build-fuzz at the
#                repository's root)
#   NAME...      harnesses (default: coeffs options hist_range eq ir raw container)
#
# The committed corpora (tests/fuzz/corpus/NAME) are read, never written:
# new inputs go to DIR/corpus/NAME, findings to DIR/findings/NAME. One line
# per harness: inputs run, seconds, corpus entries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=30 runs="" procs=1 build="$root/build-fuzz" names=()
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) seconds=$2 runs="" && shift 2 ;;
    --runs) runs=$2 && shift 2 ;;
    --procs) procs=$2 && shift 2 ;;
    --build) build=$2 && shift 2 ;;
    -h | --help) sed -n '2,20p' "$0" && exit 0 ;;
    -*) echo "run.sh: unknown option '$1'" >&2 && exit 2 ;;
    *) names+=("$1") && shift ;;
    esac
done
[ ${#names[@]} -gt 0 ] || names=(coeffs options hist_range eq ir raw container)
for v in "$seconds" "$procs" ${runs:+"$runs"}; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: '$v' is not a positive whole number" >&2 && exit 2; }
done
command -v clang >/dev/null || { echo "run.sh: clang is needed (apt-get install clang)" >&2 && exit 2; }

mkdir -p "$build" && cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log" >&2 && exit 2; }
cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1 || { cat "$build/build.log" >&2 && exit 2; }

# -close_fd_mask=3: the harnesses' own messages (gpufilt's warnings) are
# noise; libFuzzer's and the sanitizers' reports still go to the log.
common=(-timeout=10 -rss_limit_mb=2048 -max_len=8192 -close_fd_mask=3 -print_final_stats=1)
failed=0
for name in "${names[@]}"; do
    bin="$build/fuzz_$name"
    [ -x "$bin" ] || { echo "run.sh: no harness '$name'" >&2 && exit 2; }
    corpus="$build/corpus/$name" findings="$build/findings/$name"
    mkdir -p "$corpus" "$findings"
    dict=()
    [ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
    limit=(-max_total_time="$seconds")
    [ -z "$runs" ] || limit=(-runs=$(((runs + procs - 1) / procs)))
    t0=$(date +%s)
    pids=()
    for k in $(seq "$procs"); do
        "$bin" "${common[@]}" "${dict[@]}" "${limit[@]}" -seed="$k" -artifact_prefix="$findings/" \
            "$corpus" "$here/corpus/$name" >"$build/$name.$k.log" 2>&1 &
        pids+=($!)
    done
    bad=0
    for k in $(seq "$procs"); do
        wait "${pids[$((k - 1))]}" || bad=1
    done
    execs=$(cat "$build/$name".*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
        awk '{ s += $1 } END { print s + 0 }')
    entries=$(find "$corpus" "$here/corpus/$name" -type f | wc -l)
    if [ "$bad" = 0 ] && [ -z "$(ls -A "$findings")" ]; then
        echo "fuzz $name: $execs inputs in $(($(date +%s) - t0)) s, $entries corpus entries: no findings"
    else
        failed=1
        echo "fuzz $name: FINDING after $execs inputs (reproduce: $bin $findings/<file>)"
        grep -h -A 30 "ERROR: \|runtime error:\|==ERROR\|deadly signal\|Timeout\|out-of-memory" \
            "$build/$name".*.log | head -n 60
        ls -l "$findings"
        # the inputs themselves, so that a finding in a log can be replayed:
        # base64 -d <<<TEXT >input; build-fuzz/fuzz_NAME input
        for f in "$findings"/*; do
            [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 8192 ] &&
                echo "$(basename "$f") (base64): $(base64 -w0 "$f")"
        done
    fi
done
exit $failed
