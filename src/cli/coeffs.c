/* Coefficient files: one number per line, '#' comments, blank lines. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gf_coeffs_load(const char *path, double **taps, size_t *n, char *err, size_t err_size)
{
    *taps = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_size, "cannot open coefficient file '%s': %s", path, strerror(errno));
        return -1;
    }
    double *h = malloc(GF_MAX_TAPS * sizeof *h);
    char line[512];
    size_t count = 0;
    unsigned lineno = 0;
    if (!h) {
        snprintf(err, err_size, "out of memory");
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
    return 0;
fail:
    free(h);
    fclose(f);
    return -1;
}
