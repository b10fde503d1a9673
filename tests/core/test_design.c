/*
 * Filter design (gpufilt.h, "Filter design"):
 *   - the transforms: gf_rfft against a plain DFT, and a 2^20-point round
 *     trip (timed);
 *   - Kaiser's formulas and golden vectors made with scipy.signal outside
 *     the project (tests/golden/design: kaiserord, firwin, firwin2 on EQ
 *     curves, minimum_phase, and whole designs with their redesigns),
 *     matched within 1e-12 x max|h|;
 *   - every design meets its own specification when measured here, on a
 *     grid twice as dense as gf_design's and by direct sums at the band
 *     edges: passband |gain - 1| <= 10^(-A/20), stopband <= -A dB, -6 dB
 *     at each cutoff;
 *   - two tones through the engine: a 1 kHz low-pass at the default 120 dB
 *     passes 500 Hz within 0.01 dB and leaves 6 kHz at <= -120 dB, in f32
 *     and f64, linear and minimum phase;
 *   - bad specifications: one-line details, GF_ERR_INVALID_ARGUMENT;
 *   - the response and cascade helpers against direct sums.
 * Usage: test_design GOLDEN_DESIGN_DIR
 */
#include "design/design.h"
#include "design/design_fft.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_dir;

/* Taps must match scipy's within this many times their largest magnitude:
 * the windowed sinc and frequency sampling to rounding; minimum phase to
 * rounding through a log and an exp of transforms of up to 2^22 points. */
#define GOLDEN_TOL     1e-12
#define GOLDEN_TOL_MIN 1e-10

static double max_abs(const double *h, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(h[i]));
    return m;
}

/* Largest |a - b| over n values, relative to max|b|. */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    const double m = max_abs(b, n);
    return m > 0 ? d / m : d;
}

/* ---- the transforms ---- */

static int test_fft_small(void)
{
    int bad = 0;
    tu_rng rng = {7};
    for (size_t n = 4; n <= 1024; n *= 2) {
        double *x = malloc(n * sizeof *x), *y = malloc((n + 2) * sizeof *y);
        double *z = malloc((n + 2) * sizeof *z);
        gf_rfft *f = gf_rfft_create(n);
        if (!x || !y || !z || !f)
            return TU_FAIL("out of memory");
        for (size_t i = 0; i < n; i++)
            x[i] = tu_rng_sym(&rng);
        gf_rfft_forward(f, x, y);
        double err = 0, scale = 0;
        for (size_t k = 0; k <= n / 2; k++) {
            long double re = 0, im = 0;
            for (size_t j = 0; j < n; j++) {
                const long double t = 2 * 3.14159265358979323846264338327950288L *
                                      (long double)((j * k) % n) / (long double)n;
                re += x[j] * cosl(t);
                im -= x[j] * sinl(t);
            }
            err = fmax(err, fmax(fabs((double)re - y[2 * k]), fabs((double)im - y[2 * k + 1])));
            scale = fmax(scale, (double)(fabsl(re) + fabsl(im)));
        }
        gf_rfft_inverse(f, y, z);
        const double back = rel_diff(z, x, n);
        bad += TU_CHECK(err <= 1e-15 * scale * log2((double)n) && back <= 1e-15 * log2((double)n),
                        "rfft %zu: error %.3g (scale %.3g), round trip %.3g", n, err, scale, back);
        free(x);
        free(y);
        free(z);
        gf_rfft_destroy(f);
    }
    bad += TU_CHECK(!gf_rfft_create(2) && !gf_rfft_create(96) && gf_pow2_at_least(1000) == 1024,
                    "rfft sizes: 2 and 96 refused, 1000 -> 1024");
    return bad;
}

static int test_fft_large(void)
{
    const size_t n = (size_t)1 << 20;
    double *x = malloc((n + 2) * sizeof *x), *y = malloc((n + 2) * sizeof *y);
    gf_rfft *f = gf_rfft_create(n);
    if (!x || !y || !f)
        return TU_FAIL("out of memory");
    tu_rng rng = {11};
    for (size_t i = 0; i < n; i++)
        x[i] = tu_rng_sym(&rng);
    const double t0 = tu_now();
    gf_rfft_forward(f, x, y);
    gf_rfft_inverse(f, y, y);
    const double t = tu_now() - t0, d = rel_diff(y, x, n);
    printf("test_design: 2^20-point real FFT and inverse: %.3f s, round trip error %.2g\n", t, d);
    free(x);
    free(y);
    gf_rfft_destroy(f);
    return TU_CHECK(d <= 1e-15 * 20, "2^20 round trip error %.3g", d);
}

