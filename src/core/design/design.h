/*
 * Filter design, inside: the building blocks behind gf_design (gpufilt.h),
 * each the double-precision equivalent of a scipy.signal function, so that
 * golden vectors computed with scipy (tests/golden/design) check them one
 * by one. Arguments are validated by gf_design (design.c); these functions
 * assume what it guarantees, as each says.
 *
 * Frequencies here are fractions of the Nyquist frequency (scipy's
 * default fs = 2): 0 is DC, 1 is Nyquist.
 */
#ifndef GF_DESIGN_INTERNAL_H
#define GF_DESIGN_INTERNAL_H

#include "design/design_fft.h"
#include "gpufilt.h"

#include <stddef.h>

/* design_kaiser.c */

/* scipy.signal.kaiser_beta(atten). */
double gf_kaiser_beta(double atten);
/* The tap count of scipy.signal.kaiserord(atten, width): ceil((atten -
 * 7.95) / 2.285 / (pi width) + 1), as a double (it may exceed size_t's
 * useful range for absurd inputs; the caller compares with its limit).
 * atten >= 8, width > 0. */
double gf_kaiser_taps(double atten, double width);
/* scipy.signal.kaiser_atten(taps, width): the inverse of the above. */
double gf_kaiser_atten(size_t taps, double width);
/* The zeroth-order modified Bessel function I0(x), x >= 0, by its power
 * series (all terms positive: relative error a few ulps). */
double gf_bessel_i0(double x);
/* scipy.signal.windows.kaiser(n, beta, sym=True) into w[0..n). */
void gf_kaiser_window(size_t n, double beta, double *w);

/*
 * scipy.signal.firwin(n, cutoff, window=("kaiser", beta), pass_zero,
 * scale=True): a windowed sinc with -6 dB points at the ncut cutoffs
 * (1 .. GF_FIRWIN_MAX_CUTOFFS, strictly increasing, in (0, 1)), passing
 * DC when pass_zero; scaled to
 * unit gain at DC, at Nyquist, or at the centre of the first passband.
 * A filter that passes Nyquist needs odd n (the caller ensures it).
 */
#define GF_FIRWIN_MAX_CUTOFFS 8
void gf_firwin(size_t n, const double *cutoff, size_t ncut, int pass_zero, double beta, double *h);

/* design_firwin2.c */

/*
 * scipy.signal.firwin2(n, freq, gain, nfreqs, window=("kaiser", beta))
 * with freq the uniform grid linspace(0, 1, nfreqs) and gain[0..nfreqs)
 * given on it (the caller interpolates its curve onto the grid first):
 * frequency sampling, the n-tap type I/II linear-phase filter whose
 * response passes through the samples before windowing. nfreqs - 1 is a
 * power of two and > n; n even requires gain[nfreqs - 1] == 0 (the
 * caller ensures it). Returns GF_ERR_NO_MEMORY or GF_OK.
 */
gf_status gf_firwin2_grid(size_t n, const double *gain, size_t nfreqs, double beta, double *h);
/* scipy's default grid for n taps: 1 + 2^ceil(log2(n)), at least 3. */
size_t gf_firwin2_nfreqs(size_t n);

/* design_minphase.c */

/*
 * scipy.signal.minimum_phase(h, method="homomorphic", n_fft) (scipy 1.10):
 * out[0..(n + 1) / 2) is a minimum-phase filter whose magnitude is about
 * the square root of h's. n >= 3; n_fft a power of two >= n, or 0 for
 * scipy's default 2^ceil(log2(2 (n - 1) / 0.01)). Returns
 * GF_ERR_INVALID_ARGUMENT for any other n_fft, GF_ERR_NO_MEMORY, GF_OK.
 */
gf_status gf_minimum_phase(const double *h, size_t n, size_t n_fft, double *out);
/*
 * The same method applied to h convolved with itself, so the result has
 * h's length n and h's magnitude: scipy.signal.minimum_phase(np.convolve(h,
 * h), "homomorphic", n_fft), with |FFT(h)|^2 standing for FFT(h * h).
 * n >= 2; n_fft a power of two >= 2n - 1. out may equal h.
 */
gf_status gf_minimum_phase_full(const double *h, size_t n, size_t n_fft, double *out);
/* The n_fft gf_design uses for gf_minimum_phase_full on n taps: the power
 * of two >= 32 (2n - 1), but no more than the larger of 2^22 and the power
 * of two >= 8 (2n - 1); 0 when that exceeds GF_DESIGN_MAX_MINPHASE_FFT. */
size_t gf_minimum_phase_fft_size(size_t n);
#define GF_DESIGN_MAX_MINPHASE_FFT ((size_t)1 << 23)

/* design_measure.c */

/* H(w) = sum h[k] e^(-i w k) and D(w) = sum k h[k] e^(-i w k) (dr, di may
 * be NULL), summed directly in blocks of 256 taps (the phasors from
 * cos/sin: a table within a block, and one per block). */
void gf_dtft(const double *h, size_t n, double w, double *hr, double *hi, double *dr, double *di);
/* |H| at one frequency f (fraction of Nyquist). */
double gf_response_at(const double *h, size_t n, double f);

/* What gf_design measures of a filter (see gf_design_info). */
typedef struct gf_measured {
    double pass_dev; /* largest |gain - 1| over the passbands (linear) */
    double stop_max; /* largest gain over the stopbands (linear) */
} gf_measured;

/*
 * Measure h's gain over passbands [pass[2i], pass[2i+1]] and stopbands
 * [stop[2i], stop[2i+1]] (fractions of Nyquist, lo <= hi): on a grid of
 * gf_measure_grid(n) points, the highest local maxima refined by a
 * golden-section search on exact sums, and each band's ends evaluated
 * exactly.
 */
gf_status gf_measure_bands(const double *h, size_t n, const double *pass, size_t npass,
                           const double *stop, size_t nstop, gf_measured *m);
/* The FFT size of the measuring grid for n taps: the power of two >= 16 n,
 * but no more than the larger of 2^23 and the power of two >= 2 n. */
size_t gf_measure_grid(size_t n);

#endif /* GF_DESIGN_INTERNAL_H */
