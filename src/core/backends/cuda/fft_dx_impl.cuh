/*
 * fft_dx.h's kernels for one size N, from cuFFTDx's block FFTs: a thread
 * block per window (channel-fastest, so blocks of one frame range run
 * together and share its interleaved lines in L2), one FFT per block, the
 * library's own elements per thread. cuFFTDx's register layout: thread t
 * holds elements t + i stride (real samples in, spectrum bins out for the
 * R2C; bins in, real samples out for the C2R). The build compiles this
 * once per size (a source file each, made by cmake/library.cmake), with
 * GF_DX_N the size and GF_DX_SM the architecture cuFFTDx tunes for.
 */
#include "cuda_check.h"
#include "fft_dx.h"

#include <cufftdx.hpp>

namespace gf
{

namespace
{

using namespace cufftdx;

/* Folded real transforms (an N-point real FFT as an N/2-point complex
 * one: half the shared memory and work of the plain real mode): the real
 * samples 2j and 2j + 1 travel as one complex element j. */
template <fft_type Ty, fft_direction Dir>
using dx_plain =
    decltype(Block() + Size<GF_DX_N>() + Type<Ty>() + Direction<Dir>() + Precision<float>() +
             RealFFTOptions<complex_layout::natural, real_mode::folded>());
/* GF_DX_EPT (the build's GPUFILT_DX_EPT, for measurement): the elements
 * per thread, where cuFFTDx would suggest its own. */
#ifdef GF_DX_EPT
template <fft_type Ty, fft_direction Dir>
using dx_base = decltype(dx_plain<Ty, Dir>() + ElementsPerThread<GF_DX_EPT>());
static_assert(is_supported_v<dx_base<fft_type::r2c, fft_direction::forward>, GF_DX_SM> &&
                  is_supported_v<dx_base<fft_type::c2r, fft_direction::inverse>, GF_DX_SM>,
              "GPUFILT_DX_EPT: cuFFTDx has no such elements per thread for this size");
#else
template <fft_type Ty, fft_direction Dir> using dx_base = dx_plain<Ty, Dir>;
#endif
using dx_fwd_base = dx_base<fft_type::r2c, fft_direction::forward>;
using dx_inv_base = dx_base<fft_type::c2r, fft_direction::inverse>;
constexpr bool dx_built =
    is_supported_v<dx_fwd_base, GF_DX_SM> && is_supported_v<dx_inv_base, GF_DX_SM>;
/* (where cuFFTDx lacks the size for the architecture, the size's
 * descriptions are never made: fft_dx_dummy stands in) */
struct fft_dx_dummy {
    static constexpr unsigned shared_memory_size = 0, max_threads_per_block = 1;
    static constexpr unsigned ffts_per_block = 1;
    static constexpr dim3 block_dim = dim3(1, 1, 1);
};
/* The description with the architecture and as many windows a block as
 * cuFFTDx suggests (several for the small sizes: fewer, fuller blocks). */
template <class B, bool built> struct dx_full {
    using with_sm = decltype(B() + SM<GF_DX_SM>());
    using type = decltype(with_sm() + FFTsPerBlock<with_sm::suggested_ffts_per_block>());
};
template <class B> struct dx_full<B, false> {
    using type = fft_dx_dummy;
};
using dx_fwd = typename dx_full<dx_fwd_base, dx_built>::type;
using dx_inv = typename dx_full<dx_inv_base, dx_built>::type;

constexpr long long P = GF_DX_N / 2;

/* The blocks of `windows` windows, FFT::ffts_per_block a block. */
template <class FFT> static unsigned dx_blocks(long long windows)
{
    return (unsigned)((windows + FFT::ffts_per_block - 1) / FFT::ffts_per_block);
}

template <class FFT>
__global__ void __launch_bounds__(FFT::max_threads_per_block) fft_dx_forward(dx_forward_args a)
{
    if constexpr (dx_built) {
        using cx = typename FFT::value_type;
        extern __shared__ __align__(16) unsigned char gf_dx_smem[];
        cx td[FFT::storage_size];
        const long long w = (long long)blockIdx.x * FFT::ffts_per_block + threadIdx.y;
        const bool real = w < a.m * a.C; /* the last block's spare FFTs compute on zeros */
        const long long b = w / a.C;
        const int c = (int)(w % a.C);
        for (unsigned i = 0; i < FFT::input_ept; i++) {
            const unsigned j = threadIdx.x + i * FFT::stride;
            float v[2] = {0, 0};
            if (real && j < FFT::input_length)
                dx_window_pair(a, P, b, c, j, v);
            td[i] = cx{v[0], v[1]};
        }
        FFT().execute(td, gf_dx_smem); /* (every FFT of the block's, at once) */
        if (!real)
            return;
        float2 *s = dx_spectrum(a, b, c);
        for (unsigned i = 0; i < FFT::output_ept; i++) {
            const unsigned j = threadIdx.x + i * FFT::stride;
            if (j <= P)
                s[j] = make_float2(td[i].x, td[i].y);
        }
    }
}

template <class FFT>
__global__ void __launch_bounds__(FFT::max_threads_per_block) fft_dx_inverse(dx_inverse_args a)
{
    if constexpr (dx_built) {
        using cx = typename FFT::value_type;
        extern __shared__ __align__(16) unsigned char gf_dx_smem[];
        cx td[FFT::storage_size];
        const long long w = (long long)blockIdx.x * FFT::ffts_per_block + threadIdx.y;
        const bool real = w < a.m * a.O;
        const long long b = w / a.O;
        const int c = (int)(w % a.O);
        const float2 *y = dx_product(a, b, c);
        for (unsigned i = 0; i < FFT::input_ept; i++) {
            const unsigned j = threadIdx.x + i * FFT::stride;
            td[i] = real && j <= P ? cx{y[j].x, y[j].y} : cx{0, 0};
        }
        FFT().execute(td, gf_dx_smem); /* (every FFT of the block's, at once) */
        if (!real)
            return;
        for (unsigned i = 0; i < FFT::output_ept; i++) {
            const unsigned j = threadIdx.x + i * FFT::stride;
            if (j < FFT::output_length)
                dx_output_pair(a, P, b, c, j, td[i].x, td[i].y);
        }
    }
}

} // namespace

template <> gf_status dx_size<GF_DX_N>::prepare(int max_smem, int *have, char *err, size_t n)
{
    *have = 0;
    if (!dx_built || (int)dx_fwd::shared_memory_size > max_smem ||
        (int)dx_inv::shared_memory_size > max_smem)
        return GF_OK;
    GF_TRY(err, n,
           cudaFuncSetAttribute(fft_dx_forward<dx_fwd>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)dx_fwd::shared_memory_size));
    GF_TRY(err, n,
           cudaFuncSetAttribute(fft_dx_inverse<dx_inv>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)dx_inv::shared_memory_size));
    *have = 1;
    return GF_OK;
}

template <>
gf_status dx_size<GF_DX_N>::forward(cudaStream_t st, const dx_forward_args &a, char *err, size_t n)
{
    cudaGetLastError(); /* the check below sees this launch only */
    fft_dx_forward<dx_fwd>
        <<<dx_blocks<dx_fwd>(a.m * a.C), dx_fwd::block_dim, dx_fwd::shared_memory_size, st>>>(a);
    GF_TRY_LAUNCH(err, n, "fft_dx_forward");
    return GF_OK;
}

template <>
gf_status dx_size<GF_DX_N>::inverse(cudaStream_t st, const dx_inverse_args &a, char *err, size_t n)
{
    cudaGetLastError(); /* the check below sees this launch only */
    fft_dx_inverse<dx_inv>
        <<<dx_blocks<dx_inv>(a.m * a.O), dx_inv::block_dim, dx_inv::shared_memory_size, st>>>(a);
    GF_TRY_LAUNCH(err, n, "fft_dx_inverse");
    return GF_OK;
}

} // namespace gf
