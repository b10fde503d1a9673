#!/usr/bin/python3
"""Golden vectors for gpufilt's filter design, computed outside the project
with scipy.signal (Debian's python3-scipy; written with scipy 1.10).

    /usr/bin/python3 tests/golden/design/gen_design.py           # (re)write the files
    /usr/bin/python3 tests/golden/design/gen_design.py --check   # re-derive and compare

--check recomputes every case and compares it with the committed files,
and prints the largest difference it saw as a fraction of its tolerance.

Exact, by construction or by the data: the header's integers (kind, band,
phase, lengths, taps from kaiserord's ceil of +-*/ only), the parameters
and the EQ points and cutoffs (copied from the lists below), the case
names, MANIFEST.txt, and kaiser.txt's lengths. design_atten, the A' a
design ended with, is a discrete outcome of measurements made with sin,
cos and an FFT: it is the same everywhere unless a redesign decision lies
within rounding of its threshold, so --check also prints how far the
closest decision was from its threshold (in dB) and fails below 1e-6 dB.

Within a tolerance: everything made with sin, cos, exp, log or power
(numpy picks their SIMD code by the CPU, so their last bits differ between
machines; libm's between its versions): the taps, the minimum_phase cases'
input taps, and kaiser.txt's beta (libm's pow). numpy's FFT (pocketfft,
plain C) computes the same on every CPU; the tolerance does not cover
another FFT algorithm (another numpy), which may need it re-derived for
minimum phase (numpy 2.4's C++ pocketfft with scipy 1.17: 0.77 of the
tolerance, bp1k_4k_min_70dB; numpy 1.24: 0.10). numpy's and glibc's
float64 sin, cos, exp and log are within a few ulp of the exact value, so
two machines' values of one differ by <= 8 ulp; TOL_ULPS = 16 ulp also
covers the rounding of the few operations that follow. Relative to max|h|:
  linear phase (firwin, firwin2)   16 ulp x (1 + 2 sum|h| / max|h|):
      firwin: each tap is a term (sinc x window) divided by the response
      at a reference frequency, s = sum of terms x cos; a relative change
      d of each term and cos moves s by <= 2 d sum|terms| and the
      normalised tap by <= d |h_k| (1 + 2 sum|h|), and max|h| <= 1 (a tap
      is a mean of the response over frequency); firwin2: each tap is an
      inverse DFT of positive gains, moved by <= 2 d mean(gain), about
      2 d max|h| (the centre tap is that mean);
  minimum phase                    16 ulp x 10^(A/20), at least the above:
      the homomorphic method takes the log of the magnitude; a change of
      d max|H| is a change of up to d 10^(A/20) in log|H| where the
      stopband holds |H| near 10^(-A/20) max|H| (the nulls' few bins
      weigh little in the cepstrum), and the cepstrum passes it to the
      taps linearly. A is the design's A' (kind 0) or the attenuation
      Kaiser's formula gives the input window's beta (kind 2). Seen
      between numpy's dispatch levels: <= 1.8 ulp x 10^(A/20).
Every tolerance must be below test_design's (1e-12 x max|h|, minimum
phase 1e-10; --check fails otherwise), so a file reproduced within it is
as good a reference for test_design as the committed one. The check also
shows that the comparison can fail: half a tolerance passes, twice fails.

What is computed (gpufilt.h, "Filter design", says the same)
-----------------------------------------------------------
Band designs (low-pass, high-pass, band-pass, band-reject):
    numtaps, beta = scipy.signal.kaiserord(A', transition / nyq)
    numtaps |= 1                               (odd: a whole-frame delay)
    h = scipy.signal.firwin(numtaps, cutoffs / nyq, window=("kaiser", beta),
                            pass_zero=..., fs=2)
    minimum phase: scipy.signal.minimum_phase(h * h, "homomorphic", n_fft)
                   with n_fft = min_phase_fft(numtaps) and the spectrum of
                   h * h taken as |FFT(h)|^2 (to_minimum_phase says why;
                   homomorphic() is scipy's function step for step, and
                   identity_check() shows it on scipy's own output),
                   folding the cepstrum as scipy 1.10 does (scipy 1.14
                   changed the fold: fold_window)
    A' starts at the attenuation asked for; the design is measured
    (measure() below, the same method as src/core/design/design_measure.c) and,
    while it misses (passband |gain - 1| > 10^(-A/20) or stopband gain >
    10^(-A/20)), A' = A + k 0.1 grows by the miss in dB plus 0.05, rounded
    up to whole 0.1 dB steps, and it is designed again. With a fixed number of taps: beta = kaiser_beta(A), no redesign.
EQ curves:
    numtaps from kaiserord(A, transition / nyq) | 1 (or fixed), beta =
    kaiser_beta(A); the curve (dB) interpolated linearly against log
    frequency onto the grid k / (nfreqs - 1) x nyq, nfreqs = 1 +
    2^ceil(log2 numtaps) (linearly against frequency from a 0 Hz point),
    held beyond its ends, turned into gains 10^(dB/20), then
    h = scipy.signal.firwin2(numtaps, grid / nyq, gains, nfreqs=nfreqs,
                             window=("kaiser", beta), fs=2)
Building blocks on their own: firwin with a given beta, and
scipy.signal.minimum_phase(h) with scipy's default n_fft (the square root
of the magnitude, half the length).

Default transition: 0.1 x the distance from each cutoff to 0 Hz or to
Nyquist, whichever is nearer (bands: and the band's width); EQ: 0.1 x the
lowest listed frequency above 0.

Files (little-endian): one case per dcase_NN.bin, listed in MANIFEST.txt
("<file> <name>"):
    0    8   magic "GFDSN001"
    8    4   u32 kind      0 = gf_design spec, 1 = firwin, 2 = minimum_phase
    12   4   u32 band      gf_band (kind 0); pass_zero (kind 1)
    16   4   u32 phase     gf_phase (kind 0)
    20   4   u32 points    EQ points (0); cutoffs (1); input taps (2)
    24   8   u64 taps      spec.taps, 0 = from the specification (0);
                           numtaps (1); n_fft, 0 = scipy's default (2)
    32   8   f64 rate      Hz (0)
    40   8   f64 f1, 48 f64 f2   cutoffs in Hz (0)
    56   8   f64 atten     dB, 0 = the default 120 (0)
    64   8   f64 transition Hz, 0 = default (0); beta (1)
    72   8   f64 design_atten  the A' the design ended with (0)
    80   8   u64 out_taps  length of the expected taps
    88   40  case name, ASCII, NUL-padded
    128  ..  points x (f64 freq Hz, f64 gain dB) (0, EQ); points f64
             cutoffs as fractions of Nyquist (1); points f64 input taps (2)
    ..   8*out_taps  f64 expected taps
kaiser.txt: "atten width numtaps beta" per line, scipy.signal.kaiserord
and kaiser_beta (width as a fraction of Nyquist).
"""