/* ---- golden vectors (gen_design.py) ---- */

static int test_kaiser(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/kaiser.txt", g_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return TU_FAIL("cannot open %s", path);
    int bad = 0, rows = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        double a, w, beta;
        unsigned long taps;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lu %lf", &a, &w, &taps, &beta) != 4)
            continue;
        rows++;
        const double t = gf_kaiser_taps(a, w), b = gf_kaiser_beta(a);
        bad += TU_CHECK(t == (double)taps && fabs(b - beta) <= 1e-15 * fmax(1, beta),
                        "kaiserord(%g, %g): %g taps, beta %.17g; scipy %lu, %.17g", a, w, t, b,
                        taps, beta);
    }
    fclose(f);
    return bad + TU_CHECK(rows >= 8, "%s: %d rows", path, rows);
}

/* One case of tests/golden/design (gen_design.py gives the format). */
typedef struct dcase {
    char name[41];
    uint32_t kind, band, phase, points;
    uint64_t taps;
    double rate, f1, f2, atten, tw, design_atten;
    size_t out_n;
    double *body; /* EQ: points (freq, gain) pairs; firwin: cutoffs; minimum_phase: input */
    double *want;
} dcase;

static int dcase_read(const char *file, const char *name, dcase *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, file);
    size_t size = 0;
    unsigned char *d = tu_read_file(path, &size);
    if (!d)
        return TU_FAIL("design golden: cannot read %s", path);
    tu_reader r = {d, size, 0};
    char magic[8];
    tu_read_bytes(&r, magic, 8);
    c->kind = (uint32_t)tu_read_uint(&r, 4);
    c->band = (uint32_t)tu_read_uint(&r, 4);
    c->phase = (uint32_t)tu_read_uint(&r, 4);
    c->points = (uint32_t)tu_read_uint(&r, 4);
    c->taps = tu_read_uint(&r, 8);
    c->rate = tu_read_f64(&r);
    c->f1 = tu_read_f64(&r);
    c->f2 = tu_read_f64(&r);
    c->atten = tu_read_f64(&r);
    c->tw = tu_read_f64(&r);
    c->design_atten = tu_read_f64(&r);
    c->out_n = (size_t)tu_read_uint(&r, 8);
    tu_read_bytes(&r, c->name, 40);
    c->name[40] = '\0';
    const size_t nb = c->kind == 0 && c->band == GF_BAND_EQ ? 2 * (size_t)c->points : c->points;
    int bad = TU_CHECK(!r.bad && memcmp(magic, "GFDSN001", 8) == 0 && strcmp(c->name, name) == 0 &&
                           c->kind <= 2 && size == 128 + 8 * (nb + c->out_n),
                       "%s: bad header or size (name '%s', manifest '%s')", path, c->name, name);
    c->body = malloc((nb + 1) * sizeof(double));
    c->want = malloc((c->out_n + 1) * sizeof(double));
    if (!bad && (!c->body || !c->want))
        bad = TU_FAIL("out of memory");
    if (!bad) {
        tu_read_samples(&r, c->body, nb, 8);
        tu_read_samples(&r, c->want, c->out_n, 8);
    }
    free(d);
    return bad;
}

static void dcase_free(dcase *c)
{
    free(c->body);
    free(c->want);
}

/* A golden design case as a specification; EQ arrays point into freq and
 * gain (points each). */
static gf_design_spec dcase_spec(const dcase *c, double *freq, double *gain)
{
    gf_design_spec s;
    memset(&s, 0, sizeof s);
    s.band = (gf_band)c->band;
    s.phase = (gf_phase)c->phase;
    s.rate = c->rate;
    s.f1 = c->f1;
    s.f2 = c->f2;
    s.atten = c->atten;
    s.transition = c->tw;
    s.taps = (size_t)c->taps;
    if (s.band == GF_BAND_EQ) {
        for (uint32_t i = 0; i < c->points; i++) {
            freq[i] = c->body[2 * i];
            gain[i] = c->body[2 * i + 1];
        }
        s.eq_freq = freq;
        s.eq_gain_db = gain;
        s.eq_points = c->points;
    }
    return s;
}

