#!/usr/bin/env bash
# Input edge cases: WAV's streaming length (0xFFFFFFFF) is read to the end;
# a header that gives less than the file holds is said; a partial last
# frame is exit 7 in a WAV (file or pipe) as in raw samples; a truncated
# input, FLAC included, says "truncated", and --allow-truncated filters
# what decodes.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '

# A 16-bit stereo WAV header at 48 kHz with the given RIFF and data sizes.
wavhdr() {
    perl -e 'print pack("A4 V A4 A4 V v v V V v v A4 V", "RIFF", $ARGV[0], "WAVE", "fmt ", 16,
        1, 2, 48000, 192000, 4, 16, "data", $ARGV[1])' "$1" "$2"
}
"$SFTOOL" gen in.wav wav16 2 48000 10000 noise
tail -c +45 in.wav >samples.bin # 40000 bytes: 10000 frames
"$GPUFILT" in.wav ref.wav --taps 5 --quiet
"$GPUFILT" in.wav ref.raw --taps 5 --out-raw s16le --quiet
[ "$(stat -c %s samples.bin)" = 40000 ] && pass || fail "samples.bin is not 40000 bytes"

# --- The streaming length: every frame, as sox reads it; on a pipe too.
{ wavhdr 4294967295 4294967295; cat samples.bin; } >stream.wav
expect 0 "" stream.wav out_stream.wav --taps 5 --quiet
if "$SFTOOL" cmp out_stream.wav ref.wav; then pass; else fail "streaming length: samples"; fi
cat stream.wav | "$GPUFILT" - - --taps 5 --quiet >out_stream.raw
cmp -s out_stream.raw ref.raw && pass || fail "streaming length on a pipe: bytes"

# --- A header that gives less than the file holds: a warning, and the
# frames it gives; chunks or zero padding after the data are no such thing.
{ wavhdr 20036 20000; cat samples.bin; } >short.wav
expect 0 "${W}input 'short.wav': 19.5 KiB after the 5000 frames its header gives are neither chunks nor padding (the header may say too little); only those frames are filtered" \
    short.wav out_short.wav --taps 5 --quiet
assert_eq "frames from a header that gives 5000" "$("$SFTOOL" frames out_short.wav)" 5000
{ wavhdr 40048 40000; cat samples.bin; printf 'LIST\004\000\000\000INFO'; } >list.wav
expect 0 "" list.wav out_list.wav --taps 5 --quiet
{ wavhdr 40036 40000; cat samples.bin; head -c 3000 /dev/zero; } >padded.wav
expect 0 "" padded.wav out_padded.wav --taps 5 --quiet
if "$SFTOOL" cmp out_padded.wav ref.wav; then pass; else fail "zero padding after the data: samples"; fi

# --- A partial last frame: the complete frames, a warning, exit 7, as for
# raw samples; from a file, with the streaming length, and on a pipe.
{ wavhdr 40039 40003; cat samples.bin; printf '\001\002\003'; } >partial.wav
PARTIAL="${W}input ended inside a frame: dropped the last 3 bytes (a frame is 4 bytes); filtered the 10000 complete frames"
expect 7 "$PARTIAL" partial.wav out_partial.wav --taps 5 --quiet
if "$SFTOOL" cmp out_partial.wav ref.wav; then pass; else fail "partial frame: samples"; fi
{ wavhdr 4294967295 4294967295; cat samples.bin; printf '\001\002\003'; } >partial_stream.wav
expect 7 "$PARTIAL" partial_stream.wav out_partial2.wav --taps 5 --quiet
set +e +o pipefail
cat partial.wav | "$GPUFILT" - - --taps 5 --quiet >out_partial.raw 2>stderr.txt
rc=${PIPESTATUS[1]}
set -e -o pipefail
assert_eq "partial frame on a pipe: exit status" "$rc" 7
assert_eq "partial frame on a pipe: warning" "$(cat stderr.txt)" "$PARTIAL"
cmp -s out_partial.raw ref.raw && pass || fail "partial frame on a pipe: bytes"
# ... and the same bytes as raw samples: the same answer.
cat samples.bin <(printf '\001\002\003') >partial.raw
expect 7 "$PARTIAL" partial.raw out_partial3.raw --raw s16le -c 2 --taps 5 --quiet

