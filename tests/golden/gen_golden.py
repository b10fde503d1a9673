#!/usr/bin/python3
"""Golden vectors for gpufilt, computed outside the project with numpy/scipy.

Run with a Python that has numpy and scipy (on Debian: /usr/bin/python3):

    /usr/bin/python3 tests/golden/gen_golden.py           # (re)write the files
    /usr/bin/python3 tests/golden/gen_golden.py --check   # verify the committed files

Output is deterministic (seeded numpy Generator, fixed case list) and uses no
libm function (uniform draws, integers and correctly rounded arithmetic
only), so --check regenerates every case in memory and compares it byte for
byte with the files, on any platform. recompute.py, run by CTest, re-derives
every expected output from the inputs stored in the files.

What is computed
----------------
For each case: an interleaved input x (frames x channels), taps h, a mode and a
precision. The expected output follows gpufilt's arithmetic contract exactly:

    acc = h[0] * x[j];  for k = 1 .. T-1:  acc = acc + h[k] * x[j - k]
    j = i + (T-1)//2 (same) or i (causal); x outside [0, N) is 0 and IS used

evaluated in np.float32 or np.float64, vectorised over samples and looping
over k, so every multiply and every add is rounded on its own (numpy never
fuses them). Explicit taps are rounded to the precision first (as the engine
does: (float)h); the mean filter uses 1/T computed in the precision
(np.float32(1) / np.float32(T) is the correctly rounded 1.0f/(float)T).

Every case is also checked against scipy, channel by channel, in float64:
scipy.signal.convolve(x, h, mode="same", method="direct") for same mode and
scipy.signal.lfilter(h, 1, x) for causal mode. The difference must lie within
the rounding-error bound of a T-term dot product,
    |y - y_scipy| <= 2 (T + 1) eps * sum_k |h_k| |x_(j-k)|  (+ T subnormal units)
which proves the contract's index formula is scipy's.

File format (all little-endian)
-------------------------------
MANIFEST.txt: one case per line, "<file name> <case name>"; lines starting
with '#' are comments. The C test loads exactly the files listed there.

Each case_NN.bin:
    offset  size  field
    0       8     magic "GFGOLD01"
    8       4     u32 precision   0 = f32, 1 = f64 (gf_precision)
    12      4     u32 mode        0 = same, 1 = causal (gf_mode)
    16      4     u32 channels    C
    20      4     u32 num_taps    T
    24      4     u32 frames      N
    28      4     u32 taps_kind   0 = explicit (pass taps below as config.taps),
                                  1 = mean filter (config.taps = NULL)
    32      32    case name, ASCII, NUL-padded
    64      8*T   f64 taps: explicit -> the doubles to pass as config.taps;
                  mean -> 1/T rounded to the precision (what gf_engine_taps returns)
    ..      N*C*s input  x, interleaved, s = 4 (f32) or 8 (f64)
    ..      N*C*s output y, interleaved, same length as the input
The file size is exactly 64 + 8*T + 2*N*C*s.
"""

import os
import struct
import sys

import numpy as np

from golden_io import (CAUSAL, F32, F64, SAME, contract_filter, dtype_of, manifest,
                       sample_format, scipy_filter, write_or_check)

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"GFGOLD01"
SEED = 20261121

EXPLICIT, MEAN = 0, 1


