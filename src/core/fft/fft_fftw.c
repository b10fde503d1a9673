/* gf_fft over FFTW3 (fft.h): float and double, plans by FFTW_ESTIMATE. */
#include "fft.h"

#include <fftw3.h>

#include <pthread.h>
#include <stdlib.h>

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
