#!/usr/bin/env bash
# Pipes: raw samples and containers on standard input/output give the same
# bytes as file mode, whatever the read sizes; partial frames, a closed
# output pipe, signals, memory over a 4 GiB stream, the latency of a
# trickle, a SoX pipeline, and the messages of refused uses.
#
#   cli_pipes.sh GPUFILT SFTOOL WORKDIR PIPETOOL
#
# GPUFILT_PIPE_BIG_BYTES sets the size of the bounded-memory stream (default
# 4G; 512M for a sanitizer build, which is ~8x slower).
# shellcheck disable=SC2002 # "cat FILE |" makes stdin a pipe, on purpose
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
PIPETOOL=$4
E='gpufilt: error: '
WARN='gpufilt: warning: '

# Background processes of this script: killed on any exit.
BG=()
cleanup() {
    local p
    for p in "${BG[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    exec 3>&- 2>/dev/null || true
}
trap cleanup EXIT

# pipe_status CMD: run a pipeline string with errexit off; its PIPESTATUS
# goes to PS (an array), e.g. pipe_status 'cat a | "$GPUFILT" - - ...'.
pipe_status() {
    set +e +o pipefail
    eval "$1"'; PS=("${PIPESTATUS[@]}")'
    set -e -o pipefail
}

# Raw bytes of an audio file in format FMT, independent of gpufilt: SoX for
# integers (exact: the same bit depth, no dither), libsndfile through
# pipetool for floats (SoX holds samples as 32-bit integers).
to_raw() { # IN FMT OUT
    case $2 in
    u8) sox -D "$1" -t raw -e unsigned -b 8 "$3" ;;
    s8) sox -D "$1" -t raw -e signed -b 8 "$3" ;;
    s16le) sox -D "$1" -t raw -e signed -b 16 -L "$3" ;;
    s16be) sox -D "$1" -t raw -e signed -b 16 -B "$3" ;;
    s24le) sox -D "$1" -t raw -e signed -b 24 -L "$3" ;;
    s32le) sox -D "$1" -t raw -e signed -b 32 -L "$3" ;;
    f32le | f64le) "$PIPETOOL" sf2raw "$1" "$2" >"$3" ;;
    esac
}

# same_bytes WHAT GOT WANT: byte for byte, and not empty.
same_bytes() {
    if [ ! -s "$3" ]; then
        fail "$1: expected file '$3' is empty"
    elif cmp -s "$2" "$3"; then
        pass
    else
        fail "$1: $(cmp "$2" "$3" 2>&1 | head -n 1) ($(stat -c %s "$2") vs $(stat -c %s "$3") bytes)"
    fi
}

# The number in "N samples clipped", or 0.
clipped() { sed -n 's/.* \([0-9]*\) samples clipped.*/\1/p' "$1" | grep . || echo 0; }

ext_of() { case $1 in aiff*) echo aiff ;; flac*) echo flac ;; *) echo wav ;; esac }

# SoX without its FLAC plugin (libsox-fmt-base) cannot take part in the FLAC
# cases: they use WAV instead, and say so.
sox_flac=1
sox -h 2>/dev/null | grep -qw flac || sox_flac=0
[ $sox_flac = 1 ] || echo "note: this SoX has no FLAC support: the FLAC cases use WAV"

# Random taps (deterministic), small enough to clip only now and then.
awk 'BEGIN { srand(7); for (i = 0; i < 31; i++) printf "%.17g\n", (rand() - 0.5) * 0.2 }' >rand31.txt
awk 'BEGIN { srand(11); for (i = 0; i < 8; i++) printf "%.17g\n", (rand() - 0.3) * 0.5 }' >rand8.txt

# --- 1. Every raw format: a pipe gives file mode's bytes. ---------------------
# SOURCE FORMAT RAW PRECISION: the file made by sftool, read as raw by SoX.
cases="wavu8:u8:f32 wavu8:s8:f32 wav16:s16le:f32 flac16:s16le:f32 aiff16:s16be:f32
       wav24:s24le:f32 flac24:s24le:f32 wav32:s32le:f32 wav32:s32le:f64 wavf:f32le:f32
       wavf:f32le:f64 wavd:f64le:f64"
for c in $cases; do
    IFS=: read -r src fmt prec <<<"$c"
    [ $sox_flac = 1 ] || [ "${src#flac}" = "$src" ] || continue
    ext=$(ext_of "$src")
    in=in_$src.$ext
    [ -e "$in" ] || "$SFTOOL" gen "$in" "$src" 2 48000 20011 noise
    to_raw "$in" "$fmt" "in_${src}_$fmt.raw"
    i=0
    for filt in "--taps 5 --mode same" "--coeffs rand31.txt --mode causal" "--coeffs rand8.txt --mode same"; do
        i=$((i + 1))
        tag=${src}_${fmt}_${prec}_$i
        # shellcheck disable=SC2086 # $filt is several options
        "$GPUFILT" "$in" "file_$tag.$ext" $filt --precision "$prec" --quiet 2>file_err.txt
        to_raw "file_$tag.$ext" "$fmt" "want_$tag.raw"
        pipe_status "cat in_${src}_$fmt.raw | \"\$GPUFILT\" - - --raw $fmt -c 2 $filt --precision $prec --quiet 2>pipe_err.txt | cat >pipe_$tag.raw"
        assert_eq "$tag: exit statuses of cat | gpufilt | cat" "${PS[*]}" "0 0 0"
        same_bytes "$tag: raw $fmt through a pipe vs file mode" "pipe_$tag.raw" "want_$tag.raw"
        assert_eq "$tag: clipped samples, pipe vs file" "$(clipped pipe_err.txt)" "$(clipped file_err.txt)"
    done
