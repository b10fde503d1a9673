#!/usr/bin/env bash
# Many files in one command: --out-dir DIR IN... and --in-list FILE. Each
# output equals the single-file run's, byte for byte; a bad file is named
# and the rest go on; the exit code is the first failure's in the batch's
# order; --skip-existing resumes; --jobs N workers give the bytes, lines and
# exit code of one; names that would collide are refused before anything is
# written.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '

mkdir a b
"$SFTOOL" gen a/x.wav wav16 2 48000 48000 noise
"$SFTOOL" gen a/y.flac flac16 1 44100 30000 noise
echo "not audio" >a/z.wav
"$SFTOOL" gen b/w.wav wav24 2 48000 1000 noise

# Bytes in all of files (the summary's "read" and "written").
size() { stat -c %s "$@" | awk '{ s += $1 } END { print s }'; }

# Three good files and a bad one: the bad one named, the others written;
# the summary counts the files and their bytes.
expect 3 "${E}input 'a/z.wav' is not an audio file libsndfile can read (not a format libsndfile knows)
${E}'a/z.wav' was not filtered (exit 3); going on with the rest
gpufilt: batch: 4 files to 'out' on 1 worker: 3 filtered, 0 skipped (existing), 1 failed; *" \
    --taps 5 --out-dir out a/x.wav a/y.flac a/z.wav b/w.wav
assert_eq "outputs" "$(ls out | tr '\n' ' ')" "w.wav x.wav y.flac "
assert_eq "summary's bytes" "$(sed -n 's/.*1 failed; \(.*\), [0-9.]* s$/\1/p' stderr.txt)" \
    "$(size a/x.wav a/y.flac b/w.wav) bytes read, $(size out/*) bytes written"
for f in a/x.wav a/y.flac b/w.wav; do
    name=$(basename "$f")
    "$GPUFILT" "$f" "single-$name" --taps 5 --quiet
    assert_eq "$name = its single run" "$(cmp "single-$name" "out/$name" && echo same)" same
done
expect_no_output out/z.wav

