/*
 * The engine: cuts a stream into chunks, carries the T-1 halo frames from
 * each chunk to the next (direct method), keeps up to `slots` chunks in
 * flight on the backend and hands their output back in order.
 *
 * Every mode is computed as the causal filter z[j] = sum_k h[k] x[j-k] with
 * zero initial history. Same mode is z delayed by its latency c = (T-1)/2:
 * the first c outputs are dropped and c zero frames are fed at flush, so the
 * output length equals the input length; full mode feeds T-1 zero frames at
 * flush and drops nothing. One mechanism for every mode keeps chunk seams
 * identical everywhere.
 *
 * FFT method: the backend keeps the history (a delay line of spectra), so
 * chunks carry no halo; every chunk holds whole partitions of P frames, in
 * stream order. Frames past the last whole partition wait in `carry` until
 * more input completes the partition, or flush pads it with zeros (whose
 * outputs are dropped).
 *
 * Slot ring: slots are used in round-robin order. Submitted slots occupy
 * [head, head + nsub); the slot after them is the one being filled. A slot's
 * input buffer is [halo | chunk frames]; the halo of the next chunk is the
 * tail of the previous slot's buffer, which stays intact until that slot
 * comes round again.
 *
 * Hand-off (gf_config.handoff, handoff.h): the engine starts on a backend
 * that finishes chunks in submit (cpu, ref) while another is set up on a
 * background thread with the same parameters; at the first chunk boundary
 * after it is ready, chunks go to it. The slot buffers (allocated by the
 * first, registered with the second) and the halo in them carry on as they
 * are; each slot remembers which backend took its chunk.
 *
 * Histograms (hist.h): every chunk is told which frames of the
 * histogrammed stream it holds (hist_chunk) and its partials are merged
 * when its slot is seen ready, which happens in stream order (pull and the
 * staged process take the head slot; wait, gf_engine_hist_next and the
 * direct path go from the oldest chunk on). The last short block is queued
 * once the stream has been flushed and every chunk is ready.
 */
#include "backends/backend.h"
#include "copy_pool.h"
#include "handoff.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct gf_slot {
    unsigned char *in;  /* halo_samples + chunk samples */
    unsigned char *out; /* chunk samples */
    size_t frames;      /* input frames of the submitted chunk */
    size_t out_frames;  /* outputs it produces (frames - skip) */
    size_t out_pos;     /* outputs already pulled */
    int ready;          /* backend reported the output in host memory */
    void *hparts;       /* partial histograms of its chunk (NULL: histograms off) */
    uint64_t hpos;      /* first histogrammed stream frame of its chunk */
    size_t hframes;     /* histogrammed frames in its chunk */
} gf_slot;

struct gf_engine {
    gf_config cfg; /* cfg.taps is not kept: see taps_d */
    const gf_backend_ops *ops;
    void *bk;
    size_t C, T;          /* channels, taps */
    gf_method method;     /* GF_METHOD_DIRECT or GF_METHOD_FFT */
    size_t P;             /* FFT partition in frames; 0 for direct */
    size_t chunk;         /* frames per chunk (FFT: a multiple of P) */
    size_t hs;            /* halo samples: (T-1)*C for direct, 0 for FFT */
    size_t ss;            /* bytes per sample */
    size_t latency;       /* (T-1)/2 in same mode, else 0 */
    size_t nf;            /* filters: 1, or C with per-channel taps */
    double *taps_d;       /* nf x T taps as doubles (after rounding to precision) */
    void *taps;           /* the same in the precision, handed to the backend */
    unsigned char *carry; /* FFT: frames past the last whole partition */
    size_t carried;       /* frames in carry (< P) */
    int nslots;
    gf_slot slot[GF_MAX_SLOTS];
    unsigned char *history; /* the last hs input samples, for the direct path */
    int head, nsub;
    int filling;       /* slot (head + nsub) % nslots is being filled */
    size_t filled;     /* frames in it */
    int history_slot;  /* slot whose buffer tail holds the last hs samples; -1: zeros */
    size_t skip_left;  /* same-mode outputs still to drop */
    size_t zeros_left; /* look-ahead zero frames still to feed after flush */
    int flushed;
    gf_status failed; /* sticky: a backend failure ends the stream */
    char err[256];
    gf_hist_config hcfg; /* cfg.hist points here when histograms are on */
    gf_hist_plan hplan;
    gf_hist_state *hg; /* NULL: histograms off */
    uint64_t in_real;  /* input frames taken (flush zeros not counted) */
    uint64_t in_sub;   /* input frames submitted, flush zeros included */
    uint64_t out_sub;  /* output frames submitted */
    gf_handoff *ho;    /* the hand-off backend being set up, or NULL */
    const gf_backend_ops *ops2;
    void *bk2;                         /* the hand-off backend once taken */
    int64_t handoff_frame;             /* input frame where it took over; -1 */
    unsigned char owner[GF_MAX_SLOTS]; /* 1: the slot's chunk went to bk2 */
    int err_owner;                     /* whose error detail fail_with reports */
    gf_copy_pool *copies;              /* staging copies for the CUDA backend, or NULL */
};

