/*
 * The CPU backend's NUPC method (cpu_nupc.h).
 *
 * Where a level's slack, o_l - S_l frames, holds LEVEL_ASYNC_CHUNKS engine
 * chunks (a live engine's chunks are one block of B), the level runs on a
 * thread of its own, below the caller's priority: the chunk's input is
 * given to it (a ring of whole blocks), it transforms each block as soon
 * as the block is complete, and the calling thread waits for the level
 * only when the chunk's outputs need it, (o_l - S_l) / chunk chunks later.
 * So no chunk carries a big level's burst (zita-convolver runs its larger
 * partitions the same way); the arithmetic, and so the bytes, are those of
 * the level run in line.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* syscall */
#endif
#include "cpu_nupc.h"
#include "nupc_scheme.h"

#include "fft/fft.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* A level thread's nice value (Linux): the worker that waits for it, at
 * nice 0, gets about nine tenths of a core it shares with one. */
#define LEVEL_NICE 10

typedef struct nupc_level {
    gf_nupc_level lv;     /* its partition S, offset o, partitions K, taps */
    gf_cpu_fft *fft;      /* the FFT method over h[o .. o + taps) with partition S */
    size_t fb;            /* bytes per frame */
    size_t cap;           /* most frames of one of its chunks (whole blocks of S) */
    unsigned char *stage; /* input not yet run: cap frames x C, interleaved */
    size_t staged;        /* frames in stage (< S between chunks) */
    uint64_t taken;       /* stream frames it has run (its next block's first) */
    unsigned char *ring;  /* ring_frames x C of its outputs: stream frame f at f % ring_frames */
    size_t ring_frames;   /* at least the engine's chunk + o: nothing unread is overwritten */
    /* On a thread of its own (above); taken, under mu, is then what the
     * thread has run, and given what it was given. */
    int async;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* given, taken or stop changed */
    unsigned char *in_ring; /* in_frames x C of input: stream frame f at f % in_frames */
    size_t in_frames;       /* whole blocks: a block is contiguous in it */
    uint64_t given;         /* stream frames given to it */
    int stop;               /* the thread is to end */
    unsigned char *out;     /* a block's output: S x C */
} nupc_level;

struct gf_cpu_nupc {
    gf_precision prec;
    size_t ss;      /* bytes per sample */
    int channels;   /* C */
    size_t chunk;   /* most frames of an engine chunk */
    size_t nlevels; /* L */
    nupc_level level[GF_NUPC_MAX_LEVELS];
    unsigned char *scratch; /* a level chunk's output: max cap x C */
    uint64_t pos;           /* stream frame of the next chunk's first */
};

/* A level on its own thread: nothing complete left to run (it is idle). */
static void level_idle(nupc_level *v)
{
    pthread_mutex_lock(&v->mu);
    while (v->given - v->taken >= v->lv.size)
        pthread_cond_wait(&v->cv, &v->mu);
    pthread_mutex_unlock(&v->mu);
}

void gf_cpu_nupc_destroy(gf_cpu_nupc *n)
{
    if (!n)
        return;
    for (size_t l = 0; l < n->nlevels; l++) {
        nupc_level *v = &n->level[l];
        if (v->async) {
            pthread_mutex_lock(&v->mu);
            v->stop = 1;
            pthread_cond_broadcast(&v->cv);
            pthread_mutex_unlock(&v->mu);
            pthread_join(v->thread, NULL);
            pthread_cond_destroy(&v->cv);
            pthread_mutex_destroy(&v->mu);
        }
        gf_cpu_fft_destroy(v->fft);
        gf_fft_free(v->stage);
        gf_fft_free(v->ring);
        gf_fft_free(v->in_ring);
        gf_fft_free(v->out);
    }
    gf_fft_free(n->scratch);
    free(n);
}

