/* A backend set up on a background thread (handoff.h). */
#include "handoff.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { SETTING_UP = 0, READY = 1, FAILED = -1 };

struct gf_handoff {
    const gf_backend_ops *ops;
    gf_backend_params p;
    void *state;
    int taken;
    int n, registered; /* buffers, and how many are registered */
    void **bufs;
    size_t *sizes;
    pthread_t thread;
    atomic_int status;
    char err[256];
};

static void *setup(void *arg)
{
    gf_handoff *h = arg;
    gf_status st = h->ops->create(&h->p, &h->state, h->err, sizeof h->err);
    if (st != GF_OK) {
        h->state = NULL;
        atomic_store_explicit(&h->status, FAILED, memory_order_release);
        return NULL;
    }
    for (; h->ops->host_register && h->registered < h->n; h->registered++)
        if (h->bufs[h->registered] &&
            (st = h->ops->host_register(h->state, h->bufs[h->registered],
                                        h->sizes[h->registered])) != GF_OK) {
            gf_detail(h->err, sizeof h->err, "%s", h->ops->error(h->state));
            atomic_store_explicit(&h->status, FAILED, memory_order_release);
            return NULL;
        }
    atomic_store_explicit(&h->status, READY, memory_order_release);
    return NULL;
}

gf_status gf_handoff_start(gf_handoff **out, const gf_backend_ops *ops, const gf_backend_params *p,
                           void *const *bufs, const size_t *sizes, int n)
{
    *out = NULL;
    gf_handoff *h = calloc(1, sizeof *h);
    if (!h || !(h->bufs = calloc((size_t)n + 1, sizeof *h->bufs)) ||
        !(h->sizes = calloc((size_t)n + 1, sizeof *h->sizes))) {
        if (h)
            free(h->bufs);
        free(h);
        return GF_ERR_NO_MEMORY;
    }
    h->ops = ops;
    h->p = *p;
    h->n = n;
    memcpy(h->bufs, bufs, (size_t)n * sizeof *bufs);
    memcpy(h->sizes, sizes, (size_t)n * sizeof *sizes);
    atomic_init(&h->status, SETTING_UP);
    if (pthread_create(&h->thread, NULL, setup, h) != 0) {
        free(h->bufs);
        free(h->sizes);
        free(h);
        return GF_ERR_THREAD;
    }
    *out = h;
    return GF_OK;
}

int gf_handoff_poll(gf_handoff *h)
{
    return atomic_load_explicit(&h->status, memory_order_acquire);
}

void *gf_handoff_take(gf_handoff *h)
{
    h->taken = 1;
    return h->state;
}

const char *gf_handoff_error(const gf_handoff *h)
{
    return h->err;
}

void gf_handoff_destroy(gf_handoff *h)
{
    if (!h)
        return;
    pthread_join(h->thread, NULL);
    if (h->state && h->ops->host_unregister)
        for (int i = 0; i < h->registered; i++)
            if (h->bufs[i])
                h->ops->host_unregister(h->state, h->bufs[i]);
    if (h->state && !h->taken)
        h->ops->destroy(h->state);
    free(h->bufs);
    free(h->sizes);
    free(h);
}
