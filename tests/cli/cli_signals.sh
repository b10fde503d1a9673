#!/usr/bin/env bash
# Signals and temporary files: every signal whose default would kill
# gpufilt with its temporary files left behind stops a run cleanly (exit
# 130, nothing left); a stop takes effect within a second whatever is being
# written; a histogram file that would be huge is announced or refused up
# front and limited while written; a temporary file left by a killed run
# is removed by the next run of the same output, never one of a run in
# progress.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '

# 60 s of stereo: the serial reference with 255 taps takes well over a
# second over it.
"$SFTOOL" gen long.wav wav16 2 48000 2880000 noise
"$SFTOOL" gen in.wav wav16 2 48000 4800 noise

# signal_run SIG AFTER ARGS...: gpufilt ARGS, SIG after AFTER seconds; sets
# rc and ms (from the signal to the exit). With FEED=FILE, standard input
# is FILE through a pipe.
signal_run() {
    local sig=$1 after=$2
    shift 2
    if [ -n "${FEED:-}" ]; then
        "$GPUFILT" "$@" 2>stderr.txt < <(cat "$FEED") &
    else
        "$GPUFILT" "$@" 2>stderr.txt &
    fi
    local pid=$! t0
    sleep "$after"
    t0=$(date +%s%N)
    kill -"$sig" "$pid"
    rc=0
    wait "$pid" || rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
}

# --- Every signal that would kill it: a clean stop, exit 130, nothing left.
for sig in HUP INT QUIT TERM ALRM USR1 USR2 VTALRM XCPU; do
    signal_run "$sig" 0.5 long.wav out.wav --taps 255 --device ref --quiet
    assert_eq "SIG$sig: exit status" "$rc" 130
    assert_eq "SIG$sig: message" "$(cat stderr.txt)" "${E}interrupted by signal $(kill -l "$sig"); no output written"
    [ "$ms" -lt 1000 ] && pass || fail "SIG$sig: took $ms ms to stop"
    expect_no_output out.wav
done
# nohup's SIGHUP, ignored on entry, stays ignored: the run completes.
(
    trap '' HUP
    exec "$GPUFILT" long.wav nohup.wav --taps 255 --device ref --quiet
) 2>stderr.txt &
pid=$!
sleep 0.5
kill -HUP "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "SIGHUP ignored on entry (nohup): exit status" "$rc" 0
assert_eq "SIGHUP ignored on entry (nohup): frames written" "$("$SFTOOL" frames nohup.wav)" 2880000
rm -f nohup.wav
# A stream (raw on a pipe): the frames filtered so far are written.
FEED=long.wav signal_run HUP 0.5 - out.raw --raw s16le -c 2 --taps 255 --device ref --quiet
assert_eq "SIGHUP on a stream: exit status" "$rc" 130
case "$(cat stderr.txt)" in
*"${E}interrupted by signal 1; wrote the "*" frames filtered so far") pass ;;
*) fail "SIGHUP on a stream: message '$(cat stderr.txt)'" ;;
esac
[ -s out.raw ] && pass || fail "SIGHUP on a stream: nothing written"
rm -f out.raw

# --- A stop while records of small blocks and many bins are written (8 KiB
# a record, 2000 records per second of audio): within a second.
signal_run INT 0.7 long.wav out.wav --taps 5 --device cpu --hist h.csv --hist-block 48 \
    --hist-bins 4096 --hist-limit none --quiet
assert_eq "SIGINT while writing histograms: exit status" "$rc" 130
[ "$ms" -lt 1000 ] && pass || fail "SIGINT while writing histograms: took $ms ms to stop"
expect_no_output out.wav h.csv

# --- A histogram file that would be huge: refused past --hist-limit (1 GiB
# by default), a warning from 256 MiB; the limit holds while writing.
expect 2 "${E}--hist 'h.csv' would hold at least 1.83 GiB (120000 records of 8192 bins), past --hist-limit 1 GiB: raise the limit (--hist-limit SIZE, or none), or use fewer bins or longer blocks" \
    long.wav out.wav --taps 5 --hist h.csv --hist-block 48 --hist-bins 8192
expect 2 "${E}--hist 'h.csv' would hold at least 34.5 MiB (6000 records of 3000 bins), past --hist-limit 20 MiB: raise the limit (--hist-limit SIZE, or none), or use fewer bins or longer blocks" \
    long.wav out.wav --taps 5 --hist h.csv --hist-block 960 --hist-bins 3000 --hist-limit 20M
expect_no_output out.wav h.csv
expect 0 "${W}--hist 'h.csv' will hold at least 275 MiB (12000 records of 12000 bins)" \
    long.wav out.wav --taps 5 --hist h.csv --hist-block 480 --hist-bins 12000 --quiet
[ "$(stat -c %s h.csv)" -ge $((275 << 20)) ] && pass || fail "h.csv is smaller than announced"
rm -f h.csv out.wav
set +e +o pipefail
cat long.wav | "$GPUFILT" - out.raw --out-raw s16le --taps 5 --hist h.csv --hist-block 480 \
    --hist-bins 12000 --hist-limit 10M --quiet 2>stderr.txt
