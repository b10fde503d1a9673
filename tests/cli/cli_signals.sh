#!/usr/bin/env bash
# Signals: every signal whose default would kill gpufilt with its
# temporary files left behind stops a run cleanly (exit 130, nothing left),
# within a second.
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

expect_no_output
finish