/* The backend of slot s's chunk. */
static gf_status bk_submit(gf_engine *e, int s, const gf_chunk *c)
{
    e->err_owner = e->owner[s];
    return e->owner[s] ? e->ops2->submit(e->bk2, s, c) : e->ops->submit(e->bk, s, c);
}

static gf_status bk_query(gf_engine *e, int s, int *done)
{
    e->err_owner = e->owner[s];
    return e->owner[s] ? e->ops2->query(e->bk2, s, done) : e->ops->query(e->bk, s, done);
}

static gf_status bk_wait(gf_engine *e, int s)
{
    e->err_owner = e->owner[s];
    return e->owner[s] ? e->ops2->wait(e->bk2, s) : e->ops->wait(e->bk, s);
}

/* Taps rounded to the precision; the mean filter's 1/T is a correctly
 * rounded division in that precision. */
static void make_taps(gf_engine *e, const gf_config *c)
{
    for (size_t k = 0; k < e->nf * e->T; k++) {
        if (c->precision == GF_PRECISION_F32) {
            float h = c->taps ? (float)c->taps[k] : 1.0f / (float)e->T;
            ((float *)e->taps)[k] = h;
            e->taps_d[k] = h;
        } else {
            double h = c->taps ? c->taps[k] : 1.0 / (double)e->T;
            ((double *)e->taps)[k] = h;
            e->taps_d[k] = h;
        }
    }
}

static gf_status pick_backend(const gf_config *c, const gf_backend_ops **ops, char *detail,
                              size_t n)
{
    (void)detail;
    (void)n;
    switch (c->device) {
    case GF_DEVICE_REF:
        *ops = &gf_backend_ref;
        return GF_OK;
    case GF_DEVICE_CPU:
        *ops = &gf_backend_cpu;
        return GF_OK;
    case GF_DEVICE_CUDA:
#ifdef GPUFILT_HAVE_CUDA
        *ops = &gf_backend_cuda;
        return GF_OK;
#else
        gf_detail(detail, n, "this gpufilt was built without CUDA");
        return GF_ERR_NO_DEVICE;
#endif
    case GF_DEVICE_AUTO:
        *ops = gf_cuda_available() ? NULL : &gf_backend_cpu;
#ifdef GPUFILT_HAVE_CUDA
        if (!*ops)
            *ops = &gf_backend_cuda;
#endif
        return GF_OK;
    }
    return GF_ERR_INVALID_ARGUMENT;
}

/* The backend a hand-off goes to, if this build has it and the engine can
 * hand over: the direct method, from a backend that finishes chunks in
 * submit (one slot). */
static const gf_backend_ops *handoff_ops(const gf_engine *e, gf_device d)
{
    if (e->method != GF_METHOD_DIRECT || e->ops->slots != 1)
        return NULL;
    switch (d) {
    case GF_DEVICE_CPU:
        return &gf_backend_cpu;
    case GF_DEVICE_REF:
        return &gf_backend_ref;
    case GF_DEVICE_CUDA:
#ifdef GPUFILT_HAVE_CUDA
        return &gf_backend_cuda;
#else
        return NULL;
#endif
    default:
        return NULL;
    }
}

void gf_engine_destroy(gf_engine *e)
{
    if (!e)
        return;
    if (e->bk) {
        for (int s = 0; s < e->nslots; s++)
            bk_wait(e, s);         /* nothing may still read or write host buffers */
        gf_handoff_destroy(e->ho); /* joins its thread, unregisters the buffers */
        gf_copy_pool_destroy(e->copies);
        if (e->bk2)
            e->ops2->destroy(e->bk2);
        for (int s = 0; s < e->nslots; s++) {
            e->ops->host_free(e->bk, e->slot[s].in);
            e->ops->host_free(e->bk, e->slot[s].out);
            e->ops->host_free(e->bk, e->slot[s].hparts);
        }
        e->ops->host_free(e->bk, e->history);
        e->ops->host_free(e->bk, e->carry);
        e->ops->destroy(e->bk);
    }
    gf_hist_state_destroy(e->hg);
    free(e->taps_d);
    free(e->taps);
    free(e);
}

/* The method and partition: the config's, or the cost model's; one the
 * backend can run in the precision. */
