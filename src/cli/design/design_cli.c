/*
 * Filter design on the command line (design_cli.h): designing and
 * cascading, --design-out and --response-png.
 */
#include "design/design_cli.h"

#include "cli.h"
#include "design/response_png.h"
#include "io/io.h"
#include "io/outfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- designing ---- */

/* One designed section. */
typedef struct designed {
    gf_design_spec spec;
    gf_design_info info;
    double *h;
    size_t n;
    double *eq_freq, *eq_gain; /* --eq: the curve read */
} designed;

static void designed_free(designed *d, int count)
{
    for (int i = 0; d && i < count; i++) {
        gf_design_free(d[i].h);
        free(d[i].eq_freq);
        free(d[i].eq_gain);
    }
    free(d);
}

/* Stage i's specification at rate: its own settings, else those given
 * before every section (a section's own transition or taps replaces both). */
static gf_design_spec section_spec(const gf_design_request *r, int i, int rate)
{
    const gf_design_section *st = &r->section[i];
    const int own = st->transition != 0 || st->taps != 0;
    gf_design_spec s;
    memset(&s, 0, sizeof s);
    s.band = st->band;
    s.rate = rate;
    s.f1 = st->f1;
    s.f2 = st->f2;
    s.atten = st->atten != 0 ? st->atten : r->atten;
    s.transition = own ? st->transition : r->transition;
    s.taps = own ? st->taps : r->taps;
    s.phase = r->phase;
    return s;
}

static double ripple_db(double ripple)
{
    return 20 * log10(1 + ripple);
}

/* The line that says what section d is and what it measures. */
static void describe(const gf_design_section *st, const designed *d)
{
    const gf_design_info *i = &d->info;
    const char *phase = d->spec.phase == GF_PHASE_MINIMUM ? "minimum" : "linear";
    if (d->spec.band == GF_BAND_EQ) {
        fprintf(stderr,
                "gpufilt: design: %s: %zu taps, %s phase, Kaiser beta %.3g, resolution %.4g Hz; "
                "measured: within %.3g dB of the curve at its points\n",
                st->label, d->n, phase, i->beta, i->transition, i->eq_error_db);
        return;
    }
    const int two = d->spec.band >= GF_BAND_BANDPASS;
    char cut[64];
    if (two)
        snprintf(cut, sizeof cut, "%.2f dB at %g Hz, %.2f dB at %g Hz", i->cutoff_db[0], d->spec.f1,
                 i->cutoff_db[1], d->spec.f2);
    else
        snprintf(cut, sizeof cut, "%.2f dB at %g Hz", i->cutoff_db[0], d->spec.f1);
    fprintf(stderr,
            "gpufilt: design: %s: %zu taps, %s phase, Kaiser beta %.4g (for %.4g dB), "
            "transition %.4g Hz; measured: passband within +-%.3g dB (bound %.3g), stopband "
            "%.2f dB, %s\n",
            st->label, d->n, phase, i->beta, i->design_atten, i->transition, ripple_db(i->ripple),
            ripple_db(i->ripple_bound), i->stop_db, cut);
}

