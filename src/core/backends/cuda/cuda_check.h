/*
 * Checked CUDA and cuFFT calls: the one way every file under cuda/ checks
 * a call (CUDA C++; C files never include it). A failure is recorded, in
 * one format, in the caller's detail buffer (err, n bytes):
 *
 *     <function> failed: <message> (<name>)
 *
 * e.g. "cudaMemcpyAsync failed: CUDA-capable device(s) is/are busy or
 * unavailable (cudaErrorDevicesUnavailable)" or "cufftMakePlanMany failed:
 * cuFFT failed to allocate GPU or CPU memory (CUFFT_ALLOC_FAILED)", and
 * returned as a status: GF_ERR_NO_MEMORY where memory ran out
 * (cudaErrorMemoryAllocation, CUFFT_ALLOC_FAILED), GF_ERR_CUDA for any
 * other failure. Nothing is printed; nothing exits.
 *
 *   GF_TRY(err, n, call)         a call returning cudaError_t or cufftResult
 *                                (or a gf_status, whose detail is already
 *                                written); on failure the enclosing
 *                                function returns the status
 *   GF_TRY_LAUNCH(err, n, NAME)  after a kernel launch (cudaGetLastError),
 *                                the failure named "NAME launch"
 *   gf::dev_alloc                cudaMalloc whose failure says what it was
 *                                for, its size and the free memory
 *   gf::fault, gf::failed        the same, for a caller that must look at
 *                                the result first (cudaErrorNotReady)
 *
 * Fault injection (test builds: -DGPUFILT_FAULT_INJECTION=ON, driven by
 * tests/gpu/faults.sh): GPUFILT_FAULT=TEXT:N[:KIND] makes the N-th checked
 * call whose source text contains TEXT fail after it ran (a launch's text
 * is "NAME launch"; N counts from 1, over every thread), as a device that
 * runs out of memory or goes away would. KIND is "oom" (CUDA
 * cudaErrorMemoryAllocation, cuFFT CUFFT_ALLOC_FAILED) or "fail" (CUDA
 * cudaErrorDevicesUnavailable, cuFFT CUFFT_INTERNAL_ERROR); without it,
 * a cudaMalloc runs out of memory and any other call fails. Other builds
 * compile the hook away.
 */
#ifndef GF_CUDA_CHECK_H
#define GF_CUDA_CHECK_H

#include "gpufilt.h"

#include <cuda_runtime.h>
#include <cufft.h>

#include <stddef.h>

namespace gf
{

inline bool ok(cudaError_t e)
{
    return e == cudaSuccess;
}
inline bool ok(cufftResult r)
{
    return r == CUFFT_SUCCESS;
}
/* A gf_status passes through: the function that returned it wrote its
 * own detail (and its own calls met the hook). */
inline bool ok(gf_status st)
{
    return st == GF_OK;
}
inline gf_status fault(gf_status st, const char *text)
{
    (void)text;
    return st;
}
inline gf_status failed(gf_status st, const char *text, char *err, size_t n)
{
    (void)text, (void)err, (void)n;
    return st;
}

#ifdef GPUFILT_FAULT_INJECTION
/* e, or the injected failure when this call is the one GPUFILT_FAULT names. */
cudaError_t fault(cudaError_t e, const char *text);
cufftResult fault(cufftResult r, const char *text);
#else
inline cudaError_t fault(cudaError_t e, const char *text)
{
    (void)text;
    return e;
}
inline cufftResult fault(cufftResult r, const char *text)
{
    (void)text;
    return r;
}
#endif

/* Write "<function> failed: <message> (<name>)" for the call whose source
 * text is `text` (the function is the text up to its first '(') into err
 * and return the status for e (or r). */
gf_status failed(cudaError_t e, const char *text, char *err, size_t n);
gf_status failed(cufftResult r, const char *text, char *err, size_t n);

/* cuFFT's description of r and its name ("CUFFT_ALLOC_FAILED"). */
const char *cufft_message(cufftResult r);
const char *cufft_name(cufftResult r);

/* cudaMalloc(p, bytes) on the current device. Out of memory: GF_ERR_NO_MEMORY
 * and "out of GPU memory: X MiB for <what>, Y MiB free of Z" in err;
 * another failure as GF_TRY reports it. */
gf_status dev_alloc(void **p, size_t bytes, const char *what, char *err, size_t n);

} // namespace gf

#define GF_CHECK_AS_(err, n, result, text)             \
    do {                                               \
        const auto r_ = gf::fault((result), (text));   \
        if (!gf::ok(r_))                               \
            return gf::failed(r_, (text), (err), (n)); \
    } while (0)

#define GF_TRY(err, n, call)          GF_CHECK_AS_(err, n, call, #call)
#define GF_TRY_LAUNCH(err, n, kernel) GF_CHECK_AS_(err, n, cudaGetLastError(), kernel " launch")

#endif /* GF_CUDA_CHECK_H */