static gf_status pick_method(gf_engine *e, const gf_config *c, char *detail, size_t n)
{
    const unsigned can =
        c->precision == GF_PRECISION_F32 ? e->ops->methods_f32 : e->ops->methods_f64;
    const int can_fft = (can & GF_METHOD_BIT(GF_METHOD_FFT)) != 0;
    e->method = c->method;
    if (e->method == GF_METHOD_AUTO) {
        e->method = gf_method_choose(e->T, c->channels, c->precision, e->ops->device, c->partition);
        if (e->method == GF_METHOD_FFT && !can_fft && e->T <= GF_MAX_TAPS)
            e->method = GF_METHOD_DIRECT;
    }
    if (e->method == GF_METHOD_FFT && !can_fft) {
        gf_detail(detail, n, "the %s backend of this build has no FFT method in %s%s", e->ops->name,
                  c->precision == GF_PRECISION_F32 ? "f32" : "f64",
                  e->T > GF_MAX_TAPS ? " (needed beyond 8192 taps)" : "");
        return GF_ERR_UNSUPPORTED;
    }
    if (e->method == GF_METHOD_FFT)
        e->P = c->partition ? c->partition : gf_partition_choose(e->T, e->ops->device);
    return GF_OK;
}

static void reset_state(gf_engine *e)
{
    e->head = 0;
    e->nsub = 0;
    e->filling = 0;
    e->filled = 0;
    e->carried = 0;
    e->history_slot = -1;
    e->skip_left = e->latency;
    e->zeros_left = 0;
    e->flushed = 0;
    e->in_real = e->in_sub = e->out_sub = 0;
    if (e->hg)
        gf_hist_state_reset(e->hg);
    for (int s = 0; s < e->nslots; s++) {
        e->slot[s].frames = e->slot[s].out_frames = e->slot[s].out_pos = 0;
        e->slot[s].ready = 0;
    }
}

/* The chunk: the config's, or the backend's default; histograms may shorten
 * it to bound their partials' memory. */
static size_t round_to_partitions(size_t frames, size_t P, int up)
{
    const size_t whole = up ? (frames + P - 1) / P * P : frames / P * P;
    return whole < P ? P : whole;
}

static gf_status plan_chunks(gf_engine *e, const gf_config *config, char *detail, size_t n)
{
    e->chunk = config->chunk_frames;
    if (e->chunk == 0) {
        size_t samples = e->ops->chunk_samples;
        if (e->ops2 && e->ops2->chunk_samples > samples) /* the hand-off's: it does the most */
            samples = e->ops2->chunk_samples;
        e->chunk = samples / e->C;
        if (e->chunk == 0)
            e->chunk = 1;
    }
    if (e->P) {
        /* At least 16 partitions by default: a chunk's transforms and delay
         * line work are then large enough to be efficient. */
        if (!config->chunk_frames && e->chunk < 16 * e->P)
            e->chunk = 16 * e->P;
        e->chunk = round_to_partitions(e->chunk, e->P, 1);
    }
    if (config->hist) {
        e->hcfg = *config->hist;
        e->cfg.hist = &e->hcfg;
        gf_hist_plan_make(&e->hcfg, config->channels, e->nslots, &e->chunk, &e->hplan);
        if (e->P) { /* a chunk holds whole partitions, whatever that costs */
            e->chunk = round_to_partitions(e->chunk, e->P, 0);
            e->hplan.max_segs = gf_hist_segs_for(e->chunk, e->hplan.block);
        }
        e->hg = gf_hist_state_create(&e->hplan);
        if (!e->hg) {
            gf_detail(detail, n, "cannot allocate histograms of %zu bins x %d records",
                      e->hplan.bins, e->hplan.nrec);
            return GF_ERR_NO_MEMORY;
        }
    }
    e->cfg.chunk_frames = e->chunk;
    e->cfg.device = e->ops->device;
    return GF_OK;
}

/* Every slot's staging buffers (and partial histograms), and the history. */
static gf_status alloc_buffers(gf_engine *e, char *detail, size_t n)
{
    const size_t part_bytes = e->hplan.max_segs * (size_t)e->hplan.nrec * e->hplan.part_bytes;
    for (int s = 0; s < e->nslots; s++) {
        gf_slot *sl = &e->slot[s];
        sl->in = e->ops->host_alloc(e->bk, (e->hs + e->chunk * e->C) * e->ss);
        sl->out = e->ops->host_alloc(e->bk, e->chunk * e->C * e->ss);
        if (!sl->in || !sl->out) {
            gf_detail(detail, n, "cannot allocate %zu-frame staging buffers", e->chunk);
            return GF_ERR_NO_MEMORY;
        }
        if (e->hg && !(sl->hparts = e->ops->host_alloc(e->bk, part_bytes))) {
            gf_detail(detail, n, "cannot allocate %zu bytes of partial histograms", part_bytes);
            return GF_ERR_NO_MEMORY;
        }
    }
    e->history = e->ops->host_alloc(e->bk, e->hs * e->ss);
    if (e->P)
        e->carry = e->ops->host_alloc(e->bk, e->P * e->C * e->ss);
    return e->history && (!e->P || e->carry) ? GF_OK : GF_ERR_NO_MEMORY;
}

