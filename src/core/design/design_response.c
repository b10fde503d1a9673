/*
 * Responses and cascades of designed filters (gpufilt.h): gain and group
 * delay at given frequencies or on a uniform grid, and the convolution of
 * two filters. All in double.
 */
#include "design/design.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Gain (dB) and group delay (frames) from H and D = sum k h[k] z^-k. */
static void gain_delay(double hr, double hi, double dr, double di, double *mag_db, double *delay)
{
    const double p = hr * hr + hi * hi;
    if (mag_db)
        *mag_db = p > 0 ? 10 * log10(p) : -INFINITY;
    if (delay)
        *delay = p > 0 ? (dr * hr + di * hi) / p : NAN;
}

gf_status gf_design_response(const double *h, size_t n, double rate, const double *freq,
                             size_t count, double *mag_db, double *delay)
{
    if (!h || n == 0 || (count && !freq) || !(rate > 0) || !isfinite(rate))
        return GF_ERR_INVALID_ARGUMENT;
    for (size_t j = 0; j < count; j++) {
        double hr, hi, dr, di;
        gf_dtft(h, n, 2 * GF_PI * freq[j] / rate, &hr, &hi, &dr, &di);
        gain_delay(hr, hi, dr, di, mag_db ? mag_db + j : NULL, delay ? delay + j : NULL);
    }
    return GF_OK;
}

gf_status gf_design_response_grid(const double *h, size_t n, size_t bins, double *mag_db,
                                  double *delay)
{
    if (!h || n == 0 || bins < 3 || bins - 1 > ((size_t)1 << 29) || ((bins - 1) & (bins - 2)))
        return GF_ERR_INVALID_ARGUMENT;
    const size_t m = 2 * (bins - 1);
    gf_rfft *f = gf_rfft_create(m);
    double *a = calloc(m + 2, sizeof *a), *b = delay ? calloc(m + 2, sizeof *b) : NULL;
    if (!f || !a || (delay && !b)) {
        gf_rfft_destroy(f);
        free(a);
        free(b);
        return GF_ERR_NO_MEMORY;
    }
    /* Sampling the response at m points is transforming h folded onto m. */
    for (size_t k = 0; k < n; k++) {
        a[k % m] += h[k];
        if (b)
            b[k % m] += (double)k * h[k];
    }
    gf_rfft_forward(f, a, a);
    if (b)
        gf_rfft_forward(f, b, b);
    for (size_t k = 0; k < bins; k++)
        gain_delay(a[2 * k], a[2 * k + 1], b ? b[2 * k] : 0, b ? b[2 * k + 1] : 0,
                   mag_db ? mag_db + k : NULL, delay ? delay + k : NULL);
    gf_rfft_destroy(f);
    free(a);
    free(b);
    return GF_OK;
}

gf_status gf_design_convolve(const double *a, size_t na, const double *b, size_t nb, double *out)
{
    if (!a || !b || !out || na == 0 || nb == 0)
        return GF_ERR_INVALID_ARGUMENT;
    const size_t len = na + nb - 1;
    if ((na < nb ? na : nb) <= 64 || (double)na * (double)nb <= (double)(1 << 20)) {
        memset(out, 0, len * sizeof *out);
        for (size_t i = 0; i < na; i++)
            for (size_t j = 0; j < nb; j++)
                out[i + j] += a[i] * b[j];
        return GF_OK;
    }
    const size_t m = gf_pow2_at_least(len);
    gf_rfft *f = m ? gf_rfft_create(m) : NULL;
    double *x = calloc(m + 2, sizeof *x), *y = calloc(m + 2, sizeof *y);
    if (!f || !x || !y) {
        gf_rfft_destroy(f);
        free(x);
        free(y);
        return m ? GF_ERR_NO_MEMORY : GF_ERR_UNSUPPORTED;
    }
    memcpy(x, a, na * sizeof *x);
    memcpy(y, b, nb * sizeof *y);
    gf_rfft_forward(f, x, x);
    gf_rfft_forward(f, y, y);
    for (size_t k = 0; k <= m / 2; k++) {
        const double re = x[2 * k] * y[2 * k] - x[2 * k + 1] * y[2 * k + 1];
        const double im = x[2 * k] * y[2 * k + 1] + x[2 * k + 1] * y[2 * k];
        x[2 * k] = re;
        x[2 * k + 1] = im;
    }
    gf_rfft_inverse(f, x, x);
    memcpy(out, x, len * sizeof *out);
    gf_rfft_destroy(f);
    free(x);
    free(y);
    return GF_OK;
}
