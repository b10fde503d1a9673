/*
 * CUDA FIR kernels (CUDA C++; included by fir_launch.cu, their one launch
 * site, and by the host test of their index logic).
 *
 * Buffer layout: buf[0 .. hs) is the halo ((T-1)*C samples), buf[hs ..) the
 * chunk, interleaved; the kernels compute flat outputs n in [n0, n1):
 *
 *   acc = h[0] * x[n]; for k in 1..T-1: acc = acc + h[k] * x[n - k*C]
 *   (x[n] = buf[hs + n])
 *   y[n - n0] = acc
 *
 * with __fmul_rn / __fadd_rn so that the compiler can never fuse or reorder
 * them: the same operations as the CPU reference, bit for bit.
 *
 * Where the taps come from is a policy type TAPS with
 *   static __device__ const T *get(const T *gtaps, int coff)
 * global_taps below reads them from global memory; fir_launch.cu adds one
 * for its __constant__ bank, so every warp reads each tap as one broadcast.
 * This header defines no device variables.
 */
#ifndef GF_FIR_KERNELS_CUH
#define GF_FIR_KERNELS_CUH

#include <cuda_runtime.h>

#include <stdint.h>

namespace gf
{

__device__ __forceinline__ float mul_rn(float a, float b)
{
    return __fmul_rn(a, b);
}
__device__ __forceinline__ double mul_rn(double a, double b)
{
    return __dmul_rn(a, b);
}
__device__ __forceinline__ float add_rn(float a, float b)
{
    return __fadd_rn(a, b);
}
__device__ __forceinline__ double add_rn(double a, double b)
{
    return __dadd_rn(a, b);
}

/* 16-byte vector of T. */
template <typename T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
    enum { n = 4 };
};
template <> struct vec16<double> {
    typedef double2 type;
    enum { n = 2 };
};

/* Taps in global memory, read through the read-only cache. */
struct global_taps {
    template <typename T> static __device__ __forceinline__ const T *get(const T *gtaps, int coff)
    {
        (void)coff;
        return gtaps;
    }
};

/* Threads per block of the tiled kernels; outputs per thread chosen so a
 * tile is 16 KiB of input whatever the type (8 doubles or 16 floats). */
enum { TILE_THREADS = 256 };
template <typename T> struct tile {
    enum { outs_per_thread = 64 / sizeof(T), out = TILE_THREADS * outs_per_thread };
};

/* Shared memory the tiled kernel needs for halo hs (samples), with
 * OUTS_PER_THREAD outputs per thread. */
template <typename T, int OUTS_PER_THREAD = tile<T>::outs_per_thread>
__host__ __device__ inline size_t tiled_smem_bytes(long long hs)
{
    return (size_t)(hs + (long long)TILE_THREADS * OUTS_PER_THREAD + 2 * vec16<T>::n) * sizeof(T);
}

/* One tile's outputs [t0, t1) from its inputs staged in shared memory
 * (s[i] holds buf[b0 + i]). Thread j owns outputs t0 + j + r*TILE_THREADS:
 * consecutive threads read consecutive words (no bank conflicts) and store
 * coalesced. Taps are the outer loop and the thread's outputs the inner one,
 * so each tap is read once per thread and the accumulators stay in
 * registers; every output still sums h[0]*x, then + h[k]*x in k order.
 * Output n reads x[n - k*C] = s[n + hs - b0 - k*C]; the indices fit an int
 * since the tile fits shared memory. In a partial last tile the lanes past
 * t1 read stage memory that was not loaded and store nothing. */
template <typename T, int OUTS_PER_THREAD>
__device__ __forceinline__ void tile_compute(const T *s, T *__restrict__ y, long long n0,
                                             long long t0, long long t1, long long b0, int C,
                                             int ntaps, long long hs, const T *h)
{
    const T *x = s + (int)(t0 + hs - b0) + threadIdx.x;
    T acc[OUTS_PER_THREAD];
    const T h0 = h[0];
#pragma unroll
    for (int r = 0; r < OUTS_PER_THREAD; r++)
        acc[r] = mul_rn(h0, x[r * TILE_THREADS]);
    for (int k = 1; k < ntaps; k++) {
        const T hk = h[k];
        const T *xk = x - k * C;
#pragma unroll
        for (int r = 0; r < OUTS_PER_THREAD; r++)
            acc[r] = add_rn(acc[r], mul_rn(hk, xk[r * TILE_THREADS]));
    }
    T *yt = y + (t0 - n0) + threadIdx.x;
    const int valid = (int)(t1 - t0) - (int)threadIdx.x;
#pragma unroll
    for (int r = 0; r < OUTS_PER_THREAD; r++)
        if (r * TILE_THREADS < valid)
            yt[r * TILE_THREADS] = acc[r];
}

