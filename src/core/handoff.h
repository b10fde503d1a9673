/*
 * Hand-off (gf_config.handoff): a backend set up on a background thread
 * while the engine filters on another one. The thread creates the backend
 * with the engine's parameters, then registers the engine's host buffers
 * with it (page-locking them for the CUDA backend) so it can use them
 * directly. The engine polls at chunk boundaries and takes the backend
 * once it is ready (handoff.c).
 */
#ifndef GF_HANDOFF_H
#define GF_HANDOFF_H

#include "backends/backend.h"

typedef struct gf_handoff gf_handoff;

/* Start setting up backend `ops` with parameters p (copied; what p points
 * to must outlive the hand-off) and register the n host buffers bufs[i] of
 * sizes[i] bytes (copied lists). GF_ERR_THREAD or GF_ERR_NO_MEMORY. */
gf_status gf_handoff_start(gf_handoff **out, const gf_backend_ops *ops, const gf_backend_params *p,
                           void *const *bufs, const size_t *sizes, int n);

/* 1: ready (gf_handoff_take gives the state); 0: still being set up;
 * -1: set-up failed (gf_handoff_error says why). Never blocks. */
int gf_handoff_poll(gf_handoff *h);

/* The ready backend's state, now the caller's (its buffers stay registered
 * until gf_handoff_destroy). */
void *gf_handoff_take(gf_handoff *h);

const char *gf_handoff_error(const gf_handoff *h);

/* Wait for the thread; unregister the buffers; destroy the backend state
 * if it was not taken (a taken one the caller destroys after this). */
void gf_handoff_destroy(gf_handoff *h);

#endif /* GF_HANDOFF_H */
