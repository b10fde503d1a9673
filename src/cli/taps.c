/* The filter's taps: the mean filter, or a coefficient file (one number per
 * line, '#' comments, blank lines). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int coeffs_load(const char *path, double **taps, size_t *n, char *err, size_t err_size)
{
    *taps = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_size, "cannot open coefficient file '%s': %s", path, strerror(errno));
        return GF_EXIT_USAGE;
    }
    double *h = malloc(GF_MAX_TAPS * sizeof *h);
    char line[512];
    size_t count = 0;
    unsigned lineno = 0;
    int rc = GF_EXIT_USAGE;
    if (!h) {
        snprintf(err, err_size, "out of memory");
        rc = GF_EXIT_INTERNAL;
        goto fail;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, err_size, "%s:%u: line too long", path, lineno);
            goto fail;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line + strspn(line, " \t\r\n");
        if (*s == '\0')
            continue;
        char *end = s + strcspn(s, " \t\r\n");
        char *rest = end + strspn(end, " \t\r\n");
        *end = '\0';
        if (*rest != '\0') {
            snprintf(err, err_size, "%s:%u: expected one number per line, found '%s' then more",
                     path, lineno, s);
            goto fail;
        }
        char *num_end = NULL;
        errno = 0;
        double v = strtod(s, &num_end);
        if (num_end == s || *num_end != '\0') {
            snprintf(err, err_size, "%s:%u: '%s' is not a number", path, lineno, s);
            goto fail;
        }
        if (!isfinite(v) || errno == ERANGE) {
            snprintf(err, err_size, "%s:%u: '%s' is not a finite number", path, lineno, s);
            goto fail;
        }
        if (count == GF_MAX_TAPS) {
            snprintf(err, err_size, "%s: more than %d coefficients", path, GF_MAX_TAPS);
            goto fail;
        }
        h[count++] = v;
    }
    if (ferror(f)) {
        snprintf(err, err_size, "cannot read coefficient file '%s': %s", path, strerror(errno));
        goto fail;
    }
    if (count == 0) {
        snprintf(err, err_size, "coefficient file '%s' holds no coefficients", path);
        goto fail;
    }
    fclose(f);
    *taps = h;
    *n = count;
    return GF_EXIT_OK;
fail:
    free(h);
    fclose(f);
    return rc;
}

int gf_taps_load(const gf_cli_options *o, gf_taps *t)
{
    t->h = NULL;
    t->n = o->taps;
    if (!o->coeffs)
        return GF_EXIT_OK;
    char err[512];
    const int rc = coeffs_load(o->coeffs, &t->h, &t->n, err, sizeof err);
    if (rc)
        gf_cli_error("%s", err);
    return rc;
}

void gf_taps_free(gf_taps *t)
{
    free(t->h);
    t->h = NULL;
}
