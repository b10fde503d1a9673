#!/usr/bin/env bash
# GPU faults, on a GPU machine, with a build configured with
# -DGPUFILT_FAULT_INJECTION=ON (GPUFILT_FAULT=TEXT:N[:oom|fail] fails the
# N-th checked CUDA or cuFFT call whose text contains TEXT; a kernel
# launch's text is "KERNEL launch"; src/core/backends/cuda/cuda_check.h):
#   - out of GPU memory at create: one line, exit 5, nothing left behind;
#     with --device auto the CPU takes over with a notice, same bytes;
#   - the FFT method's set-up: out of GPU memory at each of its
#     allocations in turn, a failing or out-of-memory cuFFT plan, a failing
#     spectrum transform, kernel or memset: one line, exit 5, nothing left
#     behind; with --device auto the CPU takes over with a one-line
#     notice, same bytes as --device cpu;
#   - the device failing mid-run (an upload, an event wait; direct and FFT
#     methods, with histograms; each kernel and cuFFT transform of the FFT
#     method, f32 and f64): one line, exit 5, nothing left behind, also
#     with --device auto (only a set-up failure falls back to the CPU);
#   - the NUPC method: out of GPU memory at each allocation (a level's
#     named), its streams and events at set-up, and mid-run the copy into
#     its input ring, a level's event and the waits on it, the sum, a
#     level's kernel: one line, exit 5, nothing left behind; with --device
#     auto a set-up failure hands the job to the CPU, same bytes;
#   - the FFT method's fused transforms (builds with cuFFTDx): out of GPU
#     memory at each allocation, their shared memory refused at set-up,
#     each kernel failing mid-run (the sections before take cuFFT's
#     transforms: GPUFILT_FFT_KERNELS=cufft);
#   - a real out-of-memory: an FFT filter larger than the GPU (where the GPU
#     has less than 100 GiB): the need and the free memory in the message.
#
#   tests/gpu/faults.sh BUILD_DIR [WORK_DIR]
# Exit: 0 all passed, 1 a failure, 77 no usable GPU.
BUILD=$(cd "$1" && pwd)
source "$(dirname "$0")/../cli/lib.sh" "$BUILD/gpufilt" "$BUILD/tests/cli/sftool" \
    "${2:-/tmp/gpufilt-faults}"
E='gpufilt: error: '

grep -q "GPUFILT_FAULT_INJECTION:BOOL=ON" "$BUILD/CMakeCache.txt" ||
    { echo "faults.sh: $BUILD was not configured with -DGPUFILT_FAULT_INJECTION=ON" >&2 && exit 1; }
"$SFTOOL" gen in.wav wav16 2 48000 480000 noise
"$GPUFILT" in.wav probe.wav --taps 5 --device cuda --quiet 2>/dev/null || { echo "faults.sh: no usable GPU" && exit 77; }
rm -f probe.wav

# one_line WHAT: gpufilt's standard error was exactly one line.
one_line() {
    local n
    n=$(wc -l <stderr.txt)
    [ "$n" -eq 1 ] && pass || fail "$1: $n lines on standard error, expected one: $(cat stderr.txt)"
}

# fault SPEC CODE 'STDERR' args...: gpufilt with GPUFILT_FAULT=SPEC; a
# failure (CODE not 0) says so in exactly one line.
fault() {
    local spec=$1
    GPUFILT_FAULT=$spec expect "${@:2}"
    [ "$2" -eq 0 ] || one_line "GPUFILT_FAULT=$spec"
}

