/* Checked CUDA and cuFFT calls (cuda_check.h). */
#include "cuda_check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace gf
{

/* cuFFT's results by value, with the descriptions of its documentation.
 * By value, not by enumerator: cuFFT 12 dropped some (0xA, 0xC, 0xF) and
 * added others, and this builds against either. */
static const struct {
    const char *name, *message;
} cufft_results[] = {
    {"CUFFT_SUCCESS", "success"},
    {"CUFFT_INVALID_PLAN", "cuFFT was passed an invalid plan handle"},
    {"CUFFT_ALLOC_FAILED", "cuFFT failed to allocate GPU or CPU memory"},
    {"CUFFT_INVALID_TYPE", "invalid transform type"},
    {"CUFFT_INVALID_VALUE", "an invalid pointer or parameter"},
    {"CUFFT_INTERNAL_ERROR", "driver or internal cuFFT library error"},
    {"CUFFT_EXEC_FAILED", "failed to execute an FFT on the GPU"},
    {"CUFFT_SETUP_FAILED", "the cuFFT library failed to initialize"},
    {"CUFFT_INVALID_SIZE", "an invalid transform size"},
    {"CUFFT_UNALIGNED_DATA", "unaligned data"},
    {"CUFFT_INCOMPLETE_PARAMETER_LIST", "missing parameters in call"},
    {"CUFFT_INVALID_DEVICE", "a plan executed on a GPU other than the one it was made on"},
    {"CUFFT_PARSE_ERROR", "internal plan database error"},
    {"CUFFT_NO_WORKSPACE", "no work area was given before the plan was executed"},
    {"CUFFT_NOT_IMPLEMENTED", "not implemented for the parameters given"},
    {"CUFFT_LICENSE_ERROR", "license error"},
    {"CUFFT_NOT_SUPPORTED", "not supported for the parameters given"},
    {"CUFFT_MISSING_DEPENDENCY", "cuFFT cannot find a library it depends on"},
    {"CUFFT_NVRTC_FAILURE", "an NVRTC failure in a cuFFT operation"},
    {"CUFFT_NVJITLINK_FAILURE", "an nvJitLink failure in a cuFFT operation"},
    {"CUFFT_NVSHMEM_FAILURE", "an NVSHMEM failure in a cuFFT operation"},
};
static const int cufft_nresults = (int)(sizeof cufft_results / sizeof cufft_results[0]);

const char *cufft_name(cufftResult r)
{
    return (int)r >= 0 && (int)r < cufft_nresults ? cufft_results[r].name : "CUFFT_UNKNOWN";
}

const char *cufft_message(cufftResult r)
{
    return (int)r >= 0 && (int)r < cufft_nresults ? cufft_results[r].message
                                                  : "an unknown cuFFT result";
}

/* The function's name: the call's text up to its first '('. */
static int name_len(const char *text)
{
    return (int)strcspn(text, "(");
}

gf_status failed(cudaError_t e, const char *text, char *err, size_t n)
{
    snprintf(err, n, "%.*s failed: %s (%s)", name_len(text), text, cudaGetErrorString(e),
             cudaGetErrorName(e));
    return e == cudaErrorMemoryAllocation ? GF_ERR_NO_MEMORY : GF_ERR_CUDA;
}

gf_status failed(cufftResult r, const char *text, char *err, size_t n)
{
    snprintf(err, n, "%.*s failed: %s (%s)", name_len(text), text, cufft_message(r), cufft_name(r));
    return r == CUFFT_ALLOC_FAILED ? GF_ERR_NO_MEMORY : GF_ERR_CUDA;
}

gf_status dev_alloc(void **p, size_t bytes, const char *what, char *err, size_t n)
{
    const cudaError_t e = fault(cudaMalloc(p, bytes), "cudaMalloc");
    if (e == cudaSuccess)
        return GF_OK;
    if (e != cudaErrorMemoryAllocation)
        return failed(e, "cudaMalloc", err, n);
    cudaGetLastError(); /* the next check sees only its own call */
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    snprintf(err, n, "out of GPU memory: %.1f MiB for %s, %.1f MiB free of %.1f",
             (double)bytes / (1 << 20), what, (double)free_b / (1 << 20),
             (double)total_b / (1 << 20));
    return GF_ERR_NO_MEMORY;
}

#ifdef GPUFILT_FAULT_INJECTION
enum fault_kind { NONE, OOM, FAIL };

/* Whether this call (its text) is the one GPUFILT_FAULT names, and how it fails. */
static fault_kind fault_hit(const char *text)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static long seen;
    const char *spec = getenv("GPUFILT_FAULT");
    if (!spec || !*spec)
        return NONE;
    char want[64], kind[8] = "";
    long nth = 1;
    if (sscanf(spec, "%63[^:]:%ld:%7s", want, &nth, kind) < 1 || !strstr(text, want))
        return NONE;
    pthread_mutex_lock(&mu);
    const int hit = ++seen == nth;
    pthread_mutex_unlock(&mu);
    if (!hit)
        return NONE;
    if (strcmp(kind, "oom") == 0)
        return OOM;
    if (strcmp(kind, "fail") == 0)
        return FAIL;
    return strncmp(text, "cudaMalloc", 10) == 0 ? OOM : FAIL;
}

cudaError_t fault(cudaError_t e, const char *text)
{
    if (e != cudaSuccess)
        return e;
    switch (fault_hit(text)) {
    case OOM:
        return cudaErrorMemoryAllocation;
    case FAIL:
        return cudaErrorDevicesUnavailable;
    default:
        return e;
    }
}

cufftResult fault(cufftResult r, const char *text)
{
    if (r != CUFFT_SUCCESS)
        return r;
    switch (fault_hit(text)) {
    case OOM:
        return CUFFT_ALLOC_FAILED;
    case FAIL:
        return CUFFT_INTERNAL_ERROR;
    default:
        return r;
    }
}
#endif

} // namespace gf
