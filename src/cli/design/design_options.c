/*
 * Filter design on the command line (design_cli.h), the part that needs
 * neither the library's designer nor any file but --eq: option values,
 * their checks, the --eq file and the help text.
 */
#include "design/design_cli.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- option values ---- */

int gf_design_cli_is_wav(const char *path)
{
    const size_t len = strlen(path);
    return len >= 4 && strcasecmp(path + len - 4, ".wav") == 0;
}

static const char *const band_options[] = {"lowpass", "highpass", "bandpass", "bandreject"};

int gf_design_cli_is_option(const char *name)
{
    static const char *const names[] = {"lowpass", "highpass",   "bandpass",    "bandreject",
                                        "eq",      "atten",      "transition",  "design-taps",
                                        "phase",   "design-out", "response-png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* A frequency in Hz: a number, or a number followed by k (x 1000). */
static int parse_hz(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && (*end == 'k' || *end == 'K')) {
        v *= 1000;
        end++;
    }
    *out = v;
    return end != s && *end == '\0' && errno != ERANGE && isfinite(v) ? 0 : -1;
}

/* F, or F1:F2 for a band. */
static int parse_band(const char *opt, const char *value, int two, double *f1, double *f2)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", value);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    if (two != (colon != NULL) || parse_hz(buf, f1) != 0 || (two && parse_hz(colon + 1, f2))) {
        gf_cli_error("--%s: '%s' is not %s", opt, value,
                     two ? "F1:F2, two frequencies in Hz (e.g. 300:3400 or 1k:2k)"
                         : "a frequency in Hz (e.g. 1000 or 1k)");
        return GF_EXIT_USAGE;
    }
    if (*f1 <= 0 || (two && *f2 <= 0)) {
        gf_cli_error("--%s %s: frequencies must be above 0 Hz", opt, value);
        return GF_EXIT_USAGE;
    }
    if (two && *f1 >= *f2) {
        gf_cli_error("--%s %s: the first frequency must be below the second", opt, value);
        return GF_EXIT_USAGE;
    }
    return GF_EXIT_OK;
}

/* A new section for a band option or --eq. */
static int add_section(gf_design_request *r, const char *name, const char *value)
{
    if (r->sections == GF_DESIGN_MAX_SECTIONS) {
        gf_cli_error("--%s: at most %d design options in one command", name,
                     GF_DESIGN_MAX_SECTIONS);
        return GF_EXIT_USAGE;
    }
    gf_design_section *st = &r->section[r->sections];
    memset(st, 0, sizeof *st);
    snprintf(st->label, sizeof st->label, "--%s %s", name, value);
    if (strcmp(name, "eq") == 0) {
        st->band = GF_BAND_EQ;
        st->eq_path = value;
    } else {
        int b = 0;
        while (strcmp(name, band_options[b]) != 0)
            b++;
        st->band = (gf_band)b;
        const int rc = parse_band(name, value, b >= GF_BAND_BANDPASS, &st->f1, &st->f2);
        if (rc)
            return rc;
    }
    r->sections++;
    return GF_EXIT_OK;
}

/* --atten, --transition, --design-taps: of the last section, or of all. */
static int set_setting(gf_design_request *r, const char *name, const char *value)
{
    gf_design_section *st = r->sections ? &r->section[r->sections - 1] : NULL;
    const char *of = st ? st->label : "every design";
    char *end = NULL;
    errno = 0;
    if (strcmp(name, "design-taps") == 0) {
        size_t *t = st ? &st->taps : &r->taps;
        const unsigned long long v = strtoull(value, &end, 10);
        if (*value == '-' || end == value || *end || errno == ERANGE || v < 1 ||
            v > GF_MAX_FFT_TAPS) {
            gf_cli_error("--design-taps: '%s' is not a whole number in 1..%zu", value,
                         GF_MAX_FFT_TAPS);
            return GF_EXIT_USAGE;
        }
        if (*t) {
            gf_cli_error("--design-taps given twice for %s", of);
            return GF_EXIT_USAGE;
        }
        *t = (size_t)v;
        return GF_EXIT_OK;
    }
    const int atten = strcmp(name, "atten") == 0;
    double *field = atten ? (st ? &st->atten : &r->atten) : (st ? &st->transition : &r->transition);
    double v;
    if (atten) {
        v = strtod(value, &end);
        if (end == value || *end || !(v >= GF_DESIGN_MIN_ATTEN && v <= GF_DESIGN_MAX_ATTEN)) {
            gf_cli_error("--atten: '%s' is not an attenuation from %g to %g dB", value,
                         GF_DESIGN_MIN_ATTEN, GF_DESIGN_MAX_ATTEN);
            return GF_EXIT_USAGE;
        }
    } else if (parse_hz(value, &v) != 0 || v <= 0) {
        gf_cli_error("--transition: '%s' is not a width in Hz above 0 (e.g. 100 or 1k)", value);
        return GF_EXIT_USAGE;
    }
    if (*field != 0) {
        gf_cli_error("--%s given twice for %s", name, of);
        return GF_EXIT_USAGE;
    }
    *field = v;
    return GF_EXIT_OK;
}