# A worker's engine serves its next file where that one wants the very
# same engine, reset in between: the FFT method's delay line and the
# direct method's halo start from zeros again, the bytes a new engine's.
# Largest first: three stereo files in turn (one shorter than the filter),
# a mono one (another engine), a stereo one again.
mkdir k
"$SFTOOL" gen k/k1.wav wav16 2 48000 40000 noise
"$SFTOOL" gen k/k2.wav wav16 2 48000 30000 noise
"$SFTOOL" gen k/k3.wav wav16 2 48000 20000 noise
"$SFTOOL" gen k/k4.wav wav16 1 48000 20000 noise
"$SFTOOL" gen k/k5.wav wav16 2 48000 700 noise
for m in fft direct; do
    expect 0 "" --taps 1001 --method $m --quiet --out-dir "kept-$m" --jobs 1 k/*.wav
    for f in k1 k2 k3 k4 k5; do
        "$GPUFILT" "k/$f.wav" "single-$f.wav" --taps 1001 --method $m --quiet
        assert_eq "$m: $f, after the files before it = its single run" \
            "$(cmp "single-$f.wav" "kept-$m/$f.wav" && echo same)" same
    done
done

# --in-list (comments, blank lines, lines of blanks, CRLF), --out-format
# renames, --quiet.
printf 'a/x.wav\r\n# a comment\n\n  \t \n \r\nb/w.wav\n' >list.txt
expect 0 "" --taps 5 --out-dir out2 --in-list list.txt --out-format flac --quiet
assert_eq "renamed outputs" "$(ls out2 | tr '\n' ' ')" "w.flac x.flac "
assert_eq "format" "$("$SFTOOL" format out2/x.flac)" "FLAC (Free Lossless Audio Codec) / Signed 16 bit PCM"

# --skip-existing: a resumed batch writes only what is missing.
rm out2/w.flac
touch -d '2000-01-01' out2/x.flac
expect 0 "gpufilt: batch: 2 files to 'out2' on 1 worker: 1 filtered, 1 skipped (existing), 0 failed; *" \
    --taps 5 --out-dir out2 --in-list list.txt --out-format flac --skip-existing
assert_eq "skipped file untouched" "$(stat -c %Y out2/x.flac)" "$(date -d '2000-01-01' +%s)"
[ -f out2/w.flac ] && pass || fail "the missing output was not written"

# Files at once (--jobs): eight files of different sizes and formats, a
# bad one and one whose output cannot be written (a directory has its
# name), give the bytes, the lines (in the batch's order) and the exit
# status of one worker: the first failed file's in the batch's order (4,
# though that file is the smallest, so the last one taken).
mkdir j
"$SFTOOL" gen j/a.wav wav16 2 48000 20000 noise
"$SFTOOL" gen j/b.flac flac16 1 44100 60000 noise
"$SFTOOL" gen j/c.aiff aiff16 2 22050 3000 noise
"$SFTOOL" gen j/d.wav wav24 3 48000 40000 noise
"$SFTOOL" gen j/e.wav wav16 1 8000 90000 noise
"$SFTOOL" gen j/f.flac flac24 2 48000 10000 noise
"$SFTOOL" gen j/g.wav wavu8 1 8000 500 noise
printf 'not audio at all' >j/h.wav
jfiles="j/g.wav j/a.wav j/b.flac j/h.wav j/c.aiff j/d.wav j/e.wav j/f.flac"
for n in 1 3; do
    mkdir -p "jobs$n/g.wav"
    # shellcheck disable=SC2086
    expect 4 "*" --taps 7 --out-dir "jobs$n" --jobs $n $jfiles
    sed "s/jobs$n/jobsN/; s/ on [0-9] workers\{0,1\}: / on N workers: /; s/, [0-9.]* s$//" \
        stderr.txt >"jobs$n.err"
done
assert_eq "--jobs 3: the lines of --jobs 1" "$(cat jobs3.err)" "$(cat jobs1.err)"
assert_eq "--jobs 3: lines" "$(head -n 5 jobs3.err)" \
    "${E}output 'jobsN/g.wav' is a directory
${E}'j/g.wav' was not filtered (exit 4); going on with the rest
${E}input 'j/h.wav' is not an audio file libsndfile can read (not a format libsndfile knows)
${E}'j/h.wav' was not filtered (exit 3); going on with the rest
gpufilt: batch: 8 files to 'jobsN' on N workers: 6 filtered, 0 skipped (existing), 2 failed; $(size j/[a-f]*) bytes read, $(size jobs1/[a-f]*) bytes written"
assert_eq "--jobs 3: outputs" "$(ls jobs3 | tr '\n' ' ')" "a.wav b.flac c.aiff d.wav e.wav f.flac g.wav "
for f in a.wav b.flac c.aiff d.wav e.wav f.flac; do
    assert_eq "--jobs 3: $f = --jobs 1's" "$(cmp "jobs1/$f" "jobs3/$f" && echo same)" same
done
assert_eq "--jobs 3: d.wav = its single run" \
    "$("$GPUFILT" j/d.wav single-d.wav --taps 7 --quiet && cmp single-d.wav jobs3/d.wav && echo same)" same
# With --gpus, --jobs workers are dealt over the GPUs (here one GPU named,
# three workers; without a GPU each file runs on the CPU, with one the
# direct method's bytes are the same)
expect 0 "gpufilt: batch: 3 files to 'jgpu' on 3 workers: 3 filtered, *" --taps 7 --method direct \
    --gpus 0 --jobs 3 --out-dir jgpu j/a.wav j/d.wav j/e.wav
for f in a.wav d.wav e.wav; do
    assert_eq "--gpus 0 --jobs 3: $f = --jobs 1's" "$(cmp "jobs1/$f" "jgpu/$f" && echo same)" same
done
# Without --jobs: two workers a GPU where the filter takes the direct
# method (named, or the cost model's at 7 taps), one for the FFT method;
# "0,0" names GPU 0 once more, not two more workers.
for args in "--method direct --gpus 0" "--gpus 0" "--gpus 0,0"; do
    rm -rf jgpu
    # shellcheck disable=SC2086
    expect 0 "gpufilt: batch: 3 files to 'jgpu' on 2 workers: 3 filtered, *" --taps 7 $args \
        --out-dir jgpu j/a.wav j/d.wav j/e.wav
done
for f in a.wav d.wav e.wav; do
    assert_eq "--gpus 0, two workers: $f = --jobs 1's" "$(cmp "jobs1/$f" "jgpu/$f" && echo same)" same
done
rm -rf jgpu
expect 0 "gpufilt: batch: 3 files to 'jgpu' on 1 worker: 3 filtered, *" --taps 7 --method fft \
    --gpus 0 --out-dir jgpu j/a.wav j/d.wav j/e.wav
rm -rf jgpu
expect 0 "gpufilt: batch: 3 files to 'jgpu' on 1 worker: 3 filtered, *" --taps 7 --jobs 1 \
    --gpus 0 --out-dir jgpu j/a.wav j/d.wav j/e.wav

# --verify's lines too come in the batch's order, each file's whole: the
# largest file is given first and finishes last.
"$SFTOOL" gen j/big.wav wav16 2 48000 240000 noise
expect 0 "*" --taps 31 --verify --quiet --out-dir verify --jobs 3 j/big.wav j/c.aiff j/a.wav
assert_eq "--verify, --jobs 3: lines in the batch's order" \
    "$(sed -n 's/^verify: \([0-9]*\) samples, .*/\1/p' stderr.txt | tr '\n' ' ')" "480000 6000 40000 "
