/*
 * The bulk path: gf_engine_process. Where nothing is buffered and the
 * backend may read and write the caller's memory, chunks go straight from
 * `in` to `out` (no staging copy, halo taken from the input itself);
 * otherwise, and for the rest, the push/pull loop of engine_stream.c.
 */
#include "engine_internal.h"

#include <stdint.h>
#include <string.h>

/* Copy the halo_samples samples that end at in[n_samples] (history, then
 * input) to dst. */
static void tail_samples(const gf_engine *e, unsigned char *dst, const unsigned char *history,
                         const unsigned char *in, size_t n_samples)
{
    const size_t ss = e->sample_bytes, hs = e->halo_samples;
    if (n_samples >= hs) {
        gf_copy(e->copies, dst, in + (n_samples - hs) * ss, hs * ss);
    } else {
        gf_copy(e->copies, dst, history + n_samples * ss, (hs - n_samples) * ss);
        gf_copy(e->copies, dst + (hs - n_samples) * ss, in, n_samples * ss);
    }
}

/* e->history: the halo_samples samples before this call's input (zeros at
 * the stream's start), loaded once per call when first needed (the FFT
 * method's history, on several devices, can be hundreds of MiB). */
static void load_history(gf_engine *e, int *loaded)
{
    const size_t hs = e->halo_samples, ss = e->sample_bytes;
    if (*loaded)
        return;
    *loaded = 1;
    if (e->history_slot < 0) {
        memset(e->history, 0, hs * ss);
    } else {
        gf_eng_slot_tail(e, e->history, &e->slot[e->history_slot]);
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
    const size_t C = e->channels, ss = e->sample_bytes, hs = e->halo_samples;
    gf_status st;
    int loaded = 0; /* e->history holds the history at the start of this call */
    int inflight[GF_MAX_SLOTS] = {0};
    size_t off = 0;
    int i; /* chunk i goes to slot (head + i) % nslots */
    for (i = 0; off < frames; i++) {
        const int s = (e->head + i) % e->nslots;
        if (inflight[s]) {
            if ((st = gf_eng_wait(e, s)) != GF_OK)
                return gf_eng_fail(e, st);
            inflight[s] = 0;
            if ((st = gf_eng_hist_merge(e, &e->slot[s])) != GF_OK)
                return st;
        }
        const size_t n = frames - off < e->chunk ? frames - off : e->chunk;
        const size_t skip = n < e->skip_left ? n : e->skip_left;
        /* The halo: the direct method's; one to prime with (the FFT
         * method on several devices) only once the stream has frames. */
        const unsigned char *halo = NULL;
        if (hs && !(e->mth->halo_primes && e->in_submitted == 0)) {
            if (off * C >= hs) {
                halo = in + (off * C - hs) * ss;
            } else {
                load_history(e, &loaded);
                tail_samples(e, e->slot[s].in, e->history, in, off * C);
                halo = e->slot[s].in;
            }
        }
        gf_chunk c = {
            .halo = halo,
            .in = in + off * C * ss,
            .frames = n,
            .skip = skip,
            .out = out + *produced * e->out_channels * ss,
        };
        e->skip_left -= skip;
        e->in_real += n;
        gf_eng_hist_chunk(e, &e->slot[s], &c, n, n - skip);
        if ((st = gf_eng_submit(e, s, &c)) != GF_OK)
            return gf_eng_fail(e, st);
        inflight[s] = 1;
        *produced += n - skip;
        off += n;
    }
    /* The chunks still in flight, oldest first (their histograms merge in order). */
    for (int j = i > e->nslots ? i - e->nslots : 0; j < i; j++) {
        const int s = (e->head + j) % e->nslots;
        if (!inflight[s])
            continue;
        if ((st = gf_eng_wait(e, s)) != GF_OK)
            return gf_eng_fail(e, st);
        if ((st = gf_eng_hist_merge(e, &e->slot[s])) != GF_OK)
            return st;
    }
    /* The new history goes to the slot that will be filled next (the one
     * after the last used, so that several devices keep taking chunks in
     * turn), as the tail of an empty chunk, where begin_fill looks for it. */
    e->head = (e->head + i) % e->nslots;
    gf_slot *f = &e->slot[e->head];
    if (frames * C < hs)
        load_history(e, &loaded);
    tail_samples(e, f->in, e->history, in, frames * C);
    f->frames = 0;
    f->zero_from = SIZE_MAX;
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
    const size_t fb = e->channels * e->sample_bytes, fbo = e->out_channels * e->sample_bytes;
    const unsigned char *src = in;
    unsigned char *dst = out;
    gf_status st;
    /* Straight from `in` to `out` where nothing is buffered: whole quanta
     * of the method (FFT: partitions); the rest goes the staged way. */
    const size_t whole = frames - frames % e->quantum;
    if (whole && !e->handoff && e->nsub == 0 && !(e->filling && e->filled > 0) && e->carried == 0 &&
        e->ops->direct_ok(e->backend, in, whole * fb) &&
        e->ops->direct_ok(e->backend, out, whole * fbo)) {
        if ((st = process_direct(e, in, whole, out, produced)) != GF_OK)
            return st;
        src += whole * fb;
        dst += *produced * fbo;
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
            if ((st = gf_eng_wait(e, e->head)) != GF_OK)
                return gf_eng_fail(e, st);
            if ((st = gf_eng_set_ready(e, e->head)) != GF_OK)
                return st;
        }
        if ((st = gf_engine_pull(e, dst, SIZE_MAX / fbo, &got)) != GF_OK)
            return st;
        dst += got * fbo;
        *produced += got;
    }
    return GF_OK;
}
