#!/usr/bin/env bash
# gpufilt-mpi with GPUs (labels mpi and gpu): two ranks, each on the GPU
# its rank on the node picks (both on GPU 0 where there is one), write the
# bytes one gpufilt run on one GPU writes: direct and FFT, same and full
# mode, 16-bit and raw float output, and a batch (on the GPU, and with
# --device auto, whose ranks keep their GPU started). Exit 77 without mpirun
# or a usable GPU.
# Usage: mpi_gpu.sh GPUFILT GPUFILT_MPI SFTOOL WORKDIR
set -u
G=$1 M=$2 SF=$3 W=$4
command -v mpirun >/dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
"$SF" gen in.wav wav16 2 48000 960000 noise
"$G" in.wav probe.wav --taps 5 --device cuda -q 2>probe.txt || {
    echo "no usable GPU ($(cat probe.txt)): skipped"
    exit 77
}
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
for args in "--taps 4095 --method direct" "--taps 65536 --method fft" \
    "--taps 20000 --method fft --mode full --out-raw f32le"; do
    # shellcheck disable=SC2086
    "$G" in.wav one.out $args --device cuda -q || { bad "gpufilt $args"; continue; }
    # shellcheck disable=SC2086
    mpirun --allow-run-as-root -np 2 "$M" in.wav mpi.out $args --device cuda 2>err.txt ||
        { bad "gpufilt-mpi $args: $(cat err.txt)"; continue; }
    cmp -s one.out mpi.out && echo "ok: 2 ranks on GPUs = gpufilt: $args" ||
        bad "2 ranks on GPUs: bytes differ: $args"
done
# A batch: files dealt to the ranks, each on its GPU.
mkdir -p batch ref got
for n in 1 2 3 4; do "$SF" gen "batch/f$n.wav" wav16 1 48000 $((n * 100000)) noise; done
"$G" --taps 4095 --device cuda --out-dir ref batch/*.wav -q || bad "gpufilt --out-dir"
mpirun --allow-run-as-root -np 2 "$M" --taps 4095 --device cuda --out-dir got batch/*.wav \
    2>err.txt || bad "gpufilt-mpi --out-dir: $(cat err.txt)"
for n in 1 2 3 4; do
    cmp -s "ref/f$n.wav" "got/f$n.wav" || bad "batch: f$n.wav differs"
done
# --device auto with a largest file the GPU takes on its own (5M frames x
# 4095 taps): each rank's GPU counts as started (gpu_warm), so the short
# files, direct on either device, may go to it too; the bytes are the same.
"$SF" gen batch/f5.wav wav16 1 48000 5000000 noise
"$G" --taps 4095 --out-dir ref-auto batch/*.wav -q || bad "gpufilt --out-dir, auto"
mpirun --allow-run-as-root -np 2 "$M" --taps 4095 --out-dir got-auto batch/*.wav \
    2>err.txt || bad "gpufilt-mpi --out-dir, auto: $(cat err.txt)"
for n in 1 2 3 4 5; do
    cmp -s "ref-auto/f$n.wav" "got-auto/f$n.wav" || bad "batch, auto: f$n.wav differs"
done
[ $fails -eq 0 ] && echo "mpi_gpu: all equal" && exit 0
echo "mpi_gpu: $fails failed"
exit 1
