/*
 * The stream core: the slot ring behind gf_engine_push, _pull, _flush,
 * _submit and _wait. Input is copied into the slot being filled (after its
 * halo); a full slot goes to the backend; output is copied out of the
 * oldest slot once the backend has finished it. engine_internal.h says how
 * the ring, the halo and the carry work.
 */
#include "engine_internal.h"

#include <stdint.h>
#include <string.h>

void gf_eng_slot_tail(gf_engine *e, unsigned char *dst, const gf_slot *h)
{
    const size_t ss = e->sample_bytes, hs = e->halo_samples, C = e->channels;
    const size_t end = h->frames * C; /* the tail: h->in's samples [end, end + hs) */
    size_t zeros = hs + (h->zero_from < h->frames ? h->zero_from * C : end);
    zeros = zeros < end ? end : zeros;
    const size_t real = zeros - end < hs ? zeros - end : hs;
    if (dst == h->in)
        memmove(dst, h->in + end * ss, real * ss);
    else
        gf_copy(e->copies, dst, h->in + end * ss, real * ss);
    memset(dst + real * ss, 0, (hs - real) * ss);
}

/* Start filling the slot after the submitted ones: its halo is the history
 * (halo_samples samples: direct, or FFT on several devices), and its frames
 * start with the carried incomplete quantum (FFT). */
static void begin_fill(gf_engine *e)
{
    gf_slot *f = &e->slot[(e->head + e->nsub) % e->nslots];
    if (e->history_slot < 0) {
        if (!e->mth->halo_primes) /* priming takes only frames the stream has had */
            memset(f->in, 0, e->halo_samples * e->sample_bytes);
    } else {
        gf_eng_slot_tail(e, f->in, &e->slot[e->history_slot]);
    }
    f->zero_from = SIZE_MAX;
    e->filling = 1;
    e->filled = e->carried;
    if (e->carried)
        memcpy(f->in + e->halo_samples * e->sample_bytes, e->carry,
               e->carried * e->channels * e->sample_bytes);
    e->carried = 0;
}

/* At a chunk boundary: take the hand-off backend if it is ready. The chunk
 * about to be submitted is the first it filters. */
static void take_handoff(gf_engine *e, size_t chunk_frames)
{
    if (!e->handoff || e->handoff_backend || gf_handoff_poll(e->handoff) != 1)
        return;
    e->handoff_backend = gf_handoff_take(e->handoff);
    e->handoff_frame = (int64_t)(e->in_submitted - chunk_frames); /* in_sub counts this chunk */
}

/* Submit the slot being filled, in whole quanta of the method (FFT:
 * partitions): at the end of the stream (flushed, no zeros left to feed)
 * the last one is padded with zeros whose outputs are dropped; before it,
 * an incomplete one is carried to the next chunk. */
gf_status gf_eng_submit_fill(gf_engine *e)
{
    const int s = (e->head + e->nsub) % e->nslots;
    gf_slot *f = &e->slot[s];
    const size_t fb = e->channels * e->sample_bytes;
    unsigned char *data = f->in + e->halo_samples * e->sample_bytes; /* the chunk's frames */
    size_t real = e->filled, frames = real;
    if (real % e->quantum) {
        if (e->flushed && e->zeros_left == 0) {
            frames = real + e->quantum - real % e->quantum;
            if (!e->zero_tail)
                memset(data + real * fb, 0, (frames - real) * fb);
            else if (f->zero_from > real)
                f->zero_from = real;
        } else {
            frames = real = real - real % e->quantum;
            e->carried = e->filled - real;
            memcpy(e->carry, data + real * fb, e->carried * fb);
        }
    }
    const size_t skip = real < e->skip_left ? real : e->skip_left;
    gf_chunk c = {
        .halo = e->halo_samples ? f->in : NULL,
        .in = data,
        .frames = frames,
        .zero_frames = f->zero_from < frames ? frames - f->zero_from : 0,
        .skip = skip,
        .out = f->out,
    };
    e->skip_left -= skip;
    f->frames = frames;
    f->out_frames = real - skip;
    f->out_pos = 0;
    f->ready = 0;
    gf_eng_hist_chunk(e, f, &c, real, f->out_frames);
    e->filling = 0;
    e->filled = 0;
    e->nsub++;
    e->history_slot = s;
    take_handoff(e, frames);
    e->owner[s] = e->handoff_backend != NULL;
    gf_status st = gf_eng_submit(e, s, &c);
    return st == GF_OK ? GF_OK : gf_eng_fail(e, st);
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
    const size_t fb = e->channels * e->sample_bytes; /* bytes per frame */
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
        gf_copy(e->copies, f->in + e->halo_samples * e->sample_bytes + e->filled * fb, src, n * fb);
        e->filled += n;
        e->in_real += n;
        src += n * fb;
        frames -= n;
        *consumed += n;
        if (e->filled == e->chunk) {
            gf_status st = gf_eng_submit_fill(e);
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
        if (!e->zero_tail)
            memset(f->in + (e->halo_samples + e->filled * e->channels) * e->sample_bytes, 0,
                   n * e->channels * e->sample_bytes);
        else if (f->zero_from > e->filled)
            f->zero_from = e->filled;
        e->filled += n;
        e->zeros_left -= n;
        if (e->filled == e->chunk || e->zeros_left == 0) {
            gf_status st = gf_eng_submit_fill(e);
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
        e->zeros_left = e->cfg.mode == GF_MODE_FULL ? e->num_taps - 1 : e->latency;
    }
    gf_status st = pump_flush(e);
    return st == GF_OK ? gf_eng_hist_check_end(e) : st;
}

gf_status gf_engine_pull(gf_engine *e, void *out, size_t max_frames, size_t *got)
{
    if (!e || !got || (!out && max_frames))
        return GF_ERR_INVALID_ARGUMENT;
    *got = 0;
    if (e->failed)
        return e->failed;
    unsigned char *dst = out;
    const size_t fb = e->out_channels * e->sample_bytes;
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
            if ((st = gf_eng_query(e, s, &done)) != GF_OK)
                return gf_eng_fail(e, st);
            if (!done) {
                /* Wait only when nothing else can make progress. */
                if (*got > 0 || !(e->nsub == e->nslots || e->flushed))
                    break;
                if ((st = gf_eng_wait(e, s)) != GF_OK)
                    return gf_eng_fail(e, st);
            }
            if ((st = gf_eng_set_ready(e, s)) != GF_OK)
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
    return gf_eng_hist_check_end(e);
}

gf_status gf_engine_submit(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    if (e->failed)
        return e->failed;
    /* The slot being filled was reserved when filling began. The method
     * needs a whole quantum (FFT: a partition). */
    if (e->flushed || !e->filling || e->filled < e->quantum)
        return GF_OK;
    return gf_eng_submit_fill(e);
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
            gf_status st = gf_eng_wait(e, (e->head + i) % e->nslots);
            if (st != GF_OK)
                return gf_eng_fail(e, st);
            if ((st = gf_eng_set_ready(e, (e->head + i) % e->nslots)) != GF_OK)
                return st;
        }
    }
    return gf_eng_hist_check_end(e);
}
