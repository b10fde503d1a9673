/*
 * gf_design (gpufilt.h): the specification checked once here, then a band
 * design (a Kaiser-windowed sinc, measured and redesigned until it meets
 * the specification) or an EQ curve (frequency sampling). The building
 * blocks are in design_kaiser.c, design_firwin2.c, design_minphase.c and
 * design_measure.c; everything after check_spec may assume what it checks.
 */
#include "backends/backend.h"
#include "design/design.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redesigns for more attenuation before giving up. Each adds what the last
 * design missed by plus MARGIN_DB, rounded up to whole STEP_DB, so that the
 * attenuation designed for is atten + k STEP_DB exactly (the same double
 * wherever it is computed, scipy's golden vectors included). */
#define MAX_ROUNDS 8
#define MARGIN_DB  0.05
#define STEP_DB    0.1

/* The specification resolved: every default filled in, frequencies as
 * fractions of Nyquist. */
typedef struct plan {
    const gf_design_spec *s;
    double nyq;              /* Hz */
    double atten, tw;        /* dB; transition, fraction of Nyquist */
    double cut[2];           /* cutoffs, fractions of Nyquist */
    size_t ncut;             /* 1 or 2 (0 for EQ) */
    int pass_zero;           /* the filter passes DC */
    double pass[4], stop[4]; /* [lo, hi] pairs, fractions of Nyquist */
    size_t npass, nstop;
    size_t max_taps;
} plan;

static const char *band_name(gf_band b)
{
    static const char *names[] = {"low-pass", "high-pass", "band-pass", "band-reject", "EQ"};
    return (unsigned)b < 5 ? names[b] : "?";
}

/* A count of taps that may be absurdly large, for a message. */
static const char *taps_text(double t, char *buf, size_t n)
{
    snprintf(buf, n, t < 1e15 ? "%.0f" : "%.3g", t);
    return buf;
}

/* ---- the specification ---- */

static gf_status check_eq(const gf_design_spec *s, char *detail, size_t n)
{
    if (s->eq_points < 1 || !s->eq_freq || !s->eq_gain_db) {
        gf_detail(detail, n, "the EQ curve has no points");
        return GF_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < s->eq_points; i++) {
        const double f = s->eq_freq[i], g = s->eq_gain_db[i];
        if (!isfinite(f) || f < 0) {
            gf_detail(detail, n, "EQ point %zu: frequency %g Hz is not a finite number >= 0", i + 1,
                      f);
            return GF_ERR_INVALID_ARGUMENT;
        }
        if (i > 0 && !(f > s->eq_freq[i - 1])) {
            gf_detail(detail, n,
                      "EQ point %zu: frequency %g Hz is not above the previous one (%g Hz): "
                      "the points must be sorted by frequency, each frequency once",
                      i + 1, f, s->eq_freq[i - 1]);
            return GF_ERR_INVALID_ARGUMENT;
        }
        if (!(g >= GF_DESIGN_MIN_GAIN_DB && g <= GF_DESIGN_MAX_GAIN_DB)) {
            gf_detail(detail, n, "EQ point %zu: gain %g dB is outside %g .. %g dB", i + 1, g,
                      GF_DESIGN_MIN_GAIN_DB, GF_DESIGN_MAX_GAIN_DB);
            return GF_ERR_INVALID_ARGUMENT;
        }
    }
    return GF_OK;
}

/* The cutoffs against 0 and Nyquist; the bands' order. */
static gf_status check_cutoffs(const gf_design_spec *s, double nyq, char *detail, size_t n)
{
    const int two = s->band == GF_BAND_BANDPASS || s->band == GF_BAND_BANDREJECT;
    const double f[2] = {s->f1, s->f2};
    for (int i = 0; i < 1 + two; i++)
        if (!isfinite(f[i]) || f[i] <= 0 || f[i] >= nyq) {
            gf_detail(detail, n,
                      "cutoff %g Hz is outside the open range 0 .. %g Hz (0 to Nyquist at %g Hz)",
                      f[i], nyq, s->rate);
            return GF_ERR_INVALID_ARGUMENT;
        }
    if (two && !(s->f1 < s->f2)) {
        gf_detail(detail, n,
                  "the %s band %g .. %g Hz is empty: its first frequency must be below "
                  "its second",
                  band_name(s->band), s->f1, s->f2);
        return GF_ERR_INVALID_ARGUMENT;
    }
    return GF_OK;
}

/* Everything about s that does not depend on the transition. */
static gf_status check_spec(const gf_design_spec *s, char *detail, size_t n)
{
    if ((unsigned)s->band > GF_BAND_EQ || (unsigned)s->phase > GF_PHASE_MINIMUM) {
        gf_detail(detail, n, "unknown band %d or phase %d", (int)s->band, (int)s->phase);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(s->rate) || s->rate <= 0) {
        gf_detail(detail, n, "sample rate %g Hz is not a finite number above 0", s->rate);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (s->atten != 0 && !(s->atten >= GF_DESIGN_MIN_ATTEN && s->atten <= GF_DESIGN_MAX_ATTEN)) {
        gf_detail(detail, n, "attenuation %g dB is outside %g .. %g dB", s->atten,
                  GF_DESIGN_MIN_ATTEN, GF_DESIGN_MAX_ATTEN);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (s->transition != 0 && !(isfinite(s->transition) && s->transition > 0)) {
        gf_detail(detail, n, "transition %g Hz is not a finite number above 0", s->transition);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (s->transition != 0 && s->taps != 0) {
        gf_detail(detail, n, "give the transition or the number of taps, not both");
        return GF_ERR_INVALID_ARGUMENT;
    }
    const int odd_only =
        s->band == GF_BAND_HIGHPASS || s->band == GF_BAND_BANDREJECT || s->band == GF_BAND_EQ;
    if (s->taps > GF_MAX_FFT_TAPS || (s->taps && odd_only && s->taps % 2 == 0)) {
        gf_detail(detail, n, "%zu taps: a %s filter takes %s1 .. %zu", s->taps, band_name(s->band),
                  odd_only ? "an odd number of taps, " : "", GF_MAX_FFT_TAPS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    return s->band == GF_BAND_EQ ? check_eq(s, detail, n)
                                 : check_cutoffs(s, s->rate / 2, detail, n);
}

/* The default transition (GF_DESIGN_TRANSITION_FRACTION), in Hz. */
static double default_transition(const gf_design_spec *s, double nyq)
{
    double room = nyq;
    if (s->band == GF_BAND_EQ) {
        for (size_t i = 0; i < s->eq_points; i++)
            if (s->eq_freq[i] > 0) {
                room = fmin(s->eq_freq[i], nyq);
                break;
            }
    } else {
        room = fmin(s->f1, nyq - s->f1);
        if (s->band == GF_BAND_BANDPASS || s->band == GF_BAND_BANDREJECT)
            room = fmin(fmin(s->f1, nyq - s->f2), s->f2 - s->f1);
    }
    return GF_DESIGN_TRANSITION_FRACTION * room;
}

/* The widest transition (Hz) that keeps every band edge inside 0 ..
 * Nyquist and, for two cutoffs, the middle band non-empty. */
static double widest_transition(const gf_design_spec *s, double nyq)
{
    if (s->band == GF_BAND_EQ)
        return nyq;
    if (s->band == GF_BAND_LOWPASS || s->band == GF_BAND_HIGHPASS)
        return 2 * fmin(s->f1, nyq - s->f1);
    return fmin(2 * fmin(s->f1, nyq - s->f2), s->f2 - s->f1);
}

/* The passbands and stopbands, and firwin's cutoffs, for p->tw. */
static void set_bands(plan *p)
{
    const gf_design_spec *s = p->s;
    const double f1 = s->f1 / p->nyq, f2 = s->f2 / p->nyq, h = p->tw / 2;
    switch (s->band) {
    case GF_BAND_LOWPASS:
    case GF_BAND_HIGHPASS: {
        const double lo[2] = {0, f1 - h}, hi[2] = {f1 + h, 1};
        const int lp = s->band == GF_BAND_LOWPASS;
        memcpy(lp ? p->pass : p->stop, lo, sizeof lo);
        memcpy(lp ? p->stop : p->pass, hi, sizeof hi);
        p->npass = p->nstop = 1;
        p->cut[0] = f1;
        p->ncut = 1;
        p->pass_zero = lp;
        break;
    }
    case GF_BAND_BANDPASS:
    case GF_BAND_BANDREJECT: {
        const double outer[4] = {0, f1 - h, f2 + h, 1}, inner[2] = {f1 + h, f2 - h};
        const int bp = s->band == GF_BAND_BANDPASS;
        memcpy(bp ? p->stop : p->pass, outer, sizeof outer);
        memcpy(bp ? p->pass : p->stop, inner, sizeof inner);
        p->npass = bp ? 1 : 2;
        p->nstop = bp ? 2 : 1;
        p->cut[0] = f1;
        p->cut[1] = f2;
        p->ncut = 2;
        p->pass_zero = !bp;
        break;
    }
    case GF_BAND_EQ:
        break;
    }
}

/* The transition (fixed, given or default) and the bands it makes. */
static gf_status resolve(const gf_design_spec *s, plan *p, char *detail, size_t n)
{
    memset(p, 0, sizeof *p);
    p->s = s;
    p->nyq = s->rate / 2;
    p->atten = s->atten != 0 ? s->atten : GF_DESIGN_DEFAULT_ATTEN;
    p->max_taps = s->phase == GF_PHASE_MINIMUM ? GF_DESIGN_MAX_MINPHASE_TAPS : GF_MAX_FFT_TAPS;
    const double widest = widest_transition(s, p->nyq);
    double tw;
    if (s->taps) {
        tw = s->taps > 1 ? (p->atten - 7.95) / (2.285 * GF_PI * (double)(s->taps - 1)) * p->nyq
                         : INFINITY;
        if (s->band != GF_BAND_EQ && !(tw < widest)) {
            /* One more than Kaiser's length at the widest transition;
             * odd where the band needs it (a double: it may be huge). */
            double need = gf_kaiser_taps(p->atten, widest / p->nyq) + 1;
            char num[32];
            if ((s->band == GF_BAND_HIGHPASS || s->band == GF_BAND_BANDREJECT) &&
                fmod(need, 2) == 0)
                need += 1;
            gf_detail(detail, n,
                      "%zu taps are too few for this %s filter at %g dB: its transition would be "
                      "%.4g Hz, and at most %.4g Hz fits (give at least %s taps)",
                      s->taps, band_name(s->band), p->atten, tw, widest,
                      taps_text(need, num, sizeof num));
            return GF_ERR_INVALID_ARGUMENT;
        }
    } else {
        tw = s->transition != 0 ? s->transition : default_transition(s, p->nyq);
        if (!(tw < widest)) {
            gf_detail(detail, n,
                      "transition %g Hz is too wide for this %s filter: at most %.6g Hz fits "
                      "(the transition bands must lie within 0 .. %g Hz%s)",
                      tw, band_name(s->band), widest, p->nyq,
                      s->band == GF_BAND_BANDPASS || s->band == GF_BAND_BANDREJECT
                          ? " and leave room between the cutoffs"
                          : "");
            return GF_ERR_INVALID_ARGUMENT;
        }
    }
    p->tw = tw / p->nyq;
    set_bands(p);
    return GF_OK;
}

/* The length for design attenuation a: fixed, or Kaiser's (made odd). */
static gf_status length_for(const plan *p, double a, size_t *taps, char *detail, size_t n)
{
    if (p->s->taps) {
        *taps = p->s->taps;
        return GF_OK;
    }
    const double t = gf_kaiser_taps(a, p->tw);
    if (t > (double)p->max_taps) {
        char num[32];
        gf_detail(detail, n,
                  "this %s filter (%g dB, transition %.4g Hz%s) needs %s taps, more than the "
                  "%zu %s: widen the transition or lower the attenuation",
                  band_name(p->s->band), p->atten, p->tw * p->nyq,
                  p->s->phase == GF_PHASE_MINIMUM ? ", minimum phase" : "",
                  taps_text(t, num, sizeof num), p->max_taps,
                  p->s->phase == GF_PHASE_MINIMUM ? "a minimum-phase design may have"
                                                  : "a filter may have");
        return GF_ERR_INVALID_ARGUMENT;
    }
    *taps = (size_t)t | 1;
    return GF_OK;
}

/* h[0..n) to minimum phase, in place (design.h, gf_minimum_phase_full). */
static gf_status to_minimum_phase(double *h, size_t n)
{
    if (n < 2)
        return GF_OK;
    return gf_minimum_phase_full(h, n, gf_minimum_phase_fft_size(n), h);
}

static double db(double gain)
{
    return 20 * log10(gain);
}

static void fill_band_info(const plan *p, const double *h, size_t taps, double beta, double a,
                           const gf_measured *m, gf_design_info *info)
{
    memset(info, 0, sizeof *info);
    info->taps = taps;
    info->beta = beta;
    info->atten = p->atten;
    info->design_atten = a;
    info->transition = p->tw * p->nyq;
    for (size_t i = 0; i < 2; i++) {
        info->pass[i][0] = p->pass[2 * i] * p->nyq;
        info->pass[i][1] = p->pass[2 * i + 1] * p->nyq;
        info->stop[i][0] = p->stop[2 * i] * p->nyq;
        info->stop[i][1] = p->stop[2 * i + 1] * p->nyq;
    }
    info->npass = (int)p->npass;
    info->nstop = (int)p->nstop;
    info->ripple = m->pass_dev;
    info->ripple_bound = pow(10, -p->atten / 20);
    info->stop_db = db(m->stop_max);
    for (size_t i = 0; i < p->ncut; i++)
        info->cutoff_db[i] = db(gf_response_at(h, taps, p->cut[i]));
    info->met = m->pass_dev <= info->ripple_bound && m->stop_max <= info->ripple_bound;
}

/* A band design, measured; redesigned for more attenuation while it misses. */
static gf_status design_band(const plan *p, double **out, size_t *nout, gf_design_info *info,
                             char *detail, size_t n)
{
    const double bound = pow(10, -p->atten / 20);
    double a = p->atten;
    long steps = 0;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        size_t taps;
        gf_status st = length_for(p, a, &taps, detail, n);
        if (st != GF_OK)
            return st;
        const double beta = gf_kaiser_beta(a);
        double *h = malloc(taps * sizeof *h);
        if (!h)
            return GF_ERR_NO_MEMORY;
        gf_firwin(taps, p->cut, p->ncut, p->pass_zero, beta, h);
        gf_measured m = {0, 0};
        if (p->s->phase == GF_PHASE_MINIMUM)
            st = to_minimum_phase(h, taps);
        if (st == GF_OK)
            st = gf_measure_bands(h, taps, p->pass, p->npass, p->stop, p->nstop, &m);
        if (st != GF_OK) {
            free(h);
            return st;
        }
        const double miss = fmax(db(m.pass_dev / bound), db(m.stop_max / bound));
        if (miss <= 0 || p->s->taps) {
            fill_band_info(p, h, taps, beta, a, &m, info);
            *out = h;
            *nout = taps;
            return GF_OK;
        }
        free(h);
        steps += (long)ceil((miss + MARGIN_DB) / STEP_DB);
        a = p->atten + (double)steps * STEP_DB;
    }
    gf_detail(detail, n, "this %s filter did not meet %g dB after %d designs",
              band_name(p->s->band), p->atten, MAX_ROUNDS);
    return GF_ERR_UNSUPPORTED;
}

/* ---- EQ curves ---- */

/* The curve's gain in dB at f Hz (gpufilt.h says how it is interpolated). */
static double curve_db(const gf_design_spec *s, double f)
{
    const double *x = s->eq_freq, *g = s->eq_gain_db;
    const size_t last = s->eq_points - 1;
    if (f <= x[0])
        return g[0];
    if (f >= x[last])
        return g[last];
    size_t lo = 0, hi = last; /* x[lo] < f < x[hi] */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        *(x[mid] <= f ? &lo : &hi) = mid;
    }
    const double t =
        x[lo] == 0 ? (f - x[lo]) / (x[hi] - x[lo]) : log(f / x[lo]) / log(x[hi] / x[lo]);
    return g[lo] + t * (g[hi] - g[lo]);
}

/* The largest |gain - curve| (dB) at the curve's points inside (0, nyq),
 * the gain read off a dense grid by linear interpolation. */
static gf_status eq_error(const plan *p, const double *h, size_t taps, double *err)
{
    const size_t bins = gf_measure_grid(taps) / 2 + 1;
    double *mag = malloc(bins * sizeof *mag);
    if (!mag)
        return GF_ERR_NO_MEMORY;
    gf_status st = gf_design_response_grid(h, taps, bins, mag, NULL);
    *err = 0;
    for (size_t i = 0; st == GF_OK && i < p->s->eq_points; i++) {
        const double f = p->s->eq_freq[i] / p->nyq * (double)(bins - 1);
        if (!(f > 0 && f < (double)(bins - 1)))
            continue;
        const size_t k = (size_t)f;
        const double got = mag[k] + (f - (double)k) * (mag[k + 1] - mag[k]);
        *err = fmax(*err, fabs(got - p->s->eq_gain_db[i]));
    }
    free(mag);
    return st;
}

static gf_status design_eq(const plan *p, double **out, size_t *nout, gf_design_info *info,
                           char *detail, size_t n)
{
    size_t taps;
    gf_status st = length_for(p, p->atten, &taps, detail, n);
    if (st != GF_OK)
        return st;
    const double beta = gf_kaiser_beta(p->atten);
    const size_t nfreqs = gf_firwin2_nfreqs(taps);
    double *gain = malloc(nfreqs * sizeof *gain), *h = malloc(taps * sizeof *h);
    if (!gain || !h) {
        st = GF_ERR_NO_MEMORY;
        goto fail;
    }
    for (size_t k = 0; k < nfreqs; k++) {
        const double f = k == nfreqs - 1 ? p->nyq : (double)k / (double)(nfreqs - 1) * p->nyq;
        gain[k] = pow(10, curve_db(p->s, f) / 20);
    }
    if ((st = gf_firwin2_grid(taps, gain, nfreqs, beta, h)) != GF_OK ||
        (p->s->phase == GF_PHASE_MINIMUM && (st = to_minimum_phase(h, taps)) != GF_OK))
        goto fail;
    memset(info, 0, sizeof *info);
    if ((st = eq_error(p, h, taps, &info->eq_error_db)) != GF_OK)
        goto fail;
    info->taps = taps;
    info->beta = beta;
    info->atten = info->design_atten = p->atten;
    info->transition = p->tw * p->nyq;
    info->ripple_bound = pow(10, -p->atten / 20);
    info->stop_db = -INFINITY;
    info->met = 1;
    free(gain);
    *out = h;
    *nout = taps;
    return GF_OK;
fail:
    free(gain);
    free(h);
    return st;
}

/* ---- the API ---- */

gf_status gf_design(const gf_design_spec *spec, double **taps, size_t *num_taps,
                    gf_design_info *info, char *detail, size_t detail_size)
{
    if (taps)
        *taps = NULL;
    if (num_taps)
        *num_taps = 0;
    if (!spec || !taps || !num_taps) {
        gf_detail(detail, detail_size, "spec, taps and num_taps must not be NULL");
        return GF_ERR_INVALID_ARGUMENT;
    }
    gf_design_info scratch;
    if (!info)
        info = &scratch;
    plan p;
    gf_status st = check_spec(spec, detail, detail_size);
    if (st == GF_OK)
        st = resolve(spec, &p, detail, detail_size);
    if (st != GF_OK)
        return st;
    st = spec->band == GF_BAND_EQ ? design_eq(&p, taps, num_taps, info, detail, detail_size)
                                  : design_band(&p, taps, num_taps, info, detail, detail_size);
    if (st == GF_ERR_NO_MEMORY)
        gf_detail(detail, detail_size, "out of memory designing %s taps", band_name(spec->band));
    return st;
}

void gf_design_free(double *taps)
{
    free(taps);
}

gf_status gf_design_curve(const gf_design_spec *spec, const double *freq, size_t count,
                          double *gain_db)
{
    if (!spec || (count && (!freq || !gain_db)) || check_eq(spec, NULL, 0) != GF_OK)
        return GF_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++)
        gain_db[i] = curve_db(spec, freq[i]);
    return GF_OK;
}
