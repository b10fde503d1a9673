#!/usr/bin/env bash
# Nothing lost on the way through: what a file says besides its samples
# (channel layout, strings, bext, cue points, instrument data) is carried
# to the output, and what the output's container cannot hold is named; an
# existing output keeps its permissions, a read-only one is replaced only
# with --force; an output name as long as the file system allows works.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '
"$SFTOOL" gen in.wav wav16 2 48000 4800 noise

# --- Metadata: a 5.1 (side) WAVE_FORMAT_EXTENSIBLE file with strings, a
# bext chunk, cue points and instrument data.
"$SFTOOL" genmeta meta.wav
"$SFTOOL" meta meta.wav >meta.txt
assert_eq "the input's layout" "$(head -n 1 meta.txt)" "layout: 2 3 4 11 14 15"
expect 0 "" meta.wav out.wav --taps 1 --quiet
assert_eq "WAV -> WAV: everything carried" "$("$SFTOOL" meta out.wav)" "$(cat meta.txt)"
assert_eq "WAV -> WAV: still WAVE_FORMAT_EXTENSIBLE" "$("$SFTOOL" format out.wav)" "WAVEX (Microsoft) / Signed 16 bit PCM"
if "$SFTOOL" cmp meta.wav out.wav; then pass; else fail "WAV -> WAV: samples"; fi
# Through a pipe: strings and layout before the samples are carried; the
# output of unknown length is RF64 (a WAV while it stays under 4 GiB),
# which keeps no cue points or instrument data: said.
cat meta.wav | "$GPUFILT" - piped.wav --taps 1 --quiet 2>stderr.txt
assert_eq "WAV on a pipe -> WAV: message" "$(cat stderr.txt)" \
    "${W}output 'piped.wav': RF64, as a WAV of unknown length or past 2 GiB is written, does not keep the input's cue points, instrument (sampler) data"
assert_eq "WAV on a pipe -> WAV: what is carried" "$("$SFTOOL" meta piped.wav)" "$(grep -v '^cue\|^instrument' meta.txt)"
# Containers that hold less: what they drop is named, what they keep is kept.
expect 0 "${W}output 'out.flac': FLAC (Free Lossless Audio Codec) does not keep the input's channel layout, broadcast (bext) chunk, cue points, instrument (sampler) data" \
    meta.wav out.flac --taps 1 --quiet
assert_eq "WAV -> FLAC: strings carried" "$("$SFTOOL" meta out.flac)" "$(grep -v '^layout\|^bext\|^cue\|^instrument' meta.txt)"
expect 0 "${W}output 'out.aiff': AIFF (Apple/SGI) does not keep the input's channel layout, date, album, track number, genre, broadcast (bext) chunk, cue points, instrument (sampler) data" \
    meta.wav out.aiff --taps 1 --quiet
expect 0 "${W}output 'out.rf64': RF64 (RIFF 64) does not keep the input's cue points, instrument (sampler) data" \
    meta.wav out.rf64 --taps 1 --quiet
assert_eq "WAV -> RF64: layout" "$("$SFTOOL" meta out.rf64 | head -n 1)" "layout: 2 3 4 11 14 15"
# Raw output holds samples only, as asked: nothing to say.
expect 0 "" meta.wav out.raw --taps 1 --out-raw s16le --quiet
# A plain WAV named for a layout-less container keeps being plain.
expect 0 "" in.wav plain.wav --taps 1 --quiet
assert_eq "WAV -> WAV without a layout" "$("$SFTOOL" format plain.wav)" "WAV (Microsoft) / Signed 16 bit PCM"

# --- An existing output's permissions are kept; read-only needs --force.
cp in.wav m600.wav
chmod 600 m600.wav
expect 0 "" in.wav m600.wav --taps 5 --quiet
assert_eq "mode of a replaced 0600 file" "$(stat -c %a m600.wav)" 600
cp in.wav m640.wav
chmod 640 m640.wav
expect 0 "" in.wav m640.wav --taps 5 --quiet
assert_eq "mode of a replaced 0640 file" "$(stat -c %a m640.wav)" 640
cp in.wav ro.wav
chmod 444 ro.wav
expect 4 "${E}output 'ro.wav' is read-only (mode 0444): not replacing it (--force does)" in.wav ro.wav --taps 5
assert_eq "a refused read-only file is untouched" "$(md5sum <ro.wav)" "$(md5sum <in.wav)"
expect 0 "" in.wav ro.wav --taps 5 --force --quiet
assert_eq "mode after --force" "$(stat -c %a ro.wav)" 444
assert_eq "frames after --force" "$("$SFTOOL" frames ro.wav)" 4800
if [ "$(md5sum <ro.wav)" != "$(md5sum <in.wav)" ]; then pass; else fail "--force did not replace ro.wav"; fi
# The same for histogram files.
cp in.wav ro.csv
chmod 444 ro.csv
expect 4 "${E}histogram file 'ro.csv' is read-only (mode 0444): not replacing it (--force does)" in.wav h.wav --taps 5 --hist ro.csv
expect_no_output h.wav
umask 022
expect 0 "" in.wav new.wav --taps 5 --quiet
assert_eq "mode of a new file (umask 022)" "$(stat -c %a new.wav)" 644
if [ "$(id -u)" = 0 ]; then
    # As root, the owner and group are kept too.
    cp in.wav owned.wav
    chown 1234:4321 owned.wav
    expect 0 "" in.wav owned.wav --taps 5 --quiet
    assert_eq "owner of a replaced file (as root)" "$(stat -c %u:%g owned.wav)" 1234:4321
fi

# --- Names as long as the file system allows: the temporary name is cut.
long=$(printf 'x%.0s' $(seq 251)).wav
expect 0 "" in.wav "$long" --taps 5 --quiet
assert_eq "frames of a 255-byte name" "$("$SFTOOL" frames "$long")" 4800
# Cut at a character: 120 two-byte letters.
wide=$(printf 'é%.0s' $(seq 120)).wav
expect 0 "" in.wav "$wide" --taps 5 --quiet --hist "$wide.csv"
assert_eq "frames of a 244-byte UTF-8 name" "$("$SFTOOL" frames "$wide")" 4800
[ -s "$wide.csv" ] && pass || fail "the histogram file of a long name"
expect_no_output
finish
