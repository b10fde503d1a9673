/*
 * Frequency sampling (design.h): scipy.signal.firwin2's method on a
 * uniform grid. The desired gains, given with the linear phase of an n-tap
 * filter, are transformed back to an impulse response whose first n
 * samples, windowed, are the filter.
 */
#include "design/design.h"
#include "design/design_fft.h"

#include <math.h>
#include <stdlib.h>

size_t gf_firwin2_nfreqs(size_t n)
{
    size_t p = 2; /* not 1: the transform takes at least 4 points */
    while (p < n)
        p <<= 1;
    return p + 1;
}

gf_status gf_firwin2_grid(size_t n, const double *gain, size_t nfreqs, double beta, double *h)
{
    const size_t points = 2 * (nfreqs - 1);
    gf_rfft *f = gf_rfft_create(points);
    double *spec = malloc((points + 2) * sizeof(double));
    if (!f || !spec) {
        gf_rfft_destroy(f);
        free(spec);
        return GF_ERR_NO_MEMORY;
    }
    /* gain(x) e^(-i (n-1)/2 pi x) at x = k / (nfreqs - 1), as numpy forms it. */
    const double step = 1.0 / (double)(nfreqs - 1), a = -(double)(n - 1) / 2.0 * GF_PI;
    for (size_t k = 0; k < nfreqs; k++) {
        const double x = k == nfreqs - 1 ? 1.0 : (double)k * step, t = a * x;
        spec[2 * k] = gain[k] * cos(t);
        spec[2 * k + 1] = gain[k] * sin(t);
    }
    gf_rfft_inverse(f, spec, spec);
    gf_kaiser_window(n, beta, h);
    for (size_t i = 0; i < n; i++)
        h[i] *= spec[i];
    gf_rfft_destroy(f);
    free(spec);
    return GF_OK;
}
