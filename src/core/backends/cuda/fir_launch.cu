/*
 * The FIR kernels' one launch site, and the __constant__ bank they read
 * taps from. Which kernel runs a chunk:
 *   - the tiled kernel where a tile and its halo fit shared memory;
 *     with one output per thread when the chunk is too small to give every
 *     multiprocessor a full tile (a live block with a long filter), so no
 *     thread sums taps for outputs nobody stores;
 *   - otherwise the global-memory kernel, and always for per-channel
 *     filters (each output reads its own channel's taps).
 * and the taps come from the constant bank (const_off >= 0) or global
 * memory.
 */
#include "cuda_check.h"
#include "fir_kernels.cuh"
#include "launch.h"

__constant__ double gf_c_taps[GF_CONST_TAP_BYTES / sizeof(double)];

namespace gf
{

/* Taps in the constant bank, from sample offset coff. */
struct const_taps {
    template <typename T> static __device__ __forceinline__ const T *get(const T *gtaps, int coff)
    {
        (void)gtaps;
        return reinterpret_cast<const T *>(gf_c_taps) + coff;
    }
};

template <typename T>
using fir_kernel = void (*)(const T *, T *, long long, long long, int, int, const T *, int);

/* Raise a kernel's dynamic shared-memory limit when it needs more than 48 KiB. */
template <typename T>
static gf_status allow_smem(fir_kernel<T> k, size_t bytes, char *err, size_t n)
{
    if (bytes > 48 * 1024)
        GF_TRY(err, n,
               cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return GF_OK;
}

template <typename T>
gf_status fir_plan_make(int ntaps, int channels, int const_off, bool taps_per_channel, fir_plan *p,
                        char *err, size_t n)
{
    *p = fir_plan();
    p->ntaps = ntaps;
    p->channels = channels;
    p->hs = (long long)(ntaps - 1) * channels;
    p->const_off = taps_per_channel ? -1 : const_off;
    p->taps_per_channel = taps_per_channel;
    int dev = 0, optin = 0;
    GF_TRY(err, n, cudaGetDevice(&dev));
    GF_TRY(err, n, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    GF_TRY(err, n, cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, dev));
    p->smem = tiled_smem_bytes<T>(p->hs);
    p->smem1 = tiled_smem_bytes<T, 1>(p->hs);
    p->tiled = p->smem <= (size_t)optin && !taps_per_channel;
    if (!p->tiled)
        return GF_OK;
    const bool ct = const_off >= 0;
    GF_TRY(
        err, n,
        allow_smem<T>(ct ? fir_tiled<T, const_taps> : fir_tiled<T, global_taps>, p->smem, err, n));
    GF_TRY(err, n,
           allow_smem<T>(ct ? fir_tiled<T, const_taps, 1> : fir_tiled<T, global_taps, 1>, p->smem1,
                         err, n));
    return GF_OK;
}

template <typename T>
void fir_launch(const fir_plan &p, cudaStream_t st, const T *buf, T *y, long long n0, long long n1,
                const T *gtaps)
{
    const bool ct = p.const_off >= 0;
    const long long n = n1 - n0;
    fir_kernel<T> k;
    unsigned grid, threads = TILE_THREADS;
    size_t smem = 0;
    if (p.tiled && n < (long long)tile<T>::out * p.sms) {
        k = ct ? fir_tiled<T, const_taps, 1> : fir_tiled<T, global_taps, 1>;
        grid = (unsigned)((n + TILE_THREADS - 1) / TILE_THREADS);
        smem = p.smem1;
    } else if (p.tiled) {
        k = ct ? fir_tiled<T, const_taps> : fir_tiled<T, global_taps>;
        grid = (unsigned)((n + tile<T>::out - 1) / tile<T>::out);
        smem = p.smem;
    } else {
        k = p.taps_per_channel ? fir_global_channels<T>
            : ct               ? fir_global<T, const_taps>
                               : fir_global<T, global_taps>;
        threads = 256;
        const long long blocks = (n + threads - 1) / threads;
        grid = (unsigned)(blocks < 65535 ? blocks : 65535);
    }
    k<<<grid, threads, smem, st>>>(buf, y, n0, n1, p.channels, p.ntaps, gtaps,
                                   ct ? p.const_off : 0);
}

gf_status fir_const_upload(const void *taps, size_t bytes, size_t off, char *err, size_t n)
{
    GF_TRY(err, n, cudaMemcpyToSymbol(gf_c_taps, taps, bytes, off));
    return GF_OK;
}

template gf_status fir_plan_make<float>(int, int, int, bool, fir_plan *, char *, size_t);
template gf_status fir_plan_make<double>(int, int, int, bool, fir_plan *, char *, size_t);
template void fir_launch<float>(const fir_plan &, cudaStream_t, const float *, float *, long long,
                                long long, const float *);
template void fir_launch<double>(const fir_plan &, cudaStream_t, const double *, double *,
                                 long long, long long, const double *);

} // namespace gf