/* ---- measured responses ---- */

/* What a filter does over a design's bands, measured here: on a grid of
 * at least 32 points per 1/n (twice gf_design's) and by direct sums at
 * the band edges and cutoffs. */
typedef struct measured {
    double dev;       /* largest |gain - 1| in the passbands */
    double stop_db;   /* largest gain in the stopbands, dB */
    double cut_db[2]; /* gain at the cutoffs, dB */
} measured;

static int measure_here(const gf_design_spec *s, const gf_design_info *info, const double *h,
                        size_t n, measured *m)
{
    size_t bins = gf_pow2_at_least(32 * n);
    bins = (bins > ((size_t)1 << 24) ? (size_t)1 << 24 : bins) + 1;
    double *mag = malloc(bins * sizeof *mag);
    if (!mag)
        return TU_FAIL("out of memory");
    int bad = TU_CHECK(gf_design_response_grid(h, n, bins, mag, NULL) == GF_OK, "response grid");
    const double nyq = s->rate / 2, per = (double)(bins - 1) / nyq;
    m->dev = 0;
    m->stop_db = -INFINITY;
    for (int b = 0; b < info->npass + info->nstop; b++) {
        const int pass = b < info->npass;
        const double *band = pass ? info->pass[b] : info->stop[b - info->npass];
        for (size_t k = (size_t)ceil(band[0] * per); k <= (size_t)floor(band[1] * per); k++) {
            if (pass)
                m->dev = fmax(m->dev, fabs(pow(10, mag[k] / 20) - 1));
            else
                m->stop_db = fmax(m->stop_db, mag[k]);
        }
        double edge_db[2];
        bad += TU_CHECK(gf_design_response(h, n, s->rate, band, 2, edge_db, NULL) == GF_OK,
                        "response at edges");
        for (int e = 0; e < 2; e++) {
            if (pass)
                m->dev = fmax(m->dev, fabs(pow(10, edge_db[e] / 20) - 1));
            else
                m->stop_db = fmax(m->stop_db, edge_db[e]);
        }
    }
    const double cuts[2] = {s->f1, s->f2};
    const int two = s->band == GF_BAND_BANDPASS || s->band == GF_BAND_BANDREJECT;
    bad += TU_CHECK(gf_design_response(h, n, s->rate, cuts, two ? 2 : 1, m->cut_db, NULL) == GF_OK,
                    "response at cutoffs");
    free(mag);
    return bad;
}

/* A band design against its own specification (what gpufilt.h promises),
 * and gf_design's report against this measurement. */
static int check_meets(const char *name, const gf_design_spec *s, const gf_design_info *info,
                       const double *h, size_t n)
{
    measured m;
    if (measure_here(s, info, h, n, &m))
        return 1;
    const double bound = info->ripple_bound, a = info->atten;
    const int two = s->band == GF_BAND_BANDPASS || s->band == GF_BAND_BANDREJECT;
    int bad = 0;
    if (!s->taps)
        bad += TU_CHECK(info->met && m.dev <= bound && m.stop_db <= -a,
                        "%s: passband |gain - 1| %.3g (bound %.3g), stopband %.3f dB (need <= -%g)",
                        name, m.dev, bound, m.stop_db, a);
    for (int i = 0; i < 1 + two; i++)
        bad += TU_CHECK(fabs(pow(10, m.cut_db[i] / 20) - 0.5) <= bound &&
                            fabs(m.cut_db[i] - info->cutoff_db[i]) <= 1e-9,
                        "%s: %.6f dB at cutoff %d (reported %.6f; need -6.02 within the ripple "
                        "bound)",
                        name, m.cut_db[i], i + 1, info->cutoff_db[i]);
    bad += TU_CHECK(fabs(m.stop_db - info->stop_db) <= 0.02 &&
                        fabs(m.dev - info->ripple) <= 0.01 * m.dev + 1e-15,
                    "%s: gf_design reports ripple %.4g and stopband %.3f dB; measured %.4g and "
                    "%.3f dB",
                    name, info->ripple, info->stop_db, m.dev, m.stop_db);
    printf("  %-24s %7zu taps  beta %6.3f  ripple %.3g (bound %.3g)  stop %8.3f dB  cutoff "
           "%.4f dB\n",
           name, n, info->beta, m.dev, bound, m.stop_db, m.cut_db[0]);
    return bad;
}

