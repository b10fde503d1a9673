/*
 * The FFT method's fused transforms (f32), where the build has cuFFTDx
 * (NVIDIA MathDx: device FFTs a thread block computes in registers and
 * shared memory): one kernel reads each window straight from the chunk's
 * interleaved frames and writes its spectrum (fft_planar + cuFFT's R2C in
 * one pass), one reads each output spectrum and writes the second half of
 * its inverse transform into the interleaved output (cuFFT's C2R +
 * fft_emit). The spectra between them, the delay line and the
 * multiply-accumulate are fft_conv's, unchanged (fft_kernels.cuh's
 * layouts). A window's transform is one block's, whatever the chunk or
 * launch: the output bytes do not depend on the chunking.
 *
 * Sizes N = 2P from GF_DX_MIN_N to GF_DX_MAX_N where cuFFTDx has them for
 * the architecture the build names (GF_DX_SM) and the device has the
 * shared memory they take; elsewhere, and in builds without cuFFTDx,
 * fft_conv uses cuFFT's transforms. C++ for fft_conv.cu.
 */
#ifndef GF_FFT_DX_H
#define GF_FFT_DX_H

#include "gpufilt.h"

#include <cuda_runtime.h>

#include <stddef.h>

namespace gf
{

enum { GF_DX_MIN_N = 1024, GF_DX_MAX_N = 65536 };

/* fft_planar's and the R2C's work for the chunk's m blocks of C channels:
 * window (c, b) is channel c's frames (b - 1) P .. (b + 1) P of `in`
 * (frames x C), its first block from tail_in (c P) where b = 0; its
 * spectrum to spec at (c W + b) sstride; tail_out (c P) receives each
 * channel's last block. */
struct dx_forward_args {
    const float *in;
    long long m;
    int C;
    long long W;
    const float *tail_in;
    float *tail_out;
    float2 *spec;
    long long sstride;
};

/* The C2R's and fft_emit's work: the spectrum of (c, b) at (c W + b)
 * sstride of Y, transformed back; its second half is chunk frames b P ..
 * (b + 1) P of channel c, written from frame `skip` on to out (frames x
 * O, frame skip first). */
struct dx_inverse_args {
    const float2 *Y;
    long long m;
    int O;
    long long W;
    long long sstride;
    long long skip;
    float *out;
};

/* Where the fused kernels read and write for window (c, b) with blocks of
 * P frames (a kernel numbers its windows w = b C + c, channel fastest, and
 * divides once); the host test (test_fft_kernel.cpp) checks these against
 * fft_planar's and fft_emit's layouts. */

/* Window (c, b)'s reals 2j and 2j + 1 (j < P) into v: chunk frames
 * (b - 1) P + 2j + h, the channel's last block before the chunk where
 * that is negative; the chunk's last block's also into tail_out. */
__host__ __device__ inline void dx_window_pair(const dx_forward_args &a, long long P, long long b,
                                               int c, unsigned j, float v[2])
{
    for (int h = 0; h < 2; h++) {
        const long long f = b * P + 2 * (long long)j + h - P; /* the chunk's frame */
        v[h] = f < 0 ? a.tail_in[c * P + f + P] : a.in[f * a.C + c];
        if (b == a.m - 1 && f >= b * P)
            a.tail_out[c * P + f - b * P] = v[h];
    }
}

/* Window (c, b)'s spectrum, and its output spectrum. */
__host__ __device__ inline float2 *dx_spectrum(const dx_forward_args &a, long long b, int c)
{
    return a.spec + (c * a.W + b) * a.sstride;
}
__host__ __device__ inline const float2 *dx_product(const dx_inverse_args &a, long long b, int c)
{
    return a.Y + (c * a.W + b) * a.sstride;
}

/* Window (c, b)'s inverse transform, its reals 2j and 2j + 1 (j < P):
 * those of the second half (j >= P / 2) are chunk frames b P + 2j + h - P,
 * written from frame skip on. */
__host__ __device__ inline void dx_output_pair(const dx_inverse_args &a, long long P, long long b,
                                               int c, unsigned j, float x0, float x1)
{
    if (2 * (long long)j < P)
        return;
    for (int h = 0; h < 2; h++) {
        const long long f = b * P + 2 * (long long)j + h - P; /* the chunk's frame */
        if (f >= a.skip)
            a.out[(f - a.skip) * a.O + c] = h ? x1 : x0;
    }
}

/* *have: whether the fused transforms of N-point windows can run on the
 * current device (this build has them, and the device has their shared
 * memory); where they can, their kernels are made ready for it. */
gf_status dx_prepare(size_t N, int *have, char *err, size_t n);

/* Queue the transforms on stream st (N as prepared). */
gf_status dx_forward(size_t N, cudaStream_t st, const dx_forward_args &a, char *err, size_t n);
gf_status dx_inverse(size_t N, cudaStream_t st, const dx_inverse_args &a, char *err, size_t n);

/* One size's (fft_dx_impl.cuh, a source file per size). max_smem: the
 * device's shared memory a block may opt into. */
template <unsigned N> struct dx_size {
    static gf_status prepare(int max_smem, int *have, char *err, size_t n);
    static gf_status forward(cudaStream_t st, const dx_forward_args &a, char *err, size_t n);
    static gf_status inverse(cudaStream_t st, const dx_inverse_args &a, char *err, size_t n);
};

} // namespace gf

#endif /* GF_FFT_DX_H */
