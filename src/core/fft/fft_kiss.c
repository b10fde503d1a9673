/* gf_fft over KissFFT (fft.h): float only. */
#include "fft.h"

#include <kiss_fftr.h>

#include <stdio.h>
#include <stdlib.h>

struct gf_fft {
    kiss_fftr_cfg fwd, inv;
};

int gf_fft_available(gf_precision p)
{
    return p == GF_PRECISION_F32;
}

const char *gf_fft_library(void)
{
    return "KissFFT";
}

void *gf_fft_alloc(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
}

void gf_fft_free(void *p)
{
    free(p);
}

gf_fft *gf_fft_create(size_t n, gf_precision p)
{
    if (p != GF_PRECISION_F32)
        return NULL;
    gf_fft *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fwd = kiss_fftr_alloc((int)n, 0, NULL, NULL);
    f->inv = kiss_fftr_alloc((int)n, 1, NULL, NULL);
    if (!f->fwd || !f->inv) {
        gf_fft_destroy(f);
        return NULL;
    }
    return f;
}

void gf_fft_destroy(gf_fft *f)
{
    if (!f)
        return;
    kiss_fftr_free(f->fwd);
    kiss_fftr_free(f->inv);
    free(f);
}

void gf_fft_forward(gf_fft *f, const void *in, void *out)
{
    kiss_fftr(f->fwd, in, out);
}

void gf_fft_inverse(gf_fft *f, void *in, void *out)
{
    kiss_fftri(f->inv, in, out);
}

/* FFTW's wisdom (gpufilt.h): KissFFT has no plans to choose. */
gf_status gf_fft_wisdom_make(const char *path, const size_t *sizes, size_t count, char *detail,
                             size_t detail_len)
{
    (void)path;
    (void)sizes;
    (void)count;
    if (detail && detail_len)
        snprintf(detail, detail_len, "this build's FFT is KissFFT: no FFTW wisdom");
    return GF_ERR_UNSUPPORTED;
}

gf_status gf_fft_wisdom_load(const char *path, char *detail, size_t detail_len)
{
    return gf_fft_wisdom_make(path, NULL, 0, detail, detail_len);
}