rc=${PIPESTATUS[1]}
set -e -o pipefail
assert_eq "a stream past --hist-limit: exit status" "$rc" 4
case "$(cat stderr.txt)" in
"${E}histogram file 'h.csv' would grow past --hist-limit 10 MiB at block "*": raise the limit (--hist-limit SIZE, or none), or use fewer bins or longer blocks") pass ;;
*) fail "a stream past --hist-limit: message '$(cat stderr.txt)'" ;;
esac
expect_no_output out.raw h.csv
expect 2 "${E}--hist-limit: '1.5G' is not a size in bytes (e.g. 500M or 20G: K, M, G and T are powers of 1024) or none" \
    in.wav out.wav --taps 5 --hist h.csv --hist-limit 1.5G
expect 2 "${E}--hist-limit: '0' is not a size in bytes (e.g. 500M or 20G: K, M, G and T are powers of 1024) or none" \
    in.wav out.wav --taps 5 --hist h.csv --hist-limit 0
expect 0 "" in.wav out.wav --taps 5 --hist h.csv --hist-limit 64KiB --quiet
rm -f out.wav h.csv

# --- A run killed with SIGKILL leaves its temporary file: the next run of
# the same output removes it and says so.
"$GPUFILT" long.wav k.wav --taps 255 --device ref --quiet &
pid=$!
sleep 0.5
{
    kill -KILL "$pid"
    wait "$pid"
} 2>/dev/null || true
stale=$(compgen -G '.k.wav.gpufilt-??????' || true)
[ -n "$stale" ] && pass || fail "no temporary file after SIGKILL"
rc=0
"$GPUFILT" in.wav k.wav --taps 5 --quiet 2>stderr.txt || rc=$?
assert_eq "the next run after SIGKILL: exit status" "$rc" 0
case "$(cat stderr.txt)" in
"${W}removed '$stale' ("*"), left by a gpufilt run that was killed") pass ;;
*) fail "the next run after SIGKILL: message '$(cat stderr.txt)'" ;;
esac
[ ! -e "$stale" ] && pass || fail "the stale temporary file '$stale' is still there"
assert_eq "frames of k.wav" "$("$SFTOOL" frames k.wav)" 4800
# ... also in another directory, and for a histogram file.
mkdir sub
"$GPUFILT" long.wav sub/k.wav --taps 255 --device ref --quiet --hist sub/k.csv &
pid=$!
sleep 0.5
{
    kill -KILL "$pid"
    wait "$pid"
} 2>/dev/null || true
expect 0 "${W}removed 'sub/.k.csv.gpufilt-*" in.wav sub/k2.wav --taps 5 --quiet --hist sub/k.csv
[ -z "$(compgen -G 'sub/.k.csv.gpufilt-*')" ] && pass || fail "the histogram file's stale temporary file is still there"
[ -n "$(compgen -G 'sub/.k.wav.gpufilt-*')" ] && pass || fail "another output's temporary file was removed"
rm -f sub/.k.wav.gpufilt-*
# A run in progress keeps its temporary file while another run writes the
# same output; the last to finish wins, both complete.
"$GPUFILT" long.wav k2.wav --taps 255 --device ref --quiet 2>a_err.txt &
pid=$!
sleep 0.5
running=$(compgen -G '.k2.wav.gpufilt-??????' || true)
expect 0 "" in.wav k2.wav --taps 5 --quiet
[ -n "$running" ] && [ -e "$running" ] && pass || fail "the temporary file of a run in progress was removed"
rc=0
wait "$pid" || rc=$?
assert_eq "the run in progress: exit status" "$rc" 0
assert_eq "the run in progress: stderr" "$(cat a_err.txt)" ""
assert_eq "frames of k2.wav (the run that finished last)" "$("$SFTOOL" frames k2.wav)" 2880000
# A run that cannot reach its next block: libsndfile reading a pipe's
# header retries a read that a signal interrupts, and the writer has gone
# quiet after 4 bytes. The first TERM is taken (and waits), a second ends
# gpufilt at once, exit 130; no output, nothing left but at most its
# temporary file (here, none: the output is made after the header).
mkfifo quiet.fifo
(printf RIFF && sleep 30) >quiet.fifo &
writer=$!
"$GPUFILT" - quiet.wav --taps 3 --quiet <quiet.fifo 2>stderr.txt &
pid=$!
sleep 6 # past the 5 s gpufilt waits to see the header before libsndfile reads it
kill -TERM "$pid"
sleep 0.5
kill -0 "$pid" 2>/dev/null && pass || fail "one TERM ended a run stuck in a read (the case is gone?)"
kill -TERM "$pid"
rc=0
timeout 10 tail --pid="$pid" -f /dev/null || true
kill "$writer" 2>/dev/null || true # (before this, gpufilt would wait for its end)
wait "$pid" || rc=$?
assert_eq "a second signal: exit status, message" "$rc $(cat stderr.txt)" \
    "130 ${E}interrupted by a second signal: stopped at once"
[ ! -e quiet.wav ] && pass || fail "a second signal left quiet.wav"
# What only looks like a temporary file of ours is left alone.
mkdir .k3.wav.gpufilt-abcdef
echo keep >.k3.wav.gpufilt-abc
expect 0 "" in.wav k3.wav --taps 5 --quiet
[ -d .k3.wav.gpufilt-abcdef ] && [ -e .k3.wav.gpufilt-abc ] && pass || fail "a look-alike was removed"
rmdir .k3.wav.gpufilt-abcdef
rm -f .k3.wav.gpufilt-abc
expect_no_output
finish
