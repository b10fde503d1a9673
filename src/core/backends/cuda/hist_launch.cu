/* The histogram kernel's launch site (the geometry comes from hist_geometry.h). */
#include "cuda_check.h"
#include "hist_kernels.cuh"
#include "launch.h"

namespace gf
{

template <typename T> gf_status hist_allow_smem(size_t smem_cap, char *err, size_t n)
{
    if (smem_cap <= 48 * 1024)
        return GF_OK;
    GF_TRY(err, n,
           cudaFuncSetAttribute(hist_chunk<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem_cap));
    GF_TRY(err, n,
           cudaFuncSetAttribute(hist_chunk<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem_cap));
    return GF_OK;
}

template <typename T>
void hist_launch(const hist_geometry &g, bool mix, const T *x, void *parts, cudaStream_t st)
{
    if (g.nseg == 0)
        return;
    unsigned char *pp = static_cast<unsigned char *>(parts);
    auto k = mix ? hist_chunk<T, true> : hist_chunk<T, false>;
    k<<<g.grid, HIST_THREADS, g.smem, st>>>(x, pp, g.a);
}

template gf_status hist_allow_smem<float>(size_t, char *, size_t);
template gf_status hist_allow_smem<double>(size_t, char *, size_t);
template void hist_launch<float>(const hist_geometry &, bool, const float *, void *, cudaStream_t);
template void hist_launch<double>(const hist_geometry &, bool, const double *, void *,
                                  cudaStream_t);

} // namespace gf
