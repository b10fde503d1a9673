/*
 * The filter's taps: the mean filter of --taps N, a coefficient file
 * (--coeffs: one column for every channel, or one column per channel), or an
 * impulse response read from any audio file libsndfile reads (--ir: one
 * channel for every channel, one per channel, or a matrix of inputs x
 * outputs).
 */
#include "cli.h"
#include "io/sndfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A growing array of doubles. */
typedef struct dvec {
    double *v;
    size_t n, cap;
} dvec;

static int dvec_push(dvec *d, double x)
{
    if (d->n == d->cap) {
        const size_t cap = d->cap ? 2 * d->cap : 4096;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return -1;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
    return 0;
}

/* One number of a coefficient file: any finite double (a number too small
 * for a double rounds to a subnormal or zero, as strtod gives it), within
 * f32's range when the arithmetic is f32. */
static int parse_number(const char *path, unsigned lineno, const char *s, gf_precision p, double *v,
                        char *err, size_t n)
{
    char *end = NULL;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || *end != '\0') {
        snprintf(err, n, "%s:%u: '%s' is not a number", path, lineno, s);
        return GF_EXIT_USAGE;
    }
    if (!isfinite(*v)) {
        snprintf(err, n, "%s:%u: '%s' is not a finite number", path, lineno, s);
        return GF_EXIT_USAGE;
    }
    if (p == GF_PRECISION_F32 && isinf((float)*v)) {
        snprintf(err, n,
                 "%s:%u: '%s' is beyond the range of f32 arithmetic (%.3g at most): use "
                 "--precision f64",
                 path, lineno, s, (double)FLT_MAX);
        return GF_EXIT_USAGE;
    }
    return GF_EXIT_OK;
}

/* The numbers of one line (comment and blanks dropped) onto d; *cols
 * receives how many. */
static int parse_line(const char *path, unsigned lineno, char *line, gf_precision p, dvec *d,
                      size_t *cols, char *err, size_t n)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    *cols = 0;
    for (char *s = line + strspn(line, " \t\r\n"); *s; s += strspn(s, " \t\r\n")) {
        char *end = s + strcspn(s, " \t\r\n");
        const char saved = *end;
        *end = '\0';
        double v;
        int rc = parse_number(path, lineno, s, p, &v, err, n);
        if (rc)
            return rc;
        if (dvec_push(d, v) != 0) {
            snprintf(err, n, "out of memory");
            return GF_EXIT_INTERNAL;
        }
        ++*cols;
        *end = saved;
        s = end;
    }
    return GF_EXIT_OK;
}

/* Rows of `cols` numbers into a filter-major array: t->h[c * n + k]. */
static int transpose(const dvec *rows, size_t cols, gf_taps *t)
{
    t->n = rows->n / cols;
    t->filters = (int)cols;
    t->h = malloc(rows->n * sizeof(double));
    if (!t->h)
        return -1;
    for (size_t k = 0; k < t->n; k++)
        for (size_t c = 0; c < cols; c++)
            t->h[c * t->n + k] = rows->v[k * cols + c];
    return 0;
}

/* Lines longer than this are not a coefficient file's (1024 columns of
 * 17-digit numbers take 25 KiB). */
#define MAX_LINE ((size_t)1 << 20)

/* One line of f into *line (getline's buffer): 1, 0 at the end, or an
 * exit code (as a negative number) with err set. */
static int next_line(FILE *f, const char *path, unsigned lineno, char **line, size_t *cap,
                     char *err, size_t n)
{
    errno = 0;
    const ssize_t len = getline(line, cap, f);
    if (len < 0) {
        if (ferror(f)) {
            snprintf(err, n, "cannot read coefficient file '%s': %s", path,
                     strerror(errno ? errno : EIO));
            return -GF_EXIT_USAGE;
        }
        return 0;
    }
    if (strlen(*line) != (size_t)len) {
        snprintf(err, n, "%s:%u: a NUL byte: '%s' is not a text file of numbers", path, lineno,
                 path);
        return -GF_EXIT_USAGE;
    }
    if ((size_t)len > MAX_LINE) {
        snprintf(err, n, "%s:%u: a line longer than 1 MiB: '%s' is not a text file of numbers",
                 path, lineno, path);
        return -GF_EXIT_USAGE;
    }
    /* A byte-order mark, as some editors write, is not part of the text. */
    if (lineno == 1 && strncmp(*line, "\xEF\xBB\xBF", 3) == 0)
        memmove(*line, *line + 3, (size_t)len - 2);
    return 1;
}