import math
import os
import struct
import sys

import numpy as np
import scipy
import scipy.signal as ss

HERE = os.path.dirname(os.path.abspath(__file__))
LOWPASS, HIGHPASS, BANDPASS, BANDREJECT, EQ = range(5)
LINEAR, MINIMUM = 0, 1
FRACTION = 0.1
EPS = 2.0**-52
TOL_ULPS = 16
TEST_DESIGN_TOL, TEST_DESIGN_TOL_MIN = 1e-12, 1e-10  # tests/core/test_design.c
MARGINS = []  # |miss| in dB of every redesign decision (design_band)


def pow2_at_least(n):
    p = 4
    while p < n:
        p *= 2
    return p


def min_phase_fft(n):
    """src/core/design/design_minphase.c: gf_minimum_phase_fft_size."""
    length = 2 * n - 1
    cap = max(pow2_at_least(8 * length), 1 << 22)
    return min(pow2_at_least(32 * length), cap)


def measure_grid(n):
    """src/core/design/design_measure.c: gf_measure_grid."""
    return min(pow2_at_least(16 * n), max(pow2_at_least(2 * n), 1 << 23))


def response_at(h, f):
    k = np.arange(len(h))
    t = np.pi * f * k
    return math.hypot(np.sum(h * np.cos(t)), -np.sum(h * np.sin(t)))


