/*
 * The checked-call header (src/core/backends/cuda/cuda_check.h) on the host, no GPU needed:
 * its one message format for CUDA and cuFFT results, the statuses they
 * map to, cuFFT's result names, GF_TRY's pass-through of a gf_status, and
 * the fault hook of test builds (GPUFILT_FAULT=TEXT:N[:oom|fail]), each
 * hook case in a child process of its own (the hook counts per process).
 * Only calls that need no device are made (error strings, no runtime).
 */
#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

static void check_text(const char *got, const char *want)
{
    CHECK(strcmp(got, want) == 0, "got '%s', expected '%s'", got, want);
}

/* A call's result, returned as GF_TRY sees it. */
static cudaError_t cuda_call(cudaError_t e, int)
{
    return e;
}
static cufftResult cufft_call(cufftResult r, int)
{
    return r;
}
static gf_status status_call(gf_status st, int)
{
    return st;
}

static gf_status try_cuda(cudaError_t e, char *err, size_t n)
{
    GF_TRY(err, n, cuda_call(e, 1));
    return GF_OK;
}
static gf_status try_cufft(cufftResult r, char *err, size_t n)
{
    GF_TRY(err, n, cufft_call(r, 2));
    return GF_OK;
}
static gf_status try_status(gf_status st, char *err, size_t n)
{
    GF_TRY(err, n, status_call(st, 3));
    return GF_OK;
}

static void test_messages(void)
{
    char err[256] = "untouched";
    CHECK(try_cuda(cudaSuccess, err, sizeof err) == GF_OK, "cudaSuccess failed");
    check_text(err, "untouched");
    CHECK(try_cuda(cudaErrorDevicesUnavailable, err, sizeof err) == GF_ERR_CUDA, "status");
    check_text(err, "cuda_call failed: CUDA-capable device(s) is/are busy or unavailable "
                    "(cudaErrorDevicesUnavailable)");
    CHECK(try_cuda(cudaErrorMemoryAllocation, err, sizeof err) == GF_ERR_NO_MEMORY, "status");
    check_text(err, "cuda_call failed: out of memory (cudaErrorMemoryAllocation)");
    CHECK(try_cufft(CUFFT_SUCCESS, err, sizeof err) == GF_OK, "CUFFT_SUCCESS failed");
    CHECK(try_cufft(CUFFT_ALLOC_FAILED, err, sizeof err) == GF_ERR_NO_MEMORY, "status");
    check_text(err, "cufft_call failed: cuFFT failed to allocate GPU or CPU memory "
                    "(CUFFT_ALLOC_FAILED)");
    CHECK(try_cufft(CUFFT_INTERNAL_ERROR, err, sizeof err) == GF_ERR_CUDA, "status");
    check_text(err, "cufft_call failed: driver or internal cuFFT library error "
                    "(CUFFT_INTERNAL_ERROR)");
    CHECK(try_cufft(CUFFT_EXEC_FAILED, err, sizeof err) == GF_ERR_CUDA, "status");
    check_text(err, "cufft_call failed: failed to execute an FFT on the GPU (CUFFT_EXEC_FAILED)");
    /* A gf_status passes through; its callee wrote the detail. */
    strcpy(err, "the callee's detail");
    CHECK(try_status(GF_ERR_NO_MEMORY, err, sizeof err) == GF_ERR_NO_MEMORY, "status");
    check_text(err, "the callee's detail");
    CHECK(try_status(GF_OK, err, sizeof err) == GF_OK, "GF_OK failed");
    /* A short buffer is cut, never overrun. */
    char small[12];
    memset(small, 'x', sizeof small);
    try_cuda(cudaErrorDevicesUnavailable, small, 10);
    check_text(small, "cuda_call");
    CHECK(small[10] == 'x' && small[11] == 'x', "wrote past the buffer");
}

/* Every result of the installed cuFFT by the name of its enumerator. */
static void test_cufft_names(void)
{
#define NAME(r) check_text(gf::cufft_name(r), #r)
    NAME(CUFFT_SUCCESS);
    NAME(CUFFT_INVALID_PLAN);
    NAME(CUFFT_ALLOC_FAILED);
    NAME(CUFFT_INVALID_TYPE);
    NAME(CUFFT_INVALID_VALUE);
    NAME(CUFFT_INTERNAL_ERROR);
    NAME(CUFFT_EXEC_FAILED);
    NAME(CUFFT_SETUP_FAILED);
    NAME(CUFFT_INVALID_SIZE);
    NAME(CUFFT_UNALIGNED_DATA);
    NAME(CUFFT_INVALID_DEVICE);
    NAME(CUFFT_NO_WORKSPACE);
    NAME(CUFFT_NOT_IMPLEMENTED);
    NAME(CUFFT_NOT_SUPPORTED);
#if CUFFT_VER_MAJOR >= 12
    NAME(CUFFT_MISSING_DEPENDENCY);
    NAME(CUFFT_NVRTC_FAILURE);
    NAME(CUFFT_NVJITLINK_FAILURE);
    NAME(CUFFT_NVSHMEM_FAILURE);
#else
    NAME(CUFFT_INCOMPLETE_PARAMETER_LIST);
    NAME(CUFFT_PARSE_ERROR);
    NAME(CUFFT_LICENSE_ERROR);
#endif
#undef NAME
    check_text(gf::cufft_name((cufftResult)99), "CUFFT_UNKNOWN");
    check_text(gf::cufft_message((cufftResult)99), "an unknown cuFFT result");
}

