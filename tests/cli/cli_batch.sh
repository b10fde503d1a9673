#!/usr/bin/env bash
# Many files in one command: --out-dir DIR IN... and --in-list FILE. Each
# output equals the single-file run's, byte for byte; a bad file is named
# and the rest go on; the exit code is the first failure's; --skip-existing
# resumes; names that would collide are refused before anything is written.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '

mkdir a b
"$SFTOOL" gen a/x.wav wav16 2 48000 48000 noise
"$SFTOOL" gen a/y.flac flac16 1 44100 30000 noise
echo "not audio" >a/z.wav
"$SFTOOL" gen b/w.wav wav24 2 48000 1000 noise

# Three good files and a bad one: the bad one named, the others written.
expect 3 "${E}input 'a/z.wav' is not an audio file libsndfile can read (not a format libsndfile knows)
${E}'a/z.wav' was not filtered (exit 3); going on with the rest
gpufilt: batch: 4 files to 'out': 3 filtered, 0 skipped (existing), 1 failed, *" \
    --taps 5 --out-dir out a/x.wav a/y.flac a/z.wav b/w.wav
assert_eq "outputs" "$(ls out | tr '\n' ' ')" "w.wav x.wav y.flac "
for f in a/x.wav a/y.flac b/w.wav; do
    name=$(basename "$f")
    "$GPUFILT" "$f" "single-$name" --taps 5 --quiet
    assert_eq "$name = its single run" "$(cmp "single-$name" "out/$name" && echo same)" same
done
expect_no_output out/z.wav

# --in-list (comments, blank lines, lines of blanks, CRLF), --out-format
# renames, --quiet.
printf 'a/x.wav\r\n# a comment\n\n  \t \n \r\nb/w.wav\n' >list.txt
expect 0 "" --taps 5 --out-dir out2 --in-list list.txt --out-format flac --quiet
assert_eq "renamed outputs" "$(ls out2 | tr '\n' ' ')" "w.flac x.flac "
assert_eq "format" "$("$SFTOOL" format out2/x.flac)" "FLAC (Free Lossless Audio Codec) / Signed 16 bit PCM"

# --skip-existing: a resumed batch writes only what is missing.
rm out2/w.flac
touch -d '2000-01-01' out2/x.flac
expect 0 "gpufilt: batch: 2 files to 'out2': 1 filtered, 1 skipped (existing), 0 failed, *" \
    --taps 5 --out-dir out2 --in-list list.txt --out-format flac --skip-existing
assert_eq "skipped file untouched" "$(stat -c %Y out2/x.flac)" "$(date -d '2000-01-01' +%s)"
[ -f out2/w.flac ] && pass || fail "the missing output was not written"

# A signal stops the batch: exit 130, the file being filtered not left.
"$SFTOOL" gen a/long.wav wav16 2 48000 2400000 noise
"$GPUFILT" --taps 255 --device ref --quiet --out-dir out4 a/long.wav a/x.wav 2>stderr.txt &
pid=$!
sleep 0.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "signal: exit" "$rc" 130
assert_eq "signal: nothing written" "$(ls -A out4 | tr '\n' ' ')" ""

# Refused before anything is written.
expect 2 "${E}'a/x.wav' and 'b/x.wav' would both be written to 'out3/x.wav': filter them in two batches or rename one" \
    --taps 5 --out-dir out3 a/x.wav b/x.wav
expect_no_output out3
expect 2 "${E}--out-dir: no input files (give them after the options, or --in-list FILE)" \
    --taps 5 --out-dir out3
expect 2 "${E}--out-dir filters files: standard input ('-') is not one" --taps 5 --out-dir out3 -
expect 2 "${E}--out-dir: --hist and --hist-png would name one file for every input" \
    --taps 5 --out-dir out3 a/x.wav --hist h.csv
expect 2 "${E}--in-list and --skip-existing need --out-dir" a/x.wav o.wav --taps 5 --skip-existing
expect 3 "${E}cannot open --in-list 'nolist.txt': No such file or directory" \
    --taps 5 --out-dir out3 --in-list nolist.txt
: >afile
expect 4 "${E}--out-dir 'afile' is not a directory" --taps 5 --out-dir afile a/x.wav
expect_no_output out3
finish
