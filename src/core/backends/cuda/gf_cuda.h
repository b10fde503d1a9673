/*
 * The CUDA module's interface: plain C, the only thing libgpufilt and
 * libgpufilt-cuda.so share. The module (everything under backends/cuda/,
 * linked with cuFFT and the CUDA runtime) exports one symbol,
 * gf_cuda_module_entry, which hands out its backend ops and the device
 * queries the public API needs; libgpufilt loads it at run time
 * (cuda_module.c), so the library itself needs no CUDA library and a
 * machine without one still runs the cpu and ref backends.
 */
#ifndef GF_CUDA_H
#define GF_CUDA_H

#include "backend.h"
#include "gpufilt.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module's file name, and the symbol it exports. */
#define GF_CUDA_MODULE_FILE   "libgpufilt-cuda.so"
#define GF_CUDA_MODULE_SYMBOL "gf_cuda_module_entry"
/* Bumped whenever gf_cuda_module, gf_backend_ops, gf_backend_params,
 * gf_chunk or gf_hist_plan change: a module built from other sources is
 * refused rather than trusted. */
#define GF_CUDA_MODULE_INTERFACE 4

typedef struct gf_cuda_module {
    int interface;      /* GF_CUDA_MODULE_INTERFACE of the sources it was built from */
    size_t ops_size;    /* sizeof(gf_backend_ops) there */
    size_t params_size; /* sizeof(gf_backend_params) there */
    const gf_backend_ops *ops;
    /* 1 when a CUDA device can be used (checked once, then cached). */
    int (*probe)(void);
    /* Page-locked host memory (cudaHostAlloc) or NULL; free. */
    void *(*pinned_alloc)(size_t bytes);
    void (*pinned_free)(void *p);
    /* Page-lock the caller's memory (cudaHostRegister, portable): GF_OK,
     * or GF_ERR_CUDA with the driver's reason in why[why_len]; undo. */
    gf_status (*host_register)(void *p, size_t bytes, char *why, size_t why_len);
    void (*host_unregister)(void *p);
    /* CUDA devices present: 0 when the driver or the devices are missing. */
    int (*count)(void);
    /* Device index (0 <= index < count()) into *info, which the caller
     * zeroed: GF_OK, or GF_ERR_CUDA when it cannot be asked. The calling
     * thread's current device is restored. */
    gf_status (*describe)(int index, gf_cuda_device *info);
} gf_cuda_module;

/* Exported by the module (backend_cuda.cu): its table, static storage. */
const gf_cuda_module *gf_cuda_module_entry(void);

/* In libgpufilt (cuda_module.c): the module, loaded on the first call
 * (thread-safe, once), or NULL with *why (NULL-safe) a one-line reason in
 * static storage: "the CUDA module libgpufilt-cuda.so is not installed" or
 * "the CUDA module PATH could not be loaded: ...". */
const gf_cuda_module *gf_cuda_module_load(const char **why);
/* The module's backend ops, for the registry's CUDA entry (gf_backend_entry.load). */
const gf_backend_ops *gf_cuda_backend_load(const char **why);

#ifdef __cplusplus
}
#endif

#endif /* GF_CUDA_H */
