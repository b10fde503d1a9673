/*
 * Plain C view of the CUDA backend's host helpers (implemented in
 * backend_cuda.cu). The backend ops themselves are declared in backend.h.
 */
#ifndef GF_CUDA_H
#define GF_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when a CUDA device can be used (checked once, then cached). */
int gf_cuda_probe(void);
/* Page-locked host memory (cudaHostAlloc) or NULL. */
void *gf_cuda_pinned_alloc(size_t bytes);
void gf_cuda_pinned_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* GF_CUDA_H */