void gf_cpu_nupc_reset(gf_cpu_nupc *n)
{
    for (size_t l = 0; l < n->nlevels; l++) {
        nupc_level *v = &n->level[l];
        if (v->async)
            level_idle(v); /* then its thread touches nothing until given more */
        gf_cpu_fft_reset(v->fft);
        memset(v->ring, 0, v->ring_frames * v->fb); /* outputs before o_l are 0 */
        if (v->async)
            pthread_mutex_lock(&v->mu);
        v->staged = 0;
        v->taken = 0;
        v->given = 0;
        if (v->async)
            pthread_mutex_unlock(&v->mu);
    }
    n->pos = 0;
}

/* A level runs on a thread of its own where its slack holds this many
 * engine chunks. The levels due sooner are small (a live engine's block
 * B: up to S = 16 B, whose transforms cost a few percent of a block), and
 * run in line: on a thread, the operating system's time-sharing with the
 * big levels' threads could delay them past their few blocks of slack. */
#define LEVEL_ASYNC_CHUNKS 32

static int level_async(const gf_nupc_level *lv, size_t l, size_t chunk)
{
    return l > 0 && lv->offset - lv->size >= LEVEL_ASYNC_CHUNKS * chunk;
}

/* A level on its own thread holds the input it has not run: at most o +
 * chunk frames once the caller waits for outputs due (taken >= pos + chunk
 * - o), plus a partial block; whole blocks, so each is contiguous. */
static size_t in_ring_frames(const gf_nupc_level *lv, size_t chunk)
{
    return ((lv->offset + chunk) / lv->size + 2) * lv->size;
}

/* Put `frames` interleaved frames at stream frame `at` of a ring of
 * ring_frames frames (wrapping). */
static void ring_copy(unsigned char *ring, size_t ring_frames, size_t fb, uint64_t at,
                      const unsigned char *src, size_t frames)
{
    size_t r = (size_t)(at % ring_frames);
    while (frames > 0) {
        const size_t k = frames < ring_frames - r ? frames : ring_frames - r;
        memcpy(ring + r * fb, src, k * fb);
        src += k * fb;
        frames -= k;
        r = 0;
    }
}

/* A level's thread: each block as soon as it is given, on this thread
 * alone (the level's FFT state is this thread's: its thread slot 0), its
 * outputs to the ring at their stream frames plus o. */
static void *level_thread(void *arg)
{
    nupc_level *v = arg;
    const size_t S = v->lv.size;
#ifdef __linux__
    /* Below the threads that wait for it (nice is a thread's own on Linux):
     * its work is due long after it is given, theirs by the next block. */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LEVEL_NICE) != 0)
        errno = 0; /* not allowed: it runs at the default */
#endif
    pthread_mutex_lock(&v->mu);
    for (;;) {
        while (!v->stop && v->given - v->taken < S)
            pthread_cond_wait(&v->cv, &v->mu);
        if (v->stop)
            break;
        const uint64_t b = v->taken;
        pthread_mutex_unlock(&v->mu);
        const gf_chunk lc = {
            .in = v->in_ring + (size_t)(b % v->in_frames) * v->fb, .frames = S, .out = v->out};
        gf_cpu_fft_forward(v->fft, &lc, 0, gf_cpu_fft_units(v->fft, &lc), 0);
        gf_cpu_fft_output(v->fft, &lc, 0, gf_cpu_fft_output_units(v->fft, &lc), 0);
        gf_cpu_fft_end(v->fft, &lc);
        ring_copy(v->ring, v->ring_frames, v->fb, b + v->lv.offset, v->out, S);
        pthread_mutex_lock(&v->mu);
        v->taken = b + S;
        pthread_cond_broadcast(&v->cv);
    }
    pthread_mutex_unlock(&v->mu);
    return NULL;
}