# sweep_allocations LABEL MAX SUFFIX REF ARGS...: gpufilt in.wav out.wav
# ARGS with its N-th cudaMalloc out of GPU memory, N = 1, 2, ... (at most
# MAX): one line (what the allocation was for, its size and the free
# memory, then SUFFIX, a regex), exit 5, nothing left behind, until N
# passes the last allocation; that run's output is REF's bytes (a run
# without faults). LABEL opens the failures' messages; `whats` receives
# what each failed allocation was for, with SUFFIX's text, ';'-separated.
sweep_allocations() {
    local label=$1 max=$2 suffix=$3 ref=$4 n=0 rc=0
    shift 4
    whats=
    while [ $n -lt "$max" ]; do
        n=$((n + 1))
        rc=0
        GPUFILT_FAULT=cudaMalloc:$n "$GPUFILT" in.wav out.wav "$@" >stdout.txt 2>stderr.txt || rc=$?
        [ $rc -ne 0 ] || break
        if [ $rc -eq 5 ] && grep -q "^${E}cannot set up the cuda filter: out of GPU memory: [0-9.]* MiB for .*, [0-9.]* MiB free of [0-9.]*$suffix\$" stderr.txt; then
            pass
        else
            fail "${label}GPUFILT_FAULT=cudaMalloc:$n: exit $rc: $(cat stderr.txt)"
        fi
        one_line "${label}GPUFILT_FAULT=cudaMalloc:$n"
        expect_no_output out.wav
        whats+="$(sed -n 's/.* MiB for \([^,]*\), .*free of [0-9.]*\(.*\)/\1\2/p' stderr.txt);"
    done
    [ $rc -eq 0 ] && pass || fail "${label}cudaMalloc:$n still fails"
    "$SFTOOL" cmp "$ref" out.wav && pass || fail "${label}the run past the last allocation differs from one without faults"
    rm -f out.wav
}

# expect_allocs LABEL WHAT...: an allocation for each WHAT failed in the
# last sweep_allocations.
expect_allocs() {
    local label=$1 what
    shift
    for what in "$@"; do
        [[ ";$whats" == *";$what;"* ]] && pass || fail "${label}no allocation for $what failed (failed: $whats)"
    done
}

DEV='CUDA-capable device(s) is/are busy or unavailable (cudaErrorDevicesUnavailable)'
CUFFT='driver or internal cuFFT library error (CUFFT_INTERNAL_ERROR)'
CUFFT_OOM='cuFFT failed to allocate GPU or CPU memory (CUFFT_ALLOC_FAILED)'

# Out of GPU memory at create.
fault cudaMalloc:1 5 "${E}cannot set up the cuda filter: out of GPU memory: *" \
    in.wav out.wav --taps 63 --device cuda
grep -q "MiB for a chunk's input, .* MiB free of " stderr.txt || fail "no sizes in: $(cat stderr.txt)"
expect_no_output out.wav
# --device auto, a job big enough for the GPU (a minute of stereo, 8192
# taps: about 47e9 multiply-adds). Direct method: the CPU starts at once and
# the hand-off fails, so the CPU filters it all, same bytes, and the summary
# says why. FFT method (one backend up front): the CPU takes over with a
# warning, same bytes as --device cpu.
"$SFTOOL" gen long.wav wav16 2 48000 2880000 noise
"$GPUFILT" long.wav cpu.wav --taps 8192 --method direct --device cpu --quiet
fault cudaMalloc:1 0 "gpufilt: long.wav -> auto.wav: *" long.wav auto.wav --taps 8192 --method direct
grep -q "cpu backend for all 2880000 frames: the GPU could not take over (out of GPU memory: .*) (auto: about .* s of work on the CPU, enough to start the GPU and hand it the stream)" stderr.txt ||
    fail "hand-off failure not in the summary: $(head -n 1 stderr.txt)"
"$SFTOOL" cmp cpu.wav auto.wav && pass || fail "the failed hand-off's output differs from --device cpu"
# (2^22 taps on one thread: the cost model's estimate is about 0.9 s)
"$GPUFILT" long.wav cpufft.wav --taps 4194304 --method fft --threads 1 --device cpu --quiet
fault cudaMalloc:1 0 "gpufilt: warning: the GPU cannot take this filter (out of GPU memory: *" \
    long.wav autofft.wav --taps 4194304 --method fft --threads 1 --quiet
