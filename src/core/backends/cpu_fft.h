/*
 * The CPU backend's FFT method: uniformly partitioned overlap-save with a
 * frequency-domain delay line (gpufilt.h states the method and its
 * exactness contract).
 *
 * State per channel: the last P input frames (the first half of the next
 * window) and a ring of the spectra of the last K - 1 + M blocks (M blocks
 * per chunk at most); the filter's spectra H_k (one set, or one per
 * channel), computed once at create in double precision where the FFT
 * library has it, scaled by 1/(2P) and rounded to the precision.
 *
 * A chunk of m blocks (m <= M) is done in two passes, each a set of units a
 * thread pool shares out:
 *   forward  (unit u: channel u / m, block u % m) window [previous P |
 *            this block's P] of one channel, to the ring slot of its block;
 *   output   (unit u: channel u / ceil(m/2), blocks 2 (u % ceil(m/2)) and
 *            the next, if any) per block Y = sum_{k=0..K-1} H_k X_{j-k} in
 *            that order (AVX where the CPU has it, the same operations),
 *            inverse transform, second half to the chunk's output
 *            (interleaved).
 * then gf_cpu_fft_end moves the history on. Every block's arithmetic is the
 * same whatever the chunk, the pairing or the thread count, so output bytes
 * depend only on the input, the taps, P and the FFT library.
 */
#ifndef GF_CPU_FFT_H
#define GF_CPU_FFT_H

#include "backend.h"

typedef struct gf_cpu_fft gf_cpu_fft;

/* For params p (method FFT) and `threads` threads that may run units at
 * once (each with its own plans and scratch). GF_ERR_UNSUPPORTED when the
 * FFT library lacks the precision, GF_ERR_NO_MEMORY (detail says how much
 * was needed). */
gf_status gf_cpu_fft_create(const gf_backend_params *p, int threads, gf_cpu_fft **out, char *detail,
                            size_t detail_size);
void gf_cpu_fft_destroy(gf_cpu_fft *f);

/* Zero history: the stream starts again. */
void gf_cpu_fft_reset(gf_cpu_fft *f);

/* Units of the forward pass for chunk c: one per block and channel. */
size_t gf_cpu_fft_units(const gf_cpu_fft *f, const gf_chunk *c);

/* Units of the output pass: one per pair of neighbouring blocks of a
 * channel (the last alone when the chunk's count is odd), whose
 * multiply-accumulate loads each filter spectrum once for both. */
size_t gf_cpu_fft_output_units(const gf_cpu_fft *f, const gf_chunk *c);

/* The forward pass's units [u0, u1) of chunk c on thread `thread`. */
void gf_cpu_fft_forward(gf_cpu_fft *f, const gf_chunk *c, size_t u0, size_t u1, int thread);

/* The output pass's units [u0, u1), after every forward unit is done. */
void gf_cpu_fft_output(gf_cpu_fft *f, const gf_chunk *c, size_t u0, size_t u1, int thread);

/* After both passes: the chunk becomes history. */
void gf_cpu_fft_end(gf_cpu_fft *f, const gf_chunk *c);

/* Its partition P and taps T. */
size_t gf_cpu_fft_partition(const gf_cpu_fft *f);
size_t gf_cpu_fft_taps(const gf_cpu_fft *f);

#endif /* GF_CPU_FFT_H */