/* Level v on a thread of its own, for engine chunks of at most `chunk`. */
static gf_status level_start(nupc_level *v, size_t chunk)
{
    v->in_frames = in_ring_frames(&v->lv, chunk);
    v->in_ring = gf_fft_alloc(v->in_frames * v->fb);
    v->out = gf_fft_alloc(v->lv.size * v->fb);
    if (!v->in_ring || !v->out)
        return GF_ERR_NO_MEMORY;
    if (pthread_mutex_init(&v->mu, NULL) != 0)
        return GF_ERR_NO_MEMORY;
    if (pthread_cond_init(&v->cv, NULL) != 0) {
        pthread_mutex_destroy(&v->mu);
        return GF_ERR_NO_MEMORY;
    }
    /* At the default priority, whatever the creating thread's: a live
     * engine's worker (and audio callback) may run in real time, and the
     * level's work, due long after it is given, must not delay them. */
    pthread_attr_t attr;
    struct sched_param prio = {0};
    const int made = pthread_attr_init(&attr) == 0;
    if (made && (pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) != 0 ||
                 pthread_attr_setschedpolicy(&attr, SCHED_OTHER) != 0 ||
                 pthread_attr_setschedparam(&attr, &prio) != 0))
        pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
    const int rc = pthread_create(&v->thread, made ? &attr : NULL, level_thread, v);
    if (made)
        pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_cond_destroy(&v->cv);
        pthread_mutex_destroy(&v->mu);
        return GF_ERR_NO_MEMORY;
    }
    v->async = 1;
    return GF_OK;
}

/* Give level v (on its own thread) `frames` input frames. The ring holds
 * what it has not run (in_ring_frames), so this waits only on a thread
 * that fell a ring behind, which the caller's waits for outputs prevent. */
static void level_give(nupc_level *v, const unsigned char *in, size_t frames)
{
    pthread_mutex_lock(&v->mu);
    while (v->given + frames - v->taken > v->in_frames)
        pthread_cond_wait(&v->cv, &v->mu);
    pthread_mutex_unlock(&v->mu);
    /* Frames [given, given + frames) are the caller's alone until given moves. */
    ring_copy(v->in_ring, v->in_frames, v->fb, v->given, in, frames);
    pthread_mutex_lock(&v->mu);
    const size_t S = v->lv.size;
    const int complete = (v->given + frames) / S > v->given / S; /* a block for the thread */
    v->given += frames;
    if (complete)
        pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
}

/* Wait until level v (on its own thread) has written every output before
 * stream frame `end`: its blocks up to end - o. */
static void level_wait(nupc_level *v, uint64_t end)
{
    pthread_mutex_lock(&v->mu);
    while (v->taken + v->lv.offset < end)
        pthread_cond_wait(&v->cv, &v->mu);
    pthread_mutex_unlock(&v->mu);
}

/* All the levels' memory, checked before any of it is taken (each level's
 * FFT state checks only its own): per level its filter spectra, delay
 * line, plans' buffers, stage and ring, as cpu_fft.c counts them, and a
 * level's input ring and block output where it has a thread. */
static size_t need_bytes(const gf_cpu_nupc *n, const gf_backend_params *p, int threads,
                         const gf_nupc_level *lv, size_t count)
{
    const int filters = p->taps_per_channel ? p->channels : 1;
    const size_t fb = (size_t)n->channels * n->ss;
    size_t need = 0;
    for (size_t l = 0; l < count; l++) {
        const size_t S = lv[l].size, cap = (n->chunk + S - 1) / S * S;
        const size_t spec = ((S + 1 + 7) & ~(size_t)7) * 2 * n->ss;
        need += ((size_t)filters * lv[l].partitions +
                 (size_t)n->channels * (lv[l].partitions - 1 + cap / S)) *
                    spec +
                (size_t)threads * (4 * S * n->ss + 2 * spec) +
                (S + 2 * cap + lv[l].offset + n->chunk) * fb;
        if (level_async(&lv[l], l, n->chunk))
            need += (in_ring_frames(&lv[l], n->chunk) + S) * fb;
    }
    return need;
}