/* An EQ design: gf_design's error report against direct sums at the
 * curve's points, and that error against the case's limit. */
static int check_eq(const char *name, const gf_design_spec *s, const gf_design_info *info,
                    const double *h, size_t n, double limit_db)
{
    double worst = 0;
    int bad = 0;
    for (size_t i = 0; i < s->eq_points; i++) {
        const double f = s->eq_freq[i];
        double got;
        if (!(f > 0 && f < s->rate / 2))
            continue;
        bad += TU_CHECK(gf_design_response(h, n, s->rate, &f, 1, &got, NULL) == GF_OK, "response");
        worst = fmax(worst, fabs(got - s->eq_gain_db[i]));
    }
    printf("  %-24s %7zu taps  beta %6.3f  largest error at the curve's points %.4f dB\n", name, n,
           info->beta, worst);
    return bad + TU_CHECK(worst <= limit_db && fabs(worst - info->eq_error_db) <= 1e-3,
                          "%s: error %.4f dB at the curve's points (reported %.4f, limit %g)", name,
                          worst, info->eq_error_db, limit_db);
}

/* The EQ golden cases' limits on the error at their points: a flat curve
 * is met to the window's ripple; a curve that bends sharply at a point
 * (eq_smooth_48k at 20 Hz, eq_dc_min_16k at 200 Hz, eq_beyond_nyq_22k at
 * 300 Hz) is rounded off there over the transition width. */
static double eq_limit(const char *name)
{
    static const struct {
        const char *name;
        double db;
    } limits[] = {{"eq_smooth_48k", 0.5},
                  {"eq_dc_min_16k", 0.5},
                  {"eq_flat_taps255", 1e-4},
                  {"eq_beyond_nyq_22k", 0.25}};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (strcmp(limits[i].name, name) == 0)
            return limits[i].db;
    return 0;
}

static double g_worst; /* the largest golden difference seen, relative */

static int golden_design(const dcase *c)
{
    double *freq = malloc((c->points + 1) * sizeof *freq);
    double *gain = malloc((c->points + 1) * sizeof *gain);
    if (!freq || !gain)
        return TU_FAIL("out of memory");
    const gf_design_spec s = dcase_spec(c, freq, gain);
    double *h = NULL;
    size_t n = 0;
    gf_design_info info;
    char detail[256] = "";
    const gf_status st = gf_design(&s, &h, &n, &info, detail, sizeof detail);
    int bad = TU_CHECK(st == GF_OK, "%s: gf_design: %s (%s)", c->name, gf_strerror(st), detail);
    if (!bad) {
        const double d = n == c->out_n ? rel_diff(h, c->want, n) : INFINITY;
        g_worst = fmax(g_worst, d);
        const double tol = s.phase == GF_PHASE_MINIMUM ? GOLDEN_TOL_MIN : GOLDEN_TOL;
        printf("  %-24s %7zu taps  %.2g x max|h| from scipy\n", c->name, n, d);
        bad += TU_CHECK(d <= tol && fabs(info.design_atten - c->design_atten) <= 1e-9,
                        "%s: %zu taps (scipy %zu), designed for %.12g dB (scipy %.12g), "
                        "largest difference %.3g x max|h|",
                        c->name, n, c->out_n, info.design_atten, c->design_atten, d);
        bad += s.band == GF_BAND_EQ ? check_eq(c->name, &s, &info, h, n, eq_limit(c->name))
                                    : check_meets(c->name, &s, &info, h, n);
    }
    gf_design_free(h);
    free(freq);
    free(gain);
    return bad;
}

/* firwin and minimum_phase on their own. */
static int golden_block(const dcase *c)
{
    const size_t n = c->kind == 1 ? (size_t)c->taps : c->points;
    const size_t out_n = c->kind == 1 ? n : n / 2 + n % 2;
    double *h = malloc((out_n + 1) * sizeof *h);
    if (!h)
        return TU_FAIL("out of memory");
    int bad = 0;
    if (c->kind == 1)
        gf_firwin(n, c->body, c->points, (int)c->band, c->tw, h);
    else
        bad += TU_CHECK(gf_minimum_phase(c->body, n, (size_t)c->taps, h) == GF_OK,
                        "%s: gf_minimum_phase", c->name);
    const double d = out_n == c->out_n ? rel_diff(h, c->want, out_n) : INFINITY;
    g_worst = fmax(g_worst, d);
    bad += TU_CHECK(d <= GOLDEN_TOL, "%s: %zu taps (scipy %zu), largest difference %.3g x max|h|",
                    c->name, out_n, c->out_n, d);
    free(h);
    return bad;
}