/* Set up the hand-off backend in the background, with the slot buffers
 * to register. */
static gf_status start_handoff(gf_engine *e, const gf_backend_params *p, char *detail, size_t n)
{
    void *bufs[3 * GF_MAX_SLOTS];
    size_t sizes[3 * GF_MAX_SLOTS];
    const size_t part_bytes = e->hplan.max_segs * (size_t)e->hplan.nrec * e->hplan.part_bytes;
    int k = 0;
    for (int s = 0; s < e->nslots; s++) {
        bufs[k] = e->slot[s].in;
        sizes[k++] = (e->hs + e->chunk * e->C) * e->ss;
        bufs[k] = e->slot[s].out;
        sizes[k++] = e->chunk * e->C * e->ss;
        bufs[k] = e->slot[s].hparts; /* NULL without histograms: skipped */
        sizes[k++] = part_bytes;
    }
    const gf_status st = gf_handoff_start(&e->ho, e->ops2, p, bufs, sizes, k);
    if (st != GF_OK)
        gf_detail(detail, n, "cannot start the hand-off's set-up thread");
    return st;
}

gf_status gf_engine_create(const gf_config *config, gf_engine **out, char *detail,
                           size_t detail_size)
{
    gf_detail(detail, detail_size, "%s", "");
    if (!out)
        return GF_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!config) {
        gf_detail(detail, detail_size, "config is NULL");
        return GF_ERR_INVALID_ARGUMENT;
    }
    gf_status st = gf_config_check(config, detail, detail_size);
    if (st != GF_OK)
        return st;

    gf_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GF_ERR_NO_MEMORY;
    e->cfg = *config;
    e->cfg.taps = NULL;
    e->cfg.hist = NULL;
    e->C = (size_t)config->channels;
    e->T = config->num_taps;
    e->nf = config->taps_per_channel ? e->C : 1;
    e->ss = config->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    e->latency = config->mode == GF_MODE_SAME ? (e->T - 1) / 2 : 0;
    e->taps_d = malloc(e->nf * e->T * sizeof(double));
    e->taps = malloc(e->nf * e->T * e->ss);
    if (!e->taps_d || !e->taps) {
        gf_detail(detail, detail_size, "cannot allocate %zu taps", e->nf * e->T);
        st = GF_ERR_NO_MEMORY;
        goto fail;
    }
    make_taps(e, config);
    if ((st = pick_backend(config, &e->ops, detail, detail_size)) != GF_OK ||
        (st = pick_method(e, config, detail, detail_size)) != GF_OK)
        goto fail;
    e->hs = e->method == GF_METHOD_DIRECT ? (e->T - 1) * e->C : 0;
    e->cfg.method = e->method;
    e->cfg.partition = e->P;
    e->handoff_frame = -1;
    e->ops2 = handoff_ops(e, config->handoff);
    e->nslots = e->ops2 && e->ops2->slots > e->ops->slots ? e->ops2->slots : e->ops->slots;
    if ((st = plan_chunks(e, config, detail, detail_size)) != GF_OK)
        goto fail;
    const gf_backend_params p = {
        .channels = config->channels,
        .num_taps = e->T,
        .taps = e->taps,
        .taps_per_channel = config->taps_per_channel,
        .method = e->method,
        .partition = e->P,
        .precision = config->precision,
        .chunk_frames = e->chunk,
        .threads = config->threads,
        .cuda_device = config->cuda_device,
        .hist = e->hg ? &e->hplan : NULL,
    };
    if ((st = e->ops->create(&p, &e->bk, detail, detail_size)) != GF_OK) {
        e->bk = NULL;
        goto fail;
    }
    if ((st = alloc_buffers(e, detail, detail_size)) != GF_OK ||
        (e->ops2 && (st = start_handoff(e, &p, detail, detail_size)) != GF_OK))
        goto fail;
    /* Staging copies to and from page-locked slots: one thread does a
     * fraction of PCIe's rate, so the CUDA backend's are split. */
    if (e->ops->device == GF_DEVICE_CUDA || (e->ops2 && e->ops2->device == GF_DEVICE_CUDA)) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        e->copies = gf_copy_pool_create(cpus < 8 ? (int)cpus : 8);
    }
    reset_state(e);
    *out = e;
    return GF_OK;

fail:
    gf_engine_destroy(e);
    return st;
}

static gf_status fail_with(gf_engine *e, gf_status st)
{
    e->failed = st;
    snprintf(e->err, sizeof e->err, "%s",
             e->err_owner ? e->ops2->error(e->bk2) : e->ops->error(e->bk));
    return st;
}

/* ---- histograms ---- */

/* Fill the histogram fields of chunk c, about to be submitted in slot sl
 * with `frames` input frames (flush zeros included) and `out_frames`
 * outputs, and count them as submitted. */