/* Level l of n: its FFT state over its segment of the taps, its stage and
 * ring, and its thread where it has one. */
static gf_status level_make(gf_cpu_nupc *n, const gf_backend_params *p, int threads,
                            const gf_nupc_level *lv, size_t l, char *detail, size_t detail_size)
{
    nupc_level *v = &n->level[l];
    const size_t S = lv->size, fb = (size_t)n->channels * n->ss;
    v->lv = *lv;
    v->fb = fb;
    v->cap = (n->chunk + S - 1) / S * S;
    v->ring_frames = n->chunk + lv->offset + S;
    void *g = gf_nupc_segment(p, lv, n->ss);
    const gf_backend_params q = gf_nupc_level_params(p, lv, g, v->cap);
    gf_status st =
        g ? gf_cpu_fft_create(&q, threads, &v->fft, detail, detail_size) : GF_ERR_NO_MEMORY;
    free(g);
    if (st != GF_OK)
        return st;
    v->stage = gf_fft_alloc(v->cap * fb);
    v->ring = gf_fft_alloc(v->ring_frames * fb);
    if (!v->stage || !v->ring)
        return GF_ERR_NO_MEMORY;
    return level_async(lv, l, n->chunk) ? level_start(v, n->chunk) : GF_OK;
}

gf_status gf_cpu_nupc_create(const gf_backend_params *p, int threads, gf_cpu_nupc **out,
                             char *detail, size_t detail_size)
{
    *out = NULL;
    gf_cpu_nupc *n = calloc(1, sizeof *n);
    if (!n)
        return GF_ERR_NO_MEMORY;
    n->prec = p->precision;
    n->ss = p->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    n->channels = p->channels;
    n->chunk = p->chunk_frames;
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    const size_t count = gf_nupc_levels(p->num_taps, p->partition, p->max_partition, lv);
    const size_t need = need_bytes(n, p, threads, lv, count), avail = gf_host_available();
    if (need > avail) {
        gf_detail(detail, detail_size,
                  "the NUPC filter needs %.1f MiB of host memory (%zu taps x %d channel%s, "
                  "partitions %zu..%zu); %.1f MiB are available",
                  (double)need / (1 << 20), p->num_taps, p->channels, p->channels == 1 ? "" : "s",
                  p->partition, p->max_partition, (double)avail / (1 << 20));
        free(n);
        return GF_ERR_NO_MEMORY;
    }
    size_t most = 0;
    gf_status st = GF_OK;
    for (size_t l = 0; st == GF_OK && l < count; l++) {
        n->nlevels = l + 1;
        st = level_make(n, p, threads, &lv[l], l, detail, detail_size);
        most = n->level[l].cap > most ? n->level[l].cap : most;
    }
    if (st == GF_OK && !(n->scratch = gf_fft_alloc(most * (size_t)n->channels * n->ss)))
        st = GF_ERR_NO_MEMORY;
    if (st != GF_OK) {
        if (st == GF_ERR_NO_MEMORY && (!detail || !detail[0]))
            gf_detail(detail, detail_size,
                      "the NUPC filter's %zu levels (%zu taps x %d channel%s): not enough host "
                      "memory",
                      count, p->num_taps, p->channels, p->channels == 1 ? "" : "s");
        gf_cpu_nupc_destroy(n);
        return st;
    }
    gf_cpu_nupc_reset(n);
    *out = n;
    return GF_OK;
}

/* Run `blocks` whole blocks of level v from in (interleaved), its outputs
 * to its ring at their stream frames plus o. */
static void level_run(gf_cpu_nupc *n, nupc_level *v, const unsigned char *in, size_t blocks,
                      gf_cpu_nupc_run run, void *ctx)
{
    const gf_chunk lc = {.in = in, .frames = blocks * v->lv.size, .out = n->scratch};
    run(ctx, v->fft, &lc);
    ring_copy(v->ring, v->ring_frames, v->fb, v->taken + v->lv.offset, n->scratch, lc.frames);
    v->taken += lc.frames;
}