static int golden_each(const char *dir, const char *file, const char *name, void *ctx)
{
    (void)dir;
    (void)ctx;
    dcase c;
    memset(&c, 0, sizeof c);
    int bad = dcase_read(file, name, &c);
    if (!bad)
        bad = c.kind == 0 ? golden_design(&c) : golden_block(&c);
    dcase_free(&c);
    return bad;
}

static int test_golden(void)
{
    size_t cases = 0;
    printf("test_design: golden cases (scipy), measured here:\n");
    const int bad = tu_manifest_each("design golden", g_dir, golden_each, NULL, &cases);
    printf("test_design: %zu golden cases, largest difference from scipy %.3g x max|h|\n", cases,
           g_worst);
    return bad + TU_CHECK(cases >= 20, "only %zu golden cases", cases);
}

/* ---- two tones through the engine ---- */

/* Amplitude of the f Hz component of x[0..n), n a whole number of its
 * periods at `rate` (integers), by a direct DFT in long double. */
static double tone_amplitude(const double *x, size_t n, long f, long rate)
{
    long double re = 0, im = 0;
    for (size_t i = 0; i < n; i++) {
        const long double t = 2 * 3.14159265358979323846264338327950288L *
                              (long double)(((long)i * f) % rate) / (long double)rate;
        re += x[i] * cosl(t);
        im += x[i] * sinl(t);
    }
    return (double)(2 * sqrtl(re * re + im * im) / (long double)n);
}

/* 0.5 sin(500 Hz) + 0.5 sin(6 kHz), 3 s at 48 kHz, through the 1 kHz
 * low-pass at the defaults: in the middle second, 500 Hz within 0.01 dB
 * and 6 kHz at -120 dB or below. */
static int tones_case(gf_precision p, gf_phase phase)
{
    const long rate = 48000;
    const size_t frames = 3 * (size_t)rate, ss = tu_sample_size(p);
    const gf_design_spec s = {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .phase = phase};
    double *h = NULL, *y = malloc(frames * sizeof *y);
    unsigned char *x = malloc(frames * ss);
    size_t n = 0;
    if (!x || !y || gf_design(&s, &h, &n, NULL, NULL, 0) != GF_OK)
        return TU_FAIL("tones: set-up");
    for (size_t i = 0; i < frames; i++) {
        const double v = 0.5 * sin(2 * GF_PI * (double)((long)i * 500 % rate) / (double)rate) +
                         0.5 * sin(2 * GF_PI * (double)((long)i * 6000 % rate) / (double)rate);
        if (p == GF_PRECISION_F32)
            ((float *)x)[i] = (float)v;
        else
            ((double *)x)[i] = v;
    }
    gf_config c = gf_config_default();
    c.num_taps = n;
    c.taps = h;
    c.precision = p;
    c.device = GF_DEVICE_CPU;
    c.mode = phase == GF_PHASE_MINIMUM ? GF_MODE_CAUSAL : GF_MODE_SAME;
    unsigned char *out = tu_filter("tones", &c, x, frames, 1, TU_ALL, TU_ALL);
    int bad = out ? 0 : 1;
    for (size_t i = 0; out && i < frames; i++)
        y[i] = p == GF_PRECISION_F32 ? ((float *)out)[i] : ((double *)out)[i];
    if (out) {
        const double pass = 20 * log10(tone_amplitude(y + rate, (size_t)rate, 500, rate) / 0.5);
        const double stop = 20 * log10(tone_amplitude(y + rate, (size_t)rate, 6000, rate) / 0.5);
        printf("test_design: two tones, %s, %s phase, %zu taps: 500 Hz %+.6f dB, 6 kHz %.1f dB\n",
               p == GF_PRECISION_F32 ? "f32" : "f64", phase ? "minimum" : "linear", n, pass, stop);
        bad += TU_CHECK(fabs(pass) <= 0.01 && stop <= -120,
                        "tones: 500 Hz %+.6f dB (need within 0.01), 6 kHz %.2f dB (need <= -120)",
                        pass, stop);
    }
    free(out);
    free(x);
    free(y);
    gf_design_free(h);
    return bad;
}

