#!/usr/bin/env bash
# gpufilt-mpi with 3 ranks on the CPU backend writes the bytes one gpufilt
# run writes: WAV 16-bit and float, raw and FLAC; same, causal and full;
# direct and FFT (65536 taps); ranges shorter than the filter, a 1-frame
# input; histograms; dither; a batch of files (--out-dir); a rank that fails
# leaves no output and names itself; a rank killed leaves no output and
# no temporary file beside it.
# Usage: mpi_equal.sh GPUFILT GPUFILT_MPI SFTOOL WORKDIR
set -u
G=$1 M=$2 SF=$3 W=$4
command -v mpirun >/dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
run() { mpirun --allow-run-as-root --oversubscribe -np "$@"; }
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Bytes equal, but for the second a float WAV's PEAK chunk says it was
# written (4 bytes after its version).
same_bytes() {
    python3 - "$1" "$2" <<'PY'
import sys
a, b = (bytearray(open(p, "rb").read()) for p in sys.argv[1:3])
for d in (a, b):
    i = d.find(b"PEAK")
    if 0 <= i < 512:
        d[i + 12:i + 16] = b"\0\0\0\0"
sys.exit(0 if a == b else 1)
PY
}

# check NP IN OUTNAME ARGS...: gpufilt and gpufilt-mpi give the same file.
check() {
    local np=$1 in=$2 out=$3
    shift 3
    rm -f "ref.$out" "mpi.$out"
    "$G" "$in" "ref.$out" "$@" -q 2>/dev/null || { bad "gpufilt $in $out $*"; return; }
    run "$np" "$M" "$in" "mpi.$out" "$@" 2>err.txt
    local rc=$?
    [ $rc -eq 0 ] || { bad "gpufilt-mpi -np $np $in $out $* exited $rc: $(cat err.txt)"; return; }
    same_bytes "ref.$out" "mpi.$out" || bad "-np $np $in $out $*: bytes differ"
}

"$SF" gen in.wav wav16 2 8000 20000 noise
"$SF" gen one.wav wav16 2 8000 1 impulse:0
"$SF" gen short.wav wav16 1 8000 40 noise
"$SF" gen in2.wav wav16 2 8000 100000 noise
# A 65536-tap response scaled so that its outputs stay in range.
"$SF" gen ir0.wav wavf 1 8000 65536 noise
echo 0.002 >gain.txt
"$G" ir0.wav ir.wav --coeffs gain.txt -q

for mode in same causal full; do
    # direct: 101 taps
    check 3 in.wav d16.wav --taps 101 --mode $mode
    check 3 in.wav df.wav --taps 101 --mode $mode --out-format wav:float
    check 3 in.wav d.raw --taps 101 --mode $mode --out-raw s16le
    check 3 in.wav d.flac --taps 101 --mode $mode
    # FFT: 65536 taps, longer than every rank's range
    check 3 in2.wav f16.wav --ir ir.wav --mode $mode
    check 3 in2.wav ff.wav --ir ir.wav --mode $mode --out-format wav:float
    check 3 in2.wav f.raw --ir ir.wav --mode $mode --out-raw f32le
    check 3 in2.wav f.flac --ir ir.wav --mode $mode
    # more ranks than make sense, and a 1-frame input
    check 5 short.wav s.wav --taps 101 --mode $mode
    check 5 short.wav s.raw --taps 101 --mode $mode --out-raw f32le
    check 3 one.wav o.wav --taps 101 --mode $mode
    check 3 one.wav o.raw --taps 101 --mode $mode --out-raw s16le
    check 3 one.wav of.wav --ir ir.wav --mode $mode --out-format wav:float
done

# Levels folded into the taps (an even length: same mode's dry tap is
# (T-1)/2) give gpufilt's bytes on every rank's range.
for mode in same causal full; do
    check 3 in.wav lv.wav --taps 100 --mode $mode --mix 0.3 --gain -2 --normalize-filter peak