done
# Clipping: a gain of 3 clips many samples; the pipe counts as many as file
# mode, names its output '-', and the clipped bytes are the same.
echo 3 >gain3.txt
for fmt in u8 s16le s24le; do
    case $fmt in u8) src=wavu8 ;; s16le) src=wav16 ;; s24le) src=wav24 ;; esac
    "$GPUFILT" "in_$src.wav" "clip_$fmt.wav" --coeffs gain3.txt --quiet 2>file_err.txt
    to_raw "clip_$fmt.wav" "$fmt" "clip_want_$fmt.raw"
    "$GPUFILT" - - --raw "$fmt" -c 2 --coeffs gain3.txt --quiet <"in_${src}_$fmt.raw" >"clip_pipe_$fmt.raw" 2>pipe_err.txt
    same_bytes "gain 3, $fmt: clipped output" "clip_pipe_$fmt.raw" "clip_want_$fmt.raw"
    n=$(clipped file_err.txt)
    [ "$n" -gt 10000 ] || fail "gain 3, $fmt: only $n samples clipped in file mode"
    assert_eq "gain 3, $fmt: warning on a pipe" "$(cat pipe_err.txt)" "${WARN}$n samples clipped in standard output"
done

# The arithmetic itself, by hand: mono samples times 0.5 (ties to even) and
# times 2 (clipped and counted), for the integer formats.
printf '0.5\n' >half.txt
printf '2\n' >two.txt
vals=(1 3 -1 -3 5 7 32767 -32768)
half=(0 2 0 -2 2 4 16384 -16384)
twice=(2 6 -2 -6 10 14 32767 -32768)
pk() { perl -e 'my $f = shift; print pack($f, @ARGV)' -- "$@"; }
for fmt in s16le s16be; do
    p='s<*'
    [ $fmt = s16le ] || p='s>*'
    pk "$p" "${vals[@]}" >"exact_$fmt.raw"
    pk "$p" "${half[@]}" >exact_half_want.raw
    pk "$p" "${twice[@]}" >exact_twice_want.raw
    cat "exact_$fmt.raw" | "$GPUFILT" - - --raw $fmt -c 1 --coeffs half.txt --quiet --dither none >exact_half.raw
    same_bytes "$fmt x 0.5, ties to even" exact_half.raw exact_half_want.raw
    cat "exact_$fmt.raw" | "$GPUFILT" - - --raw $fmt -c 1 --coeffs two.txt --quiet --dither none >exact_twice.raw 2>stderr.txt
    same_bytes "$fmt x 2, clipped" exact_twice.raw exact_twice_want.raw
    assert_eq "$fmt x 2: clip count" "$(cat stderr.txt)" "${WARN}2 samples clipped in standard output"
done
# u8: 128 is zero. 129 x 0.5 = 0.5 -> 0; 131 -> 1.5 -> 2; 127 -> -0.5 -> 0; 125 -> -1.5 -> -2.
pk 'C*' 129 131 127 125 255 0 | "$GPUFILT" - - --raw u8 -c 1 --coeffs half.txt --quiet --dither none >exact_u8.raw
pk 'C*' 128 130 128 126 192 64 >exact_u8_want.raw
same_bytes "u8 x 0.5, ties to even" exact_u8.raw exact_u8_want.raw
# s24le (as 32-bit values shifted into 3 bytes) and s32le in f64: the same ties.
pk24() { for v in "$@"; do pk 'l<' "$v" | head -c 3; done; }
pk24 1 3 -1 -3 8388607 -8388608 | "$GPUFILT" - - --raw s24le -c 1 --coeffs half.txt --quiet >exact_s24.raw
pk24 0 2 0 -2 4194304 -4194304 >exact_s24_want.raw
same_bytes "s24le x 0.5, ties to even" exact_s24.raw exact_s24_want.raw
pk 'l<*' 1 3 -1 -3 2147483647 -2147483648 | "$GPUFILT" - - --raw s32le -c 1 --coeffs half.txt --precision f64 --quiet >exact_s32.raw
pk 'l<*' 0 2 0 -2 1073741824 -1073741824 >exact_s32_want.raw
same_bytes "s32le x 0.5 in f64, ties to even" exact_s32.raw exact_s32_want.raw

# --verify on a stream: the reference runs over the same blocks.
cat in_wav16_s16le.raw | "$GPUFILT" - - --raw s16le -c 2 --taps 25 --verify --device cpu 2>stderr.txt >verify_out.raw
assert_eq "--verify on a stream" "$(sed -n 2p stderr.txt)" "verify: 40022 samples, max |error| 0, max ulp 0: bit-exact with the reference"