static int test_tones(void)
{
    return tones_case(GF_PRECISION_F64, GF_PHASE_LINEAR) +
           tones_case(GF_PRECISION_F32, GF_PHASE_LINEAR) +
           tones_case(GF_PRECISION_F64, GF_PHASE_MINIMUM) +
           tones_case(GF_PRECISION_F32, GF_PHASE_MINIMUM);
}

/* ---- more specifications, measured ---- */

static int test_measured(void)
{
    static const struct {
        const char *name;
        gf_design_spec s;
    } specs[] = {
        {"lp1000_44k1", {.band = GF_BAND_LOWPASS, .rate = 44100, .f1 = 1000}},
        {"lp18000_48k", {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 18000}},
        {"hp20_48k", {.band = GF_BAND_HIGHPASS, .rate = 48000, .f1 = 20}},
        {"lp1000_min_48k",
         {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .phase = GF_PHASE_MINIMUM}},
        {"br50_notch_min_8k",
         {.band = GF_BAND_BANDREJECT,
          .rate = 8000,
          .f1 = 45,
          .f2 = 55,
          .atten = 60,
          .transition = 4,
          .phase = GF_PHASE_MINIMUM}},
        {"bp_96k_150dB",
         {.band = GF_BAND_BANDPASS, .rate = 96000, .f1 = 100, .f2 = 30000, .atten = 150}},
        {"lp_taps4095_100dB",
         {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 10000, .atten = 100, .taps = 4095}},
    };
    printf("test_design: more specifications, measured here:\n");
    int bad = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        double *h = NULL;
        size_t n = 0;
        gf_design_info info;
        char detail[256] = "";
        const double t0 = tu_now();
        const gf_status st = gf_design(&specs[i].s, &h, &n, &info, detail, sizeof detail);
        const double t = tu_now() - t0;
        bad += TU_CHECK(st == GF_OK, "%s: %s (%s)", specs[i].name, gf_strerror(st), detail);
        if (st == GF_OK) {
            bad += check_meets(specs[i].name, &specs[i].s, &info, h, n);
            printf("  %-24s designed in %.3f s for %.2f dB\n", "", t, info.design_atten);
        }
        gf_design_free(h);
    }
    return bad;
}

/* A tilt of -12 dB from 100 Hz to 10 kHz, straight on a log axis: where
 * it bends nowhere, the filter follows it within 0.01 dB, in linear and
 * minimum phase. */
static int test_eq_tilt(void)
{
    static const double freq[] = {100, 10000}, gain[] = {6, -6};
    int bad = 0;
    for (int phase = 0; phase < 2; phase++) {
        const gf_design_spec s = {.band = GF_BAND_EQ,
                                  .rate = 48000,
                                  .atten = 100,
                                  .transition = 20,
                                  .phase = (gf_phase)phase,
                                  .eq_freq = freq,
                                  .eq_gain_db = gain,
                                  .eq_points = 2};
        double *h = NULL, f[40], got[40], worst = 0;
        size_t n = 0;
        if (gf_design(&s, &h, &n, NULL, NULL, 0) != GF_OK)
            return TU_FAIL("tilt: design");
        for (int i = 0; i < 40; i++)
            f[i] = 200 * pow(40, i / 39.0); /* 200 Hz .. 8 kHz */
        bad += TU_CHECK(gf_design_response(h, n, s.rate, f, 40, got, NULL) == GF_OK, "response");
        for (int i = 0; i < 40; i++)
            worst = fmax(worst, fabs(got[i] - (6 - 12 * log(f[i] / 100) / log(100))));
        printf("test_design: EQ tilt, %s phase, %zu taps: within %.2g dB of the curve\n",
               phase ? "minimum" : "linear", n, worst);
        bad += TU_CHECK(worst <= 0.01, "tilt: %.4f dB from the curve", worst);
        gf_design_free(h);
    }
    return bad;
}

/* ---- bad specifications ---- */

static const double eq_f_unsorted[] = {100, 50}, eq_f_neg[] = {-1, 100}, eq_g2[] = {0, 3};
static const double eq_f1[] = {1000}, eq_g_loud[] = {100};

