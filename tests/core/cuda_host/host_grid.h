/*
 * A CUDA grid run on one host thread, for the kernel tests of kernels
 * whose threads meet only at __syncthreads (the FIR and FFT kernels).
 *
 * A block's threads run one after another up to their first barrier (a
 * thread that reaches it throws, which ends its turn); then each runs again
 * from the start, through the barriers it has passed, up to its next one;
 * and so on until every thread has returned. So whatever a kernel does
 * before a barrier must be repeatable with the same effect: true of a
 * kernel that stages global memory into shared memory and then computes
 * from it. A barrier such a kernel needs but lacks shows: thread 0 would
 * compute before the other threads have staged anything, from shared
 * memory poisoned before every block (all bits set: NaN in either float
 * type).
 *
 * Shared memory: the test's buffer behind the kernel's extern __shared__
 * array, with the launch's dynamic size; bytes past that size must keep
 * their poison (checked after every block), and under AddressSanitizer
 * any access to them is reported as it happens.
 */
#ifndef GF_TEST_HOST_GRID_H
#define GF_TEST_HOST_GRID_H

#include "cuda_runtime.h"

#include <cstring>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define GF_HOST_POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define GF_HOST_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define GF_HOST_POISON(p, n)   ((void)(p), (void)(n))
#define GF_HOST_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct gf_host_barrier {
};
static int g_host_pass, g_host_barriers;

void __syncthreads()
{
    if (++g_host_barriers == g_host_pass)
        throw gf_host_barrier();
}

/* The memory behind a kernel's extern __shared__ array. */
struct gf_host_smem {
    unsigned char *p;
    size_t cap;
};

/* One block of `threads` threads (blockIdx set by the caller). */
template <class K> static void gf_host_run_block(unsigned threads, K &kernel)
{
    std::vector<char> done(threads, 0);
    for (int pass = 1;; pass++) {
        bool waiting = false;
        for (unsigned t = 0; t < threads; t++) {
            if (done[t])
                continue;
            threadIdx = dim3(t);
            g_host_pass = pass;
            g_host_barriers = 0;
            try {
                kernel();
                done[t] = 1;
            } catch (const gf_host_barrier &) {
                waiting = true;
            }
        }
        if (!waiting)
            return;
    }
}

/* kernel() as a launch <<<grid, threads, smem_bytes>>>, shared memory sm. */
template <class K>
static void gf_host_launch(dim3 grid, unsigned threads, const gf_host_smem &sm, size_t smem_bytes,
                           K kernel)
{
    if (smem_bytes > sm.cap)
        gf_host_fault("launch asks for more shared memory than the test provides");
    gridDim = grid;
    blockDim = dim3(threads);
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = dim3(x, y, z);
                if (sm.cap) {
                    memset(sm.p, 0xFF, sm.cap);
                    GF_HOST_POISON(sm.p + smem_bytes, sm.cap - smem_bytes);
                }
                gf_host_run_block(threads, kernel);
                if (!sm.cap)
                    continue;
                GF_HOST_UNPOISON(sm.p + smem_bytes, sm.cap - smem_bytes);
                for (size_t i = smem_bytes; i < sm.cap; i++)
                    if (sm.p[i] != 0xFF)
                        gf_host_fault("write past the launch's dynamic shared memory");
            }
}

#endif /* GF_TEST_HOST_GRID_H */