# Longer than one 65536-frame block, small chunks, through a pipe.
"$SFTOOL" gen long16.wav wav16 2 48000 150001 noise
to_raw long16.wav s16le long16.raw
"$GPUFILT" long16.wav long16_out.wav --taps 63 --quiet
to_raw long16_out.wav s16le long16_want.raw
cat long16.raw | "$GPUFILT" - - --raw s16 -c 2 --taps 63 --chunk 4099 --quiet >long16_pipe.raw
same_bytes "150001 frames, --chunk 4099, SoX's name s16" long16_pipe.raw long16_want.raw

# --out-raw: s16le in, f32le out, against file mode written as float WAV.
"$GPUFILT" in_wav16.wav outraw_file.wav --taps 5 --out-format wav:float --quiet
to_raw outraw_file.wav f32le outraw_want.raw
cat in_wav16_s16le.raw | "$GPUFILT" - - --raw s16le -c 2 --taps 5 --out-raw f32le --quiet >outraw_pipe.raw
same_bytes "--raw s16le --out-raw f32le" outraw_pipe.raw outraw_want.raw
# ... and f32le in, s24le out (quantised on output like a 24-bit WAV). sftool's
# float noise is not in [-1, 1); 24-bit noise copied to float is.
"$GPUFILT" in_wav24.wav f24.wav --taps 1 --out-format wav:float --quiet
to_raw f24.wav f32le f24.raw
"$GPUFILT" f24.wav outraw24_file.wav --coeffs rand31.txt --out-format wav:pcm_24 --quiet
to_raw outraw24_file.wav s24le outraw24_want.raw
cat f24.raw | "$GPUFILT" - - --raw f32 -c 2 --coeffs rand31.txt --out-raw s24 --quiet >outraw24_pipe.raw
same_bytes "--raw f32 --out-raw s24" outraw24_pipe.raw outraw24_want.raw

# A container on stdin: raw out in the input's sample format.
for src in wav16 wav24 wavu8 wavf; do
    case $src in wav16) fmt=s16le ;; wav24) fmt=s24le ;; wavu8) fmt=u8 ;; wavf) fmt=f32le ;; esac
    "$GPUFILT" "in_$src.wav" "cont_$src.wav" --taps 5 --quiet
    to_raw "cont_$src.wav" "$fmt" "cont_want_$src.raw"
    cat "in_$src.wav" | "$GPUFILT" - - --taps 5 >"cont_pipe_$src.raw" 2>cont_err.txt
    same_bytes "$src on stdin -> raw $fmt on stdout" "cont_pipe_$src.raw" "cont_want_$src.raw"
    assert_eq "$src on stdin: output format" "$(tail -n 1 cont_err.txt)" "gpufilt: output format raw $fmt"
done
# AU (big-endian) on stdin: the samples come out as s16le (host order).
sox in_wav16.wav -t au - | "$GPUFILT" - - --taps 5 --quiet >au_in.raw
to_raw cont_wav16.wav s16le au_in_want.raw
same_bytes "AU on stdin -> raw s16le" au_in.raw au_in_want.raw

# Containers on stdout: AU and FLAC, decoded by SoX from the pipe.
for f in au $([ $sox_flac = 0 ] || echo flac); do
    pipe_status "cat in_wav16_s16le.raw | \"\$GPUFILT\" - - --raw s16le -c 2 --rate 48000 --taps 5 --out-format $f --quiet | sox -t $f - -t raw -e signed -b 16 -L cont_out_$f.raw"
    assert_eq "$f on stdout: exit statuses" "${PS[*]}" "0 0 0"
    same_bytes "$f on stdout, decoded by SoX" "cont_out_$f.raw" cont_want_wav16.raw
done
# WAV on stdout is fine where stdout is a regular file (it can seek back).
cat in_wav16_s16le.raw | "$GPUFILT" - - --raw s16le -c 2 --rate 48000 --taps 5 --out-format wav --quiet >stdout_file.wav
if "$SFTOOL" cmp stdout_file.wav cont_wav16.wav; then pass; else fail "WAV on stdout redirected to a file"; fi

# --- 2. Random read sizes and pauses: the same bytes. -------------------------
"$SFTOOL" gen feed24.wav wav24 2 48000 1001 noise
to_raw feed24.wav s24le feed24.raw
"$SFTOOL" gen feed24b.wav wav24 2 48000 3001 noise
to_raw feed24b.wav s24le feed24b.raw
for m in same causal; do
    "$GPUFILT" feed24.wav "feed24_$m.wav" --taps 63 --mode $m --quiet
    to_raw "feed24_$m.wav" s24le "feed24_$m.raw"
    "$GPUFILT" feed24b.wav "feed24b_$m.wav" --taps 63 --mode $m --quiet
    to_raw "feed24b_$m.wav" s24le "feed24b_$m.raw"
