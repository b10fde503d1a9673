/*
 * Host work split over a few threads (copy_pool.c): the engine's staging
 * copies between caller memory and the CUDA backend's page-locked slots,
 * which one thread does at a fraction of PCIe's rate, and the widening of
 * histogram partials into their records (hist.c), as many bytes again.
 */
#ifndef GF_COPY_POOL_H
#define GF_COPY_POOL_H

#include <stddef.h>

typedef struct gf_copy_pool gf_copy_pool;

/* A pool that works with `threads` threads (the caller's among them);
 * NULL when threads < 2 or a thread cannot start (work is then the
 * caller's alone). */
gf_copy_pool *gf_copy_pool_create(int threads);
void gf_copy_pool_destroy(gf_copy_pool *p);

/* memcpy(dst, src, n), split over the pool when n is large enough to pay
 * for waking it; p may be NULL. One caller at a time. */
void gf_copy(gf_copy_pool *p, void *dst, const void *src, size_t n);

/* fn(arg, i, pieces) for i = 0 .. pieces - 1, each on its own thread (the
 * caller's is piece 0), returning when all have; pieces is the pool's
 * threads, 1 without a pool (p NULL): the caller's work only. Each piece
 * must take its own share of the work. One caller at a time. */
void gf_pool_run(gf_copy_pool *p, void (*fn)(void *arg, int i, int pieces), void *arg);

#endif /* GF_COPY_POOL_H */