static void hist_chunk(gf_engine *e, gf_slot *sl, gf_chunk *c, size_t frames, size_t out_frames)
{
    if (e->hg) {
        uint64_t pos = e->out_sub;
        size_t n = out_frames;
        if (e->hplan.of_input) {
            /* Flush zeros come after every real frame: only real ones count,
             * and a chunk of zeros sits at the end of the input stream. */
            const uint64_t real = e->in_real > e->in_sub ? e->in_real - e->in_sub : 0;
            pos = e->in_sub < e->in_real ? e->in_sub : e->in_real;
            n = real < frames ? (size_t)real : frames;
        }
        c->hist = sl->hparts;
        c->hist_pos = sl->hpos = pos;
        c->hist_frames = sl->hframes = n;
    }
    e->in_sub += frames;
    e->out_sub += out_frames;
}

static gf_status hist_fail(gf_engine *e, gf_status st)
{
    e->failed = st;
    snprintf(e->err, sizeof e->err, "%s",
             st == GF_ERR_NO_MEMORY ? "histograms: cannot grow the queue of records"
                                    : "histograms: chunk merged out of stream order");
    return st;
}

/* Merge the partials of slot sl's chunk, which the backend has finished. */
static gf_status hist_merge(gf_engine *e, gf_slot *sl)
{
    if (!e->hg)
        return GF_OK;
    gf_status st = gf_hist_merge(e->hg, sl->hparts, sl->hpos, sl->hframes);
    return st == GF_OK ? GF_OK : hist_fail(e, st);
}

/* The backend is done with submitted slot s (callers go in stream order). */
static gf_status set_ready(gf_engine *e, int s)
{
    e->slot[s].ready = 1;
    return hist_merge(e, &e->slot[s]);
}

/* After flush, once every chunk is submitted and ready: the last block. */
static gf_status hist_check_end(gf_engine *e)
{
    if (!e->hg || e->failed || !e->flushed || e->zeros_left > 0 || (e->filling && e->filled > 0))
        return GF_OK;
    for (int i = 0; i < e->nsub; i++)
        if (!e->slot[(e->head + i) % e->nslots].ready)
            return GF_OK;
    gf_status st = gf_hist_finish(e->hg);
    return st == GF_OK ? GF_OK : hist_fail(e, st);
}

/* Start filling the slot after the submitted ones: its halo is the history
 * (direct), or it starts with the carried incomplete partition (FFT). */
static void begin_fill(gf_engine *e)
{
    gf_slot *f = &e->slot[(e->head + e->nsub) % e->nslots];
    if (e->history_slot < 0)
        memset(f->in, 0, e->hs * e->ss);
    else {
        const gf_slot *h = &e->slot[e->history_slot];
        memmove(f->in, h->in + h->frames * e->C * e->ss, e->hs * e->ss);
    }
    e->filling = 1;
    e->filled = e->carried;
    if (e->carried)
        memcpy(f->in, e->carry, e->carried * e->C * e->ss);
    e->carried = 0;
}

/* At a chunk boundary: take the hand-off backend if it is ready. The chunk
 * about to be submitted is the first it filters. */
static void take_handoff(gf_engine *e, size_t chunk_frames)
{
    if (!e->ho || e->bk2 || gf_handoff_poll(e->ho) != 1)
        return;
    e->bk2 = gf_handoff_take(e->ho);
    e->handoff_frame = (int64_t)(e->in_sub - chunk_frames); /* in_sub counts this chunk */
}

/* Submit the slot being filled. The FFT method submits whole partitions:
 * at the end of the stream (flushed, no zeros left to feed) the last one is
 * padded with zeros whose outputs are dropped; before it, an incomplete one
 * is carried to the next chunk. */
static gf_status submit_fill(gf_engine *e)
{
    const int s = (e->head + e->nsub) % e->nslots;
    gf_slot *f = &e->slot[s];
    const size_t fb = e->C * e->ss;
    size_t real = e->filled, frames = real;
    if (e->P && real % e->P) {
        if (e->flushed && e->zeros_left == 0) {
            frames = real + e->P - real % e->P;
            memset(f->in + real * fb, 0, (frames - real) * fb);
        } else {
            frames = real = real - real % e->P;
            e->carried = e->filled - real;
            memcpy(e->carry, f->in + real * fb, e->carried * fb);
        }
    }
    const size_t skip = real < e->skip_left ? real : e->skip_left;
    gf_chunk c = {
        .halo = e->hs ? f->in : NULL,
        .in = f->in + e->hs * e->ss,
        .frames = frames,
        .skip = skip,
        .out = f->out,
    };
    e->skip_left -= skip;
    f->frames = frames;
    f->out_frames = real - skip;
    f->out_pos = 0;
    f->ready = 0;
    hist_chunk(e, f, &c, real, f->out_frames);
    e->filling = 0;
    e->filled = 0;
    e->nsub++;
    e->history_slot = s;
    take_handoff(e, frames);
    e->owner[s] = e->bk2 != NULL;
    gf_status st = bk_submit(e, s, &c);
    return st == GF_OK ? GF_OK : fail_with(e, st);
}

