#!/usr/bin/env bash
# One call on a GPU machine (H100/H200): build for sm_90 with warnings as
# errors, run the whole CTest suite including the "gpu" label, run the demo
# on the GPU with --verify, and run the benchmarks. Logs go to $OUT (default
# ./out). Libraries the machine lacks may be brought as Debian packages in
# .deps/ (see README): they are unpacked into a private prefix, never into /.
#
#   tests/gpu/device-run.sh [--quick] [--only STEP,...]
#     --quick: smaller benchmark sizes, sanitizers on the smaller cases
#     --only:  run only these of: ctest contention demo faults sanitize bench long
#              multigpu mpiscale gpuarrays clibench pipes cpupeers live, and the opt-in profile,
#              dxsweep, trace and soak
#              (the build always runs; profile, dxsweep, trace and soak run only when named)
#   MULTI_BENCH=0: the multigpu step without its benchmark
#   MULTI_EXTRA=1: the multigpu step also deals the 2^22-tap cases' chunks in
#   turn (GPUFILT_SEGMENTS=0) and measures copy shapes (bench/copy_shapes.py)
#   LONG_ARGS: more of bench_long's options for the long step (e.g. --chunks)
#   DX_SWEEP (default "16384=64 1024=8"): the dxsweep step's
#   GPUFILT_DX_EPT builds, space-separated; DX_SWEEP_TAPS (default
#   4095,65536): the filter lengths it times
#   TRACE_CASES (default "2^22 taps, 8 ch|128 ch"): the trace step's bench_multi
#   cases, |-separated: each GPU's timeline, one run each (bench/timeline.py)
#   SOAK_SECONDS (default 600): the soak's length: live_jack.sh --soak with
#   the cuda backend and 256-frame blocks, a change of filter every 10 s,
#   every frame checked
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
quick=
only=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=--quick ;;
    --only) only=,$2, && shift ;;
    *) echo "device-run.sh: unknown argument '$1'" >&2 && exit 2 ;;
    esac
    shift
done
status=0
step() { echo; echo "=== $*"; }
# gpu_configure DIR [CMAKE_ARGS...]: a Release build of DIR for sm_90 with
# CUDA (the main build, the fault-injection build, dxsweep's).
gpu_configure() {
    local dir=$1
    shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGPUFILT_CUDA=ON \
        -DGPUFILT_CUDA_ARCHITECTURES=90 "$@"
}
want() { [ -z "$only" ] || [[ $only == *,$1,* ]]; }
# shellcheck source=../../.ci/skips.sh
source .ci/skips.sh
# fail_on_skips DIR LOG: here a skipped gpu or live test is a failure (ctest
# counts a skip as passed); other skips (a missing tool) are reported.
fail_on_skips() {
    local bad other
    bad=$(skipped_with "$1" "$2" gpu live)
    other=$(skipped_except "$1" "$2" gpu live)
    [ -z "$other" ] || echo "note: skipped here:" $other
    [ -z "$bad" ] && return 0
    echo "FAILED: gpu or live tests were skipped on the GPU machine:" $bad
    status=1
}