/* The calls a hook case makes, in order: its text and whether it is a
 * cuFFT call. */
struct call {
    const char *text;
    int cufft;
};
static const call calls[] = {
    {"cudaMalloc(&f->H, h_bytes)", 0},
    {"cufftCreate(&f->r2c)", 1},
    {"cudaMemcpyAsync(d, h, n, k, st)", 0},
    {"cudaMalloc(&f->ring, ring_bytes)", 0},
    {"cufftMakePlanMany(f->r2c, 1, &N)", 1},
    {"fft_mac launch", 0},
    {"cufftMakePlanMany(f->c2r, 1, &N)", 1},
    {"cudaMalloc(&f->xp, xp_bytes)", 0},
    {"fft_mac launch", 0},
    {"cufftExecR2C(plan, w, sp)", 1},
};
static const int ncalls = (int)(sizeof calls / sizeof calls[0]);

/* In a child with GPUFILT_FAULT=spec (NULL: unset), make the calls; the
 * result: 16 x (1 + the index of the call that failed) + how it failed
 * (1: out of memory, 2: another failure), or 0 when none did. A second
 * failure is an error (255). */
static int hook_case(const char *spec)
{
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        if (spec)
            setenv("GPUFILT_FAULT", spec, 1);
        else
            unsetenv("GPUFILT_FAULT");
        int got = 0;
        for (int i = 0; i < ncalls; i++) {
            int how = 0;
            if (calls[i].cufft) {
                const cufftResult r = gf::fault(CUFFT_SUCCESS, calls[i].text);
                how = r == CUFFT_SUCCESS          ? 0
                      : r == CUFFT_ALLOC_FAILED   ? 1
                      : r == CUFFT_INTERNAL_ERROR ? 2
                                                  : 3;
            } else {
                const cudaError_t e = gf::fault(cudaSuccess, calls[i].text);
                how = e == cudaSuccess                   ? 0
                      : e == cudaErrorMemoryAllocation   ? 1
                      : e == cudaErrorDevicesUnavailable ? 2
                                                         : 3;
            }
            if (how && got)
                _exit(255);
            if (how)
                got = 16 * (1 + i) + how;
        }
        /* A call that failed by itself is its own failure, not the hook's. */
        if (gf::fault(cudaErrorInvalidValue, "cudaMalloc(&p, 1)") != cudaErrorInvalidValue)
            _exit(254);
        _exit(got);
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws))
        return -1;
    return WEXITSTATUS(ws);
}

static void expect_hook(const char *spec, int index, int how)
{
    const int got = hook_case(spec);
    const int want = index < 0 ? 0 : 16 * (1 + index) + how;
    CHECK(got == want, "GPUFILT_FAULT=%s: call %d failed (how %d), expected call %d (how %d)",
          spec ? spec : "(unset)", got / 16 - 1, got % 16, index, how);
}

static void test_hook(void)
{
#ifdef GPUFILT_FAULT_INJECTION
    expect_hook(NULL, -1, 0);
    expect_hook("", -1, 0);
    /* The N-th call whose text contains TEXT; N counts only those. */
    expect_hook("cudaMalloc", 0, 1);
    expect_hook("cudaMalloc:2", 3, 1);
    expect_hook("cudaMalloc:3", 7, 1);
    expect_hook("cudaMalloc:4", -1, 0);
    expect_hook("cudaMalloc:2:fail", 3, 2);
    expect_hook("cudaMemcpyAsync:1", 2, 2);
    expect_hook("cudaMemcpyAsync:1:oom", 2, 1);
    /* cuFFT calls: a failure, or out of memory when asked. */
    expect_hook("cufftCreate:1", 1, 2);
    expect_hook("cufftMakePlanMany:2", 6, 2);
    expect_hook("cufftMakePlanMany:2:oom", 6, 1);
    expect_hook("cufftExecR2C:1", 9, 2);
    expect_hook("cufft:3", 6, 2);
    /* A launch is named by its kernel. */
    expect_hook("fft_mac launch:2", 8, 2);
    expect_hook("fft_mac:1", 5, 2);
    expect_hook("launch:2:oom", 8, 1);
    expect_hook("cufftPlanMany:1", -1, 0);
#else
    expect_hook("cudaMalloc:1", -1, 0); /* compiled away */
#endif
}

int main(void)
{
    test_messages();
    test_cufft_names();
    test_hook();
    if (failures)
        fprintf(stderr, "test_cuda_check: %d failed\n", failures);
    else
        printf("test_cuda_check: all passed\n");
    return failures ? 1 : 0;
}