/* Every line's numbers into rows; *cols receives the columns. */
static int read_rows(FILE *f, const char *path, gf_precision p, dvec *rows, size_t *cols, char *err,
                     size_t n)
{
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0, first = 0;
    int rc = GF_EXIT_OK, more;
    while (!rc && (more = next_line(f, path, ++lineno, &line, &cap, err, n)) != 0) {
        size_t k = 0;
        if (more < 0)
            rc = -more;
        else if ((rc = parse_line(path, lineno, line, p, rows, &k, err, n)) != 0 || k == 0)
            continue;
        else if (*cols && k != *cols) {
            snprintf(err, n, "%s:%u: %zu column%s, but line %u has %zu", path, lineno, k,
                     k == 1 ? "" : "s", first, *cols);
            rc = GF_EXIT_USAGE;
        } else if (rows->n / k > GF_MAX_FFT_TAPS) {
            snprintf(err, n, "%s: more than %zu coefficients", path, GF_MAX_FFT_TAPS);
            rc = GF_EXIT_USAGE;
        } else if (!*cols) {
            *cols = k;
            first = lineno;
        }
    }
    free(line);
    return rc;
}

int gf_coeffs_parse(FILE *f, const char *path, gf_precision p, gf_taps *t, char *err, size_t n)
{
    dvec rows = {0};
    size_t cols = 0;
    int rc = read_rows(f, path, p, &rows, &cols, err, n);
    if (!rc && rows.n == 0) {
        snprintf(err, n, "coefficient file '%s' holds no coefficients", path);
        rc = GF_EXIT_USAGE;
    }
    if (!rc && transpose(&rows, cols, t) != 0) {
        snprintf(err, n, "out of memory");
        rc = GF_EXIT_INTERNAL;
    }
    free(rows.v);
    return rc;
}

static int coeffs_load(const char *path, gf_precision p, gf_taps *t, char *err, size_t n)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, n, "coefficient file '%s' is a directory", path);
        return GF_EXIT_USAGE;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, n, "cannot open coefficient file '%s': %s", path, strerror(errno));
        return GF_EXIT_USAGE;
    }
    const int rc = gf_coeffs_parse(f, path, p, t, err, n);
    fclose(f);
    return rc;
}

int gf_ir_load(const char *path, gf_precision p, gf_taps *t, char *err, size_t n)
{
    char why[256];
    SF_INFO info;
    memset(&info, 0, sizeof info);
    struct stat st;
    int fd = -1;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, n, "impulse response '%s' is a directory", path);
        return GF_EXIT_USAGE;
    }
    if ((fd = open(path, O_RDONLY)) < 0) {
        snprintf(err, n, "cannot open impulse response '%s': %s", path, strerror(errno));
        return GF_EXIT_USAGE;
    }
    if (gf_header_probe(fd, NULL, 0, why, sizeof why)) {
        snprintf(err, n, "impulse response '%s': %s", path, why);
        close(fd);
        return GF_EXIT_USAGE;
    }
    SNDFILE *sf = sf_open_fd(fd, SFM_READ, &info, 1);
    if (!sf) {
        snprintf(err, n, "impulse response '%s' is not an audio file libsndfile can read (%s)",
                 path, gf_sf_why(NULL, why, sizeof why));
        return GF_EXIT_USAGE;
    }
    int rc = GF_EXIT_OK;
    const size_t C = (size_t)info.channels;
    double *frames = NULL;
    if (info.frames <= 0) {
        snprintf(err, n, "impulse response '%s' holds no frames", path);
        rc = GF_EXIT_USAGE;
    } else if ((uint64_t)info.frames > GF_MAX_FFT_TAPS) {
        snprintf(err, n, "impulse response '%s' has %lld frames: at most %zu taps are supported",
                 path, (long long)info.frames, GF_MAX_FFT_TAPS);
        rc = GF_EXIT_USAGE;
    } else if (!(frames = malloc((size_t)info.frames * C * sizeof(double))) ||
               !(t->h = malloc((size_t)info.frames * C * sizeof(double)))) {
        snprintf(err, n, "out of memory");
        rc = GF_EXIT_INTERNAL;
    } else if (sf_readf_double(sf, frames, info.frames) != info.frames) {
        snprintf(err, n, "reading impulse response '%s': %s", path, gf_sf_why(sf, why, sizeof why));
        rc = GF_EXIT_USAGE;
    }
    for (size_t i = 0; !rc && i < (size_t)info.frames * C; i++) {
        /* Not finite first: an infinite sample is beyond f32's range too,
         * but no precision holds it. */
        const int finite = isfinite(frames[i]) != 0;
        if (!finite || (p == GF_PRECISION_F32 && isinf((float)frames[i]))) {
            snprintf(err, n, "impulse response '%s': sample %zu of channel %zu %s", path, i / C + 1,
                     i % C + 1,
                     finite ? "is beyond the range of f32 arithmetic: use --precision f64"
                            : "is not finite");
            rc = GF_EXIT_USAGE;
            break;
        }
        t->h[(i % C) * (size_t)info.frames + i / C] = frames[i];
    }
    sf_close(sf);
    free(frames);
    if (rc)
        return rc;
    t->n = (size_t)info.frames;
    t->filters = (int)C;
    t->rate = info.samplerate;
    return GF_EXIT_OK;
}

