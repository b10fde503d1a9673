#!/usr/bin/env bash
# GPU faults, on a GPU machine, with a build configured with
# -DGPUFILT_FAULT_INJECTION=ON (GPUFILT_FAULT=TEXT:N fails the N-th checked
# CUDA call whose text contains TEXT):
#   - out of GPU memory at create: one line, exit 5, nothing left behind;
#     with --device auto the CPU takes over with a notice, same bytes;
#   - the device failing mid-run (an upload, an event wait; direct and FFT
#     methods, with histograms): one line, exit 5, nothing left behind;
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

# fault SPEC CODE 'STDERR' args...: gpufilt with GPUFILT_FAULT=SPEC.
fault() {
    local spec=$1
    shift
    GPUFILT_FAULT=$spec expect "$@"
}

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
"$SFTOOL" cmp cpufft.wav autofft.wav && pass || fail "the CPU fallback's output differs from --device cpu"

# The device failing mid-run: an upload, an event query; direct, FFT, histograms.
for spec in cudaMemcpyAsync:7 cudaEventQuery:3; do
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: CUDA-capable device(s) is/are busy or unavailable" \
        in.wav out.wav --taps 63 --device cuda --chunk 8192
    expect_no_output out.wav
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: CUDA-capable device(s) is/are busy or unavailable" \
        in.wav out.wav --taps 20000 --method fft --device cuda --chunk 32768
    expect_no_output out.wav
    fault "$spec" 5 "${E}cuda backend failed: CUDA error: ${spec%%:*} failed: CUDA-capable device(s) is/are busy or unavailable" \
        in.wav out.wav --taps 63 --device cuda --chunk 8192 --hist h.csv --hist-block 4800
    expect_no_output out.wav h.csv
done

# A real out-of-memory: 1024 channels of a 2^22-tap f64 FFT filter with
# partition 16 need about 103 GiB of delay line.
total_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [ "${total_mib:-0}" -lt 100000 ]; then
    head -c $((1024 * 8 * 64)) /dev/zero >z.f64
    expect 5 "${E}cannot set up the cuda filter: out of memory: the FFT filter needs *" \
        z.f64 out.raw --raw f64le -c 1024 --precision f64 --taps 4194304 --method fft \
        --partition 16 --device cuda
    grep -q "MiB of GPU memory (spectra .*); the GPU has .* MiB free of " stderr.txt ||
        fail "no sizes in: $(cat stderr.txt)"
    expect_no_output out.raw
else
    echo "faults.sh: real out-of-memory case not run: the GPU has ${total_mib} MiB"
fi
finish
