#!/usr/bin/python3
"""Golden vectors for gpufilt's FFT method, exact, computed outside the project.

    /usr/bin/python3 tests/golden/fft/gen_fft.py           # (re)write the files
    /usr/bin/python3 tests/golden/fft/gen_fft.py --check   # verify the committed files

Every value is a dyadic rational: taps h = a / 2^10 with integers |a| <= 2^10,
input x = b / 2^15 with integers -2^15 <= b < 2^15 (exact in float and in
16-bit PCM), so the exact convolution is integer arithmetic:
numpy.convolve on int64 numerators gives y = c / 2^25 with no rounding at
all (|c| < 2^53). The FFT method's output is then compared with y within
the bound gpufilt states (gf_engine_error_bound); no FFT library is
involved in making the expected values, and no libm function either, so
--check reproduces the files on any platform. recompute.py, run by CTest,
re-derives every output from the numerators stored in the files.

Modes, for channel input x[0..N) and taps h[0..T):
    full    y[i] = sum_k h[k] x[i-k], i < N+T-1   (numpy.convolve "full")
    causal  the first N of full                    (scipy.signal.lfilter(h, 1, x))
    same    full[(T-1)//2 : (T-1)//2 + N]          (scipy.signal.convolve "same")

File format (little-endian), one case per fcase_NN.bin, listed in
MANIFEST.txt ("<file> <name>"):
    0    8   magic "GFFFT001"
    8    4   u32 mode        0 = same, 1 = causal, 2 = full (gf_mode)
    12   4   u32 channels    C
    16   4   u32 taps        T
    20   4   u32 frames      N (input)
    24   4   u32 per_channel 0: one filter, 1: C filters
    28   4   u32 outputs     frames of y
    32   32  case name, ASCII, NUL-padded
    64   4*T*F   i32 tap numerators (F = C with per_channel, else 1), filter-major
    ..   4*N*C   i32 input numerators, interleaved
    ..   8*outputs*C  i64 output numerators, interleaved
"""

import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"same": 0, "causal": 1, "full": 2}


def rounded_div(a, b):
    """a / b rounded to the nearest integer (halves away from zero), exactly."""
    q = (2 * np.abs(a) + b) // (2 * b)
    return np.where(a < 0, -q, q)


def taps(rng, T, kind):
    """Integer numerators in [-1024, 1024], made with integer arithmetic only
    (no libm: the same on every platform)."""
    if kind == "decay":  # a room-like response: noise under a cubic decay
        n = np.arange(T, dtype=np.int64)
        return rounded_div(rng.integers(-1024, 1025, T) * (T - n) ** 3, np.int64(T) ** 3)
    if kind == "lowpass":  # a triangle (Bartlett) window: a lowpass, all of one sign
        n = np.arange(T, dtype=np.int64)
        tri = np.minimum(n + 1, T - n)
        return rounded_div(1024 * tri, tri.max())
    return rng.integers(-1024, 1025, T).astype(np.int64)


def signal(rng, N, kind, h):
    if kind == "impulse":
        x = np.zeros(N, np.int64)
        x[[0, N // 3, N - 1]] = [32767, -32768, 16384]
        return x
    if kind == "dc":
        return np.full(N, 32767, np.int64)
    if kind == "nyquist":
        return np.where(np.arange(N) % 2 == 0, 32767, -32768).astype(np.int64)
    if kind == "worst":  # x = sign(h reversed), repeated: outputs reach sum |h| max |x|
        s = np.where(h[::-1] >= 0, 32767, -32768).astype(np.int64)
        return np.resize(s, N)
    return rng.integers(-32768, 32768, N).astype(np.int64)


# name, mode, channels, taps, frames, per-channel, tap kind, signal kind
CASES = [
    ("T1_same_noise", "same", 1, 1, 300, 0, "noise", "noise"),
    ("T3_causal_impulse", "causal", 1, 3, 100, 0, "noise", "impulse"),
    ("T64_full_noise", "full", 1, 64, 1000, 0, "decay", "noise"),
    ("T255_same_stereo", "same", 2, 255, 3000, 0, "lowpass", "noise"),
    ("T1000_causal_dc", "causal", 1, 1000, 5000, 0, "lowpass", "dc"),
    ("T1000_same_nyquist", "same", 1, 1000, 5000, 0, "lowpass", "nyquist"),
    ("T4097_full_worst", "full", 1, 4097, 12000, 0, "noise", "worst"),
    ("T5000_same_perchannel", "same", 3, 5000, 9000, 1, "decay", "noise"),
    ("T20000_causal_decay", "causal", 1, 20000, 24001, 0, "decay", "noise"),
    ("T20000_full_perchannel", "full", 2, 20000, 21000, 1, "decay", "worst"),
]


def make_case(i, case):
    name, mode, C, T, N, per, tkind, skind = case
    rng = np.random.default_rng(1000 + i)
    F = C if per else 1
    hs = [taps(rng, T, tkind) for _ in range(F)]
    xs = [signal(rng, N, skind, hs[c % F]) for c in range(C)]
    ys = []
    for c in range(C):
        full = np.convolve(xs[c], hs[c % F])  # exact: int64, |values| < 2^53
        if mode == "full":
            ys.append(full)
        elif mode == "causal":
            ys.append(full[:N])
        else:
            ys.append(full[(T - 1) // 2:(T - 1) // 2 + N])
    for y in ys:
        assert np.abs(y).max() < 2**53
    out_frames = len(ys[0])
    head = struct.pack("<8sIIIIII32s", b"GFFFT001", MODES[mode], C, T, N, per, out_frames,
                       name.encode())
    body = np.concatenate([h.astype("<i4") for h in hs]).tobytes()
    body += np.stack(xs, axis=1).astype("<i4").tobytes()
    body += np.stack(ys, axis=1).astype("<i8").tobytes()
    return head + body


def main():
    check = "--check" in sys.argv[1:]
    manifest = ["# FFT-method golden cases (gen_fft.py): <file> <name>"]
    bad = 0
    for i, case in enumerate(CASES):
        fname = "fcase_%02d.bin" % i
        data = make_case(i, case)
        manifest.append("%s %s" % (fname, case[0]))
        path = os.path.join(HERE, fname)
        if check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print("gen_fft.py: %s differs" % fname)
                    bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    text = "\n".join(manifest) + "\n"
    mpath = os.path.join(HERE, "MANIFEST.txt")
    if check:
        with open(mpath) as f:
            if f.read() != text:
                print("gen_fft.py: MANIFEST.txt differs")
                bad += 1
        print("gen_fft.py: %d cases, %s" % (len(CASES), "all reproduced" if not bad else "%d differ" % bad))
        sys.exit(1 if bad else 0)
    with open(mpath, "w") as f:
        f.write(text)
    print("gen_fft.py: wrote %d cases" % len(CASES))


if __name__ == "__main__":
    main()