assert_eq "--verify, --jobs 3: each file's lines together" \
    "$(cut -c 1-12 stderr.txt | tr '\n' ' ')" \
    "verify: refe verify: 4800 verify: refe verify: 6000 verify: refe verify: 4000 "
rm j/big.wav

# Bad files opened at once each get their own reason (libsndfile keeps
# the last failed open's in one global): 90 files of three kinds, sizes
# interleaved; 30 runs of four workers (a fraction of a second; without
# the lock, several of them mixed the reasons up) give the lines of one.
mkdir bad
for k in $(seq 0 29); do
    pad=$(head -c $((k * 3)) /dev/zero | tr '\0' ' ')
    printf "not audio at all%s" "$pad" >"bad/t$k.wav"
    { printf 'RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00' && head -c $((k * 3 + 1)) /dev/zero; } >"bad/r$k.wav"
    { printf 'FORM\x00\x00\x00\x20AIFFCOMM\x00\x00\x00\x12' && head -c $((k * 3 + 2)) /dev/zero; } >"bad/f$k.aiff"
done
expect 3 "*" --taps 3 --quiet --out-dir badout --jobs 1 bad/*
cp stderr.txt bad1.err
assert_eq "bad files: three reasons" "$(sed -n 's/.* read (\(.*\))$/\1/p' bad1.err | LC_ALL=C sort | uniq -c | tr -s ' ')" \
    " 30 WAV file: no 'data' chunk marker
 30 bad channel count
 30 not a format libsndfile knows"
mixed=
for k in $(seq 30); do
    "$GPUFILT" --taps 3 --quiet --out-dir badout --jobs 4 bad/* 2>stderr.txt && break
    cmp -s stderr.txt bad1.err || mixed="$mixed $k"
done
assert_eq "bad files, --jobs 4: runs with other lines than one worker's" "$mixed" ""

# Largest first: one worker writes the outputs in order of input size
# (the batch's order is another), seen in their modification times; each
# file is tens of milliseconds of work, well above the clock's grain.
mkdir big
for k in 1 2 3 4; do "$SFTOOL" gen "big/s$k.wav" wav16 1 48000 $((k * 100000)) noise; done
expect 0 "" --taps 255 --device ref --quiet --out-dir order --jobs 1 big/s2.wav big/s4.wav \
    big/s1.wav big/s3.wav
assert_eq "largest first" "$(ls -tr order | tr '\n' ' ')" "s4.wav s3.wav s2.wav s1.wav "
rm -r jobs1/g.wav
"$GPUFILT" --taps 7 --quiet j/g.wav jobs1/g.wav

# --skip-existing with workers: what is there is skipped, the rest written.
rm jobs3/b.flac jobs3/e.wav
rm -r jobs3/g.wav
touch -d '2000-01-01' jobs3/a.wav
# shellcheck disable=SC2086
expect 3 "${E}input 'j/h.wav' is not an audio file libsndfile can read (not a format libsndfile knows)
${E}'j/h.wav' was not filtered (exit 3); going on with the rest
gpufilt: batch: 8 files to 'jobs3' on 3 workers: 3 filtered, 4 skipped (existing), 1 failed; $(size j/b.flac j/e.wav j/g.wav) bytes read, $(size jobs1/b.flac jobs1/e.wav jobs1/g.wav) bytes written, *" \
    --taps 7 --out-dir jobs3 --jobs 3 --skip-existing $jfiles
assert_eq "--jobs 3 --skip-existing: skipped file untouched" "$(stat -c %Y jobs3/a.wav)" \
    "$(date -d '2000-01-01' +%s)"
for f in b.flac e.wav g.wav; do
    assert_eq "--jobs 3 --skip-existing: $f" "$(cmp "jobs1/$f" "jobs3/$f" && echo same)" same
done

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
# ... and every worker: two long files at once, neither left.
cp a/long.wav a/long2.wav
"$GPUFILT" --taps 255 --device ref --quiet --jobs 2 --out-dir out5 a/long.wav a/long2.wav a/x.wav \
    2>stderr.txt &
pid=$!
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "signal, --jobs 2: exit" "$rc" 130
assert_eq "signal, --jobs 2: nothing written" "$(ls -A out5 | tr '\n' ' ')" ""

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
expect 2 "${E}--jobs needs --out-dir (it filters that many files at once)" a/x.wav o.wav --taps 5 --jobs 2
expect 3 "${E}cannot open --in-list 'nolist.txt': No such file or directory" \
    --taps 5 --out-dir out3 --in-list nolist.txt
: >afile
expect 4 "${E}--out-dir 'afile' is not a directory" --taps 5 --out-dir afile a/x.wav
expect_no_output out3
finish
