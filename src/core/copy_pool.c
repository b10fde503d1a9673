/* Host work split over a few threads (copy_pool.h). */
#include "copy_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Below this a copy is done by the caller alone: waking the pool costs
 * tens of microseconds. */
#define SPLIT_MIN        ((size_t)1 << 20)
#define MAX_COPY_THREADS 16

struct gf_copy_pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t th[MAX_COPY_THREADS];
    int nth;      /* workers (the caller is one more) */
    unsigned gen; /* job generation: workers wait for it to change */
    int pending;  /* workers still on the current job */
    int quit;
    void (*fn)(void *arg, int i, int pieces); /* the current job */
    void *arg;
};

static void *worker(void *arg)
{
    gf_copy_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    const int me = p->nth++; /* workers number themselves 0 .. nth-1 as they start */
    unsigned seen = p->gen;
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        const int pieces = p->nth + 1;
        void (*fn)(void *, int, int) = p->fn;
        void *job = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(job, me + 1, pieces);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gf_copy_pool *gf_copy_pool_create(int threads)
{
    if (threads < 2)
        return NULL;
    if (threads > MAX_COPY_THREADS + 1)
        threads = MAX_COPY_THREADS + 1;
    gf_copy_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    int started = 0;
    while (started < threads - 1 && pthread_create(&p->th[started], NULL, worker, p) == 0)
        started++;
    /* Wait until every started worker has numbered itself. */
    pthread_mutex_lock(&p->mu);
    while (p->nth < started) {
        pthread_mutex_unlock(&p->mu);
        sched_yield();
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    if (started == 0) {
        gf_copy_pool_destroy(p);
        return NULL;
    }
    return p;
}

void gf_copy_pool_destroy(gf_copy_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    const int n = p->nth;
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < n; i++)
        pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void gf_pool_run(gf_copy_pool *p, void (*fn)(void *arg, int i, int pieces), void *arg)
{
    if (!p) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->nth;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    const int pieces = p->nth + 1;
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, pieces);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
} copy_job;

/* Piece i of the copy split into `pieces` cache-line-aligned parts. */
static void copy_piece(void *arg, int i, int pieces)
{
    const copy_job *c = arg;
    const size_t per = ((c->n + (size_t)pieces - 1) / (size_t)pieces + 63) & ~(size_t)63;
    const size_t lo = (size_t)i * per, hi = lo + per < c->n ? lo + per : c->n;
    if (lo < hi)
        memcpy(c->dst + lo, c->src + lo, hi - lo);
}

void gf_copy(gf_copy_pool *p, void *dst, const void *src, size_t n)
{
    if (!p || n < SPLIT_MIN) {
        memcpy(dst, src, n);
        return;
    }
    copy_job c = {dst, src, n};
    gf_pool_run(p, copy_piece, &c);
}
