/* The histogram kernel's launch site (the geometry comes from hist_geometry.h). */
#include "hist_kernels.cuh"
#include "launch.h"

namespace gf
{

template <typename T> cudaError_t hist_allow_smem(size_t smem_cap)
{
    if (smem_cap <= 48 * 1024)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(
        hist_chunk<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_cap);
    if (e != cudaSuccess)
        return e;
    return cudaFuncSetAttribute(hist_chunk<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem_cap);
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

template cudaError_t hist_allow_smem<float>(size_t);
template cudaError_t hist_allow_smem<double>(size_t);
template void hist_launch<float>(const hist_geometry &, bool, const float *, void *, cudaStream_t);
template void hist_launch<double>(const hist_geometry &, bool, const double *, void *,
                                  cudaStream_t);

} // namespace gf
