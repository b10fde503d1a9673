/*
 * Levels folded into the taps (cli.h, gf_taps_shape): --normalize-filter,
 * the dry/wet mix and --gain. All in double, before the engine rounds the
 * taps to its precision: they cost nothing while filtering, and the serial
 * reference of --verify gets the very same taps, so the direct method stays
 * bit-exact.
 */
#include "cli.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Local maxima of the grid refined, the highest first. */
#define PEAK_CANDIDATES 8
/* Golden-section steps: each leaves 0.618 of the interval (two grid bins
 * wide), so 40 leave 4e-9 of it; the peak's error is second order in that. */
#define PEAK_STEPS 40
/* The grid: 16 n points up to this many (2^22: 48 MiB of doubles). */
#define PEAK_MAX_POINTS ((size_t)1 << 22)

/* |H| at f (0 .. 1 of Nyquist), by a direct sum. */
static double gain_at(const double *h, size_t n, double f)
{
    double db = -INFINITY;
    gf_design_response(h, n, 2.0, &f, 1, &db, NULL);
    return pow(10, db / 20);
}

/* The largest magnitude of the response of h[0..n): an FFT grid of 16 n
 * points (PEAK_MAX_POINTS at most) in double, refined around its highest
 * local maxima by direct sums. -1 when out of memory. */
static double peak_gain(const double *h, size_t n)
{
    size_t half = 4; /* bins - 1: a power of two, 8 n or more (16 n points) */
    while (half < 8 * n && 2 * half <= PEAK_MAX_POINTS)
        half *= 2;
    const size_t bins = half + 1;
    double *db = malloc(bins * sizeof *db);
    if (!db || gf_design_response_grid(h, n, bins, db, NULL) != GF_OK) {
        free(db);
        return -1;
    }
    /* The highest local maxima of the grid (the ends count: DC and Nyquist). */
    size_t top[PEAK_CANDIDATES];
    int ntop = 0;
    for (size_t k = 0; k < bins; k++) {
        if ((k > 0 && db[k - 1] > db[k]) || (k + 1 < bins && db[k + 1] > db[k]))
            continue;
        int at;
        if (ntop < PEAK_CANDIDATES)
            at = ntop++;
        else if (db[top[PEAK_CANDIDATES - 1]] < db[k])
            at = PEAK_CANDIDATES - 1;
        else
            continue;
        for (; at > 0 && db[top[at - 1]] < db[k]; at--)
            top[at] = top[at - 1];
        top[at] = k;
    }
    double peak = ntop ? pow(10, db[top[0]] / 20) : 0;
    /* Between grid points a lobe may rise higher: golden-section search for
     * the maximum of |H| within a bin either side of each candidate. */
    const double r = (sqrt(5.0) - 1) / 2, step = 1.0 / (double)half;
    for (int c = 0; c < ntop; c++) {
        double a = fmax(0, ((double)top[c] - 1) * step), b = fmin(1, ((double)top[c] + 1) * step);
        double x1 = b - r * (b - a), x2 = a + r * (b - a);
        double g1 = gain_at(h, n, x1), g2 = gain_at(h, n, x2);
        for (int i = 0; i < PEAK_STEPS; i++) {
            if (g1 < g2) {
                a = x1;
                x1 = x2;
                g1 = g2;
                x2 = a + r * (b - a);
                g2 = gain_at(h, n, x2);
            } else {
                b = x2;
                x2 = x1;
                g2 = g1;
                x1 = b - r * (b - a);
                g1 = gain_at(h, n, x1);
            }
        }
        peak = fmax(peak, fmax(g1, g2));
    }
    free(db);
    return peak;
}

/* Filter h[0..n)'s measure m. */
static double measure(gf_norm_filter m, const double *h, size_t n)
{
    double s = 0;
    switch (m) {
    case GF_NORM_PEAK:
        return peak_gain(h, n);
    case GF_NORM_DC:
        for (size_t k = 0; k < n; k++)
            s += h[k];
        return fabs(s);
    case GF_NORM_L1:
        for (size_t k = 0; k < n; k++)
            s += fabs(h[k]);
        return s;
    case GF_NORM_L2:
        for (size_t k = 0; k < n; k++)
            s += h[k] * h[k];
        return sqrt(s);
    case GF_NORM_NONE:
        break;
    }
    return 1;
}

static double from_db(double db)
{
    return pow(10, db / 20); /* -inf: 0 */
}

/* A matrix's output o (of O; filters i*O + o from each input i): the
 * measure of what it adds up, -1 out of memory. l1, the most a full-scale
 * input on every channel can reach, is the sum of the filters' l1; peak,
 * dc and l2 are those of the filters' sum, the response to one signal
 * played on every input (a mono source through a true-stereo response). */
static double output_measure(gf_norm_filter m, const gf_taps *t, size_t o)
{
    const size_t n = t->n, O = (size_t)t->outputs, C = (size_t)t->filters / O;
    if (m == GF_NORM_L1) {
        double v = 0;
        for (size_t i = 0; i < C; i++)
            v += measure(m, t->h + (i * O + o) * n, n);
        return v;
    }
    double *sum = calloc(n, sizeof *sum);
    if (!sum)
        return -1;
    for (size_t i = 0; i < C; i++)
        for (size_t k = 0; k < n; k++)
            sum[k] += t->h[(i * O + o) * n + k];
    const double v = measure(m, sum, n);
    free(sum);
    return v;
}

