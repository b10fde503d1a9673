/*
 * Double-precision real FFTs for filter design (design*.c): frequency
 * sampling, minimum phase, cascades and measured responses. Design runs
 * once per filter, so this is a plain radix-2 transform of our own rather
 * than the CPU backend's FFT library (fft/fft.h), which may be float-only
 * (KissFFT) or absent: every build designs the same taps.
 *
 * A gf_rfft of n points (a power of two, 4 .. 2^30) transforms n reals to
 * the n/2 + 1 complex values X[k] = sum_j x[j] e^(-2 pi i jk/n), stored as
 * interleaved (re, im) doubles, and back; the inverse includes the 1/n, so
 * inverse(forward(x)) == x up to rounding (numpy.fft.rfft / irfft). It is
 * computed as a complex FFT of n/2 points plus a split step, with every
 * twiddle factor taken from cos/sin directly (no recurrences): the error
 * grows as eps log2(n).
 *
 * Thread safety: a plan is read-only after create; one may be shared.
 */
#ifndef GF_DESIGN_FFT_H
#define GF_DESIGN_FFT_H

#include <stddef.h>

/* pi to double precision (strict C11 has no M_PI). */
#define GF_PI 3.14159265358979323846

typedef struct gf_rfft gf_rfft;

/* A plan for n points; NULL when n is not a power of two in 4 .. 2^30 or
 * when out of memory. Memory: about n doubles of twiddles. */
gf_rfft *gf_rfft_create(size_t n);
void gf_rfft_destroy(gf_rfft *f);
size_t gf_rfft_size(const gf_rfft *f);

/* in: n reals; out: n/2 + 1 complex (n + 2 doubles). in may equal out
 * (then it must hold n + 2 doubles). */
void gf_rfft_forward(const gf_rfft *f, const double *in, double *out);
/* in: n/2 + 1 complex, taken as the half of a Hermitian spectrum (the
 * imaginary parts of bins 0 and n/2 are ignored); out: n reals. in may
 * equal out. */
void gf_rfft_inverse(const gf_rfft *f, const double *in, double *out);

/* The smallest power of two >= n (and >= 4); 0 when above 2^30. */
size_t gf_pow2_at_least(size_t n);

#endif /* GF_DESIGN_FFT_H */