done
# SEED:MAXCHUNK:MAXDELAY_US:INPUT:MODE (6-byte frames: pieces split samples and frames).
for c in 1:1:30:feed24:same 2:2:30:feed24:causal 3:3:20:feed24b:same 4:5:20:feed24b:causal \
    5:7:10:feed24b:same 6:7:0:feed24b:causal 7:13:50:feed24b:same; do
    IFS=: read -r seed chunk delay input m <<<"$c"
    pipe_status "\"\$PIPETOOL\" feed $seed $chunk $delay <$input.raw | \"\$GPUFILT\" - - --raw s24le -c 2 --taps 63 --mode $m --quiet >fed_$seed.raw"
    assert_eq "feed $c: exit statuses" "${PS[*]}" "0 0"
    same_bytes "feed seed $seed, pieces 1..$chunk bytes, pauses 0..$delay us, $m" "fed_$seed.raw" "${input}_$m.raw"
done
# A filter longer than the stream, and the smallest chunks.
"$GPUFILT" feed24.wav feed24_long.wav --taps 4095 --quiet
to_raw feed24_long.wav s24le feed24_long.raw
pipe_status "\"\$PIPETOOL\" feed 8 9 20 <feed24.raw | \"\$GPUFILT\" - - --raw s24le -c 2 --taps 4095 --chunk 1 --quiet >fed_8.raw"
assert_eq "feed, 4095 taps over 1001 frames, --chunk 1: exit statuses" "${PS[*]}" "0 0"
same_bytes "feed, 4095 taps over 1001 frames, --chunk 1" fed_8.raw feed24_long.raw
# A WAV container on stdin in small pieces (libsndfile reads the pipe).
"$GPUFILT" feed24b.wav feed24b_5.wav --taps 5 --quiet
to_raw feed24b_5.wav s24le feed24b_5.raw
pipe_status "\"\$PIPETOOL\" feed 9 11 20 <feed24b.wav | \"\$GPUFILT\" - - --taps 5 --quiet >fed_9.raw"
assert_eq "feed, WAV on stdin: exit statuses" "${PS[*]}" "0 0"
same_bytes "feed, WAV on stdin in pieces of 1..11 bytes" fed_9.raw feed24b_5.raw
# Larger pieces, a longer stream crossing 65536-frame blocks.
"$SFTOOL" gen feedf.wav wavf 2 48000 100003 noise
to_raw feedf.wav f32le feedf.raw
"$GPUFILT" feedf.wav feedf_out.wav --taps 5 --mode causal --quiet
to_raw feedf_out.wav f32le feedf_want.raw
for c in 11:4099:300 12:65537:2000 13:1000000:1000; do
    IFS=: read -r seed chunk delay <<<"$c"
    pipe_status "\"\$PIPETOOL\" feed $seed $chunk $delay <feedf.raw | \"\$GPUFILT\" - - --raw f32le -c 2 --taps 5 --mode causal --quiet >fedf_$seed.raw"
    assert_eq "feed $c: exit statuses" "${PS[*]}" "0 0"
    same_bytes "feed seed $seed, pieces 1..$chunk bytes" "fedf_$seed.raw" feedf_want.raw
done

# --- 3. EOF inside a frame: complete frames filtered, a warning, exit 7. ------
printf '\001\002\003' >extra3.bin
cat in_wav16_s16le.raw extra3.bin >partial.raw
pipe_status "cat partial.raw | \"\$GPUFILT\" - - --raw s16le -c 2 --taps 5 --quiet >partial_out.raw 2>partial_err.txt"
assert_eq "partial frame: exit status" "${PS[1]}" 7
assert_eq "partial frame: warning" "$(cat partial_err.txt)" \
    "${WARN}input ended inside a frame: dropped the last 3 bytes (a frame is 4 bytes); filtered the 20011 complete frames"
same_bytes "partial frame: the complete frames, as file mode" partial_out.raw want_wav16_s16le_f32_1.raw
# One byte short of a 6-byte frame at the end, arriving a byte at a time.
head -c $(($(stat -c %s feed24.raw) - 5)) feed24.raw >partial24.raw
# sftool's noise is one sequence: its first 1000 frames are a 1000-frame file.
"$SFTOOL" gen complete24.wav wav24 2 48000 1000 noise
"$GPUFILT" complete24.wav complete24_out.wav --taps 63 --quiet
to_raw complete24_out.wav s24le complete24_out.raw
pipe_status "\"\$PIPETOOL\" feed 21 1 0 <partial24.raw | \"\$GPUFILT\" - - --raw s24le -c 2 --taps 63 --quiet >partial24_out.raw 2>partial_err.txt"
assert_eq "partial frame (1 byte) exit status" "${PS[1]}" 7
assert_eq "partial frame (1 byte): warning" "$(cat partial_err.txt)" \
    "${WARN}input ended inside a frame: dropped the last 1 byte (a frame is 6 bytes); filtered the 1000 complete frames"
same_bytes "partial frame (1 byte): the complete frames" partial24_out.raw complete24_out.raw
# A raw file (not a pipe) that ends inside a frame: the same.
expect 7 "${WARN}input ended inside a frame: dropped the last 3 bytes (a frame is 4 bytes); filtered the 20011 complete frames" \
    partial.raw partial_file.raw --raw s16le -c 2 --taps 5 --quiet