gf_status gf_engine_push(gf_engine *e, const void *in, size_t frames, size_t *consumed)
{
    if (!e || !consumed || (!in && frames))
        return GF_ERR_INVALID_ARGUMENT;
    *consumed = 0;
    if (e->failed)
        return e->failed;
    if (e->flushed)
        return GF_ERR_STATE;
    const unsigned char *src = in;
    const size_t fb = e->C * e->ss; /* bytes per frame */
    while (frames > 0) {
        if (!e->filling) {
            if (e->nsub == e->nslots)
                break;
            begin_fill(e);
        }
        gf_slot *f = &e->slot[(e->head + e->nsub) % e->nslots];
        size_t n = e->chunk - e->filled;
        if (n > frames)
            n = frames;
        gf_copy(e->copies, f->in + e->hs * e->ss + e->filled * fb, src, n * fb);
        e->filled += n;
        e->in_real += n;
        src += n * fb;
        frames -= n;
        *consumed += n;
        if (e->filled == e->chunk) {
            gf_status st = submit_fill(e);
            if (st != GF_OK)
                return st;
        }
    }
    return GF_OK;
}

/* After flush: feed the look-ahead zeros and submit the last partial chunk,
 * as far as free slots allow. */
static gf_status pump_flush(gf_engine *e)
{
    for (;;) {
        if (e->zeros_left == 0 && !(e->filling && e->filled > 0) && e->carried == 0)
            return GF_OK;
        if (!e->filling) {
            if (e->nsub == e->nslots)
                return GF_OK;
            begin_fill(e);
        }
        gf_slot *f = &e->slot[(e->head + e->nsub) % e->nslots];
        size_t n = e->chunk - e->filled;
        if (n > e->zeros_left)
            n = e->zeros_left;
        memset(f->in + (e->hs + e->filled * e->C) * e->ss, 0, n * e->C * e->ss);
        e->filled += n;
        e->zeros_left -= n;
        if (e->filled == e->chunk || e->zeros_left == 0) {
            gf_status st = submit_fill(e);
            if (st != GF_OK)
                return st;
        }
    }
}

gf_status gf_engine_flush(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    if (e->failed)
        return e->failed;
    if (!e->flushed) {
        e->flushed = 1;
        e->zeros_left = e->cfg.mode == GF_MODE_FULL ? e->T - 1 : e->latency;
    }
    gf_status st = pump_flush(e);
    return st == GF_OK ? hist_check_end(e) : st;
}

gf_status gf_engine_pull(gf_engine *e, void *out, size_t max_frames, size_t *got)
{
    if (!e || !got || (!out && max_frames))
        return GF_ERR_INVALID_ARGUMENT;
    *got = 0;
    if (e->failed)
        return e->failed;
    unsigned char *dst = out;
    const size_t fb = e->C * e->ss;
    gf_status st;
    while (max_frames > 0) {
        if (e->flushed && (st = pump_flush(e)) != GF_OK)
            return st;
        if (e->nsub == 0)
            break;
        const int s = e->head;
        gf_slot *h = &e->slot[s];
        if (!h->ready) {
            int done = 0;
            if ((st = bk_query(e, s, &done)) != GF_OK)
                return fail_with(e, st);
            if (!done) {
                /* Wait only when nothing else can make progress. */
                if (*got > 0 || !(e->nsub == e->nslots || e->flushed))
                    break;
                if ((st = bk_wait(e, s)) != GF_OK)
                    return fail_with(e, st);
            }
            if ((st = set_ready(e, s)) != GF_OK)
                return st;
        }
        size_t n = h->out_frames - h->out_pos;
        if (n > max_frames)
            n = max_frames;
        gf_copy(e->copies, dst, h->out + h->out_pos * fb, n * fb);
        dst += n * fb;
        h->out_pos += n;
        max_frames -= n;
        *got += n;
        if (h->out_pos == h->out_frames) {
            h->ready = 0;
            e->head = (e->head + 1) % e->nslots;
            e->nsub--;
        }
    }
    return hist_check_end(e);
}

gf_status gf_engine_submit(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    if (e->failed)
        return e->failed;
    /* The slot being filled was reserved when filling began. The FFT
     * method needs a whole partition. */
    if (e->flushed || !e->filling || e->filled == 0 || e->filled < e->P)
        return GF_OK;
    return submit_fill(e);
}

gf_status gf_engine_wait(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    if (e->failed)
        return e->failed;
    for (int i = 0; i < e->nsub; i++) {
        gf_slot *s = &e->slot[(e->head + i) % e->nslots];
        if (!s->ready) {
            gf_status st = bk_wait(e, (e->head + i) % e->nslots);
            if (st != GF_OK)
                return fail_with(e, st);
            if ((st = set_ready(e, (e->head + i) % e->nslots)) != GF_OK)
                return st;
        }
    }
    return hist_check_end(e);
}

