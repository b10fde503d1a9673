/*
 * Plain C view of the CUDA backend's host helpers and device queries
 * (implemented in backend_cuda.cu). The backend ops themselves are declared in backend.h.
 */
#ifndef GF_CUDA_H
#define GF_CUDA_H

#include "gpufilt.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when a CUDA device can be used (checked once, then cached). */
int gf_cuda_probe(void);
/* Page-locked host memory (cudaHostAlloc) or NULL. */
void *gf_cuda_pinned_alloc(size_t bytes);
void gf_cuda_pinned_free(void *p);
/* CUDA devices present: 0 when the driver or the devices are missing. */
int gf_cuda_count(void);
/* Device index (0 <= index < gf_cuda_count()) into *info, which the caller
 * zeroed: GF_OK, or GF_ERR_CUDA when it cannot be asked. The calling
 * thread's current device is restored. */
gf_status gf_cuda_describe(int index, gf_cuda_device *info);

#ifdef __cplusplus
}
#endif

#endif /* GF_CUDA_H */
