#!/usr/bin/env bash
# gpufilt's two entry points on a fresh Debian machine:
#
#   ./build.sh demo   install what is missing, build, filter audio/demo.wav
#                     with --verify (output: build/demo-filtered.wav)
#   ./build.sh test   install what is missing, then: clang-format check; a
#                     warnings-as-errors build and the whole test suite; the
#                     suite again under AddressSanitizer + UBSan (with
#                     float-cast-overflow, which GCC's "undefined" leaves out)
#
# CUDA is used when nvcc is found (PATH or /usr/local/cuda); otherwise the
# CPU-only gpufilt is built, and GPU tests report "skipped".
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake pkg-config libsndfile1-dev libpng-dev portaudio19-dev libfftw3-dev
    libjack-jackd2-dev jackd2 sox clang-format)

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
    git ls-files '*.c' '*.h' '*.cu' '*.cuh' | xargs clang-format --dry-run -Werror
    echo "== warnings as errors, full suite"
    configure_build build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFILT_WERROR=ON
    (cd build-test && ctest --output-on-failure -j "$jobs")
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer (+ float-cast-overflow), full suite (CPU-only build:"
    echo "   the CUDA runtime is not instrumented, and CI has no GPU)"
    configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFILT_WERROR=ON -DGPUFILT_CUDA=OFF \
        -DGPUFILT_SANITIZE=address,undefined,float-cast-overflow -DGPUFILT_BUILD_BENCH=OFF
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --output-on-failure -j "$jobs")
    ;;
*)
    echo "usage: ./build.sh demo | test" >&2
    exit 2
    ;;
esac
