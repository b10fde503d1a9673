/*
 * Real FFTs of n = 2m points for filter design (design_fft.h): a complex
 * radix-2 FFT of m points over the even and odd samples, and the split
 * step that separates their spectra.
 */
#include "design/design_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS ((size_t)1 << 30)

struct gf_rfft {
    size_t n, m; /* real points, complex points (n / 2) */
    /* Twiddles, interleaved (re, im): stage len's e^(-2 pi i j / len), j <
     * len/2, from stage[len - 2] on (each stage's in a row, read in
     * order; m - 1 in all); the split step's e^(-2 pi i k / n), k <= m/2. */
    double *stage, *split;
};

size_t gf_pow2_at_least(size_t n)
{
    size_t p = 4;
    while (p < n && p < MAX_POINTS)
        p <<= 1;
    return p >= n ? p : 0;
}

/* e^(-2 pi i k / n) for k < n/2 into w[0], w[1]: cos/sin of the angle
 * folded into the first octant, where it is small and exact to an ulp. */
static void twiddle(size_t k, size_t n, double *w)
{
    if (n < 4) { /* k = 0 */
        w[0] = 1;
        w[1] = 0;
        return;
    }
    const size_t q = n / 4, e = n / 8;
    const size_t r = k < q ? k : k - q; /* angle k = r + (k >= q) pi/2 */
    const int flip = r > e;
    const double a = 2.0 * GF_PI * (double)(flip ? q - r : r) / (double)n;
    double c = flip ? sin(a) : cos(a), s = flip ? cos(a) : sin(a);
    if (k >= q) { /* cos(t + pi/2) = -sin t, sin(t + pi/2) = cos t */
        const double t = c;
        c = -s;
        s = t;
    }
    w[0] = c;
    w[1] = -s;
}

gf_rfft *gf_rfft_create(size_t n)
{
    if (n < 4 || n > MAX_POINTS || (n & (n - 1)))
        return NULL;
    gf_rfft *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->n = n;
    f->m = n / 2;
    f->stage = malloc(2 * f->m * sizeof(double));
    f->split = malloc((f->m + 2) * sizeof(double));
    if (!f->stage || !f->split) {
        gf_rfft_destroy(f);
        return NULL;
    }
    for (size_t len = 2; len <= f->m; len <<= 1)
        for (size_t j = 0; j < len / 2; j++)
            twiddle(j, len, f->stage + (len - 2) + 2 * j);
    for (size_t k = 0; k <= f->m / 2; k++)
        twiddle(k, n, f->split + 2 * k);
    return f;
}

void gf_rfft_destroy(gf_rfft *f)
{
    if (!f)
        return;
    free(f->stage);
    free(f->split);
    free(f);
}

size_t gf_rfft_size(const gf_rfft *f)
{
    return f->n;
}

/* Stages below this many complex points run block by block, each block
 * while it sits in cache (64 KiB). */
#define CACHE_POINTS ((size_t)4096)

/* The radix-2 stage of size len over z[0 .. len): len/2 butterflies with
 * the twiddles e^(-+2 pi i j / len). */
static void stage(const gf_rfft *f, double *z, size_t len, double sgn)
{
    const size_t half = len / 2;
    const double *w = f->stage + (len - 2);
    double *a = z, *b = z + 2 * half;
    for (size_t j = 0; j < half; j++, a += 2, b += 2, w += 2) {
        const double wr = w[0], wi = sgn * w[1];
        const double tr = b[0] * wr - b[1] * wi, ti = b[0] * wi + b[1] * wr;
        b[0] = a[0] - tr;
        b[1] = a[1] - ti;
        a[0] += tr;
        a[1] += ti;
    }
}

/* Stages 2 .. len over z[0 .. len), depth first: both halves complete
 * before the stage that joins them, so small blocks stay in cache. */
