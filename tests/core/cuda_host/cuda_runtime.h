/*
 * The CUDA names the kernels in src/core/backends/cuda/ use, for host C++: the kernel tests
 * (test_*_kernel.cpp) compile the kernels' own headers on the host with
 * this directory first on the include path, so that machines without a
 * GPU (CI) run the kernels' index, tile and halo logic.
 *
 * Qualifiers vanish; the index variables are per host thread; the vector
 * types have CUDA's sizes and alignments; the _rn intrinsics round each
 * operation on its own (the tests build with -ffp-contract=off) and the
 * fused ones are std::fma, one rounding; a 16-byte vector read through
 * __ldg must be 16-byte aligned, as on the device (gf_host_fault otherwise).
 * Each test defines __syncthreads: how a block's threads meet is the
 * test's runner's business (host_grid.h, or test_hist_kernel's thread pool).
 */
#ifndef GF_TEST_CUDA_HOST_RUNTIME_H
#define GF_TEST_CUDA_HOST_RUNTIME_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__
#define __align__(x)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(16) double2 {
    double x, y;
};

typedef int cudaError_t;
enum { cudaSuccess = 0 };
typedef struct gf_host_stream *cudaStream_t;

/* A kernel did what the device would refuse: report and stop. */
[[noreturn]] static inline void gf_host_fault(const char *what)
{
    fprintf(stderr, "device fault on the host: %s (block %u,%u,%u thread %u)\n", what, blockIdx.x,
            blockIdx.y, blockIdx.z, threadIdx.x);
    abort();
}

static inline float __fmul_rn(float a, float b)
{
    return a * b;
}
static inline float __fadd_rn(float a, float b)
{
    return a + b;
}
static inline double __dmul_rn(double a, double b)
{
    return a * b;
}
static inline double __dadd_rn(double a, double b)
{
    return a + b;
}
static inline float __fmaf_rn(float a, float b, float c)
{
    return std::fma(a, b, c);
}
static inline double __fma_rn(double a, double b, double c)
{
    return std::fma(a, b, c);
}

/* CUDA's integer min, as the kernels call it. */
static inline int min(int a, int b)
{
    return a < b ? a : b;
}
static inline long long min(long long a, long long b)
{
    return a < b ? a : b;
}

template <typename T> static inline T __ldg(const T *p)
{
    if (alignof(T) >= 16 && (uintptr_t)p % 16 != 0)
        gf_host_fault("misaligned 16-byte load");
    return *p;
}

void __syncthreads();

#endif /* GF_TEST_CUDA_HOST_RUNTIME_H */