same_bytes "partial frame from a file" partial_file.raw want_wav16_s16le_f32_1.raw

# --- 4. A closed output pipe: exit 141 at once, nothing on stderr. -----------
"$PIPETOOL" noise 64M 5 >big.raw
for how in file pipe au flac; do
    case $how in
    file) cmd='"$GPUFILT" - - --raw f32le -c 2 --taps 5 <big.raw 2>epipe_err.txt | head -c 100 >head.out' ;;
    pipe) cmd='cat big.raw | "$GPUFILT" - - --raw f32le -c 2 --taps 5 2>epipe_err.txt | head -c 100 >head.out' ;;
    *) cmd="cat big.raw | \"\$GPUFILT\" - - --raw f32le -c 2 --rate 48000 --taps 5 --out-format ${how/flac/flac:pcm_24} 2>epipe_err.txt | head -c 100 >head.out" ;;
    esac
    t0=$(date +%s%N)
    pipe_status "$cmd"
    ms=$((($(date +%s%N) - t0) / 1000000))
    gf=${PS[0]}
    [ $how = file ] || gf=${PS[1]}
    assert_eq "EPIPE ($how): gpufilt's exit status" "$gf" 141
    assert_eq "EPIPE ($how): stderr" "$(cat epipe_err.txt)" ""
    assert_eq "EPIPE ($how): bytes through head" "$(stat -c %s head.out)" 100
    if [ "$ms" -lt 3000 ]; then pass; else fail "EPIPE ($how): took $ms ms (64 MiB input)"; fi
done

# --- 5. SIGINT / SIGTERM part-way through a stream. ---------------------------
# The first 10000 of 20000 frames go in through a FIFO held open by this
# shell (no sleeping process to clean up); once the output holds everything
# they determine, the signal comes. Same mode writes all but the last
# (T-1)/2 = 2 frames: those wait for input that never came.
"$SFTOOL" gen sig.wav wavf 2 48000 20000 noise
to_raw sig.wav f32le sig.raw
head -c 80000 sig.raw >sig_part.raw
for c in causal:INT:2 same:INT:2 causal:TERM:15; do
    IFS=: read -r m sig num <<<"$c"
    "$GPUFILT" sig.wav "sig_$m.wav" --taps 5 --mode $m --quiet
    to_raw "sig_$m.wav" f32le "sig_want_$m.raw"
    want_frames=10000
    [ $m = causal ] || want_frames=9998
    rm -f fifo
    mkfifo fifo
    "$GPUFILT" - - --raw f32le -c 2 --taps 5 --mode $m --quiet <fifo >"sig_out_$m$sig.raw" 2>sig_err.txt &
    gp=$!
    BG+=("$gp")
    exec 3>fifo
    timeout 10 cat sig_part.raw >&3 || fail "SIG$sig ($m): writing the first 10000 frames timed out"
    for _ in $(seq 200); do
        [ "$(stat -c %s "sig_out_$m$sig.raw")" -lt $((want_frames * 8)) ] || break
        sleep 0.05
    done
    sleep 0.1 # anything beyond the determined frames would show now
    assert_eq "SIG$sig ($m): bytes out before the signal" "$(stat -c %s "sig_out_$m$sig.raw")" $((want_frames * 8))
    kill -"$sig" "$gp"
    rc=0
    wait "$gp" || rc=$?
    BG=()
    exec 3>&-
    assert_eq "SIG$sig ($m): exit status" "$rc" 130
    assert_eq "SIG$sig ($m): message" "$(cat sig_err.txt)" \
        "${E}interrupted by signal $num; wrote the $want_frames frames filtered so far"
    head -c $((want_frames * 8)) "sig_want_$m.raw" >sig_want_head.raw
    same_bytes "SIG$sig ($m): output = first $want_frames frames of file mode" "sig_out_$m$sig.raw" sig_want_head.raw
done

# --- 6. Bounded memory over a long stream. -----------------------------------
# Blocks are 4 in + 4 out of 65536 stereo f32 frames (4 MiB); measured peak
# RSS 11.3 MiB for 64 MiB and for 4 GiB (20 MiB under ASan). The cap, 64
# MiB, leaves room for allocators and sanitizers but not for anything that
# grows with the stream; the 4 GiB run must also stay within 8 MiB of the
# 64 MiB run. 4 GiB (2^32 bytes) also catches a byte count in 32 bits.
big=${GPUFILT_PIPE_BIG_BYTES:-}
if [ -z "$big" ]; then
    big=4G
    ldd "$GPUFILT" >ldd.txt 2>&1 || true
    if grep -q 'libasan\|libtsan' ldd.txt; then big=512M; fi
