#!/usr/bin/python3
"""Golden per-block histograms for gpufilt, computed outside the project.

Run with a Python that has numpy and scipy (on Debian: /usr/bin/python3):

    /usr/bin/python3 tests/golden/gen_hist.py           # (re)write tests/golden/hist/
    /usr/bin/python3 tests/golden/gen_hist.py --check   # verify the committed files

Output is deterministic (seeded numpy Generator, fixed case list) and uses no
libm function (integers, uniform draws and correctly rounded arithmetic
only); --check regenerates every case in memory and compares it byte for
byte, on any platform. recompute.py, run by CTest, re-derives every record
from the inputs stored in the files.

What is computed (docs/histograms.md has the definitions)
---------------------------------------------------------
Each case is a stream (frames x channels), a filter that is either the
identity (1 tap, h = 1: output == input, so every special value reaches the
histogram unchanged) or a dyadic filter over dyadic samples, whose outputs
are exact in either precision whatever the order of the sums (checked
here: the contract's order in the precision equals scipy's float64), and a
histogram config. Blocks are block_frames consecutive frames of the output
stream (or of the input stream with of_input); the last may be short.

Per block and channel (or all channels with mix), the samples converted to
float64:
  bins   numpy.histogram(x, bins, range=(lo, hi)) over lo <= x <= hi; the
         script also evaluates gpufilt's bin rule on its own and asserts that
         it gives the same counts (the rule is numpy's, so it must);
  below  x < lo (-inf included); above  x > hi (+inf included); nan  NaN;
  min, max  over the non-NaN samples in the total order where -0.0 < +0.0
         (sorted on (value, sign)), NaN when there are none;
  rms    NaN without non-NaN samples; +inf if one has |x| >= 4096 or is
         infinite; else sqrt(float(S) * 2**-64 / n) with the exact integer
         S = sum of floor(Fraction(x*x) * 2**64), x*x one float64 product,
         n the non-NaN count (Python's int-to-float and sqrt are correctly
         rounded, as gpufilt's definition asks).

File format (all little-endian), tests/golden/hist/MANIFEST.txt lists
"<file> <case name>"; each hcase_NN.bin:
    0    8   magic "GFHIST01"
    8    4   u32 precision  0 = f32, 1 = f64
    12   4   u32 mode       0 = same, 1 = causal
    16   4   u32 channels C
    20   4   u32 num_taps T
    24   4   u32 frames N
    28   4   u32 bins
    32   4   u32 block_frames
    36   4   u32 flags      bit 0: of_input, bit 1: mix
    40   8   f64 lo
    48   8   f64 hi
    56   4   u32 records R
    60   4   u32 0
    64   32  case name, ASCII, NUL-padded
    96   8*T f64 taps
    ..   N*C*s input samples, interleaved, s = 4 (f32) or 8 (f64)
    ..   R records, in stream order (block, then channel), each
           u64 block, u64 first_frame, u64 frames, i64 channel (-1: mix),
           u64 below, u64 above, u64 nan, f64 min, f64 max, f64 rms,
           u64 K, then K pairs (u64 bin, u64 count): the non-zero bins,
           in increasing bin order (every other bin is 0)
"""

import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np

from golden_io import (CAUSAL, F32, F64, SAME, contract_filter, dtype_of, manifest,
                       sample_format, scipy_filter, write_or_check)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hist")
MAGIC = b"GFHIST01"
SEED = 20261122

CORRECTIONS = {"up": 0, "down": 0}


def rule_bin(x, lo, hi, bins):
    """gpufilt's bin rule, written out from gpufilt.h in float64."""
    lo, hi, x = np.float64(lo), np.float64(hi), np.float64(x)
    scale = np.float64(bins) / (hi - lo)
    step = (hi - lo) / np.float64(bins)

    def edge(i):
        return lo + np.float64(i) * step

    t = (x - lo) * scale
    i = bins - 1 if t >= bins else (int(t) if t >= 1.0 else 0)
    if i > 0 and x < edge(i):
        i -= 1
        CORRECTIONS["down"] += 1
    elif i + 1 < bins and x >= edge(i + 1):
        i += 1
        CORRECTIONS["up"] += 1
    return i


def order_key(v):
    return (v, 0 if math.copysign(1.0, v) < 0 else 1)


