#!/usr/bin/env bash
# gpufilt's two entry points on a fresh Debian machine:
#
#   ./build.sh demo   install what is missing, build, filter audio/demo.wav
#                     with --verify (output: build/demo-filtered.wav)
#   ./build.sh test   install what is missing, then: clang-format check; a
#                     warnings-as-errors build and the whole test suite; the
#                     suite again under AddressSanitizer + UBSan (with
#                     float-cast-overflow, which GCC's "undefined" leaves out);
#                     each fuzz harness for 20 s (clang, libFuzzer)
#
# CUDA is used when nvcc is found (PATH or /usr/local/cuda), and then the
# test build requires it (GPUFILT_CUDA=ON: a broken toolkit fails the build
# instead of falling back to the CPU-only gpufilt); without nvcc the CPU-only
# gpufilt is built. Tests labelled gpu report "skipped" without a GPU.
#
# With CI=true (as CI runs it), a skipped test fails the run unless it is
# labelled gpu: every other test has what it needs here (the packages
# below), so a skip means something is missing.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=.ci/skips.sh
source .ci/skips.sh

# python3: hist_out_parse; python3-numpy and python3-scipy: the golden
# generators (tests/golden/) and the Python module's tests, which install it
# into a virtual environment (python3-venv, python3-pip, python3-setuptools);
# jackd2: the live test's JACK server; clang: the fuzz harnesses (libFuzzer);
# groff-base: the man page's check.
packages=(build-essential cmake pkg-config libsndfile1-dev libpng-dev portaudio19-dev libfftw3-dev
    libjack-jackd2-dev jackd2 sox clang-format clang python3 python3-numpy python3-scipy
    python3-venv python3-pip python3-setuptools groff-base)

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    echo "build.sh: installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

find_nvcc() {
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export PATH="/usr/local/cuda/bin:$PATH"
    fi
}

jobs=$(nproc)

configure_build() { # DIR [cmake args...]
    local dir=$1
    shift
    cmake -S . -B "$dir" "$@"
    cmake --build "$dir" -j "$jobs"
}

# run_suite DIR [env...]: the whole suite in build directory DIR (its
# output also in DIR/ctest.log); with CI=true, fail on a skipped test that
# is not labelled gpu.
run_suite() {
    local dir=$1 log=$1/ctest.log
    shift
    (cd "$dir" && env "$@" ctest --output-on-failure -j "$jobs") 2>&1 | tee "$log"
    local skipped
    skipped=$(skipped_except "$dir" "$log" gpu)
    [ -z "$skipped" ] && return 0
    if [ "${CI:-}" = true ]; then
        echo "build.sh: CI=true and these tests were skipped (only gpu tests may be):" $skipped >&2
        return 1
    fi
    echo "build.sh: note: skipped here (a failure under CI=true):" $skipped >&2
}

case "${1:-}" in
demo)
    install_missing
    find_nvcc
    configure_build build -DCMAKE_BUILD_TYPE=Release
    ./build/gpufilt audio/demo.wav build/demo-filtered.wav --taps 63 --verify
    ;;
test)
    install_missing
    find_nvcc
    echo "== format check"
    git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' | xargs clang-format --dry-run -Werror
    cuda=OFF
    if command -v nvcc >/dev/null; then
        cuda=ON
    else
        echo "build.sh: no nvcc: the CUDA backend is not built (its kernels still run on the host)"
    fi
    echo "== warnings as errors (CUDA $cuda), full suite"
    configure_build build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFILT_WERROR=ON \
        -DGPUFILT_CUDA=$cuda
    run_suite build-test
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer (+ float-cast-overflow), full suite"
    echo "   (CPU-only build: the CUDA runtime is not instrumented, and CI has no GPU)"
    configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFILT_WERROR=ON -DGPUFILT_CUDA=OFF \
        -DGPUFILT_SANITIZE=address,undefined,float-cast-overflow -DGPUFILT_BUILD_BENCH=OFF
    run_suite build-asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1
    echo "== fuzzing: each libFuzzer harness 20 s from its corpus (tests/fuzz/run.sh)"
    tests/fuzz/run.sh --seconds 20 --build build-fuzz
    ;;
*)
    echo "usage: ./build.sh demo | test" >&2
    exit 2
    ;;
esac
