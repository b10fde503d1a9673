/*
 * CUDA kernels of the FFT method (CUDA C++; included by fft_conv.cu, their
 * launch site). Uniformly partitioned overlap-save (gpufilt.h): blocks of P
 * frames, windows of N = 2P samples, spectra of P + 1 bins.
 *
 * Layouts (T = float or double, V = float2 or double2), block-major so that
 * the transforms a chunk needs are one contiguous run:
 *   in      the chunk, interleaved: frames x C samples
 *   win     window (b, c) at (b C + c) N: [previous block | this block]
 *   spec    spectrum (b, c) of the chunk's blocks at (b C + c) sstride
 *   ring    spectra of earlier blocks, channel-major: (c R + slot) sstride,
 *           block j at slot (head + j - j0) mod R, j0 the chunk's first
 *   H       the filter's partitions, (h K + k) sstride, scaled by 1/N
 *   part    split-K partial sums, (s M C + b C + c) sstride
 *   Y       output spectrum (b, c) at (b C + c) sstride
 *
 * Summation order, the same whatever the chunk or launch geometry: the
 * partitions k = 0 .. K-1 are cut into S = ceil(K / MAC_KS) runs of MAC_KS;
 * each run is summed in k order with explicit fused multiply-adds, and the
 * runs' sums are added in s order. S depends only on K.
 */
#ifndef GF_FFT_KERNELS_CUH
#define GF_FFT_KERNELS_CUH

#include <cuda_runtime.h>