/* Level v takes `frames` input frames: whole blocks run straight from the
 * input where nothing is staged, the rest through its stage. Each block is
 * run once, in stream order, whatever the pieces it came in. */
static void level_take(gf_cpu_nupc *n, nupc_level *v, const unsigned char *in, size_t frames,
                       gf_cpu_nupc_run run, void *ctx)
{
    const size_t fb = (size_t)n->channels * n->ss, S = v->lv.size;
    while (frames > 0) {
        if (v->staged == 0 && frames >= S) {
            size_t k = (frames < v->cap ? frames : v->cap) / S;
            level_run(n, v, in, k, run, ctx);
            in += k * S * fb;
            frames -= k * S;
            continue;
        }
        const size_t k = frames < v->cap - v->staged ? frames : v->cap - v->staged;
        memcpy(v->stage + v->staged * fb, in, k * fb);
        v->staged += k;
        in += k * fb;
        frames -= k;
        const size_t blocks = v->staged / S;
        if (blocks == 0)
            continue;
        level_run(n, v, v->stage, blocks, run, ctx);
        v->staged -= blocks * S;
        memmove(v->stage, v->stage + blocks * S * fb, v->staged * fb);
    }
}

/* Output frames [skip, frames) of chunk c: y = y_0 + y_1 + ... in level
 * order, each sum rounded as written (f32 and f64 alike); a level at a time
 * over runs of its ring that do not wrap. ss: the sample's size. */
static void sum_levels(const gf_cpu_nupc *n, const gf_chunk *c, size_t ss)
{
    const size_t C = (size_t)n->channels;
    for (size_t l = 0; l < n->nlevels; l++) {
        const nupc_level *v = &n->level[l];
        for (size_t i = c->skip; i < c->frames;) {
            const size_t r = (size_t)((n->pos + i) % v->ring_frames);
            const size_t run =
                c->frames - i < v->ring_frames - r ? c->frames - i : v->ring_frames - r;
            unsigned char *y = (unsigned char *)c->out + (i - c->skip) * C * ss;
            const unsigned char *src = (const unsigned char *)v->ring + r * C * ss;
            if (l == 0)
                memcpy(y, src, run * C * ss);
            else if (ss == sizeof(float))
                for (size_t k = 0; k < run * C; k++)
                    ((float *)y)[k] = ((float *)y)[k] + ((const float *)src)[k];
            else
                for (size_t k = 0; k < run * C; k++)
                    ((double *)y)[k] = ((double *)y)[k] + ((const double *)src)[k];
            i += run;
        }
    }
}

void gf_cpu_nupc_chunk(gf_cpu_nupc *n, const gf_chunk *c, gf_cpu_nupc_run run, void *ctx)
{
    /* Levels on their own threads are given the input first, so that they
     * run while the others do. Then every level has run, or is running,
     * every block that ends in this chunk; the outputs of level l >= 1 for
     * the chunk's frames come from blocks that end at least o_l - S_l >= 0
     * frames earlier: in line, all are in the rings; on a thread, they are
     * once it has run the blocks up to the chunk's end - o_l. */
    for (size_t l = 0; l < n->nlevels; l++)
        if (n->level[l].async)
            level_give(&n->level[l], c->in, c->frames);
    for (size_t l = 0; l < n->nlevels; l++)
        if (!n->level[l].async)
            level_take(n, &n->level[l], c->in, c->frames, run, ctx);
    for (size_t l = 0; l < n->nlevels; l++)
        if (n->level[l].async)
            level_wait(&n->level[l], n->pos + c->frames);
    sum_levels(n, c, n->prec == GF_PRECISION_F32 ? sizeof(float) : sizeof(double));
    n->pos += c->frames;
}
