#!/usr/bin/env bash
# live_check checked on recordings made without audio: the schedule of a
# change of filter (a signal through --taps 1, then crossfaded over 960
# frames into a 63-tap filter's output, which gpufilt computes offline on
# the CPU, bit for bit the live worker's arithmetic), placed 512 frames
# into a "recording". Then the same recording with two xruns (256 output
# frames lost before the change, 256 frames of silence inserted after it),
# and one with a stretch of wrong samples. live_check must pass the first,
# pass the second only with xruns reported (piecewise), and fail the third
# with or without them. Then a burst of xruns: silences with fragments of
# the stream between them, one shifted (passes with xruns reported), and
# the same with a wrong fragment (fails). A period of stale output and its
# transient, where the server itself missed a period: passes only with
# xruns reported and the plain JACK connection (--loop) disturbed at that
# period; a recording that ends in silence passes only with xruns. Last,
# within the FFT method's
# bound: two changes between 65536-tap filters (in partitions of 16, whose
# bound is about a fifth of the output's size, as a 2^20-tap filter's in
# partitions of 256 is), so a crossfade leaves the old output within the
# bound hundreds of frames after it starts: its start must still be found
# exactly (the frames gpufilt reports differ from the signal's by one
# constant), and one that starts 10 frames late must fail. Then filters
# that heard the signal only from 8192 frames before their crossfades (as
# gpufilt's do when longer than a second: --heard): passes with the frames
# they heard from, fails with 4096.
#
#   live_check_self.sh GPUFILT LIVE_CHECK WORKDIR [PYTHON]
# PYTHON (default python3) makes the signal and splices the schedule with
# numpy, in double rounded once to float as the live worker does; exit 77
# (skipped) where it has no numpy.
set -u
gpufilt=$1 check=$2 work=$3 py=${4:-python3}
if ! "$py" -c 'import numpy' 2>/dev/null; then
    echo "live_check_self: SKIP: $py with numpy is needed (Debian: python3-numpy)"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
mkdir -p "$work" && cd "$work" || exit 2
fails=0
run_check() { # WANT LABEL ARGS...: live_check's exit status
    local want=$1 label=$2 rc
    shift 2
    "$check" "$@" >"$label.out"
    rc=$?
    if [ "$rc" = "$want" ]; then
        echo "live_check_self: $label: exit $rc: ok ($(tail -n 1 "$label.out"))"
    else
        echo "live_check_self: $label: FAIL: exit $rc, expected $want"
        cat "$label.out"
        fails=$((fails + 1))
    fi
}
expect_rc() { # WANT LABEL ARGS...: the change from --taps 1 to h63.txt at frame 10000
    local want=$1 label=$2
    shift 2
    run_check "$want" "$label" --signal x.f32 --channels 2 --taps 1 --switch coeffs:h63.txt \
        --fade 960 --reported 10000 --latency 512 --exact-latency 1 "$@"
}
"$check" --make-coeffs 63 5 >h63.txt || exit 2
"$py" -c '
import numpy as np
np.random.default_rng(9).uniform(-0.5, 0.5, (48000, 2)).astype("<f4").tofile("x.f32")' || exit 2
"$gpufilt" x.f32 new.f32 --raw f32le --channels 2 --rate 48000 --coeffs h63.txt \
    --method direct --mode causal --device cpu --quiet || exit 2
"$py" -c '
import numpy as np
old = np.fromfile("x.f32", "<f4").reshape(-1, 2)  # --taps 1: the signal itself
new = np.fromfile("new.f32", "<f4").reshape(-1, 2)
s, F = 10000, 960
y = old.copy()
w = (np.arange(F, dtype=np.float64) + 1) / (F + 1)
y[s:s + F] = (old[s:s + F].astype(np.float64) * (1 - w[:, None])
              + new[s:s + F].astype(np.float64) * w[:, None]).astype(np.float32)
y[s + F:] = new[s + F:]
z = lambda n: np.zeros((n, 2), np.float32)
rec = np.concatenate([z(512), y, z(3000)])
rec.tofile("rec.f32")
xr = np.concatenate([rec[:512 + 5000], rec[512 + 5256:512 + 30000], z(256), rec[512 + 30000:]])
xr.tofile("xruns.f32")
bad = rec.copy()
bad[512 + 20000:512 + 20100] *= 0.5
bad.tofile("bad.f32")
# a burst of xruns (as a 600-s soak recorded one): 1278 frames of silence,
# 2 frames of the stream 512 frames late, 510 of silence, 2 right, 256 of
# silence, then the stream again where it was
burst = rec.copy()
b0 = 512 + 25000
burst[b0:b0 + 2048] = 0
burst[b0 + 1278:b0 + 1280] = rec[b0 + 1278 - 512:b0 + 1280 - 512]
burst[b0 + 1790:b0 + 1792] = rec[b0 + 1790:b0 + 1792]
burst.tofile("burst.f32")
burst[b0 + 1278:b0 + 1280] *= 0.5
burst.tofile("burst_bad.f32")
# a period heard stale, where the server itself missed a period: the
# output of the period before, then 4 frames of the transient back; and
# the plain connection beside it (jack_feed --loop), stale at that period
# (near), at another (far) or not at all (clean)
stale = rec.copy()
s0 = 512 + 20000
stale[s0:s0 + 256] = rec[s0 - 256:s0]
stale[s0 + 256:s0 + 260] *= 0.5
stale.tofile("stale.f32")
loop = np.concatenate([np.fromfile("x.f32", "<f4")[0::2], z(3512)[:, 0]])
loop.tofile("loop_clean.f32")
for name, at in (("near", 20000), ("far", 40000)):
    l = loop.copy()
    l[at:at + 256] = loop[at - 256:at]
    l.tofile("loop_%s.f32" % name)