one_line "FFT method, out of GPU memory, --device auto"
grep -q "MiB for the filter's spectra, " stderr.txt || fail "not the FFT method's first allocation: $(cat stderr.txt)"
"$SFTOOL" cmp cpufft.wav autofft.wav && pass || fail "the CPU fallback's output differs from --device cpu"
rm -f autofft.wav
# A failing and an out-of-memory cuFFT plan at the FFT method's set-up:
# the CPU takes over likewise.
for spec in cufftMakePlanMany:1 cufftMakePlanMany:2:oom; do
    why=$CUFFT
    [[ $spec != *:oom ]] || why=$CUFFT_OOM
    fault "$spec" 0 "gpufilt: warning: the GPU cannot take this filter (cufftMakePlanMany failed: $why): filtering on the CPU" \
        long.wav autofft.wav --taps 4194304 --method fft --threads 1 --quiet
    one_line "GPUFILT_FAULT=$spec, --device auto"
    "$SFTOOL" cmp cpufft.wav autofft.wav && pass || fail "$spec: the CPU fallback's output differs from --device cpu"
    rm -f autofft.wav
done

# From here to the fused transforms' own section below, the FFT method
# takes cuFFT's transforms (where a build with cuFFTDx would take the fused
# ones: fft_dx.h), whose calls these cases fail.
export GPUFILT_FFT_KERNELS=cufft
# The FFT method's set-up on the GPU (--device cuda), out of GPU memory at
# each allocation in turn, the backend's own after the FFT method's: one
# line, exit 5, nothing left behind, until N passes the last allocation
# and the run gives the bytes of a run without faults.
fft=(--taps 20000 --method fft --chunk 32768)
"$GPUFILT" in.wav fftref.wav "${fft[@]}" --device cuda --quiet
sweep_allocations "" 40 "" fftref.wav "${fft[@]}" --device cuda
expect_allocs "" "the filter's spectra" "the delay line" "a chunk's blocks" "a chunk's windows" \
    "a chunk's spectra" "a chunk's products" "the last blocks" "the filter's partitions" \
    "the filter's first spectra" "a chunk's input" "a chunk's output"
# A failing or out-of-memory plan, the check that the plans for a chunk's
# few windows compute as the batch's (a transform each way), the filter's
# spectra (their plan, their transform, the kernel that scales them), the
# delay line's clearing.
setup=("cufftCreate:2|CUDA error: cufftCreate failed: $CUFFT"
    "cufftExecR2C:2|CUDA error: cufftExecR2C failed: $CUFFT"
    "cufftExecC2R:1|CUDA error: cufftExecC2R failed: $CUFFT"
    "cufftMakePlanMany:1|CUDA error: cufftMakePlanMany failed: $CUFFT"
    "cufftMakePlanMany:2:oom|out of memory: cufftMakePlanMany failed: $CUFFT_OOM"
    "cufftPlanMany:1:oom|out of memory: cufftPlanMany failed: $CUFFT_OOM"
    "cufftPlanMany:1|CUDA error: cufftPlanMany failed: $CUFFT"
    "cufftExecD2Z:1|CUDA error: cufftExecD2Z failed: $CUFFT"
    "fft_scale_spectra launch:1|CUDA error: fft_scale_spectra launch failed: $DEV"
    "cudaMemsetAsync:1|CUDA error: cudaMemsetAsync failed: $DEV")
for c in "${setup[@]}"; do
    fault "${c%%|*}" 5 "${E}cannot set up the cuda filter: ${c#*|}" in.wav out.wav "${fft[@]}" --device cuda
    expect_no_output out.wav
done

# The device failing mid-run: an upload, an event query; direct, FFT, histograms.
for spec in cudaMemcpyAsync:7 cudaEventQuery:3; do
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $DEV" \
        in.wav out.wav --taps 63 --device cuda --chunk 8192
    expect_no_output out.wav
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $DEV" \
        in.wav out.wav "${fft[@]}" --device cuda
    expect_no_output out.wav
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $DEV" \
        in.wav out.wav --taps 63 --device cuda --chunk 8192 --hist h.csv --hist-block 4800
    expect_no_output out.wav h.csv