/* --normalize-filter's measure of the largest of t's filters into *m (one
 * factor for every channel keeps their balance); of a matrix, of the
 * largest of its outputs (output_measure): GF_EXIT_OK, or an exit code
 * after a one-line error. */
static int largest_measure(const gf_cli_options *o, const gf_taps *t, double *out)
{
    static const char *const names[] = {"", "peak", "dc", "l1", "l2"};
    const size_t n = t->n, F = (size_t)t->filters, O = t->outputs > 0 ? (size_t)t->outputs : 0;
    double m = 0;
    for (size_t f = 0; f < (O ? O : F); f++) {
        const double v =
            O ? output_measure(o->norm_filter, t, f) : measure(o->norm_filter, t->h + f * n, n);
        if (v < 0) {
            gf_cli_error("out of memory measuring the filter's response (%zu taps)", n);
            return GF_EXIT_INTERNAL;
        }
        m = fmax(m, v);
    }
    if (!(m > 0) || !isfinite(1 / m)) {
        gf_cli_error("--normalize-filter %s: the filter's %s is %s: it cannot be scaled to "
                     "0 dB",
                     names[o->norm_filter],
                     o->norm_filter == GF_NORM_PEAK ? "largest gain"
                     : o->norm_filter == GF_NORM_DC ? "gain at DC"
                     : o->norm_filter == GF_NORM_L1 ? "sum of |taps|"
                                                    : "energy",
                     m > 0 ? "too small" : "0");
        return GF_EXIT_USAGE;
    }
    *out = m;
    return GF_EXIT_OK;
}

int gf_taps_shape(const gf_cli_options *o, gf_taps *t)
{
    const int mix = !isnan(o->mix) || !isnan(o->dry_db) || !isnan(o->wet_db);
    if (!o->norm_filter && o->gain_db == 0 && !mix)
        return GF_EXIT_OK;
    const size_t n = t->n, F = (size_t)t->filters;
    if (!t->h) { /* the mean filter */
        if (!(t->h = malloc(n * sizeof *t->h))) {
            gf_cli_error("out of memory for the mean filter of %zu taps", n);
            return GF_EXIT_INTERNAL;
        }
        for (size_t k = 0; k < n; k++)
            t->h[k] = 1.0 / (double)n;
        t->shape.mean = 1;
    }
    double m = 1;
    int rc;
    if (o->norm_filter && (rc = largest_measure(o, t, &m)) != GF_EXIT_OK)
        return rc;
    const double dry = !mix               ? 0
                       : !isnan(o->mix)   ? 1 - o->mix
                       : isnan(o->dry_db) ? 0
                                          : from_db(o->dry_db);
    const double wet = !mix               ? 1
                       : !isnan(o->mix)   ? o->mix
                       : isnan(o->wet_db) ? 1
                                          : from_db(o->wet_db);
    const double gain = from_db(o->gain_db);
    /* The dry path lines up with the input where the mode puts it: the
     * filter's tap 0 in causal and full mode, (T-1)/2 in same mode. */
    const int same = o->mode == GF_MODE_SAME && o->action != GF_ACTION_LIVE; /* live: causal */
    const size_t d = same ? (n - 1) / 2 : 0;
    const double scale = (1 / m) * wet * gain;
    /* A matrix: the dry path goes from input i into output i (a mono input
     * into every output), that is into the filters i*O + i. */
    const size_t O = t->outputs > 0 ? (size_t)t->outputs : 0, C = O ? F / O : F;
    if (O && C != 1 && C != O && dry != 0) {
        gf_cli_error("a dry path (--mix, --dry) needs as many outputs as inputs with a matrix "
                     "response: '%s' is %zu x %zu",
                     t->source, C, O);
        return GF_EXIT_USAGE;
    }
    for (size_t f = 0; f < F; f++) {
        double *h = t->h + f * n;
        for (size_t k = 0; k < n; k++)
            h[k] *= scale;
        if (!O || C == 1 || f / O == f % O)
            h[d] += dry * gain;
        for (size_t k = 0; k < n; k++)
            if (!isfinite(h[k]) || (o->precision == GF_PRECISION_F32 && fabs(h[k]) > FLT_MAX)) {
                gf_cli_error("tap %zu is %g after --gain, --normalize-filter and the mix: beyond "
                             "the range of %s arithmetic",
                             k, h[k], o->precision == GF_PRECISION_F32 ? "f32" : "f64");
                return GF_EXIT_USAGE;
            }
    }
    t->shape.shaped = 1;
    t->shape.measure = o->norm_filter ? m : NAN;
    t->shape.norm = 1 / m;
    t->shape.gain = gain;
    t->shape.dry = dry;
    t->shape.wet = wet;
    t->shape.dry_tap = d;
    return GF_EXIT_OK;
}