/* Each with the detail gf_design must give, word for word. */
static const struct bad_case {
    gf_design_spec s;
    const char *detail;
} bad_cases[] = {
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 24000},
     "cutoff 24000 Hz is outside the open range 0 .. 24000 Hz (0 to Nyquist at 48000 Hz)"},
    {{.band = GF_BAND_HIGHPASS, .rate = 48000, .f1 = 0},
     "cutoff 0 Hz is outside the open range 0 .. 24000 Hz (0 to Nyquist at 48000 Hz)"},
    {{.band = GF_BAND_BANDPASS, .rate = 48000, .f1 = 100, .f2 = 30000},
     "cutoff 30000 Hz is outside the open range 0 .. 24000 Hz (0 to Nyquist at 48000 Hz)"},
    {{.band = GF_BAND_BANDPASS, .rate = 48000, .f1 = 3000, .f2 = 1000},
     "the band-pass band 3000 .. 1000 Hz is empty: its first frequency must be below its "
     "second"},
    {{.band = GF_BAND_BANDREJECT, .rate = 48000, .f1 = 1000, .f2 = 1000},
     "the band-reject band 1000 .. 1000 Hz is empty: its first frequency must be below its "
     "second"},
    {{.band = GF_BAND_LOWPASS, .rate = 0, .f1 = 1000},
     "sample rate 0 Hz is not a finite number above 0"},
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .atten = 250},
     "attenuation 250 dB is outside 20 .. 200 dB"},
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .atten = 10},
     "attenuation 10 dB is outside 20 .. 200 dB"},
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .transition = 2000},
     "transition 2000 Hz is too wide for this low-pass filter: at most 2000 Hz fits (the "
     "transition bands must lie within 0 .. 24000 Hz)"},
    {{.band = GF_BAND_BANDPASS, .rate = 48000, .f1 = 1000, .f2 = 1500, .transition = 600},
     "transition 600 Hz is too wide for this band-pass filter: at most 500 Hz fits (the "
     "transition bands must lie within 0 .. 24000 Hz and leave room between the cutoffs)"},
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .transition = 100, .taps = 101},
     "give the transition or the number of taps, not both"},
    {{.band = GF_BAND_HIGHPASS, .rate = 48000, .f1 = 1000, .taps = 100},
     "100 taps: a high-pass filter takes an odd number of taps, 1 .. 4194304"},
    {{.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .taps = 11},
     "11 taps are too few for this low-pass filter at 120 dB: its transition would be "
     "3.746e+04 Hz, and at most 2000 Hz fits (give at least 190 taps)"},
    {{.band = GF_BAND_HIGHPASS, .rate = 192000, .f1 = 1},
     "this high-pass filter (120 dB, transition 0.1 Hz) needs 14984666 taps, more than the "
     "4194304 a filter may have: widen the transition or lower the attenuation"},
    {{.band = GF_BAND_LOWPASS,
      .rate = 48000,
      .f1 = 1000,
      .transition = 0.5,
      .phase = GF_PHASE_MINIMUM},
     "this low-pass filter (120 dB, transition 0.5 Hz, minimum phase) needs 749235 taps, more "
     "than the 524288 a minimum-phase design may have: widen the transition or lower the "
     "attenuation"},
    {{.band = GF_BAND_EQ,
      .rate = 48000,
      .eq_freq = eq_f_unsorted,
      .eq_gain_db = eq_g2,
      .eq_points = 2},
     "EQ point 2: frequency 50 Hz is not above the previous one (100 Hz): the points must be "
     "sorted by frequency, each frequency once"},
    {{.band = GF_BAND_EQ, .rate = 48000, .eq_freq = eq_f_neg, .eq_gain_db = eq_g2, .eq_points = 2},
     "EQ point 1: frequency -1 Hz is not a finite number >= 0"},
    {{.band = GF_BAND_EQ, .rate = 48000, .eq_freq = eq_f1, .eq_gain_db = eq_g_loud, .eq_points = 1},
     "EQ point 1: gain 100 dB is outside -200 .. 60 dB"},
    {{.band = GF_BAND_EQ, .rate = 48000}, "the EQ curve has no points"},
};

