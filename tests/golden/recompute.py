#!/usr/bin/python3
"""Every golden expected value re-derived from the inputs stored beside it.

    /usr/bin/python3 tests/golden/recompute.py [GOLDEN_DIR]

CTest runs this (golden_recompute) with Debian's numpy and scipy, so that a
golden file can never silently become gpufilt's own output: whatever wrote
the files, the expected values must be what numpy and scipy compute from the
stored inputs, byte for byte.

  case_NN.bin (gen_golden.py)    the output, by the arithmetic contract in the
      case's precision (numpy, one rounding per operation), from the stored
      input and taps; and scipy's convolve / lfilter in float64 within the
      rounding-error bound (so the contract's indexing is scipy's);
  hist/hcase_NN.bin (gen_hist.py)   the filter's output (for the dyadic cases
      exact, and equal to scipy's), then every record of the stream
      (numpy.histogram, min/max, the exact rms) from the stored input;
  fft/fcase_NN.bin (gen_fft.py)  the exact output numerators: numpy.convolve
      on the stored int64 numerators, and independently scipy's fftconvolve
      in float64 rounded to integers (its error is far below 1/2 here).

Every file the MANIFEST.txt files list is checked, sizes and headers
included, and every .bin in those directories must be listed. Exit status:
0 when everything matches, 1 otherwise.
"""

import os
import struct
import sys

import numpy as np
import scipy.signal

from gen_golden import MAGIC as CASE_MAGIC, scipy_check
from gen_hist import MAGIC as HIST_MAGIC, records
from golden_io import CAUSAL, F32, SAME, contract_filter, dtype_of, sample_format, scipy_filter

HERE = os.path.dirname(os.path.abspath(__file__))


class Mismatch(Exception):
    pass


def require(cond, what):
    if not cond:
        raise Mismatch(what)


def listed(directory):
    """(file, case name) of MANIFEST.txt, after checking that it lists every
    .bin of the directory."""
    with open(os.path.join(directory, "MANIFEST.txt")) as f:
        entries = [l.split() for l in f if l.strip() and not l.startswith("#")]
    names = {e[0] for e in entries}
    unlisted = sorted(f for f in os.listdir(directory) if f.endswith(".bin") and f not in names)
    require(not unlisted, "%s: not in MANIFEST.txt: %s" % (directory, ", ".join(unlisted)))
    require(len(names) == len(entries), "%s: MANIFEST.txt lists a file twice" % directory)
    return [(e[0], e[1]) for e in entries]


def read(directory, fname):
    with open(os.path.join(directory, fname), "rb") as f:
        return f.read()


def samples(blob, at, count, prec):
    """count samples of the precision at byte offset at, and the offset after."""
    end = at + count * (4 if prec == F32 else 8)
    require(end <= len(blob), "file too short")
    return np.frombuffer(blob[at:end], dtype=sample_format(prec)).astype(dtype_of(prec)), end


def check_case(blob, name):
    """gen_golden.py's format: the output from the stored input and taps."""
    require(blob[:8] == CASE_MAGIC, "not a golden case")
    prec, mode, C, T, N, kind = struct.unpack_from("<6I", blob, 8)
    require(blob[32:64].rstrip(b"\0").decode() == name, "case name differs from MANIFEST.txt")
    require(mode in (SAME, CAUSAL) and kind in (0, 1), "bad mode or taps kind")
    h64 = np.frombuffer(blob[64:64 + 8 * T], dtype="<f8").astype(np.float64)
    dt = dtype_of(prec)
    h = h64.astype(dt)  # explicit taps are rounded to the precision, as the engine does
    if kind == 1:
        require(np.all(h == dt(1) / dt(T)), "mean taps are not 1/T in the precision")
    x, at = samples(blob, 64 + 8 * T, N * C, prec)
    y, at = samples(blob, at, N * C, prec)
    require(at == len(blob), "size is not 64 + 8 T + 2 N C s")
    x, y = x.reshape(N, C), y.reshape(N, C)
    want = contract_filter(x, h, mode)
    require(want.astype(sample_format(prec)).tobytes() == y.astype(sample_format(prec)).tobytes(),
            "output differs from the contract's sums of the stored input")
    scipy_check(x, h, y, mode, name)