fi
[[ $big =~ ^[1-9][0-9]*[MG]?$ ]] || fail "GPUFILT_PIPE_BIG_BYTES: '$big' is not a byte count (e.g. 512M, 4G)"
for size in 64M "$big"; do
    case $size in *G) n=$((${size%G} << 30)) ;; *M) n=$((${size%M} << 20)) ;; *) n=$size ;; esac
    t0=$(date +%s%N)
    pipe_status "\"\$PIPETOOL\" zeros $size | \"\$PIPETOOL\" rss rss_$size.txt -- \"\$GPUFILT\" - - --raw f32le -c 2 --taps 5 --device cpu --quiet | \"\$PIPETOOL\" count --zero >count.txt"
    ms=$((($(date +%s%N) - t0) / 1000000))
    assert_eq "$size stream: exit statuses (zeros, gpufilt, count --zero)" "${PS[*]}" "0 0 0"
    assert_eq "$size stream: bytes out" "$(cat count.txt)" "$n"
    echo "cli_pipes: $size of f32le through gpufilt: peak RSS $(cat "rss_$size.txt") KiB, $ms ms"
    [ "$(cat "rss_$size.txt")" -lt $((64 * 1024)) ] || fail "$size stream: peak RSS $(cat "rss_$size.txt") KiB, cap 65536 KiB"
done
[ "$(cat "rss_$big.txt")" -lt $(($(cat rss_64M.txt) + 8192)) ] ||
    fail "peak RSS grows with the stream: $(cat rss_64M.txt) KiB for 64 MiB, $(cat "rss_$big.txt") KiB for $big"

# --- 7. Latency of a trickle: frames one at a time, 30 ms apart. ---------------
# Each output frame must arrive within 300 ms of the input frame that
# determines it (same: (T-1)/2 frames later; causal: at once), never early.
"$SFTOOL" gen tr40.wav wavf 2 48000 40 noise
"$SFTOOL" gen tr80.wav wavf 2 48000 80 noise
for c in 5:same:tr40 63:same:tr80 31:causal:tr40; do
    IFS=: read -r T m input <<<"$c"
    to_raw "$input.wav" f32le "$input.raw"
    "$GPUFILT" "$input.wav" "tr_$T$m.wav" --taps "$T" --mode $m --quiet
    to_raw "tr_$T$m.wav" f32le "tr_want_$T$m.raw"
    look=$(((T - 1) / 2))
    [ $m = same ] || look=0
    if "$PIPETOOL" trickle "$input.raw" "tr_want_$T$m.raw" 8 $look 30 300 -- \
        "$GPUFILT" - - --raw f32le -c 2 --taps "$T" --mode $m --quiet >trickle.txt; then
        pass
        echo "cli_pipes: T=$T $m: $(cat trickle.txt)"
    else
        fail "trickle T=$T $m (see pipetool's message above)"
    fi
done
# The NUPC method: output in partitions of B = 16 frames, from a 600-tap
# filter whose FFT partition (256 by default) would hold back all 48.
"$SFTOOL" gen tr48.wav wavf 2 48000 48 noise
to_raw tr48.wav f32le tr48.raw
"$GPUFILT" tr48.wav tr_nupc.wav --taps 600 --mode causal --method nupc --partition 16 --quiet
to_raw tr_nupc.wav f32le tr_want_nupc.raw
if "$PIPETOOL" trickle tr48.raw tr_want_nupc.raw 8 0/16 30 300 -- \
    "$GPUFILT" - - --raw f32le -c 2 --taps 600 --mode causal --method nupc --partition 16 \
    --quiet >trickle.txt; then
    pass
    echo "cli_pipes: nupc, B 16: $(cat trickle.txt)"
else
    fail "trickle nupc (see pipetool's message above)"
fi

# --- 8. A SoX pipeline. ---------------------------------------------------------
x=flac
[ $sox_flac = 1 ] || x=wav
"$SFTOOL" gen soxin.$x ${x}16 2 48000 48000 noise
pipe_status "sox soxin.$x -t f32 - | \"\$GPUFILT\" - - --raw f32le --channels 2 --taps 5 --quiet | tee sox_mid.raw | sox -t f32 -c 2 -r 48000 - soxout.$x"
assert_eq "sox | gpufilt | sox: exit statuses" "${PS[*]}" "0 0 0 0"
assert_eq "sox | gpufilt | sox: frames in out.$x" "$("$SFTOOL" frames soxout.$x)" 48000
"$GPUFILT" soxin.$x sox_mid.wav --taps 5 --out-format wav:float --quiet
to_raw sox_mid.wav f32le sox_mid_want.raw
same_bytes "gpufilt's f32 stream between the two SoX" sox_mid.raw sox_mid_want.raw

# --- 9. Refused uses and their messages. ---------------------------------------
expect 2 "${E}--raw: 's17le' is not one of u8 s8 s16le s16be s24le s32le f32le f64le" - - --raw s17le -c 2 --taps 5
expect 2 "${E}--out-raw: 'f16le' is not one of u8 s8 s16le s16be s24le s32le f32le f64le" - - --raw f32le -c 2 --out-raw f16le --taps 5
expect 2 "${E}--raw needs --channels (raw samples carry no channel count)" - - --raw s16le --taps 5
expect 2 "${E}--channels is for --raw input or --live (a file's header says its own)" in_wav16.wav out.wav -c 2 --taps 5
expect 2 "${E}--channels: '0' is out of range 1..1024" - - --raw s16le -c 0 --taps 5
pipe_status 'cat in_wav16_s16le.raw | "$GPUFILT" - - --raw s16le -c 2 --rate 48000 --taps 5 --out-format wav 2>wav_err.txt | cat >wav_out.bin'
assert_eq "WAV to a pipe: exit status" "${PS[1]}" 2
assert_eq "WAV to a pipe: message" "$(cat wav_err.txt)" \
    "${E}cannot write WAV (Microsoft) / Signed 16 bit PCM to standard output (the format cannot be written to a pipe); use --out-raw FMT, or --out-format au or flac"
