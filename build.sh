#!/usr/bin/env bash
# gpufilt's two entry points on a fresh Debian machine:
#
#   ./build.sh demo   install what is missing, build, filter audio/demo.wav
#                     with --verify (output: build/demo-filtered.wav)
#   ./build.sh test   install what is missing, then: clang-format check; a
#                     warnings-as-errors build and the whole test suite; the
#                     golden checks again under numpy's other two SIMD
#                     dispatch levels (no AVX-512; no AVX-512, AVX2, FMA); the
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
# generators (tests/golden/) and the Python package's test, which builds its
# wheel (pip fetches the build backend, scikit-build-core, from PyPI) and
# installs it into a virtual environment (python3-venv, python3-pip);
# jackd2: the live test's JACK server; clang: the fuzz harnesses (libFuzzer);
# groff-base: the man page's check; libopenmpi-dev and openmpi-bin:
# gpufilt-mpi and its test (tests/mpi, mpirun).
packages=(build-essential cmake pkg-config libsndfile1-dev libpng-dev portaudio19-dev libfftw3-dev
    libsoxr-dev
    libjack-jackd2-dev jackd2 sox clang-format clang python3 python3-numpy python3-scipy
    python3-venv python3-pip groff-base libopenmpi-dev openmpi-bin)

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

# cuFFTDx's headers (NVIDIA MathDx, header-only: the CUDA FFT method's
# fused transforms) from PyPI's nvidia-mathdx, once, into build-deps/mathdx;
# where they cannot be fetched the build takes cuFFT's transforms instead.
MATHDX_VERSION=25.6.0
fetch_mathdx() {
    local dir=build-deps/mathdx
    if [ ! -f "$dir/include/cufftdx.hpp" ]; then
        echo "build.sh: fetching cuFFTDx's headers (nvidia-mathdx $MATHDX_VERSION)"
        rm -rf build-deps/whl "$dir"
        if ! python3 -m pip download -q --no-deps -d build-deps/whl "nvidia-mathdx==$MATHDX_VERSION"; then
            echo "build.sh: note: nvidia-mathdx could not be fetched: the FFT method uses cuFFT's transforms" >&2
            return 0
        fi
        python3 - build-deps/whl/nvidia_mathdx-$MATHDX_VERSION-py3-none-any.whl "$dir" <<'PY'
import sys, zipfile
want = ("nvidia/mathdx/include/cufftdx", "nvidia/mathdx/include/commondx",
        "nvidia/mathdx/external/cutlass/include")
with zipfile.ZipFile(sys.argv[1]) as z:
    for m in z.namelist():
        if m.startswith(want):
            z.extract(m, sys.argv[2] + ".x")
PY
        mv "$dir.x/nvidia/mathdx" "$dir" && rm -rf "$dir.x" build-deps/whl
    fi
    export MATHDX_ROOT=$PWD/$dir
}

jobs=$(nproc)

configure_build() { # DIR [cmake args...]
    local dir=$1
    shift
    cmake -S . -B "$dir" "$@"
    cmake --build "$dir" -j "$jobs"
}

# run_suite DIR LOG [VAR=VALUE...] [-- CTEST_ARGS...]: the suite (or the
# tests CTEST_ARGS select) in build directory DIR, with VAR=VALUE in the
# environment (its output also in DIR/LOG); with CI=true, fail on a skipped
# test that is not labelled gpu.
run_suite() {
    local dir=$1 log=$1/$2 envs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    (cd "$dir" && env "${envs[@]}" ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$log"
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
    ! command -v nvcc >/dev/null || fetch_mathdx
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
        fetch_mathdx
    else
        echo "build.sh: no nvcc: the CUDA backend is not built (its kernels still run on the host)"
    fi
    echo "== warnings as errors (CUDA $cuda), full suite"
    configure_build build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFILT_WERROR=ON \
        -DGPUFILT_CUDA=$cuda
    run_suite build-test ctest.log
    # numpy picks its SIMD code (sin, cos, exp, log, ...) by the CPU: the
    # golden checks (label golden, Python only) must pass whichever it picks,
    # so they run again with AVX-512 off and with AVX-512, AVX2 and FMA off
    # (tests/golden/with_numpy.sh, npy_dispatch.py).
    for level in no-avx512 no-avx2; do
        echo "== golden checks with numpy's SIMD dispatch at $level"
        run_suite build-test "ctest-golden-$level.log" GPUFILT_NUMPY_DISPATCH=$level -- -L '^golden$'
    done
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer (+ float-cast-overflow), full suite"
    echo "   (CPU-only build: the CUDA runtime is not instrumented, and CI has no GPU)"
    configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFILT_WERROR=ON -DGPUFILT_CUDA=OFF \
        -DGPUFILT_SANITIZE=address,undefined,float-cast-overflow -DGPUFILT_BUILD_BENCH=OFF
    run_suite build-asan ctest.log ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1
    echo "== fuzzing: each libFuzzer harness 20 s from its corpus (tests/fuzz/run.sh)"
    tests/fuzz/run.sh --seconds 20 --build build-fuzz
    ;;
*)
    echo "usage: ./build.sh demo | test" >&2
    exit 2
    ;;
esac
