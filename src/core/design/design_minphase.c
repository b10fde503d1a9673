/*
 * Minimum phase by the homomorphic (cepstral) method (design.h), as
 * scipy.signal.minimum_phase(method="homomorphic") in scipy 1.10: the log
 * magnitude's cepstrum, folded onto positive quefrencies (the causal part
 * of a minimum-phase cepstrum), exponentiated back. Every transform is of
 * a real sequence or gives one, so each is a gf_rfft.
 */
#include "design/design.h"
#include "design/design_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The method on a magnitude spectrum: on entry buf[2k] holds |H[k]|, k =
 * 0 .. n_fft/2, of a sequence of length len (buf holds n_fft + 2
 * doubles). The result's magnitude is the square root of that one
 * (scipy's 0.5 log). On return buf[0 .. n_fft) is the minimum-phase
 * sequence.
 */
static void homomorphic(const gf_rfft *f, double *buf, size_t len)
{
    const size_t n_fft = gf_rfft_size(f), bins = n_fft / 2 + 1;
    double lo = INFINITY; /* the smallest non-zero magnitude: keeps log finite */
    for (size_t k = 0; k < bins; k++)
        if (buf[2 * k] > 0 && buf[2 * k] < lo)
            lo = buf[2 * k];
    for (size_t k = 0; k < bins; k++) {
        buf[2 * k] = log(buf[2 * k] + 1e-7 * lo) * 0.5;
        buf[2 * k + 1] = 0;
    }
    gf_rfft_inverse(f, buf, buf); /* the real cepstrum, even */
    /* lmin[n] = 2 u[n] - d[n], cut where scipy cuts it: quefrencies below
     * (len + 1) / 2 doubled, the one there kept once for odd len. */
    const size_t stop = (len + 1) / 2;
    for (size_t i = 1; i <= stop && i < n_fft; i++)
        buf[i] *= i < stop ? 2.0 : (len & 1) ? 1.0 : 0.0;
    if (stop + 1 < n_fft)
        memset(buf + stop + 1, 0, (n_fft - stop - 1) * sizeof(double));
    gf_rfft_forward(f, buf, buf);
    for (size_t k = 0; k < bins; k++) {
        const double r = exp(buf[2 * k]), t = buf[2 * k + 1];
        buf[2 * k] = r * cos(t);
        buf[2 * k + 1] = r * sin(t);
    }
    gf_rfft_inverse(f, buf, buf);
}

/* |FFT(h, n_fft)|, or its square, into buf[2k]; then the method; the first
 * `out_n` samples into out. */
static gf_status run(const double *h, size_t n, size_t n_fft, int square, double *out, size_t out_n)
{
    if (n_fft < (square ? 2 * n - 1 : n) || (n_fft & (n_fft - 1)))
        return GF_ERR_INVALID_ARGUMENT;
    gf_rfft *f = gf_rfft_create(n_fft);
    double *buf = calloc(n_fft + 2, sizeof(double));
    if (!f || !buf) {
        gf_rfft_destroy(f);
        free(buf);
        return GF_ERR_NO_MEMORY;
    }
    memcpy(buf, h, n * sizeof(double));
    gf_rfft_forward(f, buf, buf);
    for (size_t k = 0; k <= n_fft / 2; k++) {
        const double re = buf[2 * k], im = buf[2 * k + 1];
        buf[2 * k] = square ? re * re + im * im : hypot(re, im);
    }
    homomorphic(f, buf, square ? 2 * n - 1 : n);
    memcpy(out, buf, out_n * sizeof(double));
    gf_rfft_destroy(f);
    free(buf);
    return GF_OK;
}

gf_status gf_minimum_phase(const double *h, size_t n, size_t n_fft, double *out)
{
    if (!n_fft)
        n_fft = (size_t)1 << (int)ceil(log2(2.0 * (double)(n - 1) / 0.01));
    return run(h, n, n_fft, 0, out, n / 2 + n % 2);
}

gf_status gf_minimum_phase_full(const double *h, size_t n, size_t n_fft, double *out)
{
    return run(h, n, n_fft, 1, out, n);
}

size_t gf_minimum_phase_fft_size(size_t n)
{
    const size_t len = 2 * n - 1;
    size_t cap = gf_pow2_at_least(8 * len);
    if (cap && cap < ((size_t)1 << 22))
        cap = (size_t)1 << 22;
    size_t p = gf_pow2_at_least(32 * len);
    if (!p || p > cap)
        p = cap;
    return p && p <= GF_DESIGN_MAX_MINPHASE_FFT ? p : 0;
}