done
# The FFT method mid-run (in.wav is 15 chunks): each kernel and transform
# of a chunk, f32 and f64; the split-K sums (20000 taps in partitions of
# 128, chunks of 8 partitions).
for spec in "fft_planar launch:3" "fft_mac launch:3" "fft_emit launch:3" cufftSetStream:5 \
    cufftExecR2C:3 cufftExecC2R:3; do
    why=$DEV
    [[ $spec != cufft* ]] || why=$CUFFT
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $why" \
        in.wav out.wav "${fft[@]}" --device cuda
    expect_no_output out.wav
done
# (f64: set-up's D2Z are the plans' check's two and the spectra's)
for spec in cufftExecD2Z:4 cufftExecZ2D:3; do
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $CUFFT" \
        in.wav out.wav "${fft[@]}" --precision f64 --device cuda
    expect_no_output out.wav
done
# Two instances sharing the FFT method's chunks by time (--gpus 0,0): the
# history copied from the instance that had the chunk before, failing.
fault cudaMemcpyPeerAsync:1 5 "${E}cuda backend failed: CUDA error: CUDA device 0: cudaMemcpyPeerAsync failed: $DEV" \
    in.wav out.wav "${fft[@]}" --device cuda --gpus 0,0
expect_no_output out.wav
# Out of GPU memory mid-run (a transform's work area) is a device error
# (exit 5), not the host's out of memory (exit 1).
fault cufftExecR2C:3:oom 5 "${E}cuda backend failed: out of memory: cufftExecR2C failed: $CUFFT_OOM" \
    in.wav out.wav "${fft[@]}" --device cuda
expect_no_output out.wav
fault "fft_reduce launch:5" 5 "${E}cuda backend failed: CUDA error: fft_reduce launch failed: $DEV" \
    in.wav out.wav --taps 20000 --method fft --partition 128 --chunk 1024 --device cuda
expect_no_output out.wav
# The NUPC method: 5000 taps in levels of 64 .. 512 frames, each an FFT
# method with a ring of outputs; with chunks of 64 frames the last level
# runs on a stream of its own. Out of GPU memory at each allocation in
# turn: one line (a level's allocation names the level), exit 5, nothing
# left behind, until N passes the last allocation and the run gives the
# bytes of a run without faults.
nupc=(--taps 5000 --method nupc --partition 64 --chunk 64)
"$GPUFILT" in.wav nupcref.wav "${nupc[@]}" --device cuda --quiet
sweep_allocations "NUPC, " 150 '\(, in NUPC level [0-3] (partition [0-9]*)\)\?' nupcref.wav \
    "${nupc[@]}" --device cuda
expect_allocs "NUPC: " "the delay line, in NUPC level 0 (partition 64)" \
    "a level's outputs, in NUPC level 0 (partition 64)" \
    "the filter's spectra, in NUPC level 3 (partition 512)" \
    "a level's outputs, in NUPC level 3 (partition 512)" "the NUPC method's input"
# The priorities, the last level's stream and events at set-up; mid-run,
# the copy into the input ring, the last level's event and the waits on
# it, the sum, and a level's kernel.
setup=("cudaDeviceGetStreamPriorityRange:1|CUDA error: cudaDeviceGetStreamPriorityRange failed: $DEV"
    "cudaStreamCreateWithPriority(&v->stream:1|CUDA error: cudaStreamCreateWithPriority failed: $DEV"
    "cudaEventCreateWithFlags(&v->ev:3|CUDA error: cudaEventCreateWithFlags failed: $DEV")
for c in "${setup[@]}"; do
    fault "${c%%|*}" 5 "${E}cannot set up the cuda filter: ${c#*|}" in.wav out.wav "${nupc[@]}" --device cuda
    expect_no_output out.wav