assert_eq "WAV to a pipe: nothing written" "$(stat -c %s wav_out.bin)" 0
expect 2 "${E}writing WAV (Microsoft) / Signed 16 bit PCM to 'out.wav' needs a sample rate: give --rate (raw input carries none)" \
    in_wav16_s16le.raw out.wav --raw s16le -c 2 --taps 5
expect_no_output out.wav
# A WAV file read with --raw: a warning, every byte filtered, exit 0.
expect 0 "${WARN}in_wav16.wav starts like a WAV file, but --raw s16le reads every byte as samples, header included (leave out --raw to read the WAV file)" \
    in_wav16.wav asraw.raw --raw s16le -c 2 --taps 5 --quiet
assert_eq "WAV read as raw: bytes out (header included)" "$(stat -c %s asraw.raw)" "$(stat -c %s in_wav16.wav)"
"$GPUFILT" - - --raw s16le -c 2 --taps 5 --quiet <in_wav16.wav >asraw2.raw 2>stderr.txt
assert_eq "WAV on stdin read as raw: warning" "$(cat stderr.txt)" \
    "${WARN}standard input starts like a WAV file, but --raw s16le reads every byte as samples, header included (leave out --raw to read the WAV file)"
[ -e in_flac16.flac ] || "$SFTOOL" gen in_flac16.flac flac16 2 48000 20011 noise
cat in_flac16.flac | "$GPUFILT" - - --raw u8 -c 1 --taps 5 --quiet >/dev/null 2>stderr.txt
assert_eq "FLAC on stdin read as raw: warning" "$(cat stderr.txt)" \
    "${WARN}standard input starts like a FLAC file, but --raw u8 reads every byte as samples, header included (leave out --raw to read the FLAC file)"