/*
 * Tiled kernel: a block computes tile<T>::out consecutive outputs. It first
 * copies its inputs (the tile plus the hs-sample halo before it) into shared
 * memory with aligned 16-byte loads, then each thread computes outputs
 * tid, tid + 256, ... from shared memory: consecutive threads read
 * consecutive words (no bank conflicts) and store coalesced.
 * Requires buf to be 16-byte aligned and padded by GF_DEVICE_PAD_SAMPLES
 * (launch.h).
 * OUTS_PER_THREAD: tile<T>::outs_per_thread for throughput; 1 for chunks too
 * small to fill the GPU (a live block with a long filter), where the big
 * tile would make one block compute thousands of outputs nobody stores.
 */
template <typename T, typename TAPS, int OUTS_PER_THREAD = tile<T>::outs_per_thread>
__global__ void __launch_bounds__(TILE_THREADS)
    fir_tiled(const T *__restrict__ buf, T *__restrict__ y, long long n0, long long n1, int C,
              int ntaps, const T *__restrict__ gtaps, int coff)
{
    enum { OUT = TILE_THREADS * OUTS_PER_THREAD };
    extern __shared__ __align__(16) unsigned char gf_smem_raw[];
    T *s = reinterpret_cast<T *>(gf_smem_raw);
    typedef typename vec16<T>::type V;
    const int VN = vec16<T>::n;
    const long long hs = (long long)(ntaps - 1) * C;
    const long long t0 = n0 + (long long)blockIdx.x * OUT; /* first output */
    const long long t1 = t0 + OUT < n1 ? t0 + OUT : n1;
    /* Inputs buf[t0 .. t1 + hs), from an aligned start. */
    const long long b0 = t0 & ~(long long)(VN - 1);
    const long long nvec = (t1 + hs - b0 + VN - 1) / VN;
    const V *src = reinterpret_cast<const V *>(buf + b0);
    V *dst = reinterpret_cast<V *>(s);
    for (long long i = threadIdx.x; i < nvec; i += TILE_THREADS)
        dst[i] = __ldg(src + i);
    __syncthreads();

    tile_compute<T, OUTS_PER_THREAD>(s, y, n0, t0, t1, b0, C, ntaps, hs, TAPS::get(gtaps, coff));
}

/* For halos too large for shared memory: every thread reads global memory
 * through the read-only cache, grid-stride over outputs. */
template <typename T, typename TAPS>
__global__ void fir_global(const T *__restrict__ buf, T *__restrict__ y, long long n0, long long n1,
                           int C, int ntaps, const T *__restrict__ gtaps, int coff)
{
    const long long hs = (long long)(ntaps - 1) * C;
    const T *h = TAPS::get(gtaps, coff);
    const T *x = buf + hs;
    for (long long n = n0 + blockIdx.x * (long long)blockDim.x + threadIdx.x; n < n1;
         n += (long long)gridDim.x * blockDim.x) {
        T acc = mul_rn(h[0], __ldg(x + n));
        for (int k = 1; k < ntaps; k++)
            acc = add_rn(acc, mul_rn(h[k], __ldg(x + n - (long long)k * C)));
        y[n - n0] = acc;
    }
}

/* Per-channel filters (taps in global memory, channel c's at c * ntaps):
 * output n uses channel n % C's taps, summed as everywhere else. */
template <typename T>
__global__ void fir_global_channels(const T *__restrict__ buf, T *__restrict__ y, long long n0,
                                    long long n1, int C, int ntaps, const T *__restrict__ gtaps,
                                    int coff)
{
    (void)coff;
    const long long hs = (long long)(ntaps - 1) * C;
    const T *x = buf + hs;
    for (long long n = n0 + blockIdx.x * (long long)blockDim.x + threadIdx.x; n < n1;
         n += (long long)gridDim.x * blockDim.x) {
        const T *h = gtaps + (size_t)(n % C) * ntaps;
        T acc = mul_rn(__ldg(h), __ldg(x + n));
        for (int k = 1; k < ntaps; k++)
            acc = add_rn(acc, mul_rn(__ldg(h + k), __ldg(x + n - (long long)k * C)));
        y[n - n0] = acc;
    }
}

} // namespace gf

#endif /* GF_FIR_KERNELS_CUH */
