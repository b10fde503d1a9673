#!/usr/bin/env bash
# The CUDA backend under compute-sanitizer, on a GPU machine: memcheck
# (with leak checking), racecheck, synccheck and initcheck over a matrix of
# small gpufilt runs that reach every kernel (direct f32/f64, constant and
# global taps, per-channel taps, FFT f32/f64 with short and long filters,
# histograms, full mode, small chunks, two instances sharing by time and
# by channel, a true-stereo matrix summed on spectra, in short chunks and
# by time on two instances, the FFT method's fused transforms), then the
# library's GPU tests under memcheck (and the several-device bulk path's
# under initcheck too). Any report fails the run.
#
#   tests/gpu/sanitize.sh BUILD_DIR [OUT_DIR] [--quick]
#     --quick: the gpufilt matrix only (no library tests)
#   SANITIZE_TOOLS (default "memcheck racecheck synccheck initcheck"): the
#   tools to run; the library tests run under memcheck only when it is named
# Exit: 0 clean, 1 a report or a failed run, 77 no GPU or no compute-sanitizer.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
OUT=${2:-/tmp/gpufilt-sanitize}
quick=${3:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
command -v compute-sanitizer >/dev/null || { echo "sanitize.sh: compute-sanitizer not found" && exit 77; }
G=$BUILD/gpufilt
"$BUILD/tests/cli/sftool" gen "$W/in.wav" wav16 2 48000 24000 noise
"$BUILD/tests/cli/sftool" gen "$W/in7.wav" wav24 7 48000 6000 noise
# (short: racecheck's own host memory grows with every launch, about 0.35
# GB a chunk of the matrix case below; 375 chunks of in.wav took 130 GB and
# were killed for memory, where gpufilt alone keeps 138 MB)
"$BUILD/tests/cli/sftool" gen "$W/in2s.wav" wav16 2 48000 2000 noise
"$BUILD/tests/cli/sftool" gen "$W/in40.wav" wavf 40 48000 6000 noise
"$G" "$W/in.wav" "$W/probe.wav" --taps 5 --device cuda --quiet 2>/dev/null ||
    { echo "sanitize.sh: no usable GPU" && exit 77; }
printf '0.5 0.25\n0.25 0.5\n0.125 -0.25\n' >"$W/pc.txt"
printf '0.5 0.25 0.125 -0.5\n0.25 0.5 -0.25 0.125\n' >"$W/mx.txt" # LL LR RL RR

# Every run: IN then options (OUT is added).
runs=(
    "in.wav --taps 5"
    "in.wav --taps 63 --precision f64"
    "in.wav --taps 4095 --method direct --chunk 5000"
    "in.wav --coeffs pc.txt"
    "in7.wav --taps 31 --chunk 1000 --hist h.csv --hist-block 480"
    "in.wav --taps 3000 --method fft --partition 256 --chunk 3000"
    "in.wav --taps 70000 --method fft --precision f64 --mode full"
    "in7.wav --taps 300 --method fft --partition 16 --hist h.csv --hist-of input"
    "in.wav --taps 3000 --method fft --partition 256 --chunk 4096 --gpus 0,0"
    "in40.wav --taps 3000 --method fft --partition 256 --gpus 0,0"
    "in2s.wav --coeffs mx.txt --method fft --partition 16 --chunk 128"
    "in.wav --coeffs mx.txt --method fft --partition 256 --chunk 4096 --gpus 0,0"
    # the multiply-accumulate's walk (K <= 8, chunks of 64 blocks or more)
    "in2s.wav --taps 100 --method fft --partition 16 --chunk 1024"
    # the fused transforms (builds with cuFFTDx): 3 windows a block at 1024
    # points, 7 channels, a matrix, a large size
    "in.wav --taps 3000 --method fft --partition 512 --chunk 3072"
    "in7.wav --taps 5000 --method fft --partition 2048 --mode full"
    "in2s.wav --coeffs mx.txt --method fft --partition 512 --chunk 1024"
    "in.wav --taps 30000 --method fft --partition 8192"
)
tools=("memcheck --leak-check full" "racecheck" "synccheck" "initcheck")
wanted=" ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck} "
status=0
for tool in "${tools[@]}"; do
    name=${tool%% *}
    [[ $wanted == *" $name "* ]] || continue
    for r in "${runs[@]}"; do
        # shellcheck disable=SC2086
        set -- $r
        in=$1
        shift
        log="$OUT/sanitize-$name.log"
        (cd "$W" && compute-sanitizer --tool $tool --error-exitcode 99 \
            "$G" "$in" out.wav "$@" --device cuda --quiet) >>"$log" 2>&1
        rc=$?
        if [ $rc -ne 0 ]; then
            echo "sanitize.sh: $name: gpufilt $r: exit $rc (see $log)"
            status=1
        fi
    done
    echo "sanitize.sh: $name: ${#runs[@]} gpufilt runs, $(grep -cE "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)" "$OUT/sanitize-$name.log") clean"
done

# library_test TOOL TEST ARGS...: one library test under TOOL.
library_test() {
    local tool=$1 log="$OUT/sanitize-$1-$2.log" start rc
    start=$(date +%s)
    timeout 900 compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$BUILD/tests/core/$2" "${@:3}" >"$log" 2>&1
    rc=$?
    echo "sanitize.sh: $tool: $2 ${*:3}: exit $rc in $(($(date +%s) - start)) s ($(tail -n 1 "$log"))"
    [ $rc -eq 0 ] || status=1
}
if [ "$quick" != --quick ]; then
    # (the bulk path's segments: a device's history kept and lent to the
    # other, two instances on GPU 0; chunks ramped at each end)
    if [[ $wanted == *" memcheck "* ]]; then
        library_test memcheck test_fft "$SRC/tests/golden" cuda
        library_test memcheck test_cuda "$SRC/tests/golden"
        library_test memcheck test_multi_gpu segments
    fi
    [[ $wanted == *" initcheck "* ]] && library_test initcheck test_multi_gpu segments
fi
echo "sanitize.sh: $([ $status -eq 0 ] && echo clean || echo FAILED)"
exit $status