def block_stats(vals, lo, hi, bins):
    """vals: float64 numpy array of one record's samples."""
    nan = int(np.isnan(vals).sum())
    ok = vals[~np.isnan(vals)]
    below = int((ok < lo).sum())
    above = int((ok > hi).sum())
    inr = ok[(ok >= lo) & (ok <= hi)]
    counts, edges = np.histogram(inr, bins=bins, range=(lo, hi))
    # numpy's edges are the rule's: linspace gives lo + i*step, hi at the end.
    step = (np.float64(hi) - np.float64(lo)) / np.float64(bins)
    assert edges[-1] == hi and all(edges[i] == np.float64(lo) + np.float64(i) * step
                                   for i in range(0, bins, max(1, bins // 64)))
    mine = np.zeros(bins, dtype=np.int64)
    for v in inr:
        mine[rule_bin(v, lo, hi, bins)] += 1
    assert np.array_equal(mine, counts), "gpufilt's rule differs from numpy.histogram"
    if ok.size == 0:
        mn = mx = rms = math.nan
    else:
        lst = [float(v) for v in ok]
        mn = min(lst, key=order_key)
        mx = max(lst, key=order_key)
        if any(not math.isfinite(v) or abs(v) >= 4096.0 for v in lst):
            rms = math.inf
        else:
            s = sum(math.floor(Fraction(v * v) * 2**64) for v in lst)
            rms = math.sqrt(float(s) * 2.0**-64 / len(lst))
    return counts.astype(np.uint64), below, above, nan, mn, mx, rms


def records(stream, channels, block, mix, lo, hi, bins):
    """stream: (frames, channels) float64 of the histogrammed stream."""
    out = []
    frames = stream.shape[0]
    for b in range((frames + block - 1) // block):
        seg = stream[b * block:(b + 1) * block]
        groups = [(-1, seg.reshape(-1))] if mix else [(c, seg[:, c]) for c in range(channels)]
        for ch, vals in groups:
            counts, below, above, nan, mn, mx, rms = block_stats(vals, lo, hi, bins)
            rec = struct.pack("<3Qq3Q3d", b, b * block, seg.shape[0], ch, below, above, nan, mn,
                              mx, rms)
            nz = np.nonzero(counts)[0]
            pairs = np.stack([nz.astype(np.uint64), counts[nz]], axis=1)
            out.append(rec + struct.pack("<Q", nz.size) + pairs.astype("<u8").tobytes())
    return out


def specials(lo, hi, bins, prec):
    """Edge values, each representable in the precision (or its nearest)."""
    dt = dtype_of(prec)
    lo, hi = np.float64(lo), np.float64(hi)
    step = (hi - lo) / bins
    v = [lo, hi, np.nextafter(hi, -np.inf), np.nextafter(lo, np.inf), np.nextafter(lo, -np.inf),
         np.nextafter(hi, np.inf), 0.0, -0.0, np.nan, np.inf, -np.inf, 4096.0, -4095.75,
         5e-324, -1e-310, 1e-30]
    for i in range(1, bins, 1 if bins <= 128 else bins // 16):
        e = lo + np.float64(i) * step  # an interior edge
        v += [e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf)]
    # In f32 the samples are floats: these become the nearest floats (also
    # worth having: the edges as a float sees them).
    return np.array(v, dtype=np.float64).astype(dt)


def make_identity_signal(rng, frames, channels, prec, lo, hi, bins, nan_block=None, block=None):
    """A triangle wave per channel that overshoots the range, plus uniform
    noise, then specials: integer arithmetic and rounded +-*/ only (np.sin,
    used before, differs in its last bits between numpy versions)."""
    dt = dtype_of(prec)
    t = np.arange(frames)[:, None]
    period = 4 * (19 + 3 * np.arange(channels))[None, :]  # 76, 88, 100, ... frames
    tri = np.abs((t + period // 4) % period - period // 2) * (4.0 / period) - 1.0  # [-1, 1]
    mid, amp = (lo + hi) / 2, (hi - lo) * 0.6
    x = mid + amp * tri + rng.uniform(-1.0, 1.0, (frames, channels)) * ((hi - lo) * 0.08)
    x = x.astype(dt)
    flat = x.reshape(-1)
    sp = specials(lo, hi, bins, prec)
    where = rng.choice(flat.size, size=min(flat.size, 4 * sp.size), replace=False)
    flat[where] = np.resize(sp, where.size)
    if nan_block is not None:  # a block of NaN only: min, max and rms are NaN
        x[nan_block * block:(nan_block + 1) * block] = np.nan
    return x


def scipy_filter_all(x, h, mode):
    """Every channel of x through scipy, in float64."""
    x64 = x.astype(np.float64)
    return np.stack([scipy_filter(x64[:, ch], h, mode) for ch in range(x.shape[1])], axis=1)


def case_list():
    # (name, prec, mode, C, taps, N, bins, block, of_input, mix, lo, hi, extra)
    ident = [1.0]
    dy5 = [0.125, 0.25, 0.25, 0.25, 0.125]
    dy3 = [0.25, 0.5, 0.25]
    m63 = [1.0 / 64] * 63
    return [
        ("id_f64_c1_b8_edges", F64, SAME, 1, ident, 200, 8, 16, 0, 0, -1.0, 1.0, {"nan_block": 3}),
        ("id_f32_c2_b256", F32, SAME, 2, ident, 5037, 256, 1000, 0, 0, -1.0, 1.0, {}),
        ("id_f32_c3_b4096_mix", F32, SAME, 3, ident, 4100, 4096, 777, 0, 1, -0.5, 0.75, {}),
        ("id_f64_c1_b1", F64, CAUSAL, 1, ident, 333, 1, 100, 0, 0, 0.0, 1.0, {}),
        ("id_f64_c2_b65536", F64, SAME, 2, ident, 5000, 65536, 4096, 0, 0, -3.0, 5.0, {}),
        ("id_f32_c1_blk1", F32, SAME, 1, ident, 300, 256, 1, 0, 0, -1.0, 1.0, {}),
        ("id_f64_c2_mix_in", F64, SAME, 2, ident, 999, 10, 64, 1, 1, -2.0, 3.0, {"nan_block": 5}),
        # A range whose edges are inexact: the rule's corrections both ways.
        ("id_f64_c2_b100_corr", F64, CAUSAL, 2, ident, 1500, 100, 400, 0, 0, -1.1, 0.9, {}),
        ("id_f32_c1_b4096_corr", F32, SAME, 1, ident, 3000, 4096, 1024, 0, 0, -3.3, 5.1, {}),
        ("dy5_f64_same_out", F64, SAME, 2, dy5, 3001, 64, 500, 0, 0, -2.0, 2.0, {"dyadic": 1}),
        ("dy5_f64_same_in", F64, SAME, 2, dy5, 3001, 64, 500, 1, 0, -2.0, 2.0, {"dyadic": 1}),
        ("dy3_f32_causal_out", F32, CAUSAL, 1, dy3, 1000, 32, 128, 0, 0, -1.5, 1.5,
         {"dyadic": 1}),
        ("m63_f32_same_out", F32, SAME, 2, m63, 2500, 100, 333, 0, 0, -1.0, 1.0, {"dyadic": 1}),
        ("m63_f32_same_in", F32, SAME, 2, m63, 2500, 100, 333, 1, 0, -1.0, 1.0, {"dyadic": 1}),
        ("m63_f64_same_mix", F64, SAME, 3, m63, 700, 16, 256, 0, 1, -0.5, 0.5, {"dyadic": 1}),
    ]


def build():
    rng = np.random.default_rng(SEED)
    files = []
    for n, (name, prec, mode, C, taps, N, bins, block, of_input, mix, lo, hi, extra) in \
            enumerate(case_list()):
        dt = dtype_of(prec)
        h = np.array(taps, dtype=np.float64)
        if extra.get("dyadic"):
            # Multiples of 1/4 in [-8, 8]: with dyadic taps every product and
            # partial sum is exact in either precision.
            x = (rng.integers(-32, 33, size=(N, C)) / 4.0).astype(dt)
            x[rng.random((N, C)) < 0.02] = -0.0
            y = contract_filter(x, h.astype(dt), mode)
            ys = scipy_filter_all(x, h, mode)
            assert np.array_equal(y.astype(np.float64), ys), name + ": outputs not exact"
        else:
            assert taps == [1.0]
            x = make_identity_signal(rng, N, C, prec, lo, hi, bins, extra.get("nan_block"), block)
            y = x
        stream = (x if of_input else y).astype(np.float64)
        recs = records(stream, C, block, mix, lo, hi, bins)
        assert len(name) < 32
        flags = (1 if of_input else 0) | (2 if mix else 0)
        header = MAGIC + struct.pack("<7I", prec, mode, C, len(taps), N, bins, block)
        header += struct.pack("<I2dII", flags, lo, hi, len(recs), 0)
        header += name.encode("ascii").ljust(32, b"\0")
        assert len(header) == 96
        le = sample_format(prec)
        blob = header + h.astype("<f8").tobytes() + x.astype(le).tobytes() + b"".join(recs)
        files.append(("hcase_%02d.bin" % n, name, blob, len(recs)))
    # The rule's two corrections must both be exercised by some sample.
    assert CORRECTIONS["up"] > 0 and CORRECTIONS["down"] > 0, CORRECTIONS
    return files, manifest("gpufilt histogram goldens", "gen_hist.py", files)


def main():
    files, manifest_bytes = build()
    bad = write_or_check(
        HERE, files, manifest_bytes, "--check" in sys.argv[1:],
        lambda f: "%s %-24s %5d records %9d bytes" % (f[0], f[1], f[3], len(f[2])))
    print("%d cases; the bin rule corrected %d estimates down and %d up" %
          (len(files), CORRECTIONS["down"], CORRECTIONS["up"]))
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
