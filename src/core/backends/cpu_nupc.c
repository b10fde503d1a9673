/* The CPU backend's NUPC method (cpu_nupc.h). */
#include "cpu_nupc.h"

#include "fft/fft.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct nupc_level {
    gf_nupc_level lv;     /* its partition S, offset o, partitions K, taps */
    gf_cpu_fft *fft;      /* the FFT method over h[o .. o + taps) with partition S */
    size_t cap;           /* most frames of one of its chunks (whole blocks of S) */
    unsigned char *stage; /* input not yet run: cap frames x C, interleaved */
    size_t staged;        /* frames in stage (< S between chunks) */
    uint64_t taken;       /* stream frames it has run (its next block's first) */
    unsigned char *ring;  /* ring_frames x C of its outputs: stream frame f at f % ring_frames */
    size_t ring_frames;   /* at least the engine's chunk + o: nothing unread is overwritten */
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

void gf_cpu_nupc_destroy(gf_cpu_nupc *n)
{
    if (!n)
        return;
    for (size_t l = 0; l < n->nlevels; l++) {
        gf_cpu_fft_destroy(n->level[l].fft);
        gf_fft_free(n->level[l].stage);
        gf_fft_free(n->level[l].ring);
    }
    gf_fft_free(n->scratch);
    free(n);
}

void gf_cpu_nupc_reset(gf_cpu_nupc *n)
{
    const size_t fb = (size_t)n->channels * n->ss;
    for (size_t l = 0; l < n->nlevels; l++) {
        nupc_level *v = &n->level[l];
        gf_cpu_fft_reset(v->fft);
        v->staged = 0;
        v->taken = 0;
        memset(v->ring, 0, v->ring_frames * fb); /* outputs before o_l are 0 */
    }
    n->pos = 0;
}

/* Level l's taps: h[o .. o + taps) of every filter, in the precision. */
static void *segment(const gf_backend_params *p, const gf_nupc_level *lv, size_t ss)
{
    const int filters = p->taps_per_channel ? p->channels : 1;
    unsigned char *g = malloc((size_t)filters * lv->taps * ss);
    if (!g)
        return NULL;
    for (int h = 0; h < filters; h++)
        memcpy(g + (size_t)h * lv->taps * ss,
               (const unsigned char *)p->taps + ((size_t)h * p->num_taps + lv->offset) * ss,
               lv->taps * ss);
    return g;
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
    const size_t fb = (size_t)n->channels * n->ss;
    /* All the levels' memory, checked before any of it is taken (each
     * level's FFT state checks only its own): per level its filter
     * spectra, delay line, plans' buffers, stage and ring, as cpu_fft.c
     * counts them. */
    const int filters = p->taps_per_channel ? p->channels : 1;
    size_t need = 0;
    for (size_t l = 0; l < count; l++) {
        const size_t S = lv[l].size, cap = (n->chunk + S - 1) / S * S;
        const size_t spec = ((S + 1 + 7) & ~(size_t)7) * 2 * n->ss;
        need += ((size_t)filters * lv[l].partitions +
                 (size_t)n->channels * (lv[l].partitions - 1 + cap / S)) *
                    spec +
                (size_t)threads * (4 * S * n->ss + 2 * spec) +
                (S + 2 * cap + lv[l].offset + n->chunk) * fb;
    }
    const size_t avail = gf_host_available();
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
        nupc_level *v = &n->level[l];
        v->lv = lv[l];
        n->nlevels = l + 1;
        const size_t S = lv[l].size;
        v->cap = (n->chunk + S - 1) / S * S;
        v->ring_frames = n->chunk + lv[l].offset + S;
        most = v->cap > most ? v->cap : most;
        void *g = segment(p, &lv[l], n->ss);
        gf_backend_params q = *p;
        q.method = GF_METHOD_FFT;
        q.num_taps = lv[l].taps;
        q.taps = g;
        q.partition = S;
        q.max_partition = S;
        q.chunk_frames = v->cap;
        q.history_frames = 0;
        q.hist = NULL;
        st = g ? gf_cpu_fft_create(&q, threads, &v->fft, detail, detail_size) : GF_ERR_NO_MEMORY;
        free(g);
        if (st != GF_OK)
            break;
        v->stage = gf_fft_alloc(v->cap * fb);
        v->ring = gf_fft_alloc(v->ring_frames * fb);
        if (!v->stage || !v->ring)
            st = GF_ERR_NO_MEMORY;
    }
    if (st == GF_OK && !(n->scratch = gf_fft_alloc(most * fb)))
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

/* Copy `frames` interleaved frames to ring position `at` (wrapping). */
static void ring_put(const gf_cpu_nupc *n, nupc_level *v, uint64_t at, const unsigned char *src,
                     size_t frames)
{
    const size_t fb = (size_t)n->channels * n->ss;
    size_t r = (size_t)(at % v->ring_frames);
    while (frames > 0) {
        const size_t k = frames < v->ring_frames - r ? frames : v->ring_frames - r;
        memcpy(v->ring + r * fb, src, k * fb);
        src += k * fb;
        frames -= k;
        r = 0;
    }
}

/* Run `blocks` whole blocks of level v from in (interleaved), its outputs
 * to its ring at their stream frames plus o. */
static void level_run(gf_cpu_nupc *n, nupc_level *v, const unsigned char *in, size_t blocks,
                      gf_cpu_nupc_run run, void *ctx)
{
    const gf_chunk lc = {.in = in, .frames = blocks * v->lv.size, .out = n->scratch};
    run(ctx, v->fft, &lc);
    ring_put(n, v, v->taken + v->lv.offset, n->scratch, lc.frames);
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
    /* Every level has then run every block that ends in this chunk; the
     * outputs of level l >= 1 for the chunk's frames come from blocks that
     * end at least o_l - S_l >= 0 frames earlier, so all are in the rings. */
    for (size_t l = 0; l < n->nlevels; l++)
        level_take(n, &n->level[l], c->in, c->frames, run, ctx);
    sum_levels(n, c, n->prec == GF_PRECISION_F32 ? sizeof(float) : sizeof(double));
    n->pos += c->frames;
}
