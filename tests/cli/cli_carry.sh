#!/usr/bin/env bash
# Nothing lost on the way through: an existing output keeps its
# permissions, a read-only one is replaced only with --force; an output
# name as long as the file system allows works.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '
"$SFTOOL" gen in.wav wav16 2 48000 4800 noise

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
