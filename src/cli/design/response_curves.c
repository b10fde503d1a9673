/*
 * The response picture's curves (response_plot.h): each filter's gain and
 * group delay reduced to pixel columns from the library's responses
 * (gf_design_response_grid, direct sums where a pixel column is narrower
 * than a grid bin), the designs' bands and EQ curves per column, and the
 * axes they decide.
 */
#include "design/response_plot.h"

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The axis: from a decade below the lowest band edge (and 20 Hz) to Nyquist. */
static void freq_range(plot *s)
{
    const gf_response_plot *p = s->p;
    double lowest = 20;
    for (int i = 0; i < p->nsections; i++) {
        const gf_design_info *in = p->sections[i].info;
        const gf_design_spec *sp = p->sections[i].spec;
        for (int b = 0; b < in->npass; b++)
            lowest = fmin(lowest, in->pass[b][0] > 0 ? in->pass[b][0] : in->pass[b][1]);
        for (int b = 0; b < in->nstop; b++)
            lowest = fmin(lowest, in->stop[b][0] > 0 ? in->stop[b][0] : in->stop[b][1]);
        for (size_t k = 0; sp->band == GF_BAND_EQ && k < sp->eq_points; k++)
            if (sp->eq_freq[k] > 0)
                lowest = fmin(lowest, sp->eq_freq[k]);
    }
    s->f_hi = p->rate / 2;
    s->f_lo = pow(10, floor(log10(fmin(lowest / 2, s->f_hi / 100))));
}

/* Each column's place in the designs' bands, and the EQ curves there. */
static void band_states(plot *s)
{
    const gf_response_plot *p = s->p;
    for (int x = 0; x < PW; x++) {
        const double f = col_freq(s, x + 0.5);
        const double f0 = col_freq(s, x), f1 = col_freq(s, x + 1);
        int stop = 0, pass = 1, whole = 1, bands = 0;
        double eq = NAN;
        for (int i = 0; i < p->nsections; i++) {
            const gf_design_info *in = p->sections[i].info;
            const gf_design_spec *sp = p->sections[i].spec;
            if (sp->band == GF_BAND_EQ) {
                s->has_eq = 1;
                double g;
                if (gf_design_curve(sp, &f, 1, &g) == GF_OK)
                    eq = isnan(eq) ? g : eq + g;
                continue;
            }
            bands++;
            int in_pass = 0, all_in = 0;
            for (int b = 0; b < in->npass; b++) {
                in_pass |= f >= in->pass[b][0] && f <= in->pass[b][1];
                all_in |= f0 >= in->pass[b][0] && f1 <= in->pass[b][1];
            }
            for (int b = 0; b < in->nstop; b++)
                stop |= f >= in->stop[b][0] && f <= in->stop[b][1];
            pass &= in_pass;
            whole &= all_in;
        }
        s->state[x] = (signed char)(stop ? -1 : bands && pass ? 1 : 0);
        s->inside[x] = (signed char)(bands && whole);
        s->eq[x] = eq;
    }
}

/* The EQ curves' sum at the frequencies k df, k < n, into out. */
static void eq_sum(const plot *s, double df, size_t n, double *out)
{
    enum { CHUNK = 4096 };
    double f[CHUNK], g[CHUNK];
    for (size_t base = 0; base < n; base += CHUNK) {
        const size_t m = n - base < CHUNK ? n - base : CHUNK;
        for (size_t k = 0; k < m; k++) {
            f[k] = (double)(base + k) * df;
            out[base + k] = 0;
        }
        for (int i = 0; i < s->p->nsections; i++)
            if (s->p->sections[i].spec->band == GF_BAND_EQ &&
                gf_design_curve(s->p->sections[i].spec, f, m, g) == GF_OK)
                for (size_t k = 0; k < m; k++)
                    out[base + k] += g[k];
    }
}

/* One response, gain (dB) m and delay (frames) d at frequencies f, into
 * column x: gain range, delay range (ms) where the gain is within
 * DELAY_RANGE_DB of peak, and with EQ curves eq (NULL: none) the range of
 * gain less curve. */
static void add_to_column(columns *c, int x, const double *m, const double *d, const double *eq,
                          size_t count, double peak, double ms)
{
    for (size_t k = 0; k < count; k++) {
        c->mn[x] = fmin(c->mn[x], m[k]);
        c->mx[x] = fmax(c->mx[x], m[k]);
        if (eq) {
            c->vmn[x] = fmin(isnan(c->vmn[x]) ? INFINITY : c->vmn[x], m[k] - eq[k]);
            c->vmx[x] = fmax(isnan(c->vmx[x]) ? -INFINITY : c->vmx[x], m[k] - eq[k]);
        }
        if (m[k] >= peak - DELAY_RANGE_DB && isfinite(d[k])) {
            c->dmn[x] = isnan(c->dmn[x]) ? d[k] * ms : fmin(c->dmn[x], d[k] * ms);
            c->dmx[x] = isnan(c->dmx[x]) ? d[k] * ms : fmax(c->dmx[x], d[k] * ms);
        }
    }
}

/* Filter h's response into columns c: the grid's bins in each column,
 * or a direct sum at its centre where it holds none. */
