/* gf_fft over FFTW3 (fft.h): float and double, plans by FFTW_ESTIMATE,
 * or from wisdom loaded with gf_fft_wisdom_load (gpufilt.h). */
#include "fft.h"

#include <fftw3.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FFTW's planner is not thread-safe; execution with new arrays is. */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER;

struct gf_fft {
    gf_precision p;
    fftw_plan fwd, inv;
    fftwf_plan fwdf, invf;
};

int gf_fft_available(gf_precision p)
{
    (void)p;
    return 1;
}

const char *gf_fft_library(void)
{
    return "FFTW 3";
}

void *gf_fft_alloc(size_t bytes)
{
    return fftw_malloc(bytes ? bytes : 1);
}

void gf_fft_free(void *p)
{
    if (p)
        fftw_free(p);
}

/* Plans are made on scratch arrays of the same alignment as every array
 * later given (gf_fft_alloc), then executed with the new-array interface. */
gf_fft *gf_fft_create(size_t n, gf_precision p)
{
    gf_fft *f = calloc(1, sizeof *f);
    void *a = gf_fft_alloc(n * sizeof(double) + 16), *b = gf_fft_alloc((n + 2) * sizeof(double));
    if (!f || !a || !b)
        goto fail;
    f->p = p;
    const int ni = (int)n;
    pthread_mutex_lock(&planner);
    if (p == GF_PRECISION_F32) {
        f->fwdf = fftwf_plan_dft_r2c_1d(ni, a, b, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
        f->invf = fftwf_plan_dft_c2r_1d(ni, b, a, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    } else {
        f->fwd = fftw_plan_dft_r2c_1d(ni, a, b, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
        f->inv = fftw_plan_dft_c2r_1d(ni, b, a, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    }
    pthread_mutex_unlock(&planner);
    gf_fft_free(a);
    gf_fft_free(b);
    if (p == GF_PRECISION_F32 ? (!f->fwdf || !f->invf) : (!f->fwd || !f->inv)) {
        gf_fft_destroy(f);
        return NULL;
    }
    return f;
fail:
    gf_fft_free(a);
    gf_fft_free(b);
    free(f);
    return NULL;
}

void gf_fft_destroy(gf_fft *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&planner);
    if (f->fwdf)
        fftwf_destroy_plan(f->fwdf);
    if (f->invf)
        fftwf_destroy_plan(f->invf);
    if (f->fwd)
        fftw_destroy_plan(f->fwd);
    if (f->inv)
        fftw_destroy_plan(f->inv);
    pthread_mutex_unlock(&planner);
    free(f);
}

void gf_fft_forward(gf_fft *f, const void *in, void *out)
{
    if (f->p == GF_PRECISION_F32)
        fftwf_execute_dft_r2c(f->fwdf, (float *)in, out);
    else
        fftw_execute_dft_r2c(f->fwd, (double *)in, out);
}

void gf_fft_inverse(gf_fft *f, void *in, void *out)
{
    if (f->p == GF_PRECISION_F32)
        fftwf_execute_dft_c2r(f->invf, in, out);
    else
        fftw_execute_dft_c2r(f->inv, in, out);
}

/* ---- wisdom (gpufilt.h) ---- */

/* The largest transform gf_fft_wisdom_make measures. */
#define WISDOM_MAX_SIZE ((size_t)1 << 24)

__attribute__((format(printf, 3, 4))) static gf_status wisdom_fail(char *detail, size_t n,
                                                                   const char *fmt, ...)
{
    if (detail && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, n, fmt, ap);
        va_end(ap);
    }
    return GF_ERR_INVALID_ARGUMENT;
}

/* Plans of n points in both precisions, as gf_fft_create makes them, at
 * FFTW_MEASURE: they stay in FFTW's wisdom. Under the planner lock. */
static int measure(size_t n)
{
    void *a = gf_fft_alloc(n * sizeof(double) + 16), *b = gf_fft_alloc((n + 2) * sizeof(double));
    const int ni = (int)n;
    int ok = a && b;
    if (ok) {
        fftwf_plan pf[2] = {fftwf_plan_dft_r2c_1d(ni, a, b, FFTW_MEASURE | FFTW_PRESERVE_INPUT),
                            fftwf_plan_dft_c2r_1d(ni, b, a, FFTW_MEASURE | FFTW_DESTROY_INPUT)};
        fftw_plan pd[2] = {fftw_plan_dft_r2c_1d(ni, a, b, FFTW_MEASURE | FFTW_PRESERVE_INPUT),
                           fftw_plan_dft_c2r_1d(ni, b, a, FFTW_MEASURE | FFTW_DESTROY_INPUT)};
        for (int i = 0; i < 2; i++) {
            ok = ok && pf[i] && pd[i];
            if (pf[i])
                fftwf_destroy_plan(pf[i]);
            if (pd[i])
                fftw_destroy_plan(pd[i]);
        }
    }
    gf_fft_free(a);
    gf_fft_free(b);
    return ok;
}

gf_status gf_fft_wisdom_make(const char *path, const size_t *sizes, size_t count, char *detail,
                             size_t detail_len)
{
    if (detail && detail_len)
        detail[0] = '\0';
    if (!path || (!sizes && count))
        return wisdom_fail(detail, detail_len, "path and sizes are required");
    for (size_t i = 0; i < count; i++)
        if (sizes[i] < 2 || sizes[i] % 2 || sizes[i] > WISDOM_MAX_SIZE) {
            return wisdom_fail(detail, detail_len, "transform size %zu is not even in 2..%zu",
                               sizes[i], WISDOM_MAX_SIZE);
        }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return wisdom_fail(detail, detail_len, "'%s': the path is too long", path);
    pthread_mutex_lock(&planner);
    int ok = 1;
    for (size_t i = 0; ok && i < count; i++)
        ok = measure(sizes[i]);
    char *d = ok ? fftw_export_wisdom_to_string() : NULL;
    char *f = ok ? fftwf_export_wisdom_to_string() : NULL;
    pthread_mutex_unlock(&planner);
    gf_status st = GF_OK;
    FILE *out = NULL;
    if (!d || !f)
        st = GF_ERR_NO_MEMORY;
    else if (!(out = fopen(tmp, "w")))
        st = wisdom_fail(detail, detail_len, "cannot write '%s': %s", tmp, strerror(errno));
    else {
        const int wrote = fputs(d, out) >= 0 && fputs(f, out) >= 0;
        const int closed = fclose(out) == 0;
        if (!wrote || !closed || rename(tmp, path) != 0) {
            st = wisdom_fail(detail, detail_len, "cannot write '%s': %s", path, strerror(errno));
            remove(tmp);
        }
    }
    free(d);
    free(f);
    return st;
}

gf_status gf_fft_wisdom_load(const char *path, char *detail, size_t detail_len)
{
    if (detail && detail_len)
        detail[0] = '\0';
    if (!path)
        return wisdom_fail(detail, detail_len, "a path is required");
    FILE *in = fopen(path, "r");
    if (!in)
        return wisdom_fail(detail, detail_len, "cannot read '%s': %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = 2 * cap + 8192);
            if (!t) {
                free(text);
                fclose(in);
                return GF_ERR_NO_MEMORY;
            }
            text = t;
        }
        const size_t got = fread(text + len, 1, 4096, in);
        len += got;
        if (got < 4096)
            break;
    }
    const int read_error = ferror(in);
    fclose(in);
    if (read_error) {
        free(text);
        return wisdom_fail(detail, detail_len, "cannot read '%s': read error", path);
    }
    text[len] = '\0';
    /* Two s-expressions, as gf_fft_wisdom_make writes them: double's
     * "(fftw-3.x fftw_wisdom ...)", then float's "(fftw-3.x fftwf_wisdom ...)". */
    char *fl = strstr(text, " fftwf_wisdom");
    while (fl && fl > text && *fl != '(')
        fl--;
    const char *dbl = strstr(text, " fftw_wisdom");
    int ok = fl && dbl && dbl < fl;
    if (ok) {
        char *fs = strdup(fl);
        *fl = '\0';
        pthread_mutex_lock(&planner);
        ok = fs && fftw_import_wisdom_from_string(text) && fftwf_import_wisdom_from_string(fs);
        pthread_mutex_unlock(&planner);
        free(fs);
    }
    free(text);
    if (!ok) {
        return wisdom_fail(detail, detail_len, "'%s' is not wisdom that this FFTW (%s) reads", path,
                           fftw_version);
    }
    return GF_OK;
}