if compgen -G ".deps/*.deb" >/dev/null; then
    prefix=/tmp/gpufilt-deps
    mkdir -p "$prefix"
    for f in .deps/*.deb; do dpkg -x "$f" "$prefix"; done
    export CMAKE_PREFIX_PATH="$prefix/usr"
    # (some packages, e.g. libdbus for jackd, install under /lib)
    export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PATH="$prefix/usr/bin:$PATH"
    # sox loads format plugins from here; ALSA config for PortAudio, if present.
    export LTDL_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu/sox"
    [ -f "$prefix/usr/share/alsa/alsa.conf" ] && export ALSA_CONFIG_PATH="$prefix/usr/share/alsa/alsa.conf"
    # pkg-config (for PortAudio and JACK) sees only the prefix, with paths rebased into it.
    if [ -x "$prefix/usr/bin/pkgconf" ]; then
        export PKG_CONFIG="$prefix/usr/bin/pkgconf"
        export PKG_CONFIG_LIBDIR="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig"
        export PKG_CONFIG_SYSROOT_DIR="$prefix"
    fi
    # jackd's drivers (the dummy one for the live test).
    [ -d "$prefix/usr/lib/x86_64-linux-gnu/jack" ] && export JACK_DRIVER_DIR="$prefix/usr/lib/x86_64-linux-gnu/jack"
    # groff (the man page's check) finds its fonts and macros in the prefix.
    if [ -d "$prefix/usr/share/groff/current" ]; then
        export GROFF_FONT_PATH="$prefix/usr/share/groff/current/font"
        export GROFF_TMAC_PATH="$prefix/etc/groff:$prefix/usr/share/groff/current/tmac"
    fi
fi
# cuFFTDx's headers (the FFT method's fused transforms), as fetch-deps.sh
# packed them.
if [ -f .deps/mathdx.tar.xz ]; then
    mkdir -p /tmp/gpufilt-deps
    [ -f /tmp/gpufilt-deps/mathdx/include/cufftdx.hpp ] || tar -C /tmp/gpufilt-deps -xJf .deps/mathdx.tar.xz
    export MATHDX_ROOT=/tmp/gpufilt-deps/mathdx
fi
# The Python module's test: the python3 that has numpy and scipy.
if [ -z "${GPUFILT_PYTHON:-}" ] && python3 -c "import numpy, scipy, venv" 2>/dev/null; then
    export GPUFILT_PYTHON=$(command -v python3)
fi
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

step "machine"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    nvcc --version | tail -1
    cmake --version | head -1
    nproc
} 2>&1 | tee "$OUT/machine.txt"

step "build (sm_90, -Werror)"
gpu_configure build-gpu -DGPUFILT_WERROR=ON \
    ${GPUFILT_PYTHON:+-DGPUFILT_TEST_PYTHON="$GPUFILT_PYTHON"} >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j "$(nproc)" >>"$OUT/build.log" 2>&1
rc=$?
tail -5 "$OUT/build.log"
if [ $rc -ne 0 ]; then
    grep -E "error|Error" "$OUT/build.log" | head -20
    exit 1
fi

# The install tests (label install) build programs against the installed
# package as a user would, which needs libsndfile and friends installed
# system-wide; with them in a private prefix (.deps) they run in CI instead,
# all but the Python module's, which runs here too (on the GPU).
no_install=()
[ -z "${prefix:-}" ] || no_install=(-LE install)
if want ctest; then
step "ctest (whole suite, gpu label included${prefix:+; the install tests run in CI})"
(cd build-gpu && ctest --output-on-failure -j 4 "${no_install[@]}" 2>&1) | tee "$OUT/ctest.log" |
    grep -vE "^\s*$" | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
[ -z "${prefix:-}" ] || (cd build-gpu && ctest --output-on-failure -R python_module 2>&1) |
    tee -a "$OUT/ctest.log" | tail -4
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fail_on_skips build-gpu "$OUT/ctest.log"
fi

if want contention; then
step "gpu tests under contention: three test_cuda processes at once"
pids=()
for i in 1 2 3; do
    ./build-gpu/tests/core/test_cuda tests/golden >"$OUT/contention-$i.log" 2>&1 &
    pids+=($!)
done
for i in 0 1 2; do
    if wait "${pids[$i]}"; then echo "test_cuda #$((i + 1)): passed"; else
        echo "test_cuda #$((i + 1)): FAILED"; tail -3 "$OUT/contention-$((i + 1)).log"; status=1
    fi
done
fi

if want demo; then
step "demo on the GPU with --verify"
./build-gpu/gpufilt audio/demo.wav "$OUT/demo-filtered.wav" --taps 63 --device cuda --verify 2>&1 | tee "$OUT/demo.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
rm -f "$OUT/demo-filtered.wav"
fi

if want faults; then
step "GPU faults: a build with fault injection; out of memory, a device failing mid-run"
gpu_configure build-faults -DGPUFILT_FAULT_INJECTION=ON -DGPUFILT_BUILD_TESTS=ON \
    >"$OUT/faults-build.log" 2>&1 &&
    cmake --build build-faults -j "$(nproc)" --target gpufilt sftool >>"$OUT/faults-build.log" 2>&1
if [ $? -ne 0 ]; then
    echo "FAILED: the fault-injection build"; tail -5 "$OUT/faults-build.log"; status=1
else
    tests/gpu/faults.sh build-faults 2>&1 | tee "$OUT/faults.log" | tail -12
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
fi

if want sanitize; then
step "compute-sanitizer: memcheck, racecheck, synccheck, initcheck"
tests/gpu/sanitize.sh build-gpu "$OUT" $quick 2>&1 | tee "$OUT/sanitize.log" | tail -12
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "benchmark"
if want bench && [ -x build-gpu/bench/bench_gpu ]; then
    ./build-gpu/bench/bench_gpu $quick 2>&1 | tee "$OUT/bench.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if want long && [ -x build-gpu/bench/bench_long ]; then
    step "long filters: pipeline at 5 .. 2^22 taps, the FFT filter alone, and its peers"
    # shellcheck disable=SC2086 # LONG_ARGS: options, split on purpose
    ./build-gpu/bench/bench_long $quick --taps 4095,65536,1048576,4194304 ${LONG_ARGS:-} \
        --json "$OUT/long.json" 2>&1 | tee "$OUT/long.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    samples=$([ -n "$quick" ] && echo 16777216 || echo 134217728)
    PYTHONUNBUFFERED=1 python3 bench/peers.py --samples "$samples" --bench-json "$OUT/long.json" 2>&1 |
        tee "$OUT/peers.log"
fi
# Opt-in (--only profile): each kernel's share of the FFT filter's device
# time, per filter length, from Nsight Compute (one timing pass per kernel),
# with the caches and clocks as the run leaves them (ncu's defaults flush
# the caches before each kernel and lock the clocks at base: the spectra one
# kernel leaves in L2 for the next would be read from DRAM).
if [[ $only == *,profile,* ]] && command -v ncu >/dev/null; then
    step "profile: the FFT filter's kernels (bench_long --device-only under ncu)"
    for t in ${PROFILE_TAPS:-4095 65536 1048576 4194304}; do
        ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv \
            --log-file "$OUT/ncu-$t.csv" \
            ./build-gpu/bench/bench_long --quick --device-only --taps "$t" >"$OUT/ncu-$t.log" 2>&1
        python3 bench/kernel_summary.py "$OUT/ncu-$t.csv" "taps $t" | tee -a "$OUT/profile.txt"
    done
fi
# Opt-in (--only dxsweep): the fused transforms with other elements per
# thread than the build's defaults (GPUFILT_DX_EPT), a build each, against
# this build in the same call: the filter alone at the lengths whose
# partitions take those sizes (4095 taps: 1024 points; 65536: 16384).
if [[ $only == *,dxsweep,* ]] && [ -x build-gpu/bench/bench_long ]; then
    step "dxsweep: the fused transforms' elements per thread (bench_long --device-only)"
    sweep_taps=${DX_SWEEP_TAPS:-4095,65536}
    echo "-- this build's defaults" | tee "$OUT/dxsweep.log"
    ./build-gpu/bench/bench_long --device-only --taps "$sweep_taps" 2>&1 | tee -a "$OUT/dxsweep.log" |
        tail -7
    read -ra variants <<<"${DX_SWEEP:-16384=64 1024=8}"
    for i in "${!variants[@]}"; do
        echo "-- GPUFILT_DX_EPT=${variants[$i]}" | tee -a "$OUT/dxsweep.log"
        gpu_configure "build-dx-$i" -DGPUFILT_WERROR=ON "-DGPUFILT_DX_EPT=${variants[$i]}" \
            >"$OUT/dxsweep-build-$i.log" 2>&1 &&
            cmake --build "build-dx-$i" -j "$(nproc)" --target bench_long >>"$OUT/dxsweep-build-$i.log" 2>&1
        if [ $? -ne 0 ]; then
            echo "FAILED: the build with GPUFILT_DX_EPT=${variants[$i]}"; tail -5 "$OUT/dxsweep-build-$i.log"
            status=1
            continue
        fi
        "./build-dx-$i/bench/bench_long" --device-only --taps "$sweep_taps" 2>&1 |
            tee -a "$OUT/dxsweep.log" | tail -7
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
fi
# Opt-in (--only trace): what each GPU does, and when, in bench_multi's
# cases, from a CUPTI activity trace (bench/cupti_trace.c): one run on one
# GPU and one on all, after their warm-ups, episode by episode.
if [[ $only == *,trace,* ]] && [ -e build-gpu/bench/libgpufilt_trace.so ]; then
    step "trace: each GPU's timeline in bench_multi"
    IFS='|' read -ra cases <<<"${TRACE_CASES:-2^22 taps, 8 ch|128 ch}"
    for i in "${!cases[@]}"; do
        GPUFILT_TRACE="$OUT/trace-$i.csv" LD_PRELOAD="$PWD/build-gpu/bench/libgpufilt_trace.so" \
            ./build-gpu/bench/bench_multi --reps 1 --case "${cases[$i]}" 2>&1 | tee -a "$OUT/trace.txt"
        python3 bench/timeline.py "$OUT/trace-$i.csv" --gap "${TRACE_GAP:-2}" --kernels --width 120 |
            tee -a "$OUT/trace.txt" | head -${TRACE_LINES:-400}
    done
fi
# Arrays in GPU memory (gf_engine_filter_device, Python on cupy/torch):
# gpufilt against cupyx and torchaudio on the same device-resident data,
# under the CUDA activity trace, whose uploads and downloads in all must
# stay below one signal's bytes (the filters' taps only: a signal through
# host memory would be two signals' worth every run). The results against
# scipy are python/tests/test_gpu_arrays.py, in the python_module test.
if want gpuarrays && [ -e build-gpu/bench/libgpufilt_trace.so ]; then
    step "GPU arrays: gpufilt on device-resident data against cupyx and torchaudio; no sample through the host"
    samples=$([ -n "$quick" ] && echo 16777216 || echo 134217728)
    GPUFILT_TRACE="$OUT/gpuarrays.csv" LD_PRELOAD="$PWD/build-gpu/bench/libgpufilt_trace.so" \
        PYTHONPATH="$PWD/python" GPUFILT_LIBRARY="$PWD/build-gpu/libgpufilt.so" \
        python3 bench/gpu_arrays.py --samples "$samples" 2>&1 | tee "$OUT/gpu_arrays.log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 77 ]; then
        echo "gpu_arrays skipped (no cupy here)"
    elif [ "$rc" -ne 0 ]; then
        status=1
    else
        read -r _ up _ down < <(python3 bench/timeline.py "$OUT/gpuarrays.csv" --bytes)
        echo "host traffic during the run: $up bytes up, $down down; one signal: $((samples * 4))"
        [ $((up + down)) -lt $((samples * 4)) ] || { echo "FAILED: samples went through host memory"; status=1; }
    fi
fi
if want multigpu; then
    step "several GPUs and MPI ranks: the bytes of one GPU; the speed-up against the ceiling of all"
    ngpu=$(nvidia-smi -L | wc -l)
    (cd build-gpu && ctest --output-on-failure -R 'test_multi_gpu|test_filter_host|cli_gpu|mpi_' 2>&1) |
        tee "$OUT/multi.log" | tail -6
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    if [ "${MULTI_BENCH:-1}" = 0 ]; then
        echo "bench_multi not run (MULTI_BENCH=0)"
    elif [ "$ngpu" -ge 2 ]; then
        ./build-gpu/bench/bench_multi $quick 2>&1 | tee "$OUT/bench_multi.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        echo "the FFT cases again with the flush staged (gf_engine_process, flush, pulls):"
        ./build-gpu/bench/bench_multi $quick --staged --case FFT 2>&1 |
            tee "$OUT/bench_multi_staged.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        echo "the 2^22-tap cases again with each segment's history uploaded by its GPU (not lent):"
        GPUFILT_PEER_HISTORY=0 ./build-gpu/bench/bench_multi $quick --case "2^22" 2>&1 |
            tee "$OUT/bench_multi_not_lent.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        if [ "${MULTI_EXTRA:-0}" = 1 ]; then
            echo "the FFT method by time again, chunks dealt in turn instead of a segment per GPU:"
            GPUFILT_SEGMENTS=0 ./build-gpu/bench/bench_multi $quick --case "2^22" 2>&1 |
                tee "$OUT/bench_multi_in_turn.log"
            [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
            python3 bench/copy_shapes.py --reps 3 2>&1 | tee "$OUT/copy_shapes.log"
        fi
        bench/batch_bench.sh build-gpu /tmp/gpufilt-batchbench 2>&1 | tee "$OUT/batch_bench.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    else
        echo "one GPU here: bench_multi needs two (a two-GPU machine)"
    fi
fi
if want mpiscale; then
    step "MPI ranks on this machine's $(nproc) CPUs: strong and weak scaling, the bytes of one rank"
    bench/mpi_scaling.sh build-gpu /tmp/gpufilt-mpiscale 2>&1 | tee "$OUT/mpi_scaling.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || status=1
fi
if want clibench && [ -x bench/cli_bench.sh ]; then
    bench/cli_bench.sh build-gpu /tmp/gpufilt-clibench 2>&1 | tee "$OUT/cli_bench.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want pipes && [ -x bench/pipe_bench.sh ]; then
    step "pipes: throughput against cat, cpu and cuda backends"
    for d in cpu cuda; do
        bench/pipe_bench.sh build-gpu /tmp/gpufilt-pipebench --device $d 2>&1 | tee "$OUT/pipe_bench-$d.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
fi

if want cpupeers && [ -x bench/cpu_peers.sh ]; then
    step "the CPU backend against FFmpeg's afir and SoX's fir on this machine's $(nproc) CPUs"
    # FFmpeg from tests/gpu/fetch-ffmpeg.sh (this machine has none), SoX from .deps.
    [ -x .deps/ffmpeg/ffmpeg ] && export PATH="$PWD/.deps/ffmpeg:$PATH"
    bench/cpu_peers.sh build-gpu /tmp/gpufilt-cpupeers --no-wisdom 2>&1 | tee "$OUT/cpu_peers.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want live; then
    step "live audio on JACK's dummy driver with the cuda backend; worker timing"
    # (and a minute of changes every 2 s between two 2^20-tap filters)
    (cd build-gpu && GPUFILT_LIVE_DEVICE=cuda GPUFILT_LIVE_ZERO_TAPS=4095 \
        GPUFILT_LIVE_SWITCH_TAPS=${LIVE_SWITCH_TAPS:-1048576} ctest -L live --output-on-failure 2>&1) |
        tee "$OUT/live.log" | tail -15
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    fail_on_skips build-gpu "$OUT/live.log"
    if [ -x build-gpu/bench/live_bench ]; then
        ./build-gpu/bench/live_bench 2>&1 | tee "$OUT/live_bench.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    fi
fi

if [[ $only == *,soak,* ]]; then
    step "live soak: ${SOAK_SECONDS:-600} s, cuda backend, 256-frame blocks, a change of filter every 10 s, every frame checked"
    GPUFILT_LIVE_DEVICE=cuda GPUFILT_LIVE_FRAMES=256 GPUFILT_LIVE_SOAK_SWITCH=10 \
        tests/live/live_jack.sh build-gpu/gpufilt \
        build-gpu/tests/live/jack_feed build-gpu/tests/live/live_check /tmp/gpufilt-soak \
        --soak "${SOAK_SECONDS:-600}" 2>&1 | tee "$OUT/soak.log" | tail -8
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "result: $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