# --- Truncated: named in gpufilt's words.
head -c 20044 in.wav >trunc.wav
expect 3 "${E}input 'trunc.wav' is truncated: its header promises 10000 frames, the file holds 5000; --allow-truncated filters the 5000 frames that exist" \
    trunc.wav out.wav --taps 5
expect 0 "${W}input 'trunc.wav' is truncated (its header promises 10000 frames, the file holds 5000); filtered the 5000 frames that exist" \
    trunc.wav out_trunc.wav --taps 5 --allow-truncated --quiet
"$SFTOOL" gen in.aiff aiff16 2 48000 10000 noise
head -c 20000 in.aiff >trunc.aiff
expect 3 "${E}input 'trunc.aiff' is truncated: its header promises 10000 frames, the file holds 4986; --allow-truncated filters the 4986 frames that exist" trunc.aiff out.wav --taps 5
expect_no_output out.wav

# --- A truncated FLAC: "truncated", and --allow-truncated filters the
# frames that decode (as many as SoX recovers).
"$SFTOOL" gen full.flac flac16 2 48000 100000 noise
head -c $(($(stat -c %s full.flac) / 2)) full.flac >cut.flac
rc=0
"$GPUFILT" cut.flac out.wav --taps 1 2>stderr.txt || rc=$?
assert_eq "cut FLAC: exit status" "$rc" 3
msg=$(cat stderr.txt)
got=$(sed -n 's/.*decoding stopped after \([0-9]*\) of 100000 frames.*/\1/p' stderr.txt)
case "$msg" in
"${E}input 'cut.flac' is truncated: decoding stopped after $got of 100000 frames: the FLAC decoder lost sync; --allow-truncated filters the $got frames that exist") pass ;;
*) fail "cut FLAC: message '$msg'" ;;
esac
[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -lt 100000 ] && pass || fail "cut FLAC: frames decoded '$got'"
expect_no_output out.wav
expect 0 "${W}input 'cut.flac' is truncated (decoding stopped after $got of 100000 frames: the FLAC decoder lost sync); filtered the $got frames that exist" \
    cut.flac cut.wav --taps 1 --allow-truncated --quiet
assert_eq "cut FLAC: frames filtered" "$("$SFTOOL" frames cut.wav)" "$got"
"$GPUFILT" full.flac full.wav --taps 1 --quiet
assert_eq "cut FLAC: the frames that decode are the file's first" \
    "$("$SFTOOL" dump cut.wav | md5sum)" "$("$SFTOOL" dump full.wav | head -n "$got" | md5sum)"
if sox -h 2>/dev/null | grep -qw flac; then
    sox cut.flac -t raw -e signed -b 16 sox_cut.raw 2>/dev/null || true
    assert_eq "cut FLAC: frames SoX recovers" "$(($(stat -c %s sox_cut.raw) / 4))" "$got"
fi

# --- MP3 on a pipe: libsndfile 1.2 reads it out of bounds (fuzz_container
# found it; valgrind shows it for any MP3): refused. As a file it is read,
# and written to a WAV as float (MP3 in WAV is read, not written).
# --- G.72x ADPCM on a pipe: libsndfile 1.2 never ends it (fuzz_container
# found it): refused. As a file it is read to its end.
tail -c +3 "$here/../fuzz/corpus/container/g721_pipe_endless" >g721.wav
set +e +o pipefail
cat g721.wav | timeout 20 "$GPUFILT" - g721.raw --taps 1 2>stderr.txt
rc=${PIPESTATUS[1]}
set -e -o pipefail
assert_eq "G.721 on a pipe: exit status" "$rc" 3
assert_eq "G.721 on a pipe: message" "$(cat stderr.txt)" \
    "${E}standard input holds G.72x ADPCM, which libsndfile 1.2 does not read correctly from a pipe (it never ends): give it as a file"