static int fill_columns(const plot *s, const double *h, columns *c)
{
    const gf_response_plot *p = s->p;
    size_t bins = (size_t)1 << 16; /* grid intervals: >= 8 n, 2^16 .. 2^22 */
    while (bins < 8 * p->n && bins < ((size_t)1 << 22))
        bins <<= 1;
    const double df = p->rate / 2 / (double)bins, ms = 1000 / p->rate;
    double *mag = malloc((bins + 1) * sizeof *mag), *del = malloc((bins + 1) * sizeof *del);
    double *eq = s->has_eq ? malloc((bins + 1) * sizeof *eq) : NULL;
    int rc = mag && del && (!s->has_eq || eq) &&
                     gf_design_response_grid(h, p->n, bins + 1, mag, del) == GF_OK
                 ? 0
                 : 1;
    double peak = -INFINITY;
    for (size_t k = 0; !rc && k <= bins; k++)
        peak = fmax(peak, mag[k]);
    if (!rc && eq)
        eq_sum(s, df, bins + 1, eq);
    for (int x = 0; !rc && x < PW; x++) {
        size_t k0 = (size_t)ceil(col_freq(s, x) / df), k1 = (size_t)ceil(col_freq(s, x + 1) / df);
        k1 = k1 > bins + 1 ? bins + 1 : k1;
        c->mn[x] = INFINITY;
        c->mx[x] = -INFINITY;
        c->dmn[x] = c->dmx[x] = c->vmn[x] = c->vmx[x] = NAN;
        if (k1 > k0) {
            add_to_column(c, x, mag + k0, del + k0, eq ? eq + k0 : NULL, k1 - k0, peak, ms);
            continue;
        }
        double m1, d1, f = col_freq(s, x + 0.5); /* narrower than a bin: its centre, exactly */
        gf_design_response(h, p->n, p->rate, &f, 1, &m1, &d1);
        add_to_column(c, x, &m1, &d1, eq ? &s->eq[x] : NULL, 1, peak, ms);
    }
    free(mag);
    free(del);
    free(eq);
    return rc;
}

/* The gain axis: the designs' targets and the curves decide it. */
static void gain_range(plot *s)
{
    const gf_response_plot *p = s->p;
    double top = -INFINITY, low = INFINITY, atten = 0;
    double bound = 0; /* the cascade's ripple bound: the designs' add up */
    int pass = 0;
    for (int f = 0; f < s->filters; f++)
        for (int x = 0; x < PW; x++) {
            top = fmax(top, s->col[f].mx[x]);
            low = fmin(low, s->col[f].mn[x]);
        }
    for (int x = 0; x < PW; x++)
        if (!isnan(s->eq[x])) {
            top = fmax(top, s->eq[x]);
            low = fmin(low, s->eq[x]);
        }
    for (int i = 0; i < p->nsections; i++) {
        const gf_design_info *in = p->sections[i].info;
        if (p->sections[i].spec->band == GF_BAND_EQ)
            continue;
        atten = fmax(atten, in->atten);
        bound += in->ripple_bound;
        pass |= in->npass > 0;
    }
    s->db_top = 10 * ceil((isfinite(top) ? top : 0) / 10 + 0.6);
    if (atten > 0)
        s->db_bot = -20 * ceil((atten + 40) / 20);
    else
        s->db_bot = fmax(s->db_top - 160, 10 * floor((isfinite(low) ? low : -60) / 10 - 1));
    s->db_step = s->db_top - s->db_bot > 100 ? 20 : 10;
    s->bound_db = pass ? 20 * log10(1 + bound) : 0;
    s->bands = atten > 0;
    double dev = 0;
    for (int x = 0; !s->bands && x < PW; x++)
        for (int f = 0; f < s->filters; f++)
            if (!isnan(s->col[f].vmn[x]))
                dev = fmax(dev, fmax(fabs(s->col[f].vmn[x]), fabs(s->col[f].vmx[x])));
    if (dev > 0) /* a 1-2-5 step above the largest deviation, 0.1 .. 20 dB */
        s->dev_db = fmin(20, fmax(0.1, pow(10, ceil(log10(dev * 1.2)))));
}

/* The delay axis, ms: from 0 (or below) to a little above the largest. */
static void delay_range(plot *s)
{
    double lo = 0, hi = 0;
    for (int f = 0; f < s->filters; f++)
        for (int x = 0; x < PW; x++)
            if (!isnan(s->col[f].dmn[x])) {
                lo = fmin(lo, s->col[f].dmn[x]);
                hi = fmax(hi, s->col[f].dmx[x]);
            }
    s->d_lo = lo;
    s->d_hi = hi > lo ? hi + 0.15 * (hi - lo) : lo + 1;
}

int gf_response_curves(plot *s, char *err, size_t n)
{
    const gf_response_plot *p = s->p;
    freq_range(s);
    band_states(s);
    for (int f = 0; f < s->filters; f++)
        if (fill_columns(s, p->h + (size_t)f * p->n, &s->col[f]) != 0) {
            snprintf(err, n, "out of memory for the response of %zu taps", p->n);
            return GF_EXIT_INTERNAL;
        }
    gain_range(s);
    delay_range(s);
    return GF_EXIT_OK;
}