def make_signal(rng, frames, channels, prec, zeros_share=0.005):
    """Values in [-1, 1), with a few large ones, exact (signed) zeros and tiny ones."""
    x = rng.uniform(-1.0, 1.0, size=(frames, channels))
    n = frames * channels
    flat = x.reshape(-1)
    big = rng.choice(n, size=max(1, n // 100), replace=False)
    flat[big] = rng.uniform(-1000.0, 1000.0, size=big.size)
    zeros = rng.choice(n, size=max(1, int(n * zeros_share)), replace=False)
    flat[zeros] = np.where(rng.integers(0, 2, size=zeros.size) == 0, 0.0, -0.0)
    tiny = rng.choice(n, size=max(1, n // 300), replace=False)
    tiny_scale = 1e-39 if prec == F32 else 1e-309  # subnormal in the precision
    flat[tiny] = rng.uniform(-1.0, 1.0, size=tiny.size) * tiny_scale
    return x.astype(dtype_of(prec))


def normalish(rng, n):
    """n values with mean 0 and variance 1 (Irwin-Hall: twelve uniforms, less
    6), added one by one: only uniform draws and rounded additions, so the
    same on every platform and numpy (standard_normal's ziggurat calls exp
    and log, whose last bits vary)."""
    u = rng.random((12, n))
    s = u[0].copy()
    for i in range(1, 12):
        s = s + u[i]
    return s - 6.0


def make_taps(rng, num_taps, kind, prec, signed_zeros=False):
    """(taps stored in the file as f64, taps in the precision used to filter)."""
    dt = dtype_of(prec)
    if kind == MEAN:
        h = np.full(num_taps, dt(1) / dt(num_taps), dtype=dt)
        return h.astype(np.float64), h
    h64 = normalish(rng, num_taps) / np.sqrt(num_taps)
    h64[rng.integers(0, num_taps)] *= -3.0  # at least one clearly negative, larger tap
    if signed_zeros:
        # -0.0 and +0.0 taps: a zero output's sign depends on every product.
        h64[1::3] = -0.0
        h64[2::3] = 0.0
    return h64, h64.astype(dt)


def scipy_check(x, h, y, mode, name):
    """y (contract, in the precision) against scipy in float64, within the error bound."""
    x64 = x.astype(np.float64)
    h64 = h.astype(np.float64)
    T = h.size
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).smallest_subnormal
    worst = 0.0
    for ch in range(x.shape[1]):
        ref = scipy_filter(x64[:, ch], h64, mode)
        mag = scipy_filter(np.abs(x64[:, ch]), np.abs(h64), mode)
        assert ref.shape == y[:, ch].shape, name
        err = np.abs(y[:, ch].astype(np.float64) - ref)
        bound = 2.0 * (T + 1) * eps * mag + 2.0 * T * tiny
        if not np.all(err <= bound):
            i = int(np.argmax(err - bound))
            raise AssertionError(
                f"{name}: channel {ch} index {i}: contract {y[i, ch]!r} vs scipy {ref[i]!r} "
                f"(error {err[i]:.3g} > bound {bound[i]:.3g})")
        rel = err / np.maximum(mag, tiny)
        worst = max(worst, float(rel.max()))
    return worst


def case_list():
    """Every T, both modes, both precisions, both tap kinds; channels cycle 1..8."""
    cases = []
    ch = 0
    for T in (1, 2, 5, 25, 255):
        for mode in (SAME, CAUSAL):
            for prec in (F32, F64):
                for kind in (MEAN, EXPLICIT):
                    cases.append(dict(T=T, mode=mode, prec=prec, kind=kind, channels=ch % 8 + 1))
                    ch += 1
    # Edges: even T with a non-zero look-ahead, signals shorter than the filter,
    # a single frame, and the widest long-filter case.
    cases.append(dict(T=4, mode=SAME, prec=F32, kind=EXPLICIT, channels=2))
    cases.append(dict(T=24, mode=SAME, prec=F64, kind=MEAN, channels=3))
    cases.append(dict(T=255, mode=SAME, prec=F32, kind=EXPLICIT, channels=1, frames=100))
    cases.append(dict(T=255, mode=CAUSAL, prec=F64, kind=MEAN, channels=2, frames=100))
    cases.append(dict(T=5, mode=SAME, prec=F64, kind=EXPLICIT, channels=1, frames=1))
    cases.append(dict(T=255, mode=SAME, prec=F32, kind=EXPLICIT, channels=8, frames=600))
    # Signed-zero taps over a signal with many signed zeros (even T: look-ahead 2).
    cases.append(dict(T=6, mode=SAME, prec=F32, kind=EXPLICIT, channels=2, frames=400, sz=True))
    cases.append(dict(T=6, mode=CAUSAL, prec=F64, kind=EXPLICIT, channels=1, frames=400, sz=True))
    return cases


def frames_for(rng, case):
    if "frames" in case:
        return case["frames"]
    T = case["T"]
    lo, hi = (600, 900) if T == 255 else (300, 700)
    # Wide frames cost more bytes: shorter signals for many channels.
    if case["channels"] > 4:
        hi = lo + (hi - lo) // 2
    return int(rng.integers(lo, hi + 1))


def build():
    rng = np.random.default_rng(SEED)
    files = []
    for n, case in enumerate(case_list()):
        T, mode, prec, kind = case["T"], case["mode"], case["prec"], case["kind"]
        C = case["channels"]
        N = frames_for(rng, case)
        sz = case.get("sz", False)
        name = "T%d_%s_%s_%s_c%d_n%d" % (T, "same" if mode == SAME else "causal",
                                        "f32" if prec == F32 else "f64",
                                        "mean" if kind == MEAN else "zerotaps" if sz else "taps",
                                        C, N)
        x = make_signal(rng, N, C, prec, zeros_share=0.4 if sz else 0.005)
        h_file, h = make_taps(rng, T, kind, prec, signed_zeros=sz)
        y = contract_filter(x, h, mode)
        worst = scipy_check(x, h, y, mode, name)
        assert len(name) < 32
        header = MAGIC + struct.pack("<6I", prec, mode, C, T, N, kind)
        header += name.encode("ascii").ljust(32, b"\0")
        assert len(header) == 64
        le = sample_format(prec)
        blob = (header + h_file.astype("<f8").tobytes() + x.astype(le).tobytes()
                + y.astype(le).tobytes())
        assert len(blob) == 64 + 8 * T + 2 * N * C * (4 if prec == F32 else 8)
        files.append(("case_%02d.bin" % n, name, blob, worst))
    return files, manifest("gpufilt golden vectors", "gen_golden.py", files)


def main():
    files, manifest_bytes = build()
    bad = write_or_check(
        HERE, files, manifest_bytes, "--check" in sys.argv[1:],
        lambda f: "%s %-32s %8d bytes  max rel. error vs scipy %.2e" % (f[0], f[1], len(f[2]), f[3]))
    total = len(manifest_bytes) + sum(len(f[2]) for f in files)
    print("%d cases, %d bytes in all" % (len(files), total))
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
