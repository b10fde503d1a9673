/*
 * Measured responses (design.h, gpufilt.h): what a designed filter does,
 * from its taps alone. gf_design checks every design against its
 * specification with gf_measure_bands; gf_design_response gives the
 * magnitude and group delay for pictures and embedders.
 */
#include "design/design.h"
#include "design/design_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Refining the grid's extremes: how many local maxima, those within this
 * factor of the largest, and the golden-section steps (each narrows the
 * two bins around a maximum by 0.618). */
#define REFINE_PEAKS  3
#define REFINE_WITHIN 0.89
#define REFINE_STEPS  14

/* sum_j x[j] (c[j] + i s[j]) over j < m into *re, *im, with four partial
 * sums (no dependence from one product to the next). */
static void dot2(const double *x, const double *c, const double *s, size_t m, double *re,
                 double *im)
{
    double r[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    size_t j = 0;
    for (; j + 4 <= m; j += 4)
        for (int u = 0; u < 4; u++) {
            r[u] += x[j + u] * c[j + u];
            q[u] += x[j + u] * s[j + u];
        }
    for (; j < m; j++) {
        r[0] += x[j] * c[j];
        q[0] += x[j] * s[j];
    }
    *re = (r[0] + r[1]) + (r[2] + r[3]);
    *im = (q[0] + q[1]) + (q[2] + q[3]);
}

void gf_dtft(const double *h, size_t n, double w, double *hr, double *hi, double *dr, double *di)
{
    /* Blocks of BLOCK taps: within a block the phasors e^(-i w j) come from
     * a table, and each block's own e^(-i w b) from cos/sin, so every
     * phasor is exact to an ulp or two and the sums run without a chain
     * of rotations. */
    enum { BLOCK = 256 };
    double tc[BLOCK], ts[BLOCK], jh[BLOCK];
    for (size_t j = 0; j < BLOCK; j++) {
        tc[j] = cos(w * (double)j);
        ts[j] = -sin(w * (double)j);
    }
    const int delay = dr || di;
    double sr = 0, si = 0, tr = 0, ti = 0;
    for (size_t b = 0; b < n; b += BLOCK) {
        const size_t m = n - b < BLOCK ? n - b : BLOCK;
        double ar, ai, er = 0, ei = 0;
        dot2(h + b, tc, ts, m, &ar, &ai);
        if (delay) { /* sum (b + j) h[b + j] ...: b A + E */
            for (size_t j = 0; j < m; j++)
                jh[j] = (double)j * h[b + j];
            dot2(jh, tc, ts, m, &er, &ei);
            er += (double)b * ar;
            ei += (double)b * ai;
        }
        const double c = cos(w * (double)b), s = -sin(w * (double)b);
        sr += ar * c - ai * s;
        si += ar * s + ai * c;
        tr += er * c - ei * s;
        ti += er * s + ei * c;
    }
    *hr = sr;
    *hi = si;
    if (dr)
        *dr = tr;
    if (di)
        *di = ti;
}

double gf_response_at(const double *h, size_t n, double f)
{
    double re, im;
    gf_dtft(h, n, GF_PI * f, &re, &im, NULL, NULL);
    return hypot(re, im);
}

size_t gf_measure_grid(size_t n)
{
    size_t cap = gf_pow2_at_least(2 * n);
    if (cap < ((size_t)1 << 23))
        cap = (size_t)1 << 23;
    const size_t p = gf_pow2_at_least(16 * n);
    return p && p < cap ? p : cap;
}

/* What is measured: |gain - 1| in a passband, the gain in a stopband. */
static double score(double gain, int dev)
{
    return dev ? fabs(gain - 1) : gain;
}

/* The largest score over [lo, hi] (fractions of Nyquist) around one
 * local maximum: a golden-section search on exact sums. */
static double refine(const double *h, size_t n, double lo, double hi, int dev)
{
    const double r = 0.61803398874989485;
    double a = lo, b = hi, x1 = b - r * (b - a), x2 = a + r * (b - a);
    double g1 = score(gf_response_at(h, n, x1), dev), g2 = score(gf_response_at(h, n, x2), dev);
    for (int i = 0; i < REFINE_STEPS; i++) {
        if (g1 < g2) {
            a = x1;
            x1 = x2;
            g1 = g2;
            x2 = a + r * (b - a);
            g2 = score(gf_response_at(h, n, x2), dev);
        } else {
            b = x2;
            x2 = x1;
            g2 = g1;
            x1 = b - r * (b - a);
            g1 = score(gf_response_at(h, n, x1), dev);
        }
    }
    return fmax(g1, g2);
}

/* The largest score over grid bins k in [lo, hi] (fractions of Nyquist),
 * mag[k] the gain at k / (bins - 1); the REFINE_PEAKS highest local
 * maxima within REFINE_WITHIN of the largest refined on exact sums. */
static double band_max(const double *h, size_t n, const double *mag, size_t bins, double lo,
                       double hi, int dev)
{
    const double per = (double)(bins - 1);
    const size_t k0 = (size_t)ceil(lo * per);
    const size_t k1 = (size_t)floor(hi * per) < bins - 1 ? (size_t)floor(hi * per) : bins - 1;
    double best = 0;
    for (size_t k = k0; k <= k1 && k0 <= k1; k++)
        best = fmax(best, score(mag[k], dev));
    size_t peak[REFINE_PEAKS];
    double val[REFINE_PEAKS];
    int np = 0;
    for (size_t k = k0 + 1; k < k1; k++) {
        const double y = score(mag[k], dev);
        if (y < best * REFINE_WITHIN || y < score(mag[k - 1], dev) || y < score(mag[k + 1], dev))
            continue;
        int at = np; /* keep the highest REFINE_PEAKS, highest first */
        while (at > 0 && val[at - 1] < y)
            at--;
        if (at >= REFINE_PEAKS)
            continue;
        for (int j = np < REFINE_PEAKS ? np++ : REFINE_PEAKS - 1; j > at; j--) {
            val[j] = val[j - 1];
            peak[j] = peak[j - 1];
        }
        val[at] = y;
        peak[at] = k;
    }
    for (int i = 0; i < np; i++)
        best = fmax(best, refine(h, n, fmax(lo, (double)(peak[i] - 1) / per),
                                 fmin(hi, (double)(peak[i] + 1) / per), dev));
    return best;
}

gf_status gf_measure_bands(const double *h, size_t n, const double *pass, size_t npass,
                           const double *stop, size_t nstop, gf_measured *m)
{
    const size_t grid = gf_measure_grid(n), bins = grid / 2 + 1;
    gf_rfft *f = gf_rfft_create(grid);
    double *buf = calloc(grid + 2, sizeof(double));
    if (!f || !buf) {
        gf_rfft_destroy(f);
        free(buf);
        return GF_ERR_NO_MEMORY;
    }
    memcpy(buf, h, n * sizeof(double));
    gf_rfft_forward(f, buf, buf);
    for (size_t k = 0; k < bins; k++)
        buf[k] = hypot(buf[2 * k], buf[2 * k + 1]); /* in place: k <= 2k */
    m->pass_dev = 0;
    m->stop_max = 0;
    for (size_t b = 0; b < npass; b++) {
        const double lo = pass[2 * b], hi = pass[2 * b + 1];
        const double e =
            fmax(fabs(gf_response_at(h, n, lo) - 1), fabs(gf_response_at(h, n, hi) - 1));
        m->pass_dev = fmax(m->pass_dev, fmax(e, band_max(h, n, buf, bins, lo, hi, 1)));
    }
    for (size_t b = 0; b < nstop; b++) {
        const double lo = stop[2 * b], hi = stop[2 * b + 1];
        const double e = fmax(gf_response_at(h, n, lo), gf_response_at(h, n, hi));
        m->stop_max = fmax(m->stop_max, fmax(e, band_max(h, n, buf, bins, lo, hi, 0)));
    }
    gf_rfft_destroy(f);
    free(buf);
    return GF_OK;
}
