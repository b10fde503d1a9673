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

/* The halo of the chunk at frame off of this call (C channels): the input
 * just before it, or (near the start) history plus input assembled in slot
 * s's own buffer; none for a chunk at the stream's start that only primes
 * (the FFT method on several devices takes in history, of which there is
 * none yet). */
static const unsigned char *chunk_halo(gf_engine *e, int s, const unsigned char *in, size_t off,
                                       uint64_t pos, int *loaded)
{
    const size_t C = e->channels, ss = e->sample_bytes, hs = e->halo_samples;
    if (!hs || (e->mth->halo_primes && pos == 0))
        return NULL;
    if (off * C >= hs)
        return in + (off * C - hs) * ss;
    load_history(e, loaded);
    tail_samples(e, e->slot[s].in, e->history, in, off * C);
    return e->slot[s].in;
}

/* After the call's chunks: the new history goes to slot `next` (the one
 * the next chunk fills: several devices keep taking chunks in turn), as
 * the tail of an empty chunk, where begin_fill looks for it. */
static void keep_history(gf_engine *e, const unsigned char *in, size_t frames, int next,
                         int *loaded)
{
    e->head = next;
    gf_slot *f = &e->slot[e->head];
    if (frames * e->channels < e->halo_samples)
        load_history(e, loaded);
    tail_samples(e, f->in, e->history, in, frames * e->channels);
    f->frames = 0;
    f->zero_from = SIZE_MAX;
    e->history_slot = e->head;
    e->filling = 0;
}

/* Slot s's chunk in flight, waited for and its histograms merged. */
static gf_status retire(gf_engine *e, int s, int *inflight)
{
    const gf_status st = gf_eng_wait(e, s);
    if (st != GF_OK)
        return gf_eng_fail(e, st);
    inflight[s] = 0;
    return gf_eng_hist_merge(e, &e->slot[s]);
}

/* Waits for the chunks in flight (inflight[s] set), merging histograms in
 * the order of slots head, head + 1, ... (stream order, where chunks went
 * to the slots in turn). */
static gf_status drain(gf_engine *e, int *inflight)
{
    gf_status st;
    for (int j = 0; j < e->nslots; j++) {
        const int s = (e->head + j) % e->nslots;
        if (inflight[s] && (st = retire(e, s, inflight)) != GF_OK)
            return st;
    }
    return GF_OK;
}

/*
 * Several devices by time with the FFT method prime a device's delay line
 * at every chunk that does not follow that device's last one (multi.c):
 * chunks in turn are all primed, and the several-device chunk must hold
 * 2 K partitions to bear it, so a long filter's call is a few big chunks,
 * each uploaded, filtered and downloaded in turn. A call long enough
 * instead gives each device one contiguous segment of it, in chunks of the
 * one-device size (e->seg_chunk: pipelined), primed once, at the segment's
 * start, from the input itself. The bytes are one device's: each output
 * still sees the very spectra one device would. Used where each segment
 * holds at least 2 chunks and 2 K partitions, and without histograms
 * (merged in stream order): the chunk size, or 0 where it does not apply.
 * GPUFILT_SEGMENTS=0 in the environment (read at create): chunks in turn
 * as before, for measuring what segments save (tests/gpu/device-run.sh).
 */
static size_t segment_chunk(const gf_engine *e, size_t frames)
{
    if (e->ops != &e->multi_ops || e->split != GF_SPLIT_TIME || !e->mth->halo_primes || e->hist ||
        !e->seg_chunk || e->no_segments)
        return 0;
    const size_t n = (size_t)e->ndev, piece = e->seg_chunk < e->chunk ? e->seg_chunk : e->chunk;
    const size_t seg = frames / n, history = e->halo_samples / e->channels;
    return seg >= 2 * piece && seg >= 2 * history ? piece : 0;
}

/*
 * Bulk path with nothing buffered: chunks go from `in` to `out` with no
 * staging copy, to the slots in turn; or, in segments (segment_chunk),
 * round r's chunk of segment j to slot head + r n + j, whose device is
 * (head + j) mod n (gf_chunk.at: chunks out of stream order).
 */
static gf_status process_direct(gf_engine *e, const unsigned char *in, size_t frames,
                                unsigned char *out, size_t *produced)
{
    const size_t C = e->channels, ss = e->sample_bytes, seg_piece = segment_chunk(e, frames);
    const size_t n = seg_piece ? (size_t)e->ndev : 1, piece = seg_piece ? seg_piece : e->chunk;
    const size_t seg = frames / n / e->quantum * e->quantum; /* the last takes the rest */
    const size_t skip0 = e->skip_left < frames ? e->skip_left : frames;
    const uint64_t pos0 = e->in_submitted;
    gf_status st;
    int loaded = 0, last = e->head; /* the last segment's latest slot */
    int inflight[GF_MAX_SLOTS] = {0};
    for (size_t r = 0;; r++) {
        int any = 0;
        for (size_t j = 0; j < n; j++) {
            const size_t start = j * seg, end = j + 1 == n ? frames : start + seg;
            const size_t off = start + r * piece;
            if (off >= end)
                continue;
            const int s = (int)(((size_t)e->head + r * n + j) % (size_t)e->nslots);
            /* in turn, the oldest: histograms merge in order */
            if (inflight[s] && (st = retire(e, s, inflight)) != GF_OK)
                return st;
            const size_t len = end - off < piece ? end - off : piece;
            const size_t skip = off < skip0 ? (skip0 - off < len ? skip0 - off : len) : 0;
            gf_chunk c = {
                .at = n > 1,
                .pos = pos0 + off,
                /* a segment's later chunks follow their device's last:
                 * no priming, so no halo (near the call's start, making
                 * one copies the history: 128 MiB at 2^22 taps x 8 ch) */
                .halo = r > 0 && n > 1 ? NULL : chunk_halo(e, s, in, off, pos0 + off, &loaded),
                .in = in + off * C * ss,
                .frames = len,
                .skip = skip,
                .out = out + (off + skip > skip0 ? off + skip - skip0 : 0) * e->out_channels * ss,
            };
            e->in_real += len;
            gf_eng_hist_chunk(e, &e->slot[s], &c, len, len - skip);
            if ((st = gf_eng_submit(e, s, &c)) != GF_OK)
                return gf_eng_fail(e, st);
            inflight[s] = 1;
            any = 1;
            if (j + 1 == n)
                last = s;
        }
        if (!any)
            break;
    }
    e->skip_left -= skip0;
    *produced = frames - skip0;
    /* The chunks still in flight, from the oldest in turn (slot last + 1);
     * then the next chunk goes to the last segment's device (slot last +
     * n), whose delay line ends where the stream does. */
    e->head = (last + (int)n) % e->nslots;
    if ((st = drain(e, inflight)) != GF_OK)
        return st;
    keep_history(e, in, frames, e->head, &loaded);
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