expect 0 "" g721.wav g721_out.wav --taps 1 --quiet
assert_eq "G.721 file: frames" "$("$SFTOOL" frames g721_out.wav)" 240

if "$SFTOOL" gen in.mp3 mp3 2 48000 4800 noise 2>/dev/null; then
    set +e +o pipefail
    cat in.mp3 | "$GPUFILT" - - --taps 1 >mp3.raw 2>stderr.txt
    rc=${PIPESTATUS[1]}
    set -e -o pipefail
    assert_eq "MP3 on a pipe: exit status" "$rc" 3
    assert_eq "MP3 on a pipe: message" "$(cat stderr.txt)" \
        "${E}standard input looks like MPEG audio (MP3), which libsndfile 1.2 does not read safely from a pipe: give it as a file, or decode it first, e.g. sox in.mp3 -t wav - | gpufilt - ..."
    expect 0 "" in.mp3 mp3.wav --taps 1 --quiet
    assert_eq "MP3 file to WAV: frames" "$("$SFTOOL" frames mp3.wav)" "$("$SFTOOL" frames in.mp3)"
    assert_eq "MP3 file to WAV: format" "$("$SFTOOL" format mp3.wav)" "WAV (Microsoft) / 32 bit float"
else
    echo "note: this libsndfile writes no MP3: the MP3 cases are left out"
fi

# On a pipe libsndfile skips a header chunk by reading it into memory: a
# WAV that declares a 1 GiB LIST before its samples, or whose header is
# cut short inside a chunk size (a fuzz finding: gigabytes allocated), is
# refused before libsndfile reads it; as a file it is read as ever.
pipe_in() { # FILE: gpufilt reads FILE from a pipe; sets rc
    set +e +o pipefail
    cat "$1" | "$GPUFILT" - pipe_out.wav --taps 3 2>stderr.txt
    rc=${PIPESTATUS[1]}
    set -e -o pipefail
}
python3 -c 'import struct, sys
fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
sys.stdout.buffer.write(b"RIFF" + struct.pack("<I", 0) + b"WAVE" + fmt + b"LIST"
                        + struct.pack("<I", 1 << 30) + b"INFO")' >biglist.wav
pipe_in biglist.wav
assert_eq "a 1 GiB LIST on a pipe: exit, message" "$rc $(cat stderr.txt)" \
    "3 ${E}standard input: its header declares a 'LIST' chunk of 1073741824 bytes before the samples, more than gpufilt reads from a pipe (16 MiB): give it as a file"
# (tests/fuzz/corpus/container/pipe_list_cut_short less its 2 control bytes)
echo UklGRgQzAABXQVZFZm10ICgAAAD+/wYAgLsAAADKCAAMABAAFgAQAA8GAAABAAAAAAAQAIAAAKoAOJtxZmFjdAQAAADoAwAATElTVAIBRg== |
    base64 -d >cut.wav
pipe_in cut.wav
assert_eq "a header cut inside a chunk size, on a pipe: exit, message" "$rc $(cat stderr.txt)" \
    "3 ${E}standard input ends inside its header, before any samples"
[ ! -e pipe_out.wav ] && pass || fail "a refused pipe left pipe_out.wav"
# A LIST sub-chunk whose size (4294967288) wraps libsndfile 1.2's bounds
# check: it jumps back 8 bytes onto the same sub-chunk, for ever (a fuzz
# finding; tests/fuzz/corpus/container/list_jump_back_*). libsndfile's read
# of a header runs first in a child process under a CPU limit: such a file
# is refused, as a file, from a pipe and as an impulse response.
python3 -c 'import struct, sys
fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 48000, 96000, 2, 16)
sub = b"abcd" + struct.pack("<I", 0xFFFFFFF8)
lst = b"LIST" + struct.pack("<I", 4 + len(sub) + 8) + b"INFO" + sub + bytes(8)
data = b"data" + struct.pack("<I", 256) + bytes(range(256))
riff = b"WAVE" + fmt + lst + data
sys.stdout.buffer.write(b"RIFF" + struct.pack("<I", len(riff)) + riff)' >jumpback.wav
JUMP="libsndfile does not finish reading its header (stopped after 2 s of CPU time: a malformed header it loops on)"
set +e +o pipefail
timeout -s KILL 20 "$GPUFILT" jumpback.wav jb.wav --taps 3 2>stderr.txt
assert_eq "a LIST sub-chunk that jumps back, as a file: exit, message" "$? $(cat stderr.txt)" \
    "3 ${E}input 'jumpback.wav': $JUMP"
