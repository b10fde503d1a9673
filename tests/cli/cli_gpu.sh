#!/usr/bin/env bash
# The CLI on a GPU (label gpu; exit 77 without one): --device cuda gives the
# CPU's bytes with the direct method, and --device auto hands a long job from
# the CPU to the GPU at a chunk boundary without changing a byte of the
# output or of the histograms, and says which backend filtered how much; a
# 2 x 2 matrix response gives the CPU's samples on the GPU too.
source "$(dirname "$0")/lib.sh" "$@"

"$SFTOOL" gen in.wav wav16 2 48000 480000 noise
rc=0
"$GPUFILT" in.wav probe.wav --taps 5 --device cuda --quiet 2>stderr.txt || rc=$?
if [ "$rc" = 5 ] && grep -q "no usable CUDA device\|built without CUDA" stderr.txt; then
    echo "skipped: no usable GPU ($(cat stderr.txt))"
    exit 77
fi
assert_eq "probe on the GPU: exit" "$rc" 0

# --device cuda = --device cpu, byte for byte (direct method).
expect 0 "" in.wav cpu.wav --taps 63 --device cpu --quiet
expect 0 "" in.wav cuda.wav --taps 63 --device cuda --quiet
assert_eq "cuda = cpu, 63 taps" "$(cmp cpu.wav cuda.wav && echo same)" same

# A true-stereo (2 x 2: LL, LR, RL, RR) response, direct method: the
# engine's 4 channels summed into 2 by the command, so cuda gives the cpu's
# bytes, and --verify is bit-exact on the GPU too; the FFT method sums on
# spectra on the GPU too (the library's matrix: one run of the
# multiply-accumulate per input), its 2 outputs within their bound, with
# the default partition and with 2 partitions of the 17 taps.
D=$(cd "$(dirname "$0")/matrix" && pwd)
expect 0 "" in.wav mcpu.wav --coeffs "$D/h4.txt" --mode full --method direct --device cpu \
    --out-format wav:float --quiet
rc=0
"$GPUFILT" in.wav mcuda.wav --coeffs "$D/h4.txt" --mode full --method direct --device cuda \
    --out-format wav:float --verify >mv.txt 2>&1 || rc=$?
assert_eq "2x2 matrix on cuda: exit" "$rc" 0
assert_eq "2x2 matrix: cuda = cpu (samples)" "$("$SFTOOL" cmp mcpu.wav mcuda.wav && echo same)" same
assert_eq "2x2 matrix on cuda: --verify" "$(grep '^verify: [0-9]' mv.txt)" \
    "verify: $((2 * (480000 + 16))) samples, max |error| 0, max ulp 0: bit-exact with the reference"
for part in 0 16; do
    rc=0
    popt=()
    [ "$part" = 0 ] || popt=(--partition "$part")
    "$GPUFILT" in.wav mfft.wav --coeffs "$D/h4.txt" --method fft "${popt[@]}" --device cuda \
        --out-format wav:float --verify >mv.txt 2>&1 || rc=$?
    assert_eq "2x2 matrix, FFT on cuda, partition $part: exit" "$rc" 0
    assert_eq "2x2 matrix, FFT on cuda, partition $part: --verify" \
        "$(grep -c 'within the bound' mv.txt)" 1
    assert_eq "2x2 matrix, FFT on cuda, partition $part: the 2 outputs checked" \
        "$(grep -o 'for all [0-9]* outputs' mv.txt)" "for all $((2 * 480000)) outputs"
    assert_eq "2x2 matrix, FFT on cuda, partition $part: summed on spectra" \
        "$(grep -o '17 taps ([^)]*)' mv.txt)" "17 taps (matrix 2x2, summed on spectra: 2 ch out)"
done

# Hand-off: five minutes of stereo through 4095 direct taps is seconds of
# CPU work, so --device auto starts on the CPU and the GPU takes over.
"$SFTOOL" gen long.wav wav16 2 48000 14400000 noise
hist=(--hist-bins 64 --hist-block 48000)
expect 0 "" long.wav ref.wav --taps 4095 --method direct --device cuda --quiet \
    --hist ref.csv "${hist[@]}"
expect 0 "gpufilt: long.wav -> auto.wav: 14400000 frames x 2 ch at 48000 Hz, 4095 taps (mean), same, f32, direct, cpu backend for *" \
    long.wav auto.wav --taps 4095 --method direct --hist auto.csv "${hist[@]}" --json-summary h.json
summary=$(head -n 1 stderr.txt)
[[ $summary == *", then cuda for "*" (auto: about "*" s of work on the CPU, enough to start the GPU and hand it the stream), "* ]] && pass ||
    fail "hand-off summary: $summary"
