/*
 * Real FFTs for the CPU backend's FFT method, over whichever library the
 * build chose (CMake's GPUFILT_FFT): FFTW3 (fft_fftw.c, float and double,
 * GPL) or KissFFT (fft_kiss.c, float only, BSD).
 *
 * A gf_fft transforms n real samples (n even) to n/2 + 1 complex values,
 * interleaved (re, im), and back, unnormalised (forward then inverse
 * multiplies by n). Plans are made at create without timing
 * (FFTW_ESTIMATE), so a given build computes the same bytes every run --
 * unless wisdom was loaded (gf_fft_wisdom_load, gpufilt.h): then a size it
 * holds gets the plan it records, the same for the same wisdom.
 * Buffers passed to forward/inverse must come from gf_fft_alloc (the
 * alignment the plan was made for) and not overlap.
 *
 * Thread safety: one gf_fft is used by one thread at a time (KissFFT keeps
 * scratch in its plan); make one per thread. Creating and destroying may
 * happen from any thread (FFTW's planner is serialised here).
 */
#ifndef GF_FFT_H
#define GF_FFT_H

#include "gpufilt.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gf_fft gf_fft;

/* Non-zero when this build can transform in precision p. */
int gf_fft_available(gf_precision p);

/* The FFT library, e.g. "FFTW 3.3.10" or "KissFFT". */
const char *gf_fft_library(void);

/* A plan for n points (even, >= 2) in precision p; NULL when out of memory
 * or when the precision is not available. */
gf_fft *gf_fft_create(size_t n, gf_precision p);
void gf_fft_destroy(gf_fft *f);

/* in: n reals; out: n/2 + 1 complex (2 n/2 + 2 reals). in is not changed. */
void gf_fft_forward(gf_fft *f, const void *in, void *out);
/* in: n/2 + 1 complex; out: n reals. in may be overwritten. */
void gf_fft_inverse(gf_fft *f, void *in, void *out);

/* Memory aligned for the transforms (NULL on failure); gf_fft_free(NULL)
 * is a no-op. */
void *gf_fft_alloc(size_t bytes);
void gf_fft_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* GF_FFT_H */