static void stages(const gf_rfft *f, double *z, size_t len, double sgn)
{
    if (len > CACHE_POINTS) {
        stages(f, z, len / 2, sgn);
        stages(f, z + len, len / 2, sgn); /* z + 2 (len / 2) doubles */
        stage(f, z, len, sgn);
        return;
    }
    for (size_t l = 2; l <= len; l <<= 1)
        for (size_t i = 0; i < len; i += l)
            stage(f, z + 2 * i, l, sgn);
}

/* In-place complex FFT of m points (interleaved), forward (sign -1) or
 * unnormalised inverse (sign +1): bit reversal, then radix-2 stages. */
static void cfft(const gf_rfft *f, double *z, int inverse)
{
    const size_t m = f->m;
    for (size_t i = 1, j = 0; i < m; i++) {
        size_t bit = m >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j) {
            const double re = z[2 * i], im = z[2 * i + 1];
            z[2 * i] = z[2 * j];
            z[2 * i + 1] = z[2 * j + 1];
            z[2 * j] = re;
            z[2 * j + 1] = im;
        }
    }
    stages(f, z, m, inverse ? -1.0 : 1.0);
}

void gf_rfft_forward(const gf_rfft *f, const double *in, double *out)
{
    const size_t m = f->m;
    if (in != out)
        memcpy(out, in, f->n * sizeof(double));
    cfft(f, out, 0); /* Z = FFT(x[2j] + i x[2j+1]) */
    /* E[k] = (Z[k] + conj Z[m-k]) / 2, O[k] = (Z[k] - conj Z[m-k]) / 2i,
     * X[k] = E[k] + w^k O[k] and X[m-k] = conj(E[k] - w^k O[k]). */
    const double z0r = out[0], z0i = out[1];
    out[0] = z0r + z0i;
    out[1] = 0;
    out[2 * m] = z0r - z0i;
    out[2 * m + 1] = 0;
    for (size_t k = 1; k <= m / 2; k++) {
        double *a = out + 2 * k, *b = out + 2 * (m - k);
        const double er = 0.5 * (a[0] + b[0]), ei = 0.5 * (a[1] - b[1]);
        const double or_ = 0.5 * (a[1] + b[1]), oi = -0.5 * (a[0] - b[0]);
        const double wr = f->split[2 * k], wi = f->split[2 * k + 1];
        const double tr = wr * or_ - wi * oi, ti = wr * oi + wi * or_;
        a[0] = er + tr;
        a[1] = ei + ti;
        b[0] = er - tr;
        b[1] = -(ei - ti);
    }
}

void gf_rfft_inverse(const gf_rfft *f, const double *in, double *out)
{
    const size_t m = f->m;
    if (in != out)
        memcpy(out, in, (f->n + 2) * sizeof(double));
    /* E[k] = (X[k] + conj X[m-k]) / 2, O[k] = (X[k] - conj X[m-k]) / (2 w^k),
     * Z[k] = E[k] + i O[k]; then z = IFFT(Z) / m. */
    const double x0 = out[0], xm = out[2 * m];
    out[0] = 0.5 * (x0 + xm);
    out[1] = 0.5 * (x0 - xm);
    for (size_t k = 1; k <= m / 2; k++) {
        double *a = out + 2 * k, *b = out + 2 * (m - k);
        const double er = 0.5 * (a[0] + b[0]), ei = 0.5 * (a[1] - b[1]);
        const double dr = 0.5 * (a[0] - b[0]), di = 0.5 * (a[1] + b[1]);
        const double wr = f->split[2 * k], wi = -f->split[2 * k + 1]; /* 1 / w^k = conj w^k */
        const double or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
        /* Z[k] = E + i O; Z[m-k] = conj(E) + i conj(O) */
        a[0] = er - oi;
        a[1] = ei + or_;
        b[0] = er + oi;
        b[1] = -ei + or_;
    }
    cfft(f, out, 1);
    const double scale = 1.0 / (double)m;
    for (size_t i = 0; i < f->n; i++)
        out[i] *= scale;
}