def score(gain, dev):
    return abs(gain - 1) if dev else gain


def refine(h, lo, hi, dev):
    """Golden-section search for the largest score on exact sums
    (design_measure.c: refine, 14 steps)."""
    r = 0.61803398874989485
    a, b = lo, hi
    x1, x2 = b - r * (b - a), a + r * (b - a)
    g1, g2 = score(response_at(h, x1), dev), score(response_at(h, x2), dev)
    for _ in range(14):
        if g1 < g2:
            a, x1, g1 = x1, x2, g2
            x2 = a + r * (b - a)
            g2 = score(response_at(h, x2), dev)
        else:
            b, x2, g2 = x2, x1, g1
            x1 = b - r * (b - a)
            g1 = score(response_at(h, x1), dev)
    return max(g1, g2)


def band_max(h, mag, lo, hi, dev):
    """Largest score over grid bins in [lo, hi]; the 3 highest local maxima
    within 0.89 of it refined on exact sums (design_measure.c: band_max)."""
    bins = len(mag)
    per = bins - 1
    k0, k1 = int(math.ceil(lo * per)), min(int(math.floor(hi * per)), bins - 1)
    if k0 > k1:
        return 0.0
    y = np.abs(mag - 1) if dev else mag
    best = float(y[k0:k1 + 1].max())
    k = np.arange(k0 + 1, k1)
    if len(k):
        b = y[k]
        peak = (b >= best * 0.89) & (b >= y[k - 1]) & (b >= y[k + 1])
        cand = k[peak][np.argsort(-b[peak], kind="stable")][:3]
        for c in cand:
            best = max(best, refine(h, max(lo, (c - 1) / per), min(hi, (c + 1) / per), dev))
    return best


def measure(h, pas, stop):
    grid = measure_grid(len(h))
    mag = np.abs(np.fft.rfft(h, grid))
    dev = smax = 0.0
    for lo, hi in pas:
        e = max(abs(response_at(h, lo) - 1), abs(response_at(h, hi) - 1))
        dev = max(dev, e, band_max(h, mag, lo, hi, True))
    for lo, hi in stop:
        e = max(response_at(h, lo), response_at(h, hi))
        smax = max(smax, e, band_max(h, mag, lo, hi, False))
    return dev, smax


def default_transition(spec, nyq):
    band, f1, f2 = spec["band"], spec.get("f1", 0), spec.get("f2", 0)
    if band == EQ:
        room = nyq
        for f in spec["freq"]:
            if f > 0:
                room = min(f, nyq)
                break
    elif band in (LOWPASS, HIGHPASS):
        room = min(f1, nyq - f1)
    else:
        room = min(min(f1, nyq - f2), f2 - f1)
    return FRACTION * room


def bands(spec, nyq, tw):
    """Passbands, stopbands (fractions of Nyquist), cutoffs, pass_zero."""
    band = spec["band"]
    f1, f2, h = spec["f1"] / nyq, spec.get("f2", 0) / nyq, tw / 2
    if band == LOWPASS:
        return [(0, f1 - h)], [(f1 + h, 1)], [f1], True
    if band == HIGHPASS:
        return [(f1 + h, 1)], [(0, f1 - h)], [f1], False
    outer, inner = [(0, f1 - h), (f2 + h, 1)], [(f1 + h, f2 - h)]
    if band == BANDPASS:
        return inner, outer, [f1, f2], False
    return outer, inner, [f1, f2], True