int gf_design_cli_option(gf_design_request *r, const char *name, const char *value)
{
    if (strcmp(name, "design-out") == 0 || strcmp(name, "response-png") == 0) {
        const char **field = name[0] == 'd' ? &r->design_out : &r->response_png;
        if (*field || !*value || strcmp(value, "-") == 0) {
            gf_cli_error(*field ? "--%s given twice" : "--%s needs a file name", name);
            return GF_EXIT_USAGE;
        }
        *field = value;
        return GF_EXIT_OK;
    }
    if (strcmp(name, "phase") == 0) {
        const int lin = strcmp(value, "linear") == 0, min = strcmp(value, "minimum") == 0;
        if (!lin && !min) {
            gf_cli_error("--phase: '%s' is not one of linear, minimum", value);
            return GF_EXIT_USAGE;
        }
        if (r->phase_given) {
            gf_cli_error("--phase given twice");
            return GF_EXIT_USAGE;
        }
        r->phase = min ? GF_PHASE_MINIMUM : GF_PHASE_LINEAR;
        r->phase_given = 1;
        return GF_EXIT_OK;
    }
    if (strcmp(name, "atten") == 0 || strcmp(name, "transition") == 0 ||
        strcmp(name, "design-taps") == 0)
        return set_setting(r, name, value);
    return add_section(r, name, value);
}

int gf_design_cli_any(const gf_design_request *r)
{
    return r->sections > 0 || r->design_out || r->response_png;
}

int gf_design_cli_check(const gf_design_request *r, int have_rate, const char *rate_hint)
{
    const int settings = r->atten != 0 || r->transition != 0 || r->taps != 0 || r->phase_given;
    if (settings && r->sections == 0) {
        gf_cli_error("--atten, --transition, --design-taps and --phase shape a design: give "
                     "--lowpass, --highpass, --bandpass, --bandreject or --eq too");
        return GF_EXIT_USAGE;
    }
    for (int i = 0; i < r->sections; i++) {
        const gf_design_section *st = &r->section[i];
        const double tw = st->transition ? st->transition : st->taps ? 0 : r->transition;
        const size_t taps = st->taps ? st->taps : st->transition ? 0 : r->taps;
        if (tw != 0 && taps != 0) {
            gf_cli_error("%s: give --transition or --design-taps, not both", st->label);
            return GF_EXIT_USAGE;
        }
    }
    const char *needs = r->sections       ? r->section[0].label
                        : r->response_png ? "--response-png"
                        : r->design_out && gf_design_cli_is_wav(r->design_out)
                            ? "--design-out (a WAV file)"
                            : NULL;
    if (needs && !have_rate) {
        gf_cli_error("%s needs the sample rate: %s", needs, rate_hint);
        return GF_EXIT_USAGE;
    }
    return GF_EXIT_OK;
}

/* ---- the --eq file ---- */

/* The numbers of one line, at most two, into v; *count gets how many
 * (three or more count as two). */
static int eq_line(const char *path, unsigned lineno, char *line, double v[2], int *count)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    *count = 0;
    if (line[strspn(line, " \t")] == '*')
        return GF_EXIT_OK; /* REW's comment lines */
    static const char sep[] = " \t\r\n,;";
    for (char *tok = line + strspn(line, sep); *tok && *count < 2; tok += strspn(tok, sep)) {
        char *end = tok + strcspn(tok, sep);
        const char saved = *end;
        *end = '\0';
        char *stop = NULL;
        errno = 0;
        v[*count] = strtod(tok, &stop);
        if (stop == tok || *stop || errno == ERANGE || !isfinite(v[*count])) {
            gf_cli_error("%s:%u: '%s' is not a number", path, lineno, tok);
            return GF_EXIT_USAGE;
        }
        ++*count;
        *end = saved;
        tok = end;
    }
    return GF_EXIT_OK;
}