done
# --normalize: a first pass measures every rank's output, rank 0 chooses
# gpufilt's gain from the peak of them all, a second pass scales: gpufilt's
# bytes (written at their offsets, and gathered for FLAC; direct and FFT).
check 3 in.wav nz.wav --taps 101 --normalize -1
check 3 in.wav nzf.wav --taps 101 --mode full --normalize -6dBFS --out-format wav:float
check 3 in2.wav nzl.flac --ir ir.wav --normalize -1
check 5 short.wav nzs.wav --taps 101 --normalize -3 --out-format wav:float
# ... not with histograms nor a batch: one line, exit 2, nothing written
run 2 "$M" in.wav nz2.wav --taps 5 --normalize -1 --hist h.csv 2>err.txt
rc=$?
if [ $rc -ne 2 ] || ! grep -q "^gpufilt-mpi: error: --normalize with --hist is not supported by gpufilt-mpi: run gpufilt$" err.txt; then
    bad "--normalize --hist: exit $rc, '$(cat err.txt)'"
fi
[ ! -e nz2.wav ] || bad "--normalize --hist: nz2.wav written"

# check_hist NP IN EXT ARGS...: gpufilt-mpi's output and --hist file
# (CSV, or JSON lines for EXT json) and --hist-png picture are gpufilt's.
check_hist() {
    local np=$1 in=$2 ext=$3
    shift 3
    rm -f ref.h.wav mpi.h.wav "ref.h.$ext" "mpi.h.$ext" ref.h.png mpi.h.png
    "$G" "$in" ref.h.wav --hist "ref.h.$ext" --hist-png ref.h.png "$@" -q 2>/dev/null ||
        { bad "gpufilt $in --hist $*"; return; }
    run "$np" "$M" "$in" mpi.h.wav --hist "mpi.h.$ext" --hist-png mpi.h.png "$@" 2>err.txt
    local rc=$?
    [ $rc -eq 0 ] || { bad "gpufilt-mpi -np $np $in --hist $* exited $rc: $(cat err.txt)"; return; }
    cmp -s ref.h.wav mpi.h.wav || bad "-np $np $in --hist $*: output differs"
    cmp -s "ref.h.$ext" "mpi.h.$ext" || bad "-np $np $in --hist $*: --hist .$ext differs"
    cmp -s ref.h.png mpi.h.png || bad "-np $np $in --hist $*: --hist-png differs"
}

# Histograms: output and input, each channel and mixed, direct and FFT,
# blocks that do not divide the stream (20000 = 6 x 3000 + 2000; same
# mode's output and input are (T-1)/2 = 50 frames apart), more ranks than
# blocks (40 frames in blocks of 16 on 5 ranks), a 1-frame input.
check_hist 3 in.wav csv --taps 101 --hist-block 3000
check_hist 3 in.wav json --taps 101 --hist-block 3000 --hist-of input --hist-channels mix
check_hist 3 in.wav csv --taps 101 --hist-block 3000 --mode full --hist-channels mix
check_hist 3 in2.wav json --ir ir.wav --hist-block 30000
check_hist 3 in2.wav csv --ir ir.wav --hist-block 30000 --hist-of input --hist-channels mix \
    --mode causal
check_hist 5 short.wav csv --taps 101 --hist-block 16 --hist-of input
check_hist 5 short.wav json --taps 101 --hist-block 16 --mode full --hist-bins 8
check_hist 3 one.wav csv --taps 101 --hist-block 16