# FLAC on stdin without --raw: libsndfile cannot.
pipe_status 'cat in_flac16.flac | "$GPUFILT" - out.wav --taps 5 2>stderr.txt'
assert_eq "FLAC on stdin: exit status" "${PS[1]}" 3
case "$(cat stderr.txt)" in
"${E}libsndfile cannot decode FLAC from a pipe ("*"); decode it first, e.g. sox in.flac -t f32 - | gpufilt - OUT --raw f32le -c CHANNELS ...") pass ;;
*) fail "FLAC on stdin: message '$(cat stderr.txt)'" ;;
esac
expect_no_output out.wav
# Not audio on stdin.
pipe_status 'echo "just text" | "$GPUFILT" - - --taps 5 2>stderr.txt >/dev/null'
assert_eq "text on stdin: exit status" "${PS[1]}" 3
case "$(cat stderr.txt)" in
"${E}standard input is not audio libsndfile can read from a pipe ("*"); for headerless samples give --raw FMT --channels N") pass ;;
*) fail "text on stdin: message '$(cat stderr.txt)'" ;;
esac
# An empty stream is a stream of zero frames: exit 0, no output, no message.
"$GPUFILT" - - --raw f32le -c 2 --taps 5 --quiet </dev/null >empty_out.raw 2>stderr.txt
assert_eq "empty stdin (/dev/null): output bytes" "$(stat -c %s empty_out.raw)" 0
assert_eq "empty stdin (/dev/null): stderr" "$(cat stderr.txt)" ""
pipe_status 'printf "" | "$GPUFILT" - - --raw f32le -c 2 --taps 5 --quiet >empty_out.raw 2>stderr.txt'
assert_eq "empty pipe: exit status" "${PS[1]}" 0
assert_eq "empty pipe: output bytes" "$(stat -c %s empty_out.raw)" 0
# ... but an empty regular file is an empty input, as in file mode.
: >empty.raw
expect 3 "${E}input 'empty.raw' is empty" empty.raw out.raw --raw f32le -c 2 --taps 5
# Terminals (through script(1)'s pseudo-terminal, where it exists).
if command -v script >/dev/null; then
    rc=0
    script -qec "$(printf '%q ' "$GPUFILT") - tty_out.raw --raw f32le -c 2 --taps 5" /dev/null >tty.txt || rc=$?
    assert_eq "stdin a terminal: exit status" "$rc" 2
    assert_eq "stdin a terminal: message" "$(tr -d '\r' <tty.txt)" \
        "${E}standard input is a terminal: pipe audio in, e.g. sox in.flac -t wav - | gpufilt - out.wav --taps 5 (headerless samples: --raw FMT -c CHANNELS, and -r RATE to write a container)"
    # The hint's example works as it stands (with in.flac, or a WAV where
    # this SoX has no FLAC).
    hint=$(tr -d '\r' <tty.txt | sed -n 's/.*e\.g\. \(sox .*--taps 5\) (headerless.*/\1/p')
    src=in.flac
    [ $sox_flac = 1 ] || src=in.wav
    "$SFTOOL" gen "$src" "$([ $src = in.flac ] && echo flac16 || echo wav16)" 2 44100 30000 noise
    hint=${hint/in.flac/$src}
    hint=${hint/gpufilt/\"\$GPUFILT\"}
    pipe_status "$hint -q"
    assert_eq "stdin a terminal: the hint's command ($hint): exit statuses" "${PS[*]}" "0 0"
    assert_eq "stdin a terminal: the hint's command: frames out" "$("$SFTOOL" frames out.wav)" 30000
    rm -f out.wav
    rc=0
    script -qec "$(printf '%q ' "$GPUFILT") - - --raw s16le -c 2 --taps 5 <in_wav16_s16le.raw" /dev/null >tty.txt || rc=$?
    assert_eq "stdout a terminal: exit status" "$rc" 2
    assert_eq "stdout a terminal: message" "$(tr -d '\r' <tty.txt)" \
        "${E}standard output is a terminal: redirect it to a file or a pipe"
fi
expect_no_output tty_out.raw

# --- 10. Signals and slow streams: SIGINT with stdout a pipe, a WAV
# container on stdin held back, a signal while the output pipe is stalled,
# and the container warning for a stream arriving in small pieces.
{
    # a. stdin a regular file, stdout a pipe, SIGINT part-way: the bytes already
    #    on stdout are output, so "no output written" is wrong.
    "$PIPETOOL" noise 64M 9 >int.raw
    rm -f ofifo
    mkfifo ofifo
    "$GPUFILT" - - --raw f32le -c 2 --taps 255 --device ref --quiet <int.raw >ofifo 2>int_err.txt &
    gp=$!
    BG+=("$gp")
    exec 4<ofifo
    head -c 1000000 <&4 >/dev/null # the first megabyte is out: then interrupt
    kill -INT "$gp"
    timeout 10 cat <&4 >/dev/null || true # the rest, until gpufilt ends
    rc=0
    wait "$gp" || rc=$?
    BG=()
    exec 4<&-
    assert_eq "a: SIGINT with stdin a file, stdout a pipe: exit status" "$rc" 130
    case "$(cat int_err.txt)" in
    *"no output written"*) fail "a: '$(cat int_err.txt)' after writing to stdout" ;;
    *) pass ;;
    esac
    # b. A WAV container on stdin is held back: libsndfile waits for 65536 whole
    #    frames per read, so after 10000 causal frames nothing is out, and a
    #    signal drops them.
    "$SFTOOL" gen wsig.wav wav16 2 48000 100000 noise
    head -c $((44 + 40000)) wsig.wav >wsig_part.wav
    rm -f fifo
    mkfifo fifo
    "$GPUFILT" - - --taps 5 --mode causal --quiet <fifo >wsig_out.raw 2>sig_err.txt &
    gp=$!
    BG+=("$gp")
    exec 3>fifo
    timeout 10 cat wsig_part.wav >&3 || true
    for _ in $(seq 40); do
        [ "$(stat -c %s wsig_out.raw)" -lt 40000 ] || break
        sleep 0.05
    done
    assert_eq "b: WAV on stdin: bytes out for 10000 frames in" "$(stat -c %s wsig_out.raw)" 40000
    kill -INT "$gp"
    rc=0
    wait "$gp" || rc=$?
    BG=()
    exec 3>&-
    assert_eq "b: WAV on stdin, SIGINT: message" "$(cat sig_err.txt)" \
        "${E}interrupted by signal 2; wrote the 10000 frames filtered so far"
    # c. SIGTERM while the reader of stdout has stopped reading: gpufilt waits
    #    for the pipe for ever (until the reader exits: then 141, no message).
    rm -f ofifo
    mkfifo ofifo
    "$GPUFILT" - - --raw f32le -c 2 --taps 5 --quiet <big.raw >ofifo 2>term_err.txt &
    gp=$!
    BG+=("$gp")
    exec 4<ofifo # held open, never read
    sleep 0.5
    kill -TERM "$gp"
    for _ in $(seq 60); do
        kill -0 "$gp" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$gp" 2>/dev/null; then
        fail "c: SIGTERM with a stalled reader: still running after 3 s"
        kill -KILL "$gp"
    else
        pass
    fi
    rc=0
    wait "$gp" || rc=$?
    BG=()
    exec 4<&-
    assert_eq "c: SIGTERM with a stalled reader: exit status" "$rc" 130
    # d. The container warning is skipped when the first bytes arrive in pieces
    #    that already make whole frames (u8 or s16le mono).
    "$PIPETOOL" feed 1 1 2000 <in_wav16.wav | "$GPUFILT" - - --raw u8 -c 1 --taps 5 --dither none --quiet >/dev/null 2>stderr.txt
    assert_eq "d: WAV on stdin a byte at a time, --raw u8 -c 1: warning" "$(cat stderr.txt)" \
        "${WARN}standard input starts like a WAV file, but --raw u8 reads every byte as samples, header included (leave out --raw to read the WAV file)"
}

finish
