#!/usr/bin/env bash
# Block sizes against every sink: whatever the partition, chunk, input
# length and read pattern make of the blocks between the engine and the
# sink, every output encoding holds the exact sums (exactsum, in long
# double, outside gpufilt's code): bit-exact for the direct method, within
# the stated bound for the FFT method, after rounding, clipping or
# companding.
#
#   cli_blocks.sh GPUFILT SFTOOL WORKDIR EXACTSUM PIPETOOL [cpu|cuda]
#
# cpu (default): the in-place path, whose output blocks are as long as an
# FFT chunk (16 partitions) plus the input block. cuda (label gpu): the
# same matrix on the GPU; exit 77 without a usable device.
#
# The cost model (src/core/method.c) picks the partition nearest T/8,
# from 256 to 2^18 frames: a mean filter of 8P taps makes it pick P, cheaply at any length (sums of 1/T). Sizes
# stay small enough for the sanitizer builds: a few million mono frames at
# the two largest partitions, where one chunk is 16 partitions.
source "$(dirname "$0")/lib.sh" "$1" "$2" "$3"
EXACTSUM=$4
PIPETOOL=$5
DEVICE=${6:-cpu}
K0=8
if [ "$DEVICE" = cuda ]; then
    "$SFTOOL" gen probe.wav wav16 1 48000 1000 noise
    rc=0
    "$GPUFILT" probe.wav probe-out.wav --taps 5 --device cuda --quiet 2>stderr.txt || rc=$?
    if [ "$rc" = 5 ] && grep -q "no usable CUDA device\|built without CUDA" stderr.txt; then
        echo "skipped: no usable GPU ($(cat stderr.txt))"
        exit 77
    fi
fi
BLOCK=65536 # filter.c's BLOCK_FRAMES: the reader's blocks

# check IN MODE TAPS OUT_FORMAT PARTITION [gpufilt options...]
#   TAPS: mean:T (--taps T) or a file (--coeffs); PARTITION: the one the
#   run must report (0: direct; nupc:B:M: the NUPC method with first
#   partition B, which it reports, and largest M, from the taps). The
#   output must hold the exact sums.
check() {
    local in=$1 mode=$2 taps=$3 fmt=$4 want=$5
    shift 5
    local t=(--coeffs "$taps") out=out.${fmt%%:*} prec=f32 a
    [[ $taps == mean:* ]] && t=(--taps "${taps#mean:}")
    for a in "$@"; do [ "$a" = f64 ] && prec=f64; done
    local what="$in $mode $taps $fmt ${*}"
    rm -f "$out"
    local rc=0
    # --dither none: the integer encodings are checked against exact sums
    # rounded (cli_dither.sh checks the dither).
    "$GPUFILT" "$in" "$out" --out-format "$fmt" --mode "$mode" "${t[@]}" --device "$DEVICE" \
        --quiet --dither none --json-summary run.json "$@" 2>stderr.txt || rc=$?
    if [ "$rc" != 0 ]; then
        fail "$what: exit $rc ($(tail -n 1 stderr.txt))"
        return
    fi
    local p
    p=$(sed -n 's/.*"partition":\([0-9a-z]*\).*/\1/p' run.json)
    [ "$p" = null ] && p=0
    if [[ $want == nupc:* ]]; then
        local b=${want#nupc:}
        b=${b%%:*}
        if [ "$p" != "$b" ] || ! grep -q '"method":"nupc"' run.json; then
            fail "$what: partition $p ($(grep -o '"method":"[a-z]*"' run.json)), expected nupc $b"
            return
        fi
        p=$want
    elif [ "$p" != "$want" ]; then
        fail "$what: partition $p, expected $want"
        return
    fi
    if "$EXACTSUM" "$in" "$out" "$mode" "$taps" "$p" "$prec" 2>exact.txt; then
        pass
    else
        fail "$what: $(tail -n 1 exact.txt) (kept as failed-$in-$out, $(wc -c <"$out") bytes)"
        cp "$out" "failed-$in-$out"
    fi
}

fmts=(wav:float wav:pcm_16 wav:pcm_24 flac:pcm_16 wav:ulaw)
modes=(same causal full)

# 1. Every partition the cost model can choose, each at an input length
#    around one partition, one block, one or several chunks (the default
#    chunk: 2^18 samples on the cpu, at least 16 partitions), rotating
#    through the output encodings and modes. The two largest, just past
#    one chunk, are the issue's case: a 2M-frame block into the sink.
i=0
for lp in 8 9 10 11 12 13 14 15 16 17 18; do
    P=$((1 << lp))
    case $lp in
    8) N=$((P - 1)) ;;                     # shorter than a partition (and the filter)
    9) N=$P ;;                             # one partition
    10) N=$((4 * BLOCK + 1)) ;;            # one chunk and a frame
    11) N=$((3 * BLOCK + 1)) ;;            # blocks, not a chunk
    12) N=$((4 * BLOCK - 1)) ;;            # a frame short of a chunk
    13) N=$((8 * BLOCK + P + 1)) ;;        # several chunks and a partition
    14) N=$((16 * P)) ;;                   # one chunk exactly
    15 | 17 | 18) N=$((16 * P + 1)) ;;     # one chunk and a frame
    16) N=$((2 * 16 * P + P - 1)) ;;       # several chunks, a frame short of a partition
    esac
    "$SFTOOL" gen "p$lp.wav" wav16 1 48000 "$N" noise
    check "p$lp.wav" "${modes[i % 3]}" "mean:$((K0 * P))" "${fmts[i % 5]}" "$P"
    i=$((i + 1))
    # The two largest also with the other encoding that converts.
    if [ "$lp" -ge 17 ]; then
        check "p$lp.wav" "${modes[i % 3]}" "mean:$((K0 * P))" "${fmts[(i + 2) % 5]}" "$P"
        i=$((i + 1))
    fi
    rm -f "p$lp.wav"