static int test_bad(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        double *h = (double *)&bad; /* must come back NULL */
        size_t n = 99;
        char detail[512] = "";
        const gf_status st = gf_design(&bad_cases[i].s, &h, &n, NULL, detail, sizeof detail);
        bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT && !h && n == 0 &&
                            strcmp(detail, bad_cases[i].detail) == 0 && !strchr(detail, '\n'),
                        "bad case %zu: %s, detail\n  '%s'\nwanted\n  '%s'", i, gf_strerror(st),
                        detail, bad_cases[i].detail);
    }
    double *h = NULL;
    size_t n = 0;
    bad += TU_CHECK(gf_design(NULL, &h, &n, NULL, NULL, 0) == GF_ERR_INVALID_ARGUMENT,
                    "NULL spec accepted");
    gf_design_free(NULL);
    return bad;
}

/* ---- the response and cascade helpers ---- */

static int test_helpers(void)
{
    tu_rng rng = {5};
    int bad = 0;
    /* Cascades, short (direct) and long (FFT), against long double sums. */
    static const size_t sizes[][2] = {{1, 1}, {7, 300}, {1500, 1200}, {20000, 3001}};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const size_t na = sizes[c][0], nb = sizes[c][1], len = na + nb - 1;
        double *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
        double *out = malloc(len * sizeof *out), *want = calloc(len, sizeof *want);
        if (!a || !b || !out || !want)
            return TU_FAIL("out of memory");
        double sa = 0, sb = 0;
        for (size_t i = 0; i < na; i++)
            sa += fabs(a[i] = tu_rng_sym(&rng));
        for (size_t i = 0; i < nb; i++)
            sb += fabs(b[i] = tu_rng_sym(&rng));
        for (size_t k = 0; k < len; k++) {
            long double acc = 0;
            for (size_t i = k + 1 > nb ? k + 1 - nb : 0; i < na && i <= k; i++)
                acc += (long double)a[i] * b[k - i];
            want[k] = (double)acc;
        }
        bad += TU_CHECK(gf_design_convolve(a, na, b, nb, out) == GF_OK, "convolve");
        double err = 0;
        for (size_t k = 0; k < len; k++)
            err = fmax(err, fabs(out[k] - want[k]));
        bad +=
            TU_CHECK(err <= 1e-15 * log2((double)len + 2) * sa * sb,
                     "convolve %zu x %zu: error %.3g (sum|a| sum|b| %.3g)", na, nb, err, sa * sb);
        free(a);
        free(b);
        free(out);
        free(want);
    }
    /* The grid response folds a filter longer than the grid exactly. */
    const size_t n = 1000, bins = 129;
    double h[1000], grid_db[129], grid_d[129], f[129], direct_db[129], direct_d[129];
    for (size_t i = 0; i < n; i++)
        h[i] = tu_rng_sym(&rng) * exp(-(double)i / 100);
    for (size_t k = 0; k < bins; k++)
        f[k] = 24000.0 * (double)k / (double)(bins - 1);
    bad += TU_CHECK(gf_design_response_grid(h, n, bins, grid_db, grid_d) == GF_OK &&
                        gf_design_response(h, n, 48000, f, bins, direct_db, direct_d) == GF_OK,
                    "responses");
    double dm = 0, dd = 0;
    for (size_t k = 0; k < bins; k++) {
        dm = fmax(dm, fabs(grid_db[k] - direct_db[k]));
        dd = fmax(dd, fabs(grid_d[k] - direct_d[k]) / fmax(1, fabs(direct_d[k])));
    }
    bad += TU_CHECK(dm <= 1e-9 && dd <= 1e-9, "grid against direct: %.3g dB, delay %.3g", dm, dd);
    /* A pure delay: 0 dB and 7 frames everywhere. */
    const double d7[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    bad += TU_CHECK(gf_design_response_grid(d7, 8, 9, grid_db, grid_d) == GF_OK &&
                        fabs(grid_db[3]) < 1e-12 && fabs(grid_d[5] - 7) < 1e-12,
                    "delay of 7 frames: %.3g dB, %.6f frames", grid_db[3], grid_d[5]);
    bad += TU_CHECK(gf_design_response_grid(h, n, 100, grid_db, NULL) == GF_ERR_INVALID_ARGUMENT,
                    "a grid of 100 bins accepted");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_design GOLDEN_DESIGN_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    static const tu_step steps[] = {test_fft_small, test_fft_large, test_kaiser,
                                    test_golden,    test_measured,  test_eq_tilt,
                                    test_tones,     test_bad,       test_helpers};
    return tu_run_steps("test_design", "passed", steps, sizeof steps / sizeof steps[0]);
}