int gf_taps_load(const gf_cli_options *o, gf_taps *t)
{
    memset(t, 0, sizeof *t);
    t->n = o->taps;
    t->filters = 1;
    t->source = o->coeffs ? o->coeffs : o->ir;
    if (!t->source)
        return GF_EXIT_OK;
    char err[512];
    const int rc = o->coeffs ? coeffs_load(o->coeffs, o->precision, t, err, sizeof err)
                             : gf_ir_load(o->ir, o->precision, t, err, sizeof err);
    if (rc) {
        gf_taps_free(t);
        gf_cli_error("%s", err);
    }
    return rc;
}

int gf_taps_fit(gf_taps *t, int channels, int rate, const gf_cli_options *o)
{
    /* One filter for every channel, one per channel, or a matrix: C x O
     * filters (O >= 2), filter i*O + o from input i into output o. */
    t->outputs = 0;
    if (t->filters != 1 && t->filters != channels) {
        const char *what = t->rate ? "impulse response" : "coefficient file";
        if (channels < 1 || t->filters % channels != 0) {
            gf_cli_error("%s '%s' has %d %s; the input has %d channel%s (give one for every "
                         "channel, one per channel, or a matrix of %d x OUTPUTS: %s i*OUTPUTS+o "
                         "filters input i into output o)",
                         what, t->source, t->filters, t->rate ? "channels" : "columns", channels,
                         channels == 1 ? "" : "s", channels, t->rate ? "channel" : "column");
            return GF_EXIT_USAGE;
        }
        t->outputs = t->filters / channels;
        if (o->action == GF_ACTION_LIVE) {
            gf_cli_error("%s '%s' is a %d x %d matrix: --live filters each channel into itself "
                         "(give one filter for every channel, or one per channel)",
                         what, t->source, channels, t->outputs);
            return GF_EXIT_USAGE;
        }
    }
    if (!t->rate || !rate || t->rate == rate)
        return GF_EXIT_OK;
    if (o->ir_strict) {
        gf_cli_error("impulse response '%s' is at %d Hz, the input at %d Hz (--ir-rate strict: "
                     "leave it out to resample the response)",
                     t->source, t->rate, rate);
        return GF_EXIT_USAGE;
    }
    char err[512];
    const int from = t->rate;
    const size_t taps = t->n;
    const int rc = gf_taps_resample(t, rate, o->precision, err, sizeof err);
    if (rc)
        gf_cli_error("%s", err);
    else if (!o->quiet)
        gf_cli_say("impulse response '%s' resampled from %d Hz to %d Hz (%zu taps -> %zu taps)",
                   t->source, from, rate, taps, t->n);
    return rc;
}

void gf_taps_free(gf_taps *t)
{
    free(t->h);
    t->h = NULL;
}
