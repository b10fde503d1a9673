/*
 * Kaiser's formulas and the Kaiser-windowed sinc (design.h): the same
 * arithmetic as scipy.signal's kaiser_beta, kaiserord, kaiser_atten,
 * windows.kaiser and firwin, in double precision.
 */
#include "design/design.h"

#include <math.h>

double gf_kaiser_beta(double atten)
{
    if (atten > 50)
        return 0.1102 * (atten - 8.7);
    if (atten > 21)
        return 0.5842 * pow(atten - 21, 0.4) + 0.07886 * (atten - 21);
    return 0.0;
}

double gf_kaiser_taps(double atten, double width)
{
    /* Kaiser's formula gives the order; the taps are one more. */
    return ceil((atten - 7.95) / 2.285 / (GF_PI * width) + 1);
}

double gf_kaiser_atten(size_t taps, double width)
{
    return 2.285 * (double)(taps - 1) * GF_PI * width + 7.95;
}

double gf_bessel_i0(double x)
{
    /* sum_k ((x/2)^k / k!)^2: every term positive, the terms grow until k
     * is about x/2 and then fall faster than geometrically. */
    const double q = 0.25 * x * x;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 500; k++) {
        term *= q / ((double)k * (double)k);
        sum += term;
        if (term < sum * 1e-17)
            break;
    }
    return sum;
}

/* Sample i of the n-point Kaiser window (n >= 2), i0b = I0(beta). */
static double kaiser_at(size_t i, size_t n, double beta, double i0b)
{
    const double alpha = (double)(n - 1) / 2.0, r = ((double)i - alpha) / alpha;
    return gf_bessel_i0(beta * sqrt(1 - r * r)) / i0b;
}

void gf_kaiser_window(size_t n, double beta, double *w)
{
    const double i0b = gf_bessel_i0(beta);
    for (size_t i = 0; i < n; i++)
        w[i] = n == 1 ? 1.0 : kaiser_at(i, n, beta, i0b);
}

/* numpy.sinc: sin(pi x) / (pi x), 1 at 0. */
static double sinc(double x)
{
    const double y = GF_PI * (x == 0 ? 1.0e-20 : x);
    return sin(y) / y;
}

void gf_firwin(size_t n, const double *cutoff, size_t ncut, int pass_zero, double beta, double *h)
{
    /* Band edges in pairs (left, right) of passbands: 0 first when DC
     * passes, 1 last when Nyquist does (an odd count of cutoffs flips it). */
    double edges[GF_FIRWIN_MAX_CUTOFFS + 2];
    size_t ne = 0;
    const int pass_nyquist = (int)(ncut & 1) ^ (pass_zero != 0);
    if (pass_zero)
        edges[ne++] = 0.0;
    for (size_t i = 0; i < ncut && i < GF_FIRWIN_MAX_CUTOFFS; i++)
        edges[ne++] = cutoff[i];
    if (pass_nyquist)
        edges[ne++] = 1.0;
    const double alpha = 0.5 * (double)(n - 1), i0b = gf_bessel_i0(beta);
    for (size_t i = 0; i < n; i++) {
        const double m = (double)i - alpha;
        double v = 0;
        for (size_t b = 0; b + 1 < ne; b += 2) {
            v += edges[b + 1] * sinc(edges[b + 1] * m);
            v -= edges[b] * sinc(edges[b] * m);
        }
        h[i] = v * (n == 1 ? 1.0 : kaiser_at(i, n, beta, i0b));
    }
    /* Unit gain at DC, at Nyquist, or in the middle of the first passband. */
    const double left = edges[0], right = edges[1];
    const double f = left == 0 ? 0.0 : right == 1 ? 1.0 : 0.5 * (left + right);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += h[i] * cos(GF_PI * ((double)i - alpha) * f);
    for (size_t i = 0; i < n; i++)
        h[i] /= s;
}