timeout -s KILL 20 "$GPUFILT" - jb.wav --taps 3 <jumpback.wav 2>stderr.txt
assert_eq "... on standard input from the file: exit, message" "$? $(cat stderr.txt)" \
    "3 ${E}standard input: $JUMP"
cat jumpback.wav | timeout -s KILL 20 "$GPUFILT" - jb.wav --taps 3 2>stderr.txt
assert_eq "... on a pipe: exit, message" "${PIPESTATUS[1]} $(cat stderr.txt)" \
    "3 ${E}standard input: $JUMP"
timeout -s KILL 20 "$GPUFILT" in.wav jb.wav --ir jumpback.wav 2>stderr.txt
assert_eq "... as an impulse response: exit, message" "$? $(cat stderr.txt)" \
    "2 ${E}impulse response 'jumpback.wav': $JUMP"
# ... and after the samples, where libsndfile goes on reading a file's
# chunks (a pipe's header ends with them)
python3 -c 'import struct, sys
fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 48000, 96000, 2, 16)
sub = b"abcd" + struct.pack("<I", 0xFFFFFFF8)
lst = b"LIST" + struct.pack("<I", 4 + len(sub) + 8) + b"INFO" + sub + bytes(8)
data = b"data" + struct.pack("<I", 255) + bytes(255) + b"\0"
riff = b"WAVE" + fmt + data + lst
sys.stdout.buffer.write(b"RIFF" + struct.pack("<I", len(riff)) + riff)' >jumpback2.wav
timeout -s KILL 20 "$GPUFILT" jumpback2.wav jb.wav --taps 3 2>stderr.txt
assert_eq "a LIST sub-chunk that jumps back, after the samples: exit, message" \
    "$? $(cat stderr.txt)" "3 ${E}input 'jumpback2.wav': $JUMP"
# ... and any other header libsndfile loops on: a bare INFO chunk after an
# odd-sized chunk (libsndfile skips its pad byte), whose sub-chunk sizes
# 0xFFFFFFFF (its pad byte wraps that to 0) and 0xFFFFFFEF jump 16 bytes
# back (tests/fuzz/corpus/ir/info_odd_chunk_jump_back)
python3 -c 'import struct, sys
fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 48000, 96000, 2, 16)
odd = b"Iact" + struct.pack("<I", 3) + b"abc" + b"\0"
body = b"\x03\x02\x9e\xff" + b"\xff" * 16 + struct.pack("<I", 0xFFFFFFEF) + bytes(16)
info = b"INFO" + struct.pack("<I", len(body)) + body
data = b"data" + struct.pack("<I", 256) + bytes(256)
riff = b"WAVE" + fmt + odd + info + data
sys.stdout.buffer.write(b"RIFF" + struct.pack("<I", len(riff)) + riff)' >jumpback3.wav
timeout -s KILL 20 "$GPUFILT" in.wav jb.wav --ir jumpback3.wav 2>stderr.txt
assert_eq "an INFO sub-chunk that jumps back, after an odd-sized chunk: exit, message" \
    "$? $(cat stderr.txt)" "2 ${E}impulse response 'jumpback3.wav': $JUMP"
set -e -o pipefail
[ ! -e jb.wav ] && pass || fail "a refused input left jb.wav"
"$SFTOOL" gen small.wav wav16 2 8000 1000 noise
pipe_in small.wav
assert_eq "a plain WAV on a pipe still reads" "$rc $("$SFTOOL" frames pipe_out.wav)" "0 1000"
finish