def check_hist(blob, name):
    """gen_hist.py's format: the filter's output and every record from the
    stored input."""
    require(blob[:8] == HIST_MAGIC, "not a histogram case")
    prec, mode, C, T, N, bins, block = struct.unpack_from("<7I", blob, 8)
    flags, lo, hi, R, zero = struct.unpack_from("<I2dII", blob, 36)
    require(blob[64:96].rstrip(b"\0").decode() == name, "case name differs from MANIFEST.txt")
    require(zero == 0 and flags < 4 and bins > 0 and block > 0, "bad header")
    h = np.frombuffer(blob[96:96 + 8 * T], dtype="<f8").astype(np.float64)
    x, at = samples(blob, 96 + 8 * T, N * C, prec)
    x = x.reshape(N, C)
    y = contract_filter(x, h.astype(dtype_of(prec)), mode)
    if T > 1:  # dyadic filters: exact, whatever the order of the sums
        ys = np.stack([scipy_filter(x[:, c].astype(np.float64), h, mode) for c in range(C)], 1)
        require(np.array_equal(y.astype(np.float64), ys), "the dyadic filter is not exact")
    stream = (x if flags & 1 else y).astype(np.float64)
    recs = records(stream, C, block, flags & 2, lo, hi, bins)
    require(len(recs) == R, "%d records stored, %d recomputed" % (R, len(recs)))
    require(b"".join(recs) == blob[at:], "records differ from those of the stored input")


def check_fft(blob, name):
    """gen_fft.py's format: the exact output numerators from the stored ones."""
    magic, mode, C, T, N, per, outs, nm = struct.unpack_from("<8sIIIIII32s", blob, 0)
    require(magic == b"GFFFT001", "not an FFT case")
    require(nm.rstrip(b"\0").decode() == name, "case name differs from MANIFEST.txt")
    F = C if per else 1
    require(outs == {0: N, 1: N, 2: N + T - 1}.get(mode, -1), "bad mode or output length")
    require(len(blob) == 64 + 4 * T * F + 4 * N * C + 8 * outs * C, "bad size")
    h = np.frombuffer(blob[64:64 + 4 * T * F], dtype="<i4").astype(np.int64).reshape(F, T)
    at = 64 + 4 * T * F
    x = np.frombuffer(blob[at:at + 4 * N * C], dtype="<i4").astype(np.int64).reshape(N, C)
    y = np.frombuffer(blob[at + 4 * N * C:], dtype="<i8").reshape(outs, C)
    start = (T - 1) // 2 if mode == 0 else 0
    for c in range(C):
        full = np.convolve(x[:, c], h[c % F])
        by_fft = np.rint(scipy.signal.fftconvolve(x[:, c].astype(np.float64),
                                                  h[c % F].astype(np.float64)))
        require(np.array_equal(by_fft, full.astype(np.float64)),
                "numpy.convolve and scipy's fftconvolve disagree (channel %d)" % c)
        require(np.array_equal(full[start:start + outs], y[:, c]),
                "output numerators differ from the stored input's convolution (channel %d)" % c)


FAMILIES = [("", check_case), ("hist", check_hist), ("fft", check_fft)]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else HERE
    bad = total = 0
    for sub, check in FAMILIES:
        directory = os.path.join(root, sub)
        try:
            entries = listed(directory)
        except (Mismatch, OSError) as e:
            print("recompute: %s: %s" % (directory, e))
            bad += 1
            continue
        for fname, name in entries:
            total += 1
            try:
                check(read(directory, fname), name)
            except (Mismatch, AssertionError, OSError, struct.error, ValueError) as e:
                print("recompute: MISMATCH %s (%s): %s" % (os.path.join(sub, fname), name, e))
                bad += 1
    print("recompute: %d golden files, %s" %
          (total, "every expected value re-derived from its stored input"
           if not bad else "%d FAILED" % bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