namespace gf
{

template <typename T> struct cplx;
template <> struct cplx<float> {
    typedef float2 type;
};
template <> struct cplx<double> {
    typedef double2 type;
};

__device__ __forceinline__ float fma_rn(float a, float b, float c)
{
    return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fma_rn(double a, double b, double c)
{
    return __fma_rn(a, b, c);
}

enum {
    FFT_THREADS = 256,
    MAC_BT = 8,  /* blocks per thread */
    MAC_KT = 8,  /* partitions loaded per step */
    MAC_KS = 128 /* partitions per split-K run */
};

/* Windows of the chunk's m blocks; tail_in holds each channel's previous
 * block, tail_out receives its last (different buffers: no thread reads
 * what another writes). Grid: x over N, y striding over blocks, z over
 * channels. */
template <typename T>
__global__ void fft_frame(const T *__restrict__ in, long long m, int C, long long P,
                          const T *__restrict__ tail_in, T *__restrict__ win,
                          T *__restrict__ tail_out)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = (int)blockIdx.z;
    if (t >= 2 * P)
        return;
    for (long long b = blockIdx.y; b < m; b += gridDim.y) {
        const long long n = b * P + t - P; /* frame of the chunk, -P .. */
        const T v = n < 0 ? tail_in[(size_t)c * P + (size_t)(n + P)] : in[(size_t)n * C + c];
        win[((size_t)b * C + c) * 2 * P + (size_t)t] = v;
        if (b == m - 1 && t >= P)
            tail_out[(size_t)c * P + (size_t)(t - P)] = v;
    }
}

/* acc += h x, as four rounded fused multiply-adds. */
template <typename V> __device__ __forceinline__ void cmac(V &acc, const V h, const V x)
{
    acc.x = fma_rn(h.x, x.x, acc.x);
    acc.x = fma_rn(-h.y, x.y, acc.x);
    acc.y = fma_rn(h.x, x.y, acc.y);
    acc.y = fma_rn(h.y, x.x, acc.y);
}

/*
 * Partial sums over run s of the partitions for MAC_BT blocks of one bin of
 * one channel per thread: H and X values are loaded once per step of
 * MAC_KT partitions and reused from registers. X of an earlier chunk comes
 * from the ring. Run 0's threads then store the spectra later chunks will
 * need (the last K - 1 blocks) into the ring, in slots this chunk does not
 * read. Grid: x over bins, y over block tiles x runs, z over channels.
 * With one run the partial sum is the output spectrum.
 */
template <typename T>
__global__ void __launch_bounds__(FFT_THREADS)
    fft_mac(const typename cplx<T>::type *__restrict__ spec, typename cplx<T>::type *ring,
            const typename cplx<T>::type *__restrict__ H, typename cplx<T>::type *__restrict__ part,
            long long m, long long M, int C, long long K, long long R, long long head,
            long long bins, long long sstride, int per_channel)
{
    typedef typename cplx<T>::type V;
    const long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long tiles = (m + MAC_BT - 1) / MAC_BT;
    const long long s = blockIdx.y / tiles, b0 = (blockIdx.y % tiles) * MAC_BT;
    const int c = (int)blockIdx.z;
    if (f >= bins)
        return;
    const long long k_lo = s * MAC_KS, k_hi = k_lo + MAC_KS < K ? k_lo + MAC_KS : K;
    const V *sc = spec + (size_t)c * sstride + f; /* block d at d C sstride */
    V *rc = ring + (size_t)c * R * sstride + f;
    const V *hc = H + (per_channel ? (size_t)c * K * sstride : 0) + f;
    V acc[MAC_BT];
#pragma unroll
    for (int i = 0; i < MAC_BT; i++)
        acc[i] = V{0, 0};
    for (long long k0 = k_lo; k0 < k_hi; k0 += MAC_KT) {
        /* X_{j0+d} for d = b0 - (k0 + MAC_KT - 1) .. b0 + MAC_BT - 1 - k0 */
        V x[MAC_BT + MAC_KT - 1], h[MAC_KT];
#pragma unroll
        for (int i = 0; i < MAC_KT; i++)
            h[i] = k0 + i < k_hi ? hc[(size_t)(k0 + i) * sstride] : V{0, 0};
        long long d = b0 - (k0 + MAC_KT - 1);
        long long slot = ((head + d) % R + R) % R;
#pragma unroll
        for (int i = 0; i < MAC_BT + MAC_KT - 1; i++, d++) {
            V v = V{0, 0};
            if (d >= 0 && d < m)
                v = sc[(size_t)d * C * sstride];
            else if (d < 0 && d > -R)
                v = rc[(size_t)slot * sstride];
            x[i] = v;
            slot = slot + 1 == R ? 0 : slot + 1;
        }
#pragma unroll
        for (int bi = 0; bi < MAC_BT; bi++)
#pragma unroll
            for (int ki = 0; ki < MAC_KT; ki++)
                if (k0 + ki < k_hi)
                    cmac(acc[bi], h[ki], x[bi + MAC_KT - 1 - ki]);
    }
    V *pc = part + ((size_t)s * M * C + c) * sstride + f;
#pragma unroll
    for (int bi = 0; bi < MAC_BT; bi++) {
        const long long b = b0 + bi;
        if (b >= m)
            break;
        pc[(size_t)b * C * sstride] = acc[bi];
        if (s == 0 && b >= m - (K - 1))
            rc[(size_t)((head + b) % R) * sstride] = sc[(size_t)b * C * sstride];
    }
}

/* Y = the runs' partial sums added in run order. Grid: x over bins, y over
 * blocks, z over channels. */
template <typename T>
__global__ void fft_reduce(const typename cplx<T>::type *__restrict__ part,
                           typename cplx<T>::type *__restrict__ Y, long long m, long long M, int C,
                           long long S, long long bins, long long sstride)
{
    typedef typename cplx<T>::type V;
    const long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = (int)blockIdx.z;
    if (f >= bins)
        return;
    for (long long b = blockIdx.y; b < m; b += gridDim.y) {
        const size_t at = ((size_t)b * C + c) * sstride + f;
        V acc = part[at];
        for (long long s = 1; s < S; s++) {
            const V p = part[(size_t)s * M * C * sstride + at];
            acc.x = acc.x + p.x;
            acc.y = acc.y + p.y;
        }
        Y[at] = acc;
    }
}

/* The second half of each inverse transform, interleaved into out from
 * chunk frame `skip` on. Grid: x over P, y striding over blocks, z over
 * channels. */
template <typename T>
__global__ void fft_emit(const T *__restrict__ win, long long m, int C, long long P, long long skip,
                         T *__restrict__ out)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = (int)blockIdx.z;
    if (t >= P)
        return;
    for (long long b = blockIdx.y; b < m; b += gridDim.y) {
        const long long n = b * P + t;
        if (n >= skip)
            out[(size_t)(n - skip) * C + c] = win[((size_t)b * C + c) * 2 * P + (size_t)(P + t)];
    }
}

/* H_k = the filter's spectra from double-precision transforms, scaled and
 * rounded to T. Grid over the n values. */
template <typename T>
__global__ void fft_scale_spectra(const double2 *__restrict__ src, typename cplx<T>::type *dst,
                                  long long n, double scale)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = typename cplx<T>::type{(T)(src[i].x * scale), (T)(src[i].y * scale)};
}

} // namespace gf

#endif /* GF_FFT_KERNELS_CUH */