done

# 2. Every encoding in every mode with a large partition and chunks of
#    one partition (--chunk): each chunk's output is one block of 131072
#    frames and more, stereo, and 24-bit input.
"$SFTOOL" gen s2.wav wav24 2 48000 $((3 * 131072 + 1)) noise
for fmt in "${fmts[@]}" flac:pcm_24; do
    for mode in "${modes[@]}"; do
        check s2.wav "$mode" mean:5 "$fmt" 131072 --method fft --partition 131072 --chunk 131072
    done
done
check s2.wav same mean:5 wav:pcm_24 131072 --method fft --partition 131072 --chunk 131072 \
    --precision f64

# 3. Explicit partitions: the smallest and largest allowed, and one the
#    cost model never picks for 5 taps.
"$SFTOOL" gen m1.wav wav16 1 48000 $((2 * BLOCK + 17)) noise
check m1.wav same mean:40 wav:pcm_16 16 --method fft --partition 16
check m1.wav full mean:5 wav:ulaw 65536 --method fft --partition 65536
check m1.wav causal mean:5 wav:pcm_24 1048576 --method fft --partition 1048576
"$SFTOOL" gen m2.wav wav16 1 48000 $((2 * 1048576 + 1)) noise
check m2.wav same mean:5 flac:pcm_16 1048576 --method fft --partition 1048576 --chunk 1048576

# 3a. FFTW's wisdom (--make-fft-wisdom, --fft-wisdom; the cpu backend's):
#    measured plans for transforms up to 2048 points; partitions of 256
#    and 1024 with them hold the exact sums, and two runs give the same
#    samples (the same wisdom, the same plans).
if [ "$DEVICE" = cpu ]; then
    rc=0
    "$GPUFILT" --make-fft-wisdom wisdom.txt --partition 1024 --quiet 2>stderr.txt || rc=$?
    if [ "$rc" = 2 ] && grep -q "KissFFT: no FFTW wisdom" stderr.txt; then
        pass # a KissFFT build: nothing to measure
    elif [ "$rc" != 0 ]; then
        fail "--make-fft-wisdom: exit $rc ($(tail -n 1 stderr.txt))"
    else
        check m1.wav causal mean:2048 wav:float 256 --method fft --partition 256 \
            --fft-wisdom wisdom.txt
        cp out.wav wisdom1.wav
        check m1.wav causal mean:2048 wav:float 256 --method fft --partition 256 \
            --fft-wisdom wisdom.txt
        # (the samples: a float WAV's PEAK chunk holds the second it was
        # written, so two runs a second apart differ there)
        "$SFTOOL" cmp out.wav wisdom1.wav >/dev/null && pass ||
            fail "--fft-wisdom: two runs, different samples"
        grep -qF '"fft_wisdom":"wisdom.txt"' run.json && pass ||
            fail "--fft-wisdom: not in the JSON summary: $(grep -o '"fft_wisdom":[^,]*' run.json)"
        check m1.wav same mean:8192 wav:float 1024 --method fft --partition 1024 --precision f64 \
            --fft-wisdom wisdom.txt
    fi
    rm -f wisdom.txt wisdom1.wav
