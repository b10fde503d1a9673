/*
 * Large host copies split over a few threads (copy_pool.c): the engine's
 * staging copies between caller memory and the CUDA backend's page-locked
 * slots, which one thread does at a fraction of PCIe's rate.
 */
#ifndef GF_COPY_POOL_H
#define GF_COPY_POOL_H

#include <stddef.h>

typedef struct gf_copy_pool gf_copy_pool;

/* A pool that copies with `threads` threads (the caller's among them);
 * NULL when threads < 2 or a thread cannot start (copies are then plain). */
gf_copy_pool *gf_copy_pool_create(int threads);
void gf_copy_pool_destroy(gf_copy_pool *p);

/* memcpy(dst, src, n), split over the pool when n is large enough to pay
 * for waking it; p may be NULL. One caller at a time. */
void gf_copy(gf_copy_pool *p, void *dst, const void *src, size_t n);

#endif /* GF_COPY_POOL_H */