# the stream silent over its last 300 frames (the recording ends disturbed)
tail = rec.copy()
tail[512 + 48000 - 300:512 + 48000] = 0
tail.tofile("tail.f32")' || exit 2
expect_rc 0 strict --record rec.f32 --xruns 0
expect_rc 1 xruns_unreported --record xruns.f32 --xruns 0
expect_rc 0 xruns_piecewise --record xruns.f32 --xruns 1
expect_rc 1 wrong_samples --record bad.f32 --xruns 0
expect_rc 1 wrong_samples_xruns --record bad.f32 --xruns 1
expect_rc 0 burst_piecewise --record burst.f32 --xruns 3
expect_rc 1 burst_wrong_fragment --record burst_bad.f32 --xruns 3
expect_rc 0 stale_server --record stale.f32 --xruns 1 --loop loop_near.f32 --loop-offset 0
expect_rc 1 stale_server_unreported --record stale.f32 --xruns 0 --loop loop_near.f32 \
    --loop-offset 0
expect_rc 1 stale_elsewhere --record stale.f32 --xruns 1 --loop loop_far.f32 --loop-offset 0
expect_rc 1 stale_clean --record stale.f32 --xruns 1 --loop loop_clean.f32 --loop-offset 0
expect_rc 1 stale_no_loop --record stale.f32 --xruns 1
expect_rc 0 tail_silent --record tail.f32 --xruns 1
expect_rc 1 tail_silent_unreported --record tail.f32 --xruns 0

"$check" --make-coeffs 65536 7 >hA.txt && "$check" --make-coeffs 65536 8 >hB.txt || exit 2
"$py" -c '
import numpy as np
x = np.random.default_rng(9).uniform(-0.5, 0.5, (48000, 2)).astype("<f4")
x[46000, :] = 3.0  # max|x|, in the bound, 6 times the rest: far from the changes
x.tofile("xl.f32")' || exit 2
for f in A B; do
    "$gpufilt" xl.f32 "l$f.f32" --raw f32le --channels 2 --rate 48000 --coeffs "h$f.txt" \
        --method fft --partition 16 --mode causal --device cpu --quiet || exit 2
done
"$py" -c '
import numpy as np
a = np.fromfile("lA.f32", "<f4").reshape(-1, 2)
b = np.fromfile("lB.f32", "<f4").reshape(-1, 2)
F = 960
w = ((np.arange(F, dtype=np.float64) + 1) / (F + 1))[:, None]
def schedule(s1, s2):
    y = a.copy()
    for s, old, new in ((s1, a, b), (s2, b, a)):
        y[s:s + F] = (old[s:s + F].astype(np.float64) * (1 - w)
                      + new[s:s + F].astype(np.float64) * w).astype(np.float32)
        y[s + F:] = new[s + F:]
    z = np.zeros((512, 2), np.float32)
    return np.concatenate([z, y, z])
schedule(10000, 30000).tofile("long.f32")
schedule(10010, 30000).tofile("long_late.f32")' || exit 2
long_check() { # WANT LABEL RECORDING
    run_check "$1" "$2" --signal xl.f32 --channels 2 --coeffs hA.txt --fft-partition 16 \
        --switch coeffs:hB.txt --switch coeffs:hA.txt --fade 960 --reported 20000,40000 \
        --latency 512 --exact-latency 1 --record "$3" --xruns 0
}
long_check 0 fft_bound long.f32
long_check 1 fft_bound_late long_late.f32

# what a filter outputs when it hears the signal from frame a on
for hf in A:0 B:11808 A:27808; do
    "$py" -c '
import sys, numpy as np
x = np.fromfile("x.f32", "<f4").reshape(-1, 2).copy()
x[:int(sys.argv[1])] = 0
x.tofile("xh.f32")' "${hf#*:}" || exit 2
    "$gpufilt" xh.f32 "h${hf%:*}${hf#*:}.f32" --raw f32le --channels 2 --rate 48000 \
        --coeffs "h${hf%:*}.txt" --method fft --partition 256 --mode causal --device cpu \
        --quiet || exit 2
done
"$py" -c '
import numpy as np
ld = lambda n: np.fromfile(n, "<f4").reshape(-1, 2)
y, F = ld("hA0.f32").copy(), 960
w = ((np.arange(F, dtype=np.float64) + 1) / (F + 1))[:, None]
for s, new in ((20000, ld("hB11808.f32")), (36000, ld("hA27808.f32"))):
    y[s:s + F] = (y[s:s + F].astype(np.float64) * (1 - w)
                  + new[s:s + F].astype(np.float64) * w).astype(np.float32)
    y[s + F:] = new[s + F:]
z = np.zeros((512, 2), np.float32)
np.concatenate([z, y, z]).tofile("heard.f32")' || exit 2
heard_check() { # WANT LABEL HEARD
    run_check "$1" "$2" --signal x.f32 --channels 2 --coeffs hA.txt --fft-partition 256 \
        --switch coeffs:hB.txt --switch coeffs:hA.txt --fade 960 --reported 30000,46000 \
        --heard "$3" --latency 512 --exact-latency 1 --record heard.f32 --xruns 0
}
heard_check 0 heard 21808,37808
heard_check 1 heard_wrong 25904,41904
if [ "$fails" = 0 ]; then echo "live_check_self: PASS"; else echo "live_check_self: $fails failed"; fi
[ "$fails" = 0 ]