cpu_frames=$(sed -n 's/.*cpu backend for \([0-9]*\) frames, then cuda for \([0-9]*\).*/\1 \2/p' stderr.txt)
read -r before after <<<"$cpu_frames"
assert_eq "hand-off: frames add up" "$((before + after))" 14400000
[ "$before" -gt 0 ] && [ "$after" -gt 0 ] && pass || fail "hand-off at frame $before of 14400000"
assert_eq "hand-off in the JSON summary" "$(python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["handoff"]; print(h["to"], h["frame"], h["error"])' h.json)" \
    "cuda $before None"
assert_eq "hand-off: output = the GPU's" "$(cmp ref.wav auto.wav && echo same)" same
assert_eq "hand-off: histograms = the GPU's" "$(cmp ref.csv auto.csv && echo same)" same

# --verify across a hand-off: the serial reference agrees exactly (a
# minute, two CPU threads: the CPU's share is seconds, the reference's too).
"$SFTOOL" gen minute.wav wav16 2 48000 2880000 noise
expect 0 "*" minute.wav verified.wav --taps 1023 --method direct --threads 2 --verify
grep -q "then cuda for" stderr.txt && pass || fail "no hand-off under --verify: $(head -n 1 stderr.txt)"
# Several GPUs (--gpus): the bytes and histograms of one, direct and FFT,
# float and 16-bit output; "0,0" runs two engines' share on one GPU, so
# this runs on any GPU machine; with two GPUs, "0,1" and "all" too. The
# JSON summary says which GPU filtered how many chunks and frames.
gpus=("0,0")
ngpu=$("$GPUFILT" --list-devices 2>/dev/null | sed '/^host APIs/,$d' | grep -cE '^  [0-9]+: ')
[ "${ngpu:-1}" -ge 2 ] && gpus+=("0,1" "1,0" "all")
for args in "--taps 4095 --method direct" "--taps 20000 --method fft --partition 1024" \
    "--taps 3000 --method fft --mode full --out-raw f32le"; do
    # shellcheck disable=SC2086
    expect 0 "" minute.wav one.wav $args --device cuda --quiet --hist one.csv "${hist[@]}"
    for g in "${gpus[@]}"; do
        # shellcheck disable=SC2086
        expect 0 "" minute.wav many.wav $args --device cuda --gpus "$g" --quiet \
            --hist many.csv "${hist[@]}" --json-summary g.json
        assert_eq "--gpus $g $args: output = one GPU's" "$(cmp one.wav many.wav && echo same)" same
        assert_eq "--gpus $g $args: histograms = one GPU's" "$(cmp one.csv many.csv && echo same)" same
        got=$(python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
print(len(g), all(d["chunks"] > 0 for d in g), sum(d["frames"] for d in g) >= 2880000)' g.json)
        want=$([ "$g" = all ] && echo "$ngpu" || echo 2)
        assert_eq "--gpus $g $args: JSON gpus" "$got" "$want True True"
    done
done
# The summary line names each GPU's chunks.
"$GPUFILT" minute.wav many.wav --taps 4095 --method direct --device cuda --gpus 0,0 2>stderr.txt
assert_eq "--gpus 0,0: the summary names each GPU's chunks" \
    "$(head -n 1 stderr.txt | sed -E 's/GPUs 0 \([1-9][0-9]* chunks\), 0 \([1-9][0-9]*\), [0-9.]+ s$/GPUs 0 (N chunks), 0 (N), T s/')" \
    "gpufilt: minute.wav -> many.wav: 2880000 frames x 2 ch at 48000 Hz, 4095 taps (mean), same, f32, direct, cuda backend on GPUs 0 (N chunks), 0 (N), T s"
# A 40-channel FFT job is shared by channel (20 channels, 80-byte rows, a
# GPU): the bytes of one GPU, the summary and JSON name each one's channels.
"$SFTOOL" gen wide.wav wavf 40 48000 200000 noise
expect 0 "" wide.wav wide1.wav --taps 30000 --method fft --partition 4096 --device cuda --quiet
"$GPUFILT" wide.wav wide2.wav --taps 30000 --method fft --partition 4096 --device cuda --gpus 0,0 \
    --json-summary w.json 2>stderr.txt
assert_eq "--gpus 0,0, 40 channels: output = one GPU's" \
    "$("$SFTOOL" cmp wide1.wav wide2.wav && echo same)" same
assert_eq "--gpus 0,0, 40 channels: the summary names each GPU's channels" \
    "$(head -n 1 stderr.txt | sed -E 's/, [0-9.]+ s$//')" \
    "gpufilt: wide.wav -> wide2.wav: 200000 frames x 40 ch at 48000 Hz, 30000 taps (mean), same, f32, fft (partition 4096), cuda backend on GPUs 0 (channels 1-20), 0 (21-40)"
assert_eq "--gpus 0,0, 40 channels: JSON gpus" "$(python3 -c 'import json, sys
print([(d["gpu"], d["channels"]) for d in json.load(open(sys.argv[1]))["gpus"]])' w.json)" \
    "[(0, [0, 19]), (0, [20, 39])]"
# A batch on GPU workers: "--gpus 0,0" is two workers on GPU 0, taking
# the files largest first; each output is the one-file run's on the GPU
# (direct and FFT), and the summary names the two workers.
mkdir batch
for n in 1 2 3 4 5; do "$SFTOOL" gen "batch/f$n.wav" wav16 2 48000 $((n * 150000)) noise; done
for args in "--taps 255 --method direct" "--taps 20000 --method fft --partition 1024"; do
    rm -rf bout
    # shellcheck disable=SC2086
    expect 0 "gpufilt: batch: 5 files to 'bout' on 2 workers: 5 filtered, 0 skipped (existing), 0 failed; *" \
        $args --device cuda --gpus 0,0 --out-dir bout batch/f1.wav batch/f2.wav batch/f3.wav \
        batch/f4.wav batch/f5.wav
    for n in 1 2 3 4 5; do
        # shellcheck disable=SC2086
        "$GPUFILT" "batch/f$n.wav" one.wav $args --device cuda --quiet
        assert_eq "batch --gpus 0,0 $args: f$n.wav = its run on the GPU" \
            "$(cmp one.wav "bout/f$n.wav" && echo same)" same
    done
    # without --jobs, one GPU named: two workers for the direct method, one for FFT
    workers="2 workers"
    [[ $args != *fft* ]] || workers="1 worker"
    rm -rf bout2
    # shellcheck disable=SC2086
    expect 0 "gpufilt: batch: 5 files to 'bout2' on $workers: 5 filtered, *" $args --device cuda \
        --gpus 0 --out-dir bout2 batch/f1.wav batch/f2.wav batch/f3.wav batch/f4.wav batch/f5.wav
    for n in 1 2 3 4 5; do
        assert_eq "batch --gpus 0 $args: f$n.wav = --gpus 0,0's" \
            "$(cmp "bout/f$n.wav" "bout2/f$n.wav" && echo same)" same
    done
done
# --device auto: a worker's GPU starts once for its files, so it takes a
# file whose method is direct on both devices from 0.02 s of CPU work
# (test_policy checks the choice); the bytes stay the single-file run's
# (the CPU's there). An FFT file stays where it would go alone: the CPU's
# bytes, which the GPU's FFT would not give.
rm -rf bout
expect 0 "gpufilt: batch: 2 files to 'bout' on 2 workers: 2 filtered, *" --gpus 0,0 --threads 4 \
    --taps 4095 --method direct --out-dir bout batch/f1.wav batch/f2.wav
"$GPUFILT" batch/f1.wav one.wav --threads 4 --taps 4095 --method direct --quiet
assert_eq "auto batch, direct: f1 = its run alone" "$(cmp one.wav bout/f1.wav && echo same)" same
rm -rf bout
expect 0 "gpufilt: batch: 1 file to 'bout' on 1 worker: 1 filtered, *" --gpus 0,0 --threads 4 \
    --taps 20000 --method fft --partition 1024 --out-dir bout batch/f1.wav
"$GPUFILT" batch/f1.wav one.wav --threads 4 --taps 20000 --method fft --partition 1024 --quiet
assert_eq "auto batch, FFT: f1 = its run alone" "$(cmp one.wav bout/f1.wav && echo same)" same
expect 2 "gpufilt: error: --gpus names GPUs: it goes with --device cuda or auto, not cpu" \
    minute.wav x.wav --taps 5 --device cpu --gpus 0,1

# Levels folded into the taps give the CPU's bytes on the GPU too, and so
# does --normalize, whose scaling pass runs on the CPU.
lv=(--taps 63 --gain -3 --mix 0.4 --normalize-filter peak --quiet)
expect 0 "" in.wav lv_cpu.wav "${lv[@]}" --device cpu
expect 0 "" in.wav lv_cuda.wav "${lv[@]}" --device cuda
assert_eq "levels: cuda = cpu" "$(cmp lv_cpu.wav lv_cuda.wav && echo same)" same
expect 0 "" in.wav nz_cpu.wav --taps 63 --normalize -1 --device cpu --quiet
expect 0 "" in.wav nz_cuda.wav --taps 63 --normalize -1 --device cuda --quiet
assert_eq "--normalize: cuda = cpu" "$(cmp nz_cpu.wav nz_cuda.wav && echo same)" same
finish