def fold_window(length, n_fft, mask):
    """The window that folds the cepstrum onto positive quefrencies, as
    each scipy has it. gpufilt's (src/core/design/design_minphase.c) is
    "1.10" (scipy 1.0 to 1.13): 2 up to (length + 1) / 2, 1 there for an
    odd length. scipy 1.14 bounds it by n_fft instead ("1.14": 2 on 1 ..
    n_fft/2 - 1, 1 at n_fft/2 for an odd n_fft only); scipy's pull request
    24599 (open at this writing) makes it the textbook fold ("fold": 2 on
    1 .. n_fft/2 - 1, 1 at n_fft/2 for an even n_fft). The goldens use
    "1.10"; the others are here so that identity_check() can tell which
    one the installed scipy computes."""
    win = np.zeros(n_fft)
    win[0] = 1
    if mask == "1.10":
        stop = (length + 1) // 2
        win[1:stop] = 2
        if length % 2:
            win[stop] = 1
        return win
    stop = n_fft // 2
    win[1:stop] = 2
    if n_fft % 2 == (1 if mask == "1.14" else 0):
        win[stop] = 1
    elif mask == "fold":
        win[stop] = 2
    return win


def homomorphic(mag, length, n_fft, mask="1.10"):
    """scipy.signal.minimum_phase(x, "homomorphic", n_fft) step for step,
    given mag = |FFT(x, n_fft)| (bins 0 .. n_fft/2) and length = len(x),
    with the folding window of scipy 1.10 unless mask says another
    (fold_window); the transforms of real sequences as rfft/irfft.
    identity_check() shows it is scipy's function."""
    t = mag.copy()
    t += 1e-7 * t[t > 0].min()
    t = 0.5 * np.log(t)
    c = np.fft.irfft(t, n_fft)
    c *= fold_window(length, n_fft, mask)
    return np.fft.irfft(np.exp(np.fft.rfft(c)), n_fft)[:length // 2 + length % 2]


def to_minimum_phase(h):
    """scipy's method applied to h * h, its spectrum |FFT(h)|^2 taken from h
    itself. scipy.signal.minimum_phase(np.convolve(h, h)) computes the same
    in exact arithmetic, but np.convolve and the FFT leave rounding noise
    (~1e-16 of the peak) where |H|^2 is far smaller, in the stopband's
    nulls, and the method's log and its floor (1e-7 x the smallest bin)
    carry that noise into every tap: at 120 dB its taps move by up to 15%
    between two roundings. From h the nulls are exact to ~1e-32."""
    n_fft = min_phase_fft(len(h))
    return homomorphic(np.abs(np.fft.rfft(h, n_fft)) ** 2, 2 * len(h) - 1, n_fft)


def design_band(spec):
    nyq = spec["rate"] / 2
    atten = spec.get("atten") or 120.0
    fixed = spec.get("taps", 0)
    if fixed:
        tw = (atten - 7.95) / (2.285 * np.pi * (fixed - 1)) * nyq
    else:
        tw = spec.get("transition") or default_transition(spec, nyq)
    pas, stop, cuts, pass_zero = bands(spec, nyq, tw / nyq)
    bound = 10 ** (-atten / 20)
    a, steps = atten, 0
    for _ in range(8):
        if fixed:
            n, beta = fixed, ss.kaiser_beta(atten)
        else:
            n, beta = ss.kaiserord(a, tw / nyq)
            n |= 1
        h = ss.firwin(n, cuts, window=("kaiser", beta), pass_zero=pass_zero, fs=2.0)
        if spec.get("phase") == MINIMUM:
            h = to_minimum_phase(h)
        dev, smax = measure(h, pas, stop)
        with np.errstate(divide="ignore"):
            miss = max(20 * np.log10(dev / bound), 20 * np.log10(smax / bound))
        if not fixed:
            MARGINS.append(abs(miss))
        if miss <= 0 or fixed:
            return h, a
        steps += int(math.ceil((miss + 0.05) / 0.1))
        a = atten + steps * 0.1
    raise RuntimeError("did not converge: %r" % spec)


def curve_db(freq, gain, f):
    """The curve at frequencies f (design.c: curve_db)."""
    freq, gain = np.asarray(freq, float), np.asarray(gain, float)
    out = np.empty_like(f)
    lo, hi = f <= freq[0], f >= freq[-1]
    out[lo], out[hi] = gain[0], gain[-1]
    mid = ~(lo | hi)
    i = np.searchsorted(freq, f[mid], side="right") - 1
    x0, x1, g0, g1 = freq[i], freq[i + 1], gain[i], gain[i + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x0 == 0, (f[mid] - x0) / (x1 - x0), np.log(f[mid] / x0) / np.log(x1 / x0))
    out[mid] = g0 + t * (g1 - g0)
    return out


def design_eq(spec):
    nyq = spec["rate"] / 2
    atten = spec.get("atten") or 120.0
    n = spec.get("taps", 0)
    if not n:
        tw = spec.get("transition") or default_transition(spec, nyq)
        n = ss.kaiserord(atten, tw / nyq)[0] | 1
    beta = ss.kaiser_beta(atten)
    nfreqs = 1 + 2 ** int(math.ceil(math.log2(n)))
    grid = np.arange(nfreqs) / (nfreqs - 1) * nyq
    grid[-1] = nyq
    gains = 10 ** (curve_db(spec["freq"], spec["gain"], grid) / 20)
    x = np.linspace(0.0, 1.0, nfreqs)
    h = ss.firwin2(n, x, gains, nfreqs=nfreqs, window=("kaiser", beta), fs=2.0)
    if spec.get("phase") == MINIMUM:
        h = to_minimum_phase(h)
    return h, atten


# Band designs: the defaults, each band, long and short, fixed lengths,
# attenuations where Kaiser's formulas fall short (redesigned), minimum phase.
DESIGNS = [
    ("lp1000_48k", dict(band=LOWPASS, rate=48000, f1=1000)),
    ("lp1000_44k1_80dB", dict(band=LOWPASS, rate=44100, f1=1000, atten=80)),
    ("hp200_48k", dict(band=HIGHPASS, rate=48000, f1=200)),
    ("bp300_3400_8k", dict(band=BANDPASS, rate=8000, f1=300, f2=3400)),
    ("br900_1100_16k", dict(band=BANDREJECT, rate=16000, f1=900, f2=1100)),
    ("lp4000_taps101_60dB", dict(band=LOWPASS, rate=48000, f1=4000, atten=60, taps=101)),
    ("lp3000_taps64_50dB", dict(band=LOWPASS, rate=16000, f1=3000, atten=50, taps=64)),
    ("lp5000_160dB_tw500", dict(band=LOWPASS, rate=48000, f1=5000, atten=160, transition=500)),
    ("lp12000_40dB_tw2000", dict(band=LOWPASS, rate=48000, f1=12000, atten=40, transition=2000)),
    ("hp8000_96k_200dB", dict(band=HIGHPASS, rate=96000, f1=8000, atten=200, transition=1000)),
    ("lp2000_min_80dB", dict(band=LOWPASS, rate=48000, f1=2000, atten=80, transition=400,
                             phase=MINIMUM)),
    ("hp500_min_60dB", dict(band=HIGHPASS, rate=44100, f1=500, atten=60, phase=MINIMUM)),
    ("bp1k_4k_min_70dB", dict(band=BANDPASS, rate=32000, f1=1000, f2=4000, atten=70,
                              transition=250, phase=MINIMUM)),
    ("eq_smooth_48k", dict(band=EQ, rate=48000, transition=50,
                           freq=[20, 100, 1000, 5000, 16000], gain=[-6, 0, 3, -2, -12])),
    ("eq_dc_min_16k", dict(band=EQ, rate=16000, atten=80, transition=40, phase=MINIMUM,
                           freq=[0, 200, 2000, 8000], gain=[-40, 0, 6, 0])),
    ("eq_flat_taps255", dict(band=EQ, rate=44100, atten=60, taps=255, freq=[1000], gain=[-3])),
    ("eq_beyond_nyq_22k", dict(band=EQ, rate=22050, atten=90, transition=100,
                               freq=[50, 300, 3000, 20000], gain=[3, -1, 2, -30])),
]

# Building blocks: firwin with a given beta (numtaps, cutoffs / nyq,
# pass_zero, beta); minimum_phase with scipy's default n_fft (numtaps,
# cutoff, beta of the firwin input) or a given one.
FIRWINS = [
    ("firwin_rect_11", 11, [0.3], True, 0.0),
    ("firwin_bandstop_51", 51, [0.2, 0.5], True, 5.0),
    ("firwin_bandpass_even_40", 40, [0.25, 0.6], False, 3.3),
    ("firwin_highpass_1001", 1001, [0.01], False, 12.0),
]
MINPHASES = [
    ("minphase_101", 101, 0.25, 5.65, 0),
    ("minphase_even_64", 64, 0.4, 4.0, 0),
    ("minphase_31_nfft256", 31, 0.5, 3.0, 256),
]
KAISER = [(8.5, 0.1), (21, 0.05), (30, 0.2), (50, 0.01), (60, 0.004), (120, 1e-4),
          (120, 0.3), (200, 0.02)]


def pack(kind, band, phase, points, taps, rate, f1, f2, atten, tw, design_atten, out, name,
         body):
    head = struct.pack("<8sIIIIQdddddd Q40s".replace(" ", ""), b"GFDSN001", kind, band, phase,
                       points, taps, rate, f1, f2, atten, tw, design_atten, len(out),
                       name.encode())
    assert len(head) == 128
    return head + np.asarray(body, "<f8").tobytes() + np.asarray(out, "<f8").tobytes()


def linear_tol(h):
    """Tolerance of linear-phase taps h, relative to max|h| (the module's
    docstring derives it)."""
    a = np.abs(h)
    return TOL_ULPS * EPS * (1 + 2 * float(a.sum() / a.max()))


def minimum_tol(h, atten):
    """Tolerance of minimum-phase taps h made from a filter of atten dB."""
    return max(linear_tol(h), TOL_ULPS * EPS * 10 ** (atten / 20))


def kaiser_atten(beta):
    """The attenuation (dB) whose scipy.signal.kaiser_beta is beta."""
    lo, hi = 21.0, 1000.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ss.kaiser_beta(mid) < beta else (lo, mid)
    return lo


def make_cases():
    """(name, taps, file contents, attenuation behind minimum-phase taps or
    None for linear phase)."""
    cases = []
    for name, spec in DESIGNS:
        band = spec["band"]
        h, a = design_eq(spec) if band == EQ else design_band(spec)
        body = np.ravel(np.column_stack([spec["freq"], spec["gain"]])) if band == EQ else []
        pts = len(spec["freq"]) if band == EQ else 0
        cases.append((name, h, pack(0, band, spec.get("phase", LINEAR), pts, spec.get("taps", 0),
                                    spec["rate"], spec.get("f1", 0), spec.get("f2", 0),
                                    spec.get("atten", 0), spec.get("transition", 0), a, h, name,
                                    body), a if spec.get("phase") == MINIMUM else None))
    for name, n, cuts, pass_zero, beta in FIRWINS:
        h = ss.firwin(n, cuts, window=("kaiser", beta), pass_zero=pass_zero, fs=2.0)
        cases.append((name, h, pack(1, int(pass_zero), 0, len(cuts), n, 0, 0, 0, 0, beta, 0, h,
                                    name, cuts), None))
    for name, n, cut, beta, nfft in MINPHASES:
        x = ss.firwin(n, cut, window=("kaiser", beta), fs=2.0)
        m = scipy_nfft(n, nfft)
        h = homomorphic(np.abs(np.fft.rfft(x, m)), n, m)
        cases.append((name, h, pack(2, 0, 0, n, nfft, 0, 0, 0, 0, 0, 0, h, name, x),
                      kaiser_atten(beta)))
    return cases


def scipy_nfft(n, nfft):
    """minimum_phase's n_fft: as given, else scipy's default for n taps."""
    return nfft or 2 ** int(np.ceil(np.log2(2 * (n - 1) / 0.01)))


def identity_check():
    """homomorphic() against scipy.signal.minimum_phase on the MINPHASES
    inputs (well-conditioned: no bin near the rounding noise), with each
    folding window (fold_window). Returns {mask: the largest difference as
    a fraction of the minimum-phase tolerance}: the installed scipy's own
    window gives <= 1, the others far more."""
    worst = dict.fromkeys(("1.10", "1.14", "fold"), 0.0)
    for _, n, cut, beta, nfft in MINPHASES:
        x = ss.firwin(n, cut, window=("kaiser", beta), fs=2.0)
        want = ss.minimum_phase(x, method="homomorphic", n_fft=nfft or None)
        m = scipy_nfft(n, nfft)
        mag = np.abs(np.fft.rfft(x, m))
        tol = minimum_tol(want, kaiser_atten(beta))
        for mask in worst:
            got = homomorphic(mag, n, m, mask)
            d = float(np.abs(got - want).max() / np.abs(want).max())
            worst[mask] = max(worst[mask], d / tol)
    return worst


def kaiser_rows():
    return [(a, w) + tuple(ss.kaiserord(a, w)) for a, w in KAISER]


def kaiser_text(rows):
    lines = ["# atten width numtaps beta: scipy.signal.kaiserord (gen_design.py)"]
    lines += ["%.17g %.17g %d %.17g" % r for r in rows]
    return ("\n".join(lines) + "\n").encode()


def kaiser_compare(path, rows):
    """kaiser.txt against rows: the comment, attenuations, widths and
    lengths exactly, beta (libm's pow) within TOL_ULPS. Returns the largest
    beta difference as a fraction of its tolerance (inf: the rest differs)."""
    with open(path) as f:
        lines = f.read().splitlines()
    want = kaiser_text(rows).decode().splitlines()
    if len(lines) != len(want) or lines[0] != want[0]:
        return math.inf
    worst = 0.0
    for line, (a, w, n, beta) in zip(lines[1:], rows):
        f = line.split()
        if len(f) != 4 or (float(f[0]), float(f[1]), int(f[2])) != (a, w, n):
            return math.inf
        worst = max(worst, abs(float(f[3]) - beta) / (TOL_ULPS * EPS * max(beta, 1.0)))
    return worst


def compare(old, blob, atten):
    """A committed case (bytes old) against its recomputation blob, whose
    taps are minimum phase from a filter of atten dB (None: linear phase).
    Returns the largest difference as a fraction of its tolerance: the taps,
    and a minimum_phase case's input taps; inf when anything compared
    exactly differs."""
    if len(old) != len(blob) or old[:128] != blob[:128]:
        return math.inf
    (kind,) = struct.unpack_from("<I", blob, 8)
    (points,) = struct.unpack_from("<I", blob, 20)
    (out_taps,) = struct.unpack_from("<Q", blob, 80)
    start = len(blob) - 8 * out_taps
    worst = 0.0
    if kind == 2:  # the input: firwin's taps
        a = np.frombuffer(old[128:start], "<f8")
        b = np.frombuffer(blob[128:start], "<f8")
        assert len(b) == points
        worst = float(np.abs(a - b).max() / np.abs(b).max()) / linear_tol(b)
    elif old[:start] != blob[:start]:
        return math.inf
    a = np.frombuffer(old[start:], "<f8")
    b = np.frombuffer(blob[start:], "<f8")
    tol = linear_tol(b) if atten is None else minimum_tol(b, atten)
    return max(worst, float(np.abs(a - b).max() / np.abs(b).max()) / tol)


def perturbed(blob, at, delta):
    """blob with the f64 at byte offset at moved by delta."""
    (v,) = struct.unpack_from("<d", blob, at)
    out = bytearray(blob)
    struct.pack_into("<d", out, at, v + delta)
    return bytes(out)


def comparison_check(cases):
    """compare() itself: a tap moved by half its tolerance passes, by twice
    fails; so does a minimum_phase case's input tap; a changed header
    field fails. Returns the number of wrong verdicts."""
    wrong = 0
    picks = [c for c in cases if c[3] is None][:1] + [c for c in cases if c[3] is not None][:2]
    picks += [c for c in cases if struct.unpack_from("<I", c[2], 8)[0] == 2][:1]
    for name, h, blob, atten in picks:
        m = float(np.abs(h).max())
        tol = linear_tol(h) if atten is None else minimum_tol(h, atten)
        last = len(blob) - 8
        trials = [(perturbed(blob, last, 0.5 * tol * m), True),
                  (perturbed(blob, last, 2 * tol * m), False),
                  (blob[:24] + bytes([blob[24] ^ 1]) + blob[25:], False)]
        if struct.unpack_from("<I", blob, 8)[0] == 2:  # the input taps too
            x = np.frombuffer(blob[128:len(blob) - 8 * len(h)], "<f8")
            xm, xt = float(np.abs(x).max()), linear_tol(x)
            trials += [(perturbed(blob, 128, 0.5 * xt * xm), True),
                       (perturbed(blob, 128, 2 * xt * xm), False)]
        for i, (old, want) in enumerate(trials):
            if (compare(old, blob, atten) <= 1) != want:
                print("gen_design.py: the comparison %s %s trial %d" %
                      ("rejects" if want else "accepts", name, i))
                wrong += 1
    return wrong


def main():
    check = "--check" in sys.argv[1:]
    ident = identity_check()
    mask = min(ident, key=ident.get)
    if ident[mask] > 1:
        sys.exit("gen_design.py: homomorphic() is not scipy %s's minimum_phase with any known "
                 "folding window (%s)" % (scipy.__version__, ", ".join("%s: %.3g" % kv for kv in ident.items())))
    print("gen_design.py: homomorphic() with the %s folding window reproduces scipy %s's "
          "minimum_phase within %.3g of the tolerance%s" %
          (mask, scipy.__version__, ident[mask],
           "" if mask == "1.10" else " (the goldens keep scipy 1.10's window, gpufilt's)"))
    cases = make_cases()
    rows = kaiser_rows()
    manifest = "# Filter-design golden cases (gen_design.py): <file> <name>\n"
    manifest += "".join("dcase_%02d.bin %s\n" % (i, c[0]) for i, c in enumerate(cases))
    files = [("dcase_%02d.bin" % i, c[2], c[3]) for i, c in enumerate(cases)]
    files += [("MANIFEST.txt", manifest.encode(), None), ("kaiser.txt", kaiser_text(rows), None)]
    bad, worst = 0, 0.0
    for fname, blob, atten in files:
        path = os.path.join(HERE, fname)
        if not check:
            with open(path, "wb") as f:
                f.write(blob)
            continue
        with open(path, "rb") as f:
            old = f.read()
        if fname.endswith(".bin"):
            d = compare(old, blob, atten)
        elif fname == "kaiser.txt":
            d = kaiser_compare(path, rows)
        else:
            d = 0.0 if old == blob else math.inf
        worst = max(worst, d)
        if not d <= 1:
            print("gen_design.py: MISMATCH %s (%.3g of its tolerance)" % (fname, d))
            bad += 1
    for i, (name, h, _, atten) in enumerate(cases):
        tol = linear_tol(h) if atten is None else minimum_tol(h, atten)
        print("dcase_%02d %-24s %7d taps  tolerance %.2g x max|h|" % (i, name, len(h), tol))
        if tol > (TEST_DESIGN_TOL if atten is None else TEST_DESIGN_TOL_MIN):
            print("gen_design.py: %s: the tolerance is above test_design's" % name)
            bad += 1
    margin = min(MARGINS)
    print("gen_design.py: the closest redesign decision was %.3g dB from its threshold" % margin)
    if margin < 1e-6:
        print("gen_design.py: a redesign decision within 1e-6 dB of its threshold: design_atten "
              "may differ between machines")
        bad += 1
    if check:
        bad += comparison_check(cases)
        print("gen_design.py: %d cases, %s; largest difference %.3g of its tolerance"
              % (len(cases), "all reproduced" if not bad else "%d differ" % bad, worst))
        sys.exit(1 if bad else 0)
    print("gen_design.py: wrote %d cases and kaiser.txt" % len(cases))


if __name__ == "__main__":
    main()