gf_status gf_engine_reset(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    for (int s = 0; s < e->nslots; s++)
        bk_wait(e, s);
    if (e->ops->reset)
        e->ops->reset(e->bk);
    if (e->bk2 && e->ops2->reset)
        e->ops2->reset(e->bk2);
    reset_state(e);
    e->failed = GF_OK;
    e->err[0] = '\0';
    return GF_OK;
}

/* Copy the hs samples that end at in[n_samples] (history, then input) to dst. */
static void tail_samples(const gf_engine *e, unsigned char *dst, const unsigned char *history,
                         const unsigned char *in, size_t n_samples)
{
    const size_t ss = e->ss, hs = e->hs;
    if (n_samples >= hs) {
        memcpy(dst, in + (n_samples - hs) * ss, hs * ss);
    } else {
        memcpy(dst, history + n_samples * ss, (hs - n_samples) * ss);
        memcpy(dst + (hs - n_samples) * ss, in, n_samples * ss);
    }
}

/*
 * Bulk path with nothing buffered: chunks go from `in` to `out` with no
 * staging copy. The halo of a chunk is the input just before it, or (near
 * the start) history plus input assembled in the slot's own buffer.
 */
static gf_status process_direct(gf_engine *e, const unsigned char *in, size_t frames,
                                unsigned char *out, size_t *produced)
{
    const size_t C = e->C, ss = e->ss, hs = e->hs;
    gf_status st;
    /* The history at the start of this call. */
    if (e->history_slot < 0)
        memset(e->history, 0, hs * ss);
    else {
        const gf_slot *h = &e->slot[e->history_slot];
        memmove(e->history, h->in + h->frames * C * ss, hs * ss);
    }
    int inflight[GF_MAX_SLOTS] = {0};
    size_t off = 0;
    int i; /* chunk i goes to slot (head + i) % nslots */
    for (i = 0; off < frames; i++) {
        const int s = (e->head + i) % e->nslots;
        if (inflight[s]) {
            if ((st = bk_wait(e, s)) != GF_OK)
                return fail_with(e, st);
            inflight[s] = 0;
            if ((st = hist_merge(e, &e->slot[s])) != GF_OK)
                return st;
        }
        const size_t n = frames - off < e->chunk ? frames - off : e->chunk;
        const size_t skip = n < e->skip_left ? n : e->skip_left;
        const unsigned char *halo;
        if (off * C >= hs)
            halo = in + (off * C - hs) * ss;
        else {
            tail_samples(e, e->slot[s].in, e->history, in, off * C);
            halo = e->slot[s].in;
        }
        gf_chunk c = {
            .halo = halo,
            .in = in + off * C * ss,
            .frames = n,
            .skip = skip,
            .out = out + *produced * C * ss,
        };
        e->skip_left -= skip;
        e->in_real += n;
        hist_chunk(e, &e->slot[s], &c, n, n - skip);
        if ((st = bk_submit(e, s, &c)) != GF_OK)
            return fail_with(e, st);
        inflight[s] = 1;
        *produced += n - skip;
        off += n;
    }
    /* The chunks still in flight, oldest first (their histograms merge in order). */
    for (int j = i > e->nslots ? i - e->nslots : 0; j < i; j++) {
        const int s = (e->head + j) % e->nslots;
        if (!inflight[s])
            continue;
        if ((st = bk_wait(e, s)) != GF_OK)
            return fail_with(e, st);
        if ((st = hist_merge(e, &e->slot[s])) != GF_OK)
            return st;
    }
    /* The new history goes to the slot that will be filled next, as the tail
     * of an empty chunk, where begin_fill looks for it. */
    gf_slot *f = &e->slot[e->head];
    tail_samples(e, f->in, e->history, in, frames * C);
    f->frames = 0;
    e->history_slot = e->head;
    e->filling = 0;
    return GF_OK;
}