# A batch: 7 files of different sizes and formats (one not audio) dealt
# to 3 ranks give gpufilt --out-dir's files, its lines for the bad file
# (gpufilt-mpi's prefix), its exit code, and one summary line that counts
# files and bytes; then --skip-existing skips what is there.
mkdir -p batch
"$SF" gen batch/b.flac flac16 1 8000 5000 noise
"$SF" gen batch/c.aiff aiff16 2 8000 12000 noise
"$SF" gen batch/e.wav wav24 3 8000 9000 noise
"$SF" gen batch/g.wav wavf 1 8000 700 noise
printf 'not audio at all' >batch/bad.wav
files="in2.wav batch/b.flac one.wav batch/bad.wav batch/c.aiff in.wav batch/e.wav batch/g.wav"
"$G" --taps 31 --out-dir ref.batch $files 2>ref.err
ref_rc=$?
run 3 "$M" --taps 31 --out-dir mpi.batch $files 2>err.txt
rc=$?
[ $rc -eq $ref_rc ] && [ $rc -eq 3 ] || bad "a batch: exit $rc, gpufilt's $ref_rc"
[ "$(ls ref.batch)" = "$(ls mpi.batch)" ] || bad "a batch: files $(ls mpi.batch | tr '\n' ' ')"
for f in ref.batch/*; do
    same_bytes "$f" "mpi.batch/${f#ref.batch/}" || bad "a batch: $f differs"
done
grep -v ' batch: ' ref.err | sed 's/^gpufilt: /gpufilt-mpi: /' >want.err
grep -v ' batch: ' err.txt | grep '^gpufilt-mpi: ' >got.err
cmp -s want.err got.err || bad "a batch: lines '$(cat got.err)', gpufilt's '$(cat want.err)'"
size() { stat -c %s "$@" | awk '{ s += $1 } END { print s }'; }
summary="^gpufilt-mpi: batch: 8 files to 'mpi.batch' on 3 ranks: 7 filtered, 0 skipped \(existing\), "
summary+="1 failed; $(size $(echo "$files" | sed 's| batch/bad.wav||')) bytes read, "
summary+="$(size ref.batch/*) bytes written, [0-9.]+ s$"
[ "$(grep -c ' batch: ' err.txt)" = 1 ] && grep -Eq "$summary" err.txt ||
    bad "a batch: summary '$(grep ' batch: ' err.txt)'"
rm mpi.batch/c.aiff
run 3 "$M" --taps 31 --out-dir mpi.batch --skip-existing in.wav batch/c.aiff one.wav 2>err.txt
rc=$?
[ $rc -eq 0 ] || bad "a batch, --skip-existing: exit $rc: $(cat err.txt)"
same_bytes ref.batch/c.aiff mpi.batch/c.aiff || bad "a batch, --skip-existing: c.aiff differs"
grep -Eq "3 files to 'mpi.batch' on 3 ranks: 1 filtered, 2 skipped \(existing\), 0 failed; \
$(size batch/c.aiff) bytes read, $(size ref.batch/c.aiff) bytes written" err.txt ||
    bad "a batch, --skip-existing: '$(cat err.txt)'"

# A rank that fails (rank 2 cannot make its scratch directory): every rank
# exits non-zero, one line names rank 2, nothing is left beside OUT.
mkdir -p fail && cp in.wav fail/
run 2 "$M" fail/in.wav fail/out.wav --taps 5 : -np 1 env TMPDIR=/nonexistent/dir "$M" \
    fail/in.wav fail/out.wav --taps 5 2>err.txt
rc=$?
[ $rc -ne 0 ] || bad "a failing rank: exit 0"
grep -q '^gpufilt-mpi: error: rank 2: cannot make a scratch directory' err.txt ||
    bad "a failing rank: message '$(cat err.txt)'"
[ "$(grep -c 'error' err.txt)" = 1 ] || bad "a failing rank: not one line: $(cat err.txt)"
[ "$(ls -A fail)" = in.wav ] || bad "a failing rank left: $(ls -A fail | tr '\n' ' ')"

# A rank killed (SIGKILL) while the ranks filter: mpirun exits non-zero,
# and the ranks left, ended by mpirun's SIGTERM, remove the job's
# temporary files: nothing under OUT's name or beside it (rank 0's output
# and --hist file, removed by the others when rank 0 is the one killed),
# and in TMPDIR only the killed rank's own scratch directory.
"$SF" gen big.wav wav16 2 48000 3000000 noise
# pid_of RANK: the pid of that rank of the job filtering big.wav, or "".
pid_of() {
    local f p
    for f in /proc/[0-9]*/environ; do
        p=${f#/proc/}
        p=${p%/environ}
        { tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qx "$M" || continue
        { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p" &&
            return
    done
}
kill_rank() {
    local victim=$1 left=$2 pid= i
    rm -rf kill && mkdir -p kill/tmp
    # (on one CPU thread per rank, so that it lasts seconds on any machine)
    TMPDIR=$PWD/kill/tmp run 3 "$M" big.wav kill/out.wav --taps 4001 --method direct \
        --device cpu --threads 1 --hist kill/h.csv 2>kill.err &
    local job=$!
    # Every rank filtering: rank 0's output and both scratch files exist.
    for i in $(seq 1000); do
        [ "$(ls -A kill/tmp/*/ 2>/dev/null | grep -c '^\.out\.wav\.gpufilt-')" = 2 ] &&
            ls -A kill | grep -q '^\.out\.wav\.gpufilt-' && pid=$(pid_of "$victim") &&
            [ -n "$pid" ] && break
        sleep 0.01
    done
    [ -n "$pid" ] && kill -9 "$pid"
    wait $job
    local rc=$?
    [ -n "$pid" ] || { bad "kill rank $victim: never saw every rank filtering"; return; }
    [ $rc -ne 0 ] || bad "kill rank $victim: mpirun exited 0"
    [ "$(ls -A kill)" = tmp ] || bad "kill rank $victim: left $(ls -A kill | tr '\n' ' ')"
    [ "$(ls -A kill/tmp | wc -l)" = "$left" ] ||
        bad "kill rank $victim: TMPDIR holds $(ls -AR kill/tmp | tr '\n' ' ')"
}
kill_rank 1 1
kill_rank 0 0

# A pipe is refused with one line, exit 2, and nothing written.
cat in.wav | run 2 "$M" - pipe.wav --taps 5 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "a pipe: exit $rc, expected 2"
grep -q "input '-' is not a regular file" err.txt || bad "a pipe: message '$(cat err.txt)'"
[ ! -e pipe.wav ] || bad "a pipe: pipe.wav written"

# Options that are gpufilt's alone: one line from rank 0 (then mpirun's
# own report), exit 2.
run 2 "$M" --taps 5 --jobs 2 --out-dir jobs in.wav 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "--jobs: exit $rc, expected 2"
[ "$(grep gpufilt-mpi err.txt)" = "gpufilt-mpi: error: --jobs is gpufilt's: gpufilt-mpi's workers are its ranks (mpirun -np N)" ] ||
    bad "--jobs: message '$(cat err.txt)'"
run 2 "$M" --taps 5000 --method nupc in.wav nupc.wav 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "--method nupc: exit $rc, expected 2"
[ "$(grep gpufilt-mpi err.txt)" = "gpufilt-mpi: error: --method nupc filters one file on one rank: run gpufilt, or a batch" ] ||
    bad "--method nupc: message '$(cat err.txt)'"
[ ! -e nupc.wav ] || bad "--method nupc: nupc.wav written"

# A matrix response (4 columns on 2 channels): gpufilt's alone.
printf '1 0 0 1\n' >c4.txt
run 2 "$M" in.wav mx.wav --coeffs c4.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "a matrix: exit $rc, expected 2"
[ "$(grep gpufilt-mpi err.txt)" = "gpufilt-mpi: error: rank 0: 'c4.txt' is a 2 x 2 matrix response: gpufilt-mpi filters each channel into itself (filter it with gpufilt)" ] ||
    bad "a matrix: message '$(cat err.txt)'"
[ ! -e mx.wav ] || bad "a matrix: mx.wav written"

# Dither: the 16-bit checks above run with the default TPDF, whose noise is
# the frame's (any split gives gpufilt's bytes). Shaped dither carries its
# error from sample to sample: a compressed output, which rank 0 writes
# whole, gives gpufilt's bytes; ranges written by their ranks are refused.
"$SF" gen in44.wav wav24 2 44100 20000 noise
check 3 in44.wav sh.flac --taps 101 --dither shaped --out-format flac:pcm_16
check 3 in44.wav tp.wav --taps 101 --dither tpdf --seed 5 --out-format wav:pcm_16
run 3 "$M" in44.wav sh.wav --taps 101 --dither shaped --out-format wav:pcm_16 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "--dither shaped on 3 ranks: exit $rc, expected 2"
[ "$(grep gpufilt-mpi err.txt)" = "gpufilt-mpi: error: rank 0: --dither shaped carries each sample's error to the next, which ranks writing their own ranges of 'sh.wav' cannot: use --dither tpdf, or one rank" ] ||
    bad "--dither shaped: message '$(cat err.txt)'"
[ ! -e sh.wav ] || bad "--dither shaped: sh.wav written"

[ $fails -eq 0 ] && echo "mpi_equal: all passed"
exit $((fails > 0))