/* Design section i of r at rate into d. */
static int design_section(const gf_design_request *r, int i, int rate, designed *d)
{
    const gf_design_section *st = &r->section[i];
    d->spec = section_spec(r, i, rate);
    if (st->band == GF_BAND_EQ) {
        size_t points = 0;
        const int rc = gf_design_cli_read_eq(st->eq_path, &d->eq_freq, &d->eq_gain, &points);
        if (rc)
            return rc;
        d->spec.eq_freq = d->eq_freq;
        d->spec.eq_gain_db = d->eq_gain;
        d->spec.eq_points = points;
    }
    char detail[512];
    const gf_status st_ = gf_design(&d->spec, &d->h, &d->n, &d->info, detail, sizeof detail);
    if (st_ != GF_OK) {
        gf_cli_error("%s: %s", st->label, detail);
        return st_ == GF_ERR_NO_MEMORY          ? GF_EXIT_INTERNAL
               : st_ == GF_ERR_INVALID_ARGUMENT ? GF_EXIT_USAGE
                                                : GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

/* t = t * (d[0..dn)), every filter of t; t empty: t = d. d_name and
 * t_name name them in messages. */
static int cascade(struct gf_taps *t, const double *d, size_t dn, const char *d_name,
                   const char *t_name)
{
    if (t->n == 0) {
        if (!(t->h = malloc(dn * sizeof *t->h))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        memcpy(t->h, d, dn * sizeof *t->h);
        t->n = dn;
        t->filters = 1;
        return GF_EXIT_OK;
    }
    const size_t len = t->n + dn - 1, F = (size_t)t->filters;
    if (len > GF_MAX_FFT_TAPS) {
        gf_cli_error("%s (%zu taps) cascaded with %s (%zu taps) would have %zu taps, more than "
                     "the %zu a filter may have",
                     d_name, dn, t_name, t->n, len, GF_MAX_FFT_TAPS);
        return GF_EXIT_USAGE;
    }
    double *out = malloc(F * len * sizeof *out), *mean = NULL;
    if (out && !t->h && (mean = malloc(t->n * sizeof *mean)) != NULL)
        for (size_t k = 0; k < t->n; k++)
            mean[k] = 1.0 / (double)t->n;
    const double *h = t->h ? t->h : mean;
    int rc = out && h ? GF_EXIT_OK : GF_EXIT_INTERNAL;
    for (size_t f = 0; !rc && f < F; f++)
        if (gf_design_convolve(h + f * t->n, t->n, d, dn, out + f * len) != GF_OK)
            rc = GF_EXIT_INTERNAL;
    free(mean);
    if (rc) {
        free(out);
        gf_cli_error("out of memory cascading %s", d_name);
        return rc;
    }
    free(t->h);
    t->h = out;
    t->n = len;
    return GF_EXIT_OK;
}

/* ---- files ---- */

/* A file written through stdio on an outfile (outfile.h): under a
 * temporary name until committed. An exit code with the message in err. */
static int file_open(gf_outfile *of, const char *what, const char *path, FILE **f, char *err,
                     size_t n)
{
    *f = NULL;
    int rc = gf_outfile_open(of, what, path, NULL, err, n);
    if (rc)
        return rc;
    const int fd = dup(of->fd);
    if (fd < 0 || !(*f = fdopen(fd, "wb"))) {
        snprintf(err, n, "cannot create %s '%s': %s", what, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        gf_outfile_abort(of);
        return GF_EXIT_OUTPUT;
    }
    return GF_EXIT_OK;
}

/* Close f and rename the file into place; rc_in non-zero (its message in
 * err already): drop it. An exit code with the message in err. */
static int file_commit(gf_outfile *of, FILE *f, int rc_in, char *err, size_t n)
{
    errno = 0;
    const int bad = fflush(f) != 0 || ferror(f);
    const int e = errno;
    if (fclose(f) != 0 && !bad && !rc_in) {
        snprintf(err, n, "writing %s '%s': %s", of->what, of->name, strerror(errno));
        gf_outfile_abort(of);
        return GF_EXIT_OUTPUT;
    }
    if (rc_in || bad) {
        if (bad && !rc_in)
            snprintf(err, n, "writing %s '%s': %s", of->what, of->name, strerror(e ? e : EIO));
        gf_outfile_abort(of);
        return rc_in ? rc_in : GF_EXIT_OUTPUT;
    }
    return gf_outfile_commit(of, 0, err, n) != 0 ? GF_EXIT_OUTPUT : GF_EXIT_OK;
}

static int write_text(const char *path, const double *h, size_t n, int filters, const char *about)
{
    gf_outfile of;
    FILE *f;
    char err[1024];
    int rc = file_open(&of, "design file", path, &f, err, sizeof err);
    if (!rc) {
        for (const char *line = about; *line;) {
            const size_t len = strcspn(line, "\n");
            fprintf(f, "# %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
        for (size_t k = 0; k < n; k++)
            for (int c = 0; c < filters; c++)
                fprintf(f, "%.17g%c", h[(size_t)c * n + k], c + 1 < filters ? ' ' : '\n');
        rc = file_commit(&of, f, 0, err, sizeof err);
    }
    if (rc)
        gf_cli_error("%s", err);
    return rc;
}

/* A WAV of doubles through the sndfile sink, one channel per filter. */
static int write_wav(const char *path, const double *h, size_t n, int filters, int rate)
{
    enum { BLOCK = 4096 };
    const gf_format fmt = {.channels = filters,
                           .rate = rate,
                           .frames = (int64_t)n,
                           .sample = GF_RAW_F64LE,
                           .container = 0};
    gf_sink k;
    char err[512];
    const gf_sink_opts so = {.frames = (int64_t)n};
    int rc = gf_sndfile_sink_open(&k, path, &fmt, "wav:double", &so, BLOCK, err, sizeof err);
    double *buf = rc ? NULL : malloc((size_t)BLOCK * (size_t)filters * sizeof *buf);
    if (!rc && !buf) {
        snprintf(err, sizeof err, "out of memory");
        rc = GF_EXIT_INTERNAL;
    }
    for (size_t k0 = 0; !rc && k0 < n; k0 += BLOCK) {
        const size_t count = n - k0 < BLOCK ? n - k0 : BLOCK;
        for (size_t i = 0; i < count; i++)
            for (int c = 0; c < filters; c++)
                buf[i * (size_t)filters + (size_t)c] = h[(size_t)c * n + k0 + i];
        rc = k.ops->write(&k, GF_PRECISION_F64, buf, count, err, sizeof err);
    }
    if (!rc)
        rc = gf_sink_commit(&k, err, sizeof err);
    else
        gf_sink_abort(&k);
    free(buf);
    if (rc)
        gf_cli_error("%s", err);
    return rc;
}

int gf_design_cli_write_taps(const char *path, const double *h, size_t n, int filters, int rate,
                             const char *about)
{
    return gf_design_cli_is_wav(path) ? write_wav(path, h, n, filters, rate)
                                      : write_text(path, h, n, filters, about);
}

/* ---- the whole request ---- */

/* "--highpass 20 then --lowpass 18000 then c.txt" into buf. */
static void cascade_label(const gf_design_request *r, const struct gf_taps *t, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->sections && used < n; i++)
        used +=
            (size_t)snprintf(buf + used, n - used, "%s%s", i ? " then " : "", r->section[i].label);
    if (t->n > 0 && used < n) {
        char taps[64];
        snprintf(taps, sizeof taps, "the mean filter of %zu taps", t->n);
        snprintf(buf + used, n - used, "%s%s", used ? " then " : "", t->source ? t->source : taps);
    }
}

/* --response-png of h (t's filters) into a file; an exit code with the
 * message in err. */
static int write_picture(const gf_design_request *r, const designed *d, int rate,
                         const struct gf_taps *t, const double *h, const char *what, char *err,
                         size_t n)
{
    gf_response_section marks[GF_DESIGN_MAX_SECTIONS];
    for (int i = 0; i < r->sections; i++)
        marks[i] = (gf_response_section){&d[i].spec, &d[i].info, r->section[i].label};
    const gf_response_plot p = {.h = h,
                                .n = t->n,
                                .filters = t->filters,
                                .rate = rate,
                                .sections = marks,
                                .nsections = r->sections,
                                .title = what};
    gf_outfile of;
    FILE *f;
    int rc = file_open(&of, "response picture", r->response_png, &f, err, n);
    if (rc)
        return rc;
    char why[512];
    if ((rc = gf_response_png_write(f, &p, why, sizeof why)) != 0)
        snprintf(err, n, "writing response picture '%s': %s", r->response_png, why);
    return file_commit(&of, f, rc, err, n);
}

/* --design-out and --response-png of the taps in t (the mean filter's
 * 1/T, as the engine rounds it to the precision, when t->h is NULL). A
 * picture that cannot be made while filtering is a warning: the filtering
 * goes on. */
static int write_outputs(const gf_design_request *r, const designed *d, int rate,
                         const struct gf_taps *t, const char *what, int filtering)
{
    char about[1400], at[32] = "";
    if (rate > 0)
        snprintf(at, sizeof at, " at %d Hz", rate);
    snprintf(about, sizeof about, "gpufilt filter%s: %s%s\n%zu taps, %s", at, what,
             r->sections && r->phase == GF_PHASE_MINIMUM ? " (minimum phase)" : "", t->n,
             t->filters > 1 ? "one column per channel" : "one filter for every channel");
    double *mean = NULL;
    const double *h = t->h;
    if (!h && t->n > 0) {
        if (!(mean = malloc(t->n * sizeof *mean))) {
            gf_cli_error("out of memory for the mean filter of %zu taps", t->n);
            return GF_EXIT_INTERNAL;
        }
        for (size_t k = 0; k < t->n; k++)
            mean[k] = 1.0 / (double)t->n;
        h = mean;
    }
    int rc = GF_EXIT_OK;
    if (r->design_out)
        rc = gf_design_cli_write_taps(r->design_out, h, t->n, t->filters, rate, about);
    if (!rc && r->response_png) {
        char err[1024];
        rc = write_picture(r, d, rate, t, h, what, err, sizeof err);
        if (rc && filtering) {
            gf_cli_warn("%s; filtering without it", err);
            rc = GF_EXIT_OK;
        } else if (rc) {
            gf_cli_error("%s", err);
        }
    }
    free(mean);
    return rc;
}

int gf_design_cli_apply(const gf_design_request *r, int rate, struct gf_taps *t, int quiet,
                        int filtering)
{
    if (!gf_design_cli_any(r))
        return GF_EXIT_OK;
    designed *d = calloc((size_t)r->sections + 1, sizeof *d);
    struct gf_taps design = {0};
    char what[1024];
    cascade_label(r, t, what, sizeof what);
    int rc = d ? GF_EXIT_OK : GF_EXIT_INTERNAL;
    if (!d)
        gf_cli_error("out of memory");
    for (int i = 0; !rc && i < r->sections; i++) {
        if ((rc = design_section(r, i, rate, &d[i])) != 0)
            break;
        if (!quiet)
            describe(&r->section[i], &d[i]);
        if (!d[i].info.met)
            gf_cli_warn("%s with %zu taps reaches %.2f dB in the stopband, not -%g dB",
                        r->section[i].label, d[i].n, d[i].info.stop_db, d[i].info.atten);
        rc = cascade(&design, d[i].h, d[i].n, r->section[i].label,
                     i == 1 ? r->section[0].label : "the designs before it");
    }
    const int had_taps = t->n > 0;
    char mean[64];
    snprintf(mean, sizeof mean, "the mean filter of %zu taps", t->n);
    if (!rc && design.n > 0)
        rc = cascade(t, design.h, design.n,
                     r->sections > 1 ? "the cascade of designs" : r->section[0].label,
                     t->source ? t->source : mean);
    if (!rc && !quiet && (r->sections > 1 || (r->sections && had_taps)))
        fprintf(stderr, "gpufilt: design: %s: %zu taps in all\n", what, t->n);
    if (!rc)
        rc = write_outputs(r, d, rate, t, what, filtering);
    free(design.h);
    designed_free(d, r->sections);
    return rc;
}

int gf_taps_ready(const gf_cli_options *o, gf_taps *t, int channels, int rate)
{
    int rc = gf_taps_fit(t, channels, rate, o);
    if (!rc && gf_design_cli_any(&o->design))
        rc = gf_design_cli_apply(&o->design, rate, t, o->quiet, o->action != GF_ACTION_DESIGN);
    return rc ? rc : gf_taps_shape(o, t);
}