gf_status gf_engine_process(gf_engine *e, const void *in, size_t frames, void *out,
                            size_t *produced)
{
    if (!e || !produced || (frames && (!in || !out)))
        return GF_ERR_INVALID_ARGUMENT;
    *produced = 0;
    if (e->failed)
        return e->failed;
    if (e->flushed)
        return GF_ERR_STATE;
    if (frames == 0)
        return GF_OK;
    const size_t fb = e->C * e->ss;
    const unsigned char *src = in;
    unsigned char *dst = out;
    gf_status st;
    /* Straight from `in` to `out` where nothing is buffered: whole
     * partitions for the FFT method; the rest goes the staged way. */
    const size_t whole = e->P ? frames - frames % e->P : frames;
    if (whole && !e->ho && e->nsub == 0 && !(e->filling && e->filled > 0) && e->carried == 0 &&
        e->ops->direct_ok(e->bk, in, whole * fb) && e->ops->direct_ok(e->bk, out, whole * fb)) {
        if ((st = process_direct(e, in, whole, out, produced)) != GF_OK)
            return st;
        src += whole * fb;
        dst += *produced * fb;
        frames -= whole;
    }

    /* Staged: a push/pull loop, then every submitted chunk drained. */
    while (frames > 0 || e->nsub > 0) {
        size_t used = 0, got = 0;
        if (frames > 0) {
            if ((st = gf_engine_push(e, src, frames, &used)) != GF_OK)
                return st;
            src += used * fb;
            frames -= used;
        }
        /* Once everything is pushed, wait for each chunk still in flight. */
        if (frames == 0 && e->nsub > 0 && !e->slot[e->head].ready) {
            if ((st = bk_wait(e, e->head)) != GF_OK)
                return fail_with(e, st);
            if ((st = set_ready(e, e->head)) != GF_OK)
                return st;
        }
        if ((st = gf_engine_pull(e, dst, SIZE_MAX / fb, &got)) != GF_OK)
            return st;
        dst += got * fb;
        *produced += got;
    }
    return GF_OK;
}

/* Mark the slots the backend has finished, oldest first, without waiting. */
static void hist_poll(gf_engine *e)
{
    for (int i = 0; i < e->nsub; i++) {
        const int s = (e->head + i) % e->nslots;
        if (e->slot[s].ready)
            continue;
        int done = 0;
        gf_status st = bk_query(e, s, &done);
        if (st != GF_OK) {
            fail_with(e, st);
            return;
        }
        if (!done || set_ready(e, s) != GF_OK)
            return;
    }
    hist_check_end(e);
}

int gf_engine_hist_next(gf_engine *e, gf_hist_record *rec)
{
    if (!e || !rec || !e->hg)
        return 0;
    if (!e->failed)
        hist_poll(e);
    return gf_hist_pop(e->hg, rec);
}

size_t gf_engine_max_pending(const gf_engine *e)
{
    return e ? ((size_t)e->nslots + 1) * e->chunk + e->P : 0;
}

size_t gf_engine_latency(const gf_engine *e)
{
    return e ? e->latency : 0;
}

const char *gf_engine_backend(const gf_engine *e)
{
    return !e ? "" : e->bk2 ? e->ops2->name : e->ops->name;
}

size_t gf_engine_chunk_frames(const gf_engine *e)
{
    return e ? e->chunk : 0;
}

const char *gf_engine_error(const gf_engine *e)
{
    return e ? e->err : "";
}

int64_t gf_engine_handoff_frame(const gf_engine *e)
{
    return e ? e->handoff_frame : -1;
}

const char *gf_engine_handoff_error(const gf_engine *e)
{
    if (!e || !e->ho)
        return e && e->cfg.handoff != GF_DEVICE_AUTO && !e->ops2
                   ? "no hand-off: it needs the direct method, and a backend this build has"
                   : "";
    return gf_handoff_poll(e->ho) < 0 ? gf_handoff_error(e->ho) : "";
}

gf_status gf_engine_taps(const gf_engine *e, double *taps)
{
    return gf_engine_channel_taps(e, 0, taps);
}

gf_status gf_engine_channel_taps(const gf_engine *e, int channel, double *taps)
{
    if (!e || !taps || channel < 0 || (size_t)channel >= e->C)
        return GF_ERR_INVALID_ARGUMENT;
    memcpy(taps, e->taps_d + (e->nf == 1 ? 0 : (size_t)channel * e->T), e->T * sizeof(double));
    return GF_OK;
}

void gf_engine_get_config(const gf_engine *e, gf_config *config)
{
    if (!e || !config)
        return;
    *config = e->cfg;
    config->taps = NULL;
    config->hist = NULL;
}

gf_method gf_engine_method(const gf_engine *e)
{
    return e ? e->method : GF_METHOD_AUTO;
}

size_t gf_engine_partition(const gf_engine *e)
{
    return e ? e->P : 0;
}

double gf_engine_error_bound(const gf_engine *e, int channel, double max_abs_x)
{
    if (!e || channel < 0 || (size_t)channel >= e->C || !(max_abs_x >= 0))
        return NAN;
    if (e->method != GF_METHOD_FFT)
        return 0;
    const double eps = e->cfg.precision == GF_PRECISION_F32 ? 0x1p-24 : 0x1p-53;
    double log2n = 0;
    for (size_t n = 2 * e->P; n > 1; n >>= 1)
        log2n += 1;
    const double K = (double)((e->T + e->P - 1) / e->P);
    const double *h = e->taps_d + (e->nf == 1 ? 0 : (size_t)channel * e->T);
    double sum = 0;
    for (size_t k = 0; k < e->T; k++)
        sum += fabs(h[k]);
    return eps * (2 * log2n + K + 4) * sum * max_abs_x;
}