/* One point, checked against the last (with its line for messages). */
static int eq_point(const char *path, unsigned lineno, const double v[2], int count, double *freq,
                    double *gain, size_t n)
{
    if (count < 2) {
        gf_cli_error("%s:%u: expected a frequency (Hz) and a gain (dB)", path, lineno);
        return GF_EXIT_USAGE;
    }
    if (v[0] < 0 || (n > 0 && !(v[0] > freq[n - 1]))) {
        if (v[0] < 0)
            gf_cli_error("%s:%u: frequency %g Hz is below 0", path, lineno, v[0]);
        else
            gf_cli_error("%s:%u: frequency %g Hz is not above the previous line's %g Hz: the "
                         "curve must be sorted by frequency, each frequency once",
                         path, lineno, v[0], freq[n - 1]);
        return GF_EXIT_USAGE;
    }
    if (!(v[1] >= GF_DESIGN_MIN_GAIN_DB && v[1] <= GF_DESIGN_MAX_GAIN_DB)) {
        gf_cli_error("%s:%u: gain %g dB is outside %g .. %g dB", path, lineno, v[1],
                     GF_DESIGN_MIN_GAIN_DB, GF_DESIGN_MAX_GAIN_DB);
        return GF_EXIT_USAGE;
    }
    freq[n] = v[0];
    gain[n] = v[1];
    return GF_EXIT_OK;
}

int gf_design_cli_read_eq(const char *path, double **freq, double **gain, size_t *n)
{
    *freq = *gain = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        gf_cli_error("cannot open EQ file '%s': %s", path, strerror(errno));
        return GF_EXIT_USAGE;
    }
    size_t cap = 0;
    char line[4096];
    unsigned lineno = 0;
    int rc = GF_EXIT_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        double v[2];
        int count = 0;
        if (!strchr(line, '\n') && !feof(f)) {
            gf_cli_error("%s:%u: line too long", path, lineno);
            rc = GF_EXIT_USAGE;
        } else if ((rc = eq_line(path, lineno, line, v, &count)) != 0 || count == 0) {
            continue;
        } else if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            double *nf = realloc(*freq, cap * sizeof *nf);
            double *ng = nf ? realloc(*gain, cap * sizeof *ng) : NULL;
            *freq = nf ? nf : *freq;
            *gain = ng ? ng : *gain;
            if (!nf || !ng) {
                gf_cli_error("out of memory");
                rc = GF_EXIT_INTERNAL;
            }
        }
        if (!rc && count > 0 && (rc = eq_point(path, lineno, v, count, *freq, *gain, *n)) == 0)
            ++*n;
    }
    if (!rc && ferror(f)) {
        gf_cli_error("cannot read EQ file '%s': %s", path, strerror(errno));
        rc = GF_EXIT_USAGE;
    }
    if (!rc && *n == 0) {
        gf_cli_error("EQ file '%s' holds no points (lines of \"frequency gain_dB\")", path);
        rc = GF_EXIT_USAGE;
    }
    fclose(f);
    if (rc) {
        free(*freq);
        free(*gain);
        *freq = *gain = NULL;
        *n = 0;
    }
    return rc;
}

void gf_design_cli_help(FILE *f)
{
    fprintf(f,
            "filter design (needs the sample rate: from IN, or --rate for --raw):\n"
            "      --lowpass F, --highpass F   cutoff in Hz (-6 dB point), e.g. 1000 or 1k\n"
            "      --bandpass F1:F2, --bandreject F1:F2   band edges in Hz (-6 dB points)\n"
            "      --eq FILE         a magnitude curve: \"frequency gain_dB\" lines, gain\n"
            "                        interpolated linearly against log frequency\n"
            "      --atten DB        stopband attenuation, %g..%g dB (default %g)\n"
            "      --transition HZ   transition width, centred on each cutoff (default %g x\n"
            "                        the distance to 0 Hz or Nyquist; for --eq the resolution,\n"
            "                        default %g x its lowest frequency)\n"
            "      --design-taps N   fix the length instead (the transition follows)\n"
            "                        --atten, --transition and --design-taps set the design\n"
            "                        option before them; given first, every one\n"
            "      --phase P         linear (default; delay (T-1)/2) or minimum (least\n"
            "                        delay; implies --mode causal)\n"
            "      --design-out FILE the taps in use: text (17 digits), or a WAV of doubles\n"
            "      --response-png FILE  magnitude, passband and group delay, bands marked\n"
            "                        Designs cascade with each other and with --taps,\n"
            "                        --coeffs or --ir, in order. Kaiser window; every\n"
            "                        design is measured and meets its attenuation.\n"
            "\n",
            GF_DESIGN_MIN_ATTEN, GF_DESIGN_MAX_ATTEN, GF_DESIGN_DEFAULT_ATTEN,
            GF_DESIGN_TRANSITION_FRACTION, GF_DESIGN_TRANSITION_FRACTION);
}