done
for spec in "cudaMemcpyAsync(n->in:5" "cudaEventRecord(v->ev:2" "cudaStreamWaitEvent(n->level:2" \
    "cudaStreamWaitEvent(s->compute, v->ev:2" "nupc_sum launch:7" "fft_mac launch:40"; do
    name=${spec%%:*}
    name=${name%%(*}
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: $name failed: $DEV" \
        in.wav out.wav "${nupc[@]}" --device cuda
    expect_no_output out.wav
done
# --device auto (a job the cost model gives the GPU): a set-up failure,
# and the CPU takes over with its own bytes.
nupcl=(--taps 1048576 --method nupc --threads 1 --quiet)
"$GPUFILT" long.wav nupccpu.wav "${nupcl[@]}" --device cpu
fault cudaMalloc:1 0 "gpufilt: warning: the GPU cannot take this filter (out of GPU memory: *" \
    long.wav autonupc.wav "${nupcl[@]}"
one_line "NUPC, out of GPU memory, --device auto"
grep -q ", in NUPC level 0 (partition 256)): filtering on the CPU\$" stderr.txt ||
    fail "NUPC: not level 0's first allocation: $(cat stderr.txt)"
"$SFTOOL" cmp nupccpu.wav autonupc.wav && pass || fail "NUPC: the CPU fallback's output differs from --device cpu"
rm -f autonupc.wav

# With --device auto only a set-up failure falls back to the CPU: a failure
# mid-run is the same error as with --device cuda, and leaves nothing.
for spec in "fft_mac launch:2" cufftExecC2R:2; do
    why=$DEV
    [[ $spec != cufft* ]] || why=$CUFFT
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: $why" \
        long.wav autofft.wav --taps 4194304 --method fft --threads 1 --quiet
    expect_no_output autofft.wav
done

# The fused transforms (builds with cuFFTDx; fft_dx.h), at the same
# filter's partition: out of GPU memory at each allocation in turn (no
# chunk blocks or windows: the fused kernels read the chunk and write the
# output themselves), the device's shared memory query and the kernels'
# shared memory refused at set-up, each kernel failing mid-run.
unset GPUFILT_FFT_KERNELS
if [ -d "$BUILD/fft_dx" ]; then
    "$GPUFILT" in.wav dxref.wav "${fft[@]}" --device cuda --quiet
    sweep_allocations "fused, " 40 "" dxref.wav "${fft[@]}" --device cuda
    expect_allocs "fused: " "the filter's spectra" "the delay line" "a chunk's spectra" \
        "a chunk's products" "the last blocks" "the filter's partitions" \
        "the filter's first spectra" "a chunk's input" "a chunk's output"
    [[ ";$whats" != *";a chunk's windows;"* ]] && pass || fail "fused: the chunk's windows were allocated"
    for c in "cudaDeviceGetAttribute(&max_smem:1|cudaDeviceGetAttribute" \
        "cudaFuncSetAttribute(fft_dx_inverse:1|cudaFuncSetAttribute"; do
        fault "${c%%|*}" 5 "${E}cannot set up the cuda filter: CUDA error: ${c#*|} failed: $DEV" \
            in.wav out.wav "${fft[@]}" --device cuda
        expect_no_output out.wav
    done
    for k in fft_dx_forward fft_dx_inverse; do
        fault "$k launch:3" 5 "${E}cuda backend failed: CUDA error: $k launch failed: $DEV" \
            in.wav out.wav "${fft[@]}" --device cuda
        expect_no_output out.wav
    done
else
    echo "faults.sh: fused transforms not run: $BUILD was built without cuFFTDx"
fi

# A real out-of-memory: 1024 channels of a 2^22-tap f64 FFT filter with
# partition 16 need about 103 GiB of delay line.
total_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [ "${total_mib:-0}" -lt 100000 ]; then
    head -c $((1024 * 8 * 64)) /dev/zero >z.f64
    expect 5 "${E}cannot set up the cuda filter: out of memory: the FFT filter needs *" \
        z.f64 out.raw --raw f64le -c 1024 --precision f64 --taps 4194304 --method fft \
        --partition 16 --device cuda
    one_line "a real out-of-memory"
    grep -q "MiB of GPU memory (spectra .*); the GPU has .* MiB free of " stderr.txt ||
        fail "no sizes in: $(cat stderr.txt)"
    expect_no_output out.raw
else
    echo "faults.sh: real out-of-memory case not run: the GPU has ${total_mib} MiB"
fi
finish