fi

# 3b. The NUPC method (levels of B .. M; M the FFT partition the cost
#    model picks for the taps, at least 256): mono and stereo, 16- and
#    24-bit, chunks that are not a whole number of M, f64.
check m1.wav same mean:5000 wav:float nupc:16:512 --method nupc --partition 16
check s2.wav causal mean:40000 wav:pcm_24 nupc:256:4096 --method nupc --chunk 1000
check s2.wav full mean:3000 wav:pcm_24 nupc:64:256 --method nupc --partition 64 --precision f64

# 4. The direct method, bit-exact: a mean of 8 (sums exact in f32) and
#    asymmetric dyadic taps (a shift or reversal shows), at lengths around
#    a block and a chunk, in every encoding and mode.
printf '0.5\n0.25\n-0.125\n0.0625\n0.03125\n0\n-0.5\n' >dyadic.txt
"$SFTOOL" gen d1.wav wav16 1 48000 $((4 * BLOCK + 1)) noise
for fmt in "${fmts[@]}"; do
    for mode in "${modes[@]}"; do
        check d1.wav "$mode" dyadic.txt "$fmt" 0
    done
done
for N in 1 $((BLOCK - 1)) $BLOCK $((BLOCK + 1)); do
    "$SFTOOL" gen d2.wav wav16 2 48000 "$N" noise
    check d2.wav same mean:8 wav:pcm_16 0
    check d2.wav full dyadic.txt wav:ulaw 0 --chunk 1000
done

# 5. A stream: headerless input arriving in pieces of odd sizes, so the
#    engine's input seldom falls on a partition and its output comes a
#    chunk (2^18 frames) at a time, or what a pause lets out, into a 16-bit
#    file. (How the pieces fall depends on timing: the sections above are
#    the deterministic ones.)
"$SFTOOL" gen st.wav wav16 1 48000 300001 noise
"$PIPETOOL" sf2raw st.wav f32le >st.f32
rc=0
"$PIPETOOL" feed 7 8000 0 <st.f32 | "$GPUFILT" - st-out.wav --raw f32le -c 1 -r 48000 \
    --out-format wav:pcm_16 --taps 40 --method fft --partition 256 --device "$DEVICE" \
    --quiet --dither none 2>stderr.txt || rc=$?
if [ "$rc" != 0 ]; then
    fail "stream: exit $rc ($(tail -n 1 stderr.txt))"
elif "$EXACTSUM" st.wav st-out.wav same mean:40 256 f32 2>exact.txt; then
    pass
else
    fail "stream: $(tail -n 1 exact.txt)"
fi
rc=0
"$PIPETOOL" feed 8 8000 0 <st.f32 | "$GPUFILT" - st-nupc.wav --raw f32le -c 1 -r 48000 \
    --out-format wav:pcm_16 --taps 40 --method nupc --partition 16 --device "$DEVICE" --quiet \
    --dither none 2>stderr.txt || rc=$?
if [ "$rc" != 0 ]; then
    fail "nupc stream: exit $rc ($(tail -n 1 stderr.txt))"
elif "$EXACTSUM" st.wav st-nupc.wav same mean:40 nupc:16:256 f32 2>exact.txt; then
    pass
else
    fail "nupc stream: $(tail -n 1 exact.txt)"
fi

expect_no_output
finish
