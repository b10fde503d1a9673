/* fft_dx.h: the sizes, dispatched to their source files (fft_dx_impl.cuh). */
#include "fft_dx.h"

#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace gf
{

/* A size dx_prepare did not find (fft_conv never asks for one). */
static gf_status dx_missing(size_t N, char *err, size_t n)
{
    snprintf(err, n, "no fused transforms of %zu points in this build", N);
    return GF_ERR_UNSUPPORTED;
}

#ifdef GPUFILT_HAVE_CUFFTDX
/* f(N): the call for each size this build compiles. */
#define GF_DX_SIZES(f, ...)                    \
    case 1024:                                 \
        return dx_size<1024>::f(__VA_ARGS__);  \
    case 2048:                                 \
        return dx_size<2048>::f(__VA_ARGS__);  \
    case 4096:                                 \
        return dx_size<4096>::f(__VA_ARGS__);  \
    case 8192:                                 \
        return dx_size<8192>::f(__VA_ARGS__);  \
    case 16384:                                \
        return dx_size<16384>::f(__VA_ARGS__); \
    case 32768:                                \
        return dx_size<32768>::f(__VA_ARGS__); \
    case 65536:                                \
        return dx_size<65536>::f(__VA_ARGS__);

gf_status dx_prepare(size_t N, int *have, char *err, size_t n)
{
    *have = 0;
    /* GPUFILT_FFT_KERNELS=cufft: cuFFT's transforms, as in builds without
     * cuFFTDx (for comparing the two: bench/NOTES.md, the tests). */
    const char *k = getenv("GPUFILT_FFT_KERNELS");
    if (k && !strcmp(k, "cufft"))
        return GF_OK;
    int dev = 0, max_smem = 0;
    GF_TRY(err, n, cudaGetDevice(&dev));
    GF_TRY(err, n, cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    switch (N) {
        GF_DX_SIZES(prepare, max_smem, have, err, n)
    default:
        return GF_OK;
    }
}

gf_status dx_forward(size_t N, cudaStream_t st, const dx_forward_args &a, char *err, size_t n)
{
    switch (N) {
        GF_DX_SIZES(forward, st, a, err, n)
    default:
        return dx_missing(N, err, n);
    }
}

gf_status dx_inverse(size_t N, cudaStream_t st, const dx_inverse_args &a, char *err, size_t n)
{
    switch (N) {
        GF_DX_SIZES(inverse, st, a, err, n)
    default:
        return dx_missing(N, err, n);
    }
}
#else
gf_status dx_prepare(size_t, int *have, char *, size_t)
{
    *have = 0;
    return GF_OK;
}
gf_status dx_forward(size_t N, cudaStream_t, const dx_forward_args &, char *err, size_t n)
{
    return dx_missing(N, err, n);
}
gf_status dx_inverse(size_t N, cudaStream_t, const dx_inverse_args &, char *err, size_t n)
{
    return dx_missing(N, err, n);
}
#endif

} // namespace gf
